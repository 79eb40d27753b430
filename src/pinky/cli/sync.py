"""Sync and rollup commands: `pinky sync`, `pinky rollup`."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from typing import Any

import click

from pinky.cli.app import cli, emit_json, open_kb

_CONFLICT_PART = re.compile(r"\.conflict-[0-9a-f]{7,40}")


def _progress_stream() -> Any:
    """dulwich's progress goes to stderr on a terminal, nowhere otherwise; never to stdout."""
    if sys.stderr.isatty() and hasattr(sys.stderr, "buffer"):
        return sys.stderr.buffer
    return io.BytesIO()


def _shown(paths: list[str], limit: int = 10) -> str:
    extra = f", … (+{len(paths) - limit})" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + extra


def original_of(conflict_copy: str) -> str:
    """``notes/a.conflict-1a2b3c4d.md`` -> ``notes/a.md``."""
    return _CONFLICT_PART.sub("", conflict_copy, count=1)


@cli.command("sync")
@click.option("--remote", metavar="URL",
              help="Git remote to sync with (bare repo path, file://, ssh:// or user@host:path, https://); "
                   "saved as origin, so later runs need no flag.")
@click.option("--allow", "allow", multiple=True, metavar="PATH",
              help="Push this held-back file (path as sync reports it, e.g. gotcha/ci.md) with the credentials "
                   "it holds now; repeatable. Recorded in the brain's .pinky/allow-secrets on this machine.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the sync report.")
@click.pass_context
def sync_cmd(ctx: click.Context, remote: str | None, allow: tuple[str, ...], as_json: bool) -> None:
    """Sync the global brain ($PINKY_HOME/brain) with its git remote, then reindex what came in.

    The first run clones the remote (or initialises a new repository); later runs commit local
    changes, fetch, merge (diaries are line-unioned; an entry edited on both machines keeps both
    versions as a .conflict- copy) and push. A failure leaves the local brain intact; run it again.
    A file that looks like it holds a credential is held back (not committed, not pushed, left as
    it is) and listed; remove the secret, or push it as it is with --allow.

    Example:

    \b
        pinky-brain sync --remote git@github.com:me/brain.git   # the first time
        pinky-brain sync                                        # from then on
        pinky-brain sync --allow gotcha/ci.md                   # push a held-back file as it is
    """
    from pinky.services.brain_sync import sync_global

    kb = open_kb(ctx)
    data = sync_global(kb, remote, errstream=_progress_stream(), allow=allow)
    if as_json:
        emit_json(data)
        return
    brain = Path(data["brain"])
    click.echo(f"brain: {brain}" + (f"  (remote: {data['remote']})" if data["remote"] else ""))
    if data["cloned"]:
        click.echo(f"cloned from {data['remote']}")
    elif data["initialised"]:
        click.echo("initialised a new git repository")
    committed = data["commit_message"] if data["committed"] else "nothing (no local changes)"
    click.echo(f"committed: {committed}")
    pulled = data["pulled_paths"]
    if pulled:
        click.echo(f"pulled {len(pulled)} file(s): {_shown(pulled)}; reindexed {data['reindexed']}")
    else:
        click.echo("pulled: nothing new")
    if data["pushed"]:
        click.echo(f"pushed to {data['remote']}")
    for item in data["allowed"]:
        kinds = ", ".join(item["kinds"]) or "no credential found in it now"
        click.echo(f"allowed: {item['path']} ({kinds})")
    for note in data["notes"]:
        if not note.startswith("held back "):
            click.echo(f"note: {note}")
    _echo_held(brain, data["held_back"])
    conflicts = data["conflicts"]
    if conflicts:
        click.echo(click.style(f"conflicts: {len(conflicts)} entry(ies) were edited on both machines; "
                               "both versions are kept:", fg="yellow"))
        for copy in conflicts:
            click.echo(f"  {brain / copy}  (the other machine's version of {original_of(copy)})")
        click.echo("  to resolve: compare each copy with the original, keep what is right in the original, "
                   "delete the .conflict- copy, then run `pinky-brain sync`")


def _echo_held(brain: Path, held: list[dict[str, Any]]) -> None:
    """Each held-back file, the kind of credential found and why it counts, and the two ways on."""
    if not held:
        return
    click.echo(click.style(f"held back: {len(held)} file(s) look like they hold a credential; not committed, "
                           "not pushed, left as they are:", fg="yellow"))
    for item in held:
        why = "; ".join(f"{w['kind']}: {w['reason']}" for w in item["why"])
        click.echo(f"  {brain / item['path']}  ({why})")
    click.echo(f"  to push: remove the secret and run `pinky-brain sync`, or push it as it is with "
               f"`pinky-brain sync --allow {held[0]['path']}`")


@cli.command()
@click.option("--week", metavar="YYYY-Www",
              help="The ISO week to roll up, e.g. 2026-W48. [default: the current week]")
@click.option("--month", metavar="YYYY-MM", help="The calendar month to roll up, e.g. 2026-11.")
@click.option("--scope", type=click.Choice(["project", "global"]), default="project", show_default=True,
              help="Whose diary: the project's (<save dir>/diary) or the global brain's "
                   "($PINKY_HOME/brain/diary).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object describing the rollup.")
@click.pass_context
def rollup(ctx: click.Context, week: str | None, month: str | None, scope: str, as_json: bool) -> None:
    """Write a weekly or monthly summary of the daily diaries, and index it.

    Extractive and deterministic (no LLM): sessions, files most touched, entries created or
    changed, decisions and gotchas, the most telling diary lines. Goes to
    diary/weekly/YYYY-Www.md or diary/monthly/YYYY-MM.md; re-running regenerates it and never
    touches a diary.

    Example:

    \b
        pinky-brain rollup --week 2026-W48
        pinky-brain rollup --month 2026-11 --scope global
    """
    from datetime import date

    from pinky.capture.rollup import parse_period, read_diary_lines, rollup_path, write_rollup

    today = date.today()
    period = parse_period(week, month, today)  # bad input -> InvalidInput, one line, exit 1
    kb = open_kb(ctx)
    root = kb.config.global_dir if scope == "global" else kb.root_dir("project")
    target = rollup_path(root, period)
    before = target.read_bytes() if target.is_file() else None
    path = write_rollup(root, period, today)
    changed = before != path.read_bytes()
    slug = kb.index_file(path)
    lines = len(read_diary_lines(root, period))
    data = {"path": str(path), "slug": slug, "scope": scope, "period": period.label, "kind": period.kind,
            "start": period.start.isoformat(), "end": period.end.isoformat(), "changed": changed,
            "diary_lines": lines}
    if as_json:
        emit_json(data)
        return
    verb = "wrote" if changed else "unchanged"
    click.echo(f"{verb} {path}  ({period.title}, {period.start} to {period.end}, {lines} diary lines)")
    if slug:
        click.echo(f"indexed as {slug}")
    if not lines:
        click.echo(f"note: no diary lines in {root / 'diary'} for this period", err=True)
