"""pinky-brain import-sessions: take in the past sessions of this project that Claude Code, Codex and Gemini CLI kept
on this machine (pinky.capture.session_import), and list what they learned as candidate notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pinky.cli.app import cli, config_of, emit_json, open_kb
from pinky.cli.progress import progress_shown
from pinky.errors import NotInProject


def places_of(config: Any) -> Any:
    from pinky.capture.session_import import Places

    if config.save_dir is None or config.project_root is None:
        raise NotInProject("import-sessions")
    from pinky.hosts.catalog import all_hosts

    return Places(Path(config.project_root), Path(config.save_dir), Path(config.state_dir), all_hosts())


@cli.command("import-sessions")
@click.option("--candidates", "listing", is_flag=True,
              help="List the candidate notes earlier imports found, with their evidence; import nothing.")
@click.option("--dismiss", multiple=True, metavar="ID",
              help="Take a candidate off the list for good (saved, or not worth a note). Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def import_sessions(ctx: click.Context, listing: bool, dismiss: tuple[str, ...], as_json: bool) -> None:
    """Take in this project's past sessions from every agent host on the machine.

    Claude Code's (~/.claude/projects), Codex's (~/.codex/sessions) and Gemini CLI's (~/.gemini/tmp/*/chats)
    sessions that ran in this project become its diary, each turn written as the Stop hook would have written it
    that day (dated, host named, secrets redacted). Safe to run again: what was recorded is never recorded twice.
    What the turns learned (a failure fixed, a user's correction) is listed as candidate notes and never saved
    unasked: save one with brain_save or `pinky-brain save`, drop it with --dismiss.

    Example:

        pinky-brain import-sessions && pinky-brain import-sessions --candidates
    """
    places = places_of(config_of(ctx))
    if dismiss:
        _dismiss(places, dismiss, as_json)
    elif listing:
        _list(places, as_json)
    else:
        _import(ctx, places, as_json)


def _import(ctx: click.Context, places: Any, as_json: bool) -> None:
    from pinky.capture.candidates import load_candidates

    sessions = places.sessions()
    waiting = places.waiting()
    with progress_shown() as progress:
        summary = places.run(waiting, lambda done, total: progress("import", done, total))
    if summary.written:
        kb = open_kb(ctx, say_where=False)
        for path in summary.written:
            kb.index_file(path, embed=False)
    open_candidates = len(load_candidates(places.candidates))
    if as_json:
        emit_json({"sessions": len(sessions), "imported": summary.imported, "hosts": summary.hosts,
                   "turns": summary.turns, "lines": summary.lines, "days": len(summary.written),
                   "skipped_lines": summary.skipped, "new_candidates": summary.new_candidates,
                   "candidates": open_candidates})
        return
    if not sessions:
        click.echo("no past sessions of this project on this machine (looked in ~/.claude/projects, "
                   "~/.codex/sessions, ~/.gemini/tmp)")
    elif not summary.imported:
        click.echo(f"nothing new: the {len(sessions):,} past sessions of this project are recorded already")
    else:
        hosts = ", ".join(f"{host} {n}" for host, n in sorted(summary.hosts.items()))
        click.echo(f"took in {summary.imported:,} of {len(sessions):,} sessions ({hosts}): {summary.lines:,} diary "
                   f"lines over {len(summary.written):,} days")
    if summary.skipped:
        lines = "1 damaged transcript line" if summary.skipped == 1 else f"{summary.skipped:,} damaged transcript lines"
        click.echo(f"skipped {lines} (counted in the diary's skipped: lines)")
    if open_candidates:
        click.echo(f"{open_candidates:,} candidate notes from what the sessions learned "
                   f"({summary.new_candidates:,} new): `pinky-brain import-sessions --candidates` lists them")


def _list(places: Any, as_json: bool) -> None:
    from pinky.capture.candidates import load_candidates

    items = load_candidates(places.candidates)
    if as_json:
        emit_json({"candidates": items})
        return
    if not items:
        click.echo("no candidate notes: `pinky-brain import-sessions` finds them in past sessions")
        return
    for item in items:
        click.echo(f"{item['id']}  {item['when'][:16].replace('T', ' ')} [{item['session']}] {item['kind']} "
                   f"(a {item['type']}?)")
        click.echo(f"    evidence: {item['evidence']}")
        if item["prompt"]:
            click.echo(f"    asked: {item['prompt']}")
    click.echo("save one with `pinky-brain save` (or the agent's brain_save); "
               "drop one with `pinky-brain import-sessions --dismiss ID`")


def _dismiss(places: Any, ids: tuple[str, ...], as_json: bool) -> None:
    from pinky.capture.candidates import dismiss

    gone = dismiss(places.candidates, ids)
    missing = [i for i in ids if i not in gone]
    if as_json:
        emit_json({"dismissed": gone, "unknown": missing})
    else:
        for item in gone:
            click.echo(f"dismissed {item}")
    if missing:
        raise click.ClickException(f"no open candidate {missing[0]!r}: `pinky-brain import-sessions --candidates` "
                                   "lists them")
