"""The knowledge graph on the command line: `pinky graph`, `timeline`, `link`, `unlink` and `mv`."""

from __future__ import annotations

import click

from pinky.cli.app import cli, emit_json, open_kb, ready_kb

AT_HELP = "Read the links that held on this day (YYYY-MM-DD) instead of today."


@cli.command()
@click.argument("slug")
@click.option("--depth", "-d", type=click.IntRange(1, 3), default=1, show_default=True,
              help="How many links away to go (1-3).")
@click.option("--rel", "rels", multiple=True, help="Only links of this relation (repeatable), e.g. depends_on.")
@click.option("--at", help=AT_HELP)
@click.option("--dot", is_flag=True, help="Print Graphviz DOT (pipe it to `dot -Tsvg`).")
@click.option("--json", "as_json", is_flag=True, help="Print nodes and edges as JSON.")
@click.pass_context
def graph(ctx: click.Context, slug: str, depth: int, rels: tuple[str, ...], at: str | None, dot: bool,
          as_json: bool) -> None:
    """Show the entries and code files around an entry: its links, backlinks and breadcrumbs, up
    to --depth links away, as a tree (or JSON, or Graphviz).

    Example:

        pinky-brain graph gotcha/pg-pool-hangs --depth 2 --dot | dot -Tsvg > pool.svg
    """
    from pinky.graph.render import dot as to_dot
    from pinky.graph.render import tree

    found = ready_kb(ctx).graph.neighbourhood(slug, depth=depth, rels=list(rels), at=at)
    if as_json:
        emit_json(found)
    elif dot:
        click.echo(to_dot(found), nl=False)
    else:
        for line in tree(found):
            click.echo(line)


@cli.command()
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print the events as JSON.")
@click.pass_context
def timeline(ctx: click.Context, slug: str, as_json: bool) -> None:
    """The history of an entry: created, each change (from git, with +added -removed lines), typed
    links added and closed, and diary lines that name it. Oldest first.

    Example:

        pinky-brain timeline decision/use-wal
    """
    found = ready_kb(ctx).graph.timeline(slug)
    if as_json:
        emit_json(found)
        return
    click.echo(f"{found['slug']}  {found['title']}  ({found['path']}; {found['history']})")
    for event in found["events"]:
        click.echo(f"{event['date'][:16].replace('T', ' '):<16}  {event['kind']:<8}  {event['text']}")


@cli.command()
@click.argument("source")
@click.argument("target")
@click.option("--rel", default="relates", show_default=True,
              help="The relation: relates, depends_on, supersedes, contradicts, caused_by, fixed_by, or your own word.")
@click.option("--since", help="The day the link starts to hold (default today).")
@click.pass_context
def link(ctx: click.Context, source: str, target: str, rel: str, since: str | None) -> None:
    """Add a typed link from SOURCE to TARGET in SOURCE's frontmatter `links:`.

    Example:

        pinky-brain link gotcha/pg-pool-hangs decision/use-pgbouncer --rel fixed_by
    """
    done = open_kb(ctx).graph.link(source, target, rel=rel, since=since)
    click.echo(f"linked {done['source']} {done['rel']} {done['target']} (since {done['since']})")


@cli.command()
@click.argument("source")
@click.argument("target")
@click.option("--rel", help="Close only links of this relation (default: every open one to TARGET).")
@click.option("--until", help="The day the link stops holding (default today).")
@click.pass_context
def unlink(ctx: click.Context, source: str, target: str, rel: str | None, until: str | None) -> None:
    """Close SOURCE's typed links to TARGET: `until` is set, nothing is deleted (see them with --at).

    Example:

        pinky-brain unlink gotcha/pg-pool-hangs decision/use-pgbouncer --rel fixed_by
    """
    done = open_kb(ctx).graph.unlink(source, target, rel=rel, until=until)
    click.echo(f"closed {done['source']} {', '.join(done['closed'])} {done['target']} (until {done['until']})")


SHOWN = 10  # rewritten files named by `pinky mv`; a popular note has thousands


@cli.command()
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print what moved and what was rewritten as JSON.")
@click.pass_context
def mv(ctx: click.Context, old: str, new: str, as_json: bool) -> None:
    """Rename or move a note (NEW is a slug; a bare name keeps its folder) and rewrite every link
    that named it: [[links]], .md links, typed links and `Brain:` breadcrumbs in code.

    Example:

        pinky-brain mv gotcha/pool gotcha/pg-pool-hangs-on-exit
    """
    done = open_kb(ctx).graph.move(old, new)
    if as_json:
        emit_json(done)
        return
    if done.get("already"):
        click.echo(f"{done['old']} is already {done['new']} ({done['path']}): nothing to do")
        return
    click.echo(f"moved {done['old']} -> {done['new']} ({done['path']})")
    if done.get("retyped"):
        was, now = done["retyped"]["was"], done["retyped"]["now"]
        folder = done["new"].removeprefix("global/").split("/", 1)[0]
        click.echo(f"type: {was} -> {now} (a note in {folder}/ is a {now}: that is where `pinky-brain save` puts one)")
    for kind in ("notes", "code"):
        names = done[f"rewrote_{kind}"]
        if names:
            more = f", … ({len(names) - SHOWN} more: --json lists them all)" if len(names) > SHOWN else ""
            click.echo(f"rewrote links in {len(names)} {kind if kind == 'code' else 'notes'}"
                       f"{' files' if kind == 'code' else ''}: {', '.join(names[:SHOWN])}{more}")
