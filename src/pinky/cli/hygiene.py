"""Commands that keep the brain true: tags, verify, feedback, prune, gaps, check (documentation/HYGIENE.md)."""

from __future__ import annotations

import click

from pinky.cli.app import cli, emit_json, open_kb


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `tags` array.")
@click.pass_context
def tags(ctx: click.Context, as_json: bool) -> None:
    """List every tag with how many entries carry it, most used first; `tags rename` renames one.

    Tags are matched without case or surrounding space, and saved that way.

    Example:

        pinky tags && pinky tags rename postgresql postgres
    """
    if ctx.invoked_subcommand is not None:
        return
    found = open_kb(ctx).hygiene.tags()
    if as_json:
        emit_json({"count": len(found), "tags": found})
        return
    if not found:
        click.echo("no tags")
    for item in found:
        click.echo(f"{item['count']:>5}  {item['tag']}")


@tags.command("rename")
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print what was renamed as JSON.")
@click.pass_context
def tags_rename(ctx: click.Context, old: str, new: str, as_json: bool) -> None:
    """Rewrite the frontmatter of every note tagged OLD to carry NEW instead.

    Example:

        pinky tags rename postgresql postgres
    """
    done = open_kb(ctx).hygiene.rename_tag(old, new)
    if as_json:
        emit_json(done)
        return
    click.echo(f"renamed {done['old']!r} to {done['new']!r} in {len(done['renamed'])} notes")
    for slug in done["renamed"]:
        click.echo(f"  {slug}")
    for line in done["skipped"]:
        click.echo(f"skipped {line}", err=True)


@cli.command()
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `versions` array.")
@click.pass_context
def history(ctx: click.Context, slug: str, as_json: bool) -> None:
    """Every version of the fact or status SLUG belongs to, oldest first (supersedes / superseded_by).

    Example:

        pinky history status/deploy-pipeline
    """
    versions = open_kb(ctx).hygiene.chain(slug)
    if as_json:
        emit_json({"versions": versions})
        return
    for item in versions:
        span = f"{item['valid_from'] or (item['created'] or '')[:10]} .. {item['valid_until'] or ''}"
        click.echo(f"{'current ' if item['current'] else '        '} {item['slug']}  {span}  {item['title']}")


@cli.command()
@click.argument("slug")
@click.pass_context
def verify(ctx: click.Context, slug: str) -> None:
    """Record that SLUG was checked and still holds: its last_verified becomes today (no longer stale).

    Example:

        pinky verify gotcha/pg-pool-hangs-on-exit
    """
    entry = open_kb(ctx).hygiene.verify_entry(slug)
    click.echo(f"verified {entry.slug} (last_verified {entry.last_verified})")
