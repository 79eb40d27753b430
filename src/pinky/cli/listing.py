"""Everyday commands around single entries: `pinky list` (no query) and `pinky edit` (in $EDITOR)."""

from __future__ import annotations

from typing import Any

import click

from pinky.base.operations import Selection
from pinky.base.shown import plain_names
from pinky.cli.app import cli, emit_json, open_kb
from pinky.cli.options import request_options


@cli.command("list")
@request_options(Selection, skip=("project",))
@click.option("--limit", "-n", type=int, default=50, show_default=True, help="How many entries (1-10000).")
@click.option("--archived", is_flag=True, help="Soft-deleted entries instead: every archived version, most "
              "recently archived first, with the command that restores it (with --type, --scope, --limit, --json).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with an `entries` array.")
@click.pass_context
def list_cmd(ctx: click.Context, limit: int, archived: bool, as_json: bool, **fields: Any) -> None:
    """List entries without a query, most recently changed first.

    Example:

        pinky-brain list --type gotcha --since 30d
        pinky-brain list --archived
    """
    selection = Selection(**fields)
    if archived:
        if selection.tags or selection.since or selection.at or selection.include_superseded:
            raise click.UsageError("--archived takes only --type, --scope, --limit and --json")
        _list_archived(ctx, selection.type, selection.scope, limit, as_json)
        return
    found = open_kb(ctx).list_entries(selection, limit=limit)
    if as_json:
        emit_json({"count": len(found), "entries": found})
        return
    if not found:
        click.echo("no entries")
    for item in map(plain_names, found):  # names on one line, also from an index written before the gate
        tags_text = f"  #{' #'.join(item['tags'])}" if item["tags"] else ""
        marks = "".join([f"  (stale: {item['age_days']} days)" if item["stale"] else "",
                         f"  (superseded by {item['superseded_by']})" if item["superseded_by"] else ""])
        click.echo(f"{item['modified'][:10]}  {item['slug']}  [{item['type']}, {item['scope']}]  "
                   f"{item['title']}{tags_text}{marks}")


def _list_archived(ctx: click.Context, type_: str | None, scope: str | None, limit: int, as_json: bool) -> None:
    if not 1 <= limit <= 10_000:
        raise click.UsageError(f"limit must be a whole number from 1 to 10000, got {limit}")
    copies = sorted(open_kb(ctx).hygiene.archived(scope=scope, type=type_),
                    key=lambda c: (c.moment, c.version), reverse=True)  # copies of one second: the later first
    if as_json:
        emit_json({"count": len(copies[:limit]), "entries": [copy.as_dict() for copy in copies[:limit]]})
        return
    if not copies:
        click.echo("no archived entries")
    for copy in copies[:limit]:
        click.echo(archived_line(copy))


def archived_line(copy: Any) -> str:
    """One archived copy on one line: when, which entry and version, why, and how to bring it back."""
    version = f"  (version {copy.version} of {copy.versions})" if copy.versions > 1 else ""
    reason = f"  reason: {copy.reason}" if copy.reason else ""
    return (f"{(copy.archived_at or copy.moment)[:19].replace('T', ' ')}  {copy.slug}{version}  [{copy.type}]  "
            f"{copy.title}{reason}  ->  {copy.restore}")


@cli.command()
@click.argument("slug")
@click.pass_context
def edit(ctx: click.Context, slug: str) -> None:
    """Open an entry's markdown file in $VISUAL / $EDITOR, then reindex it.

    Example:

        EDITOR=nano pinky-brain edit gotcha/pg-pool-hangs-on-exit
    """
    kb = open_kb(ctx)
    path = kb.file_of(slug)
    before = path.read_bytes()
    click.edit(filename=str(path))  # raises ClickException (one line) when no editor can be started
    if not path.exists():
        click.echo(f"{path} is gone; it left the index", err=True)
        kb.index_file(path, embed=False)
        return
    changed = path.read_bytes() != before
    indexed = kb.index_file(path)
    click.echo(f"{'reindexed' if changed else 'unchanged'} {indexed or slug} ({path})")
