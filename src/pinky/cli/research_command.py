"""`pinky research TOPIC`: the dossier brain_research gives the agent, in the terminal (pinky.research)."""

from __future__ import annotations

import click

from pinky.cli.app import cli, emit_json, ready_kb


@cli.command()
@click.argument("topic")
@click.option("--max-tokens", type=int, default=2000, show_default=True,
              help="Budget of the dossier (about 4 characters a token), 200-20000.")
@click.option("--json", "as_json", is_flag=True, help="Print the dossier as one JSON object.")
@click.pass_context
def research(ctx: click.Context, topic: str, max_tokens: int, as_json: bool) -> None:
    """What the brain holds about a topic: top entries, links, contradictions, gaps, diary.

    Example:

        pinky-brain research "postgres connection pool" --max-tokens 1500
    """
    from pinky.research import dossier_text

    found = ready_kb(ctx).research(topic, max_tokens=max_tokens)
    if as_json:
        emit_json(found)
    else:
        click.echo(dossier_text(found))
