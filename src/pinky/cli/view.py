"""`pinky view`: the brain in a local web page (search, notes, the graph, review, the diary)."""

from __future__ import annotations

import click

from pinky.cli.app import cli, config_of


@cli.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="The port on 127.0.0.1 to serve on. [default: a free one]")
@click.option("--no-open", is_flag=True, help="Do not open the browser; print the one-time sign-in link.")
@click.pass_context
def view(ctx: click.Context, port: int, no_open: bool) -> None:
    """Open the brain in a local web page: search as you type, notes with their links and history, the
    graph, what needs review (one click to verify, archive, supersede or merge, each undoable) and the
    diary. Serves this project's and the global brain on 127.0.0.1 only; Ctrl-C stops it.

    Every read and change needs this run's session secret, which the page gets from a one-time sign-in
    link (opened in the browser, or printed with --no-open; it works once, within 10 minutes), keeps in its
    own origin's storage and sends in a header: no cookie, which a page another user serves on another
    port of 127.0.0.1 would receive.

    Example:

        pinky-brain view --port 8765 --no-open
    """
    from pinky.view.server import serve

    def announce(line: str) -> None:
        click.echo(f"pinky-brain view: {line}", err=False)

    try:
        serve(config_of(ctx), port=port, open_browser=not no_open, announce=announce,
              notify=lambda line: click.echo(line, err=True))
    except OSError as exc:
        raise click.ClickException(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
