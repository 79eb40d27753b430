"""Commands that keep the brain true: tags, verify, feedback, prune, gaps, check (documentation/HYGIENE.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from pinky.base.operations import EXPORT_SKIPS, Selection
from pinky.cli.app import cli, emit_json, open_kb
from pinky.cli.options import request_options
from pinky.cli.progress import progress_shown


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `tags` array.")
@click.pass_context
def tags(ctx: click.Context, as_json: bool) -> None:
    """List every tag with how many entries carry it, most used first; `tags rename` renames one.

    Tags are matched without case or surrounding space, and saved that way.

    Example:

        pinky-brain tags && pinky-brain tags rename postgresql postgres
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

        pinky-brain tags rename postgresql postgres
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

        pinky-brain history status/deploy-pipeline
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

        pinky-brain verify gotcha/pg-pool-hangs-on-exit
    """
    entry = open_kb(ctx).hygiene.verify_entry(slug)
    click.echo(f"verified {entry.slug} (last_verified {entry.last_verified})")


@cli.command("export")
@request_options(Selection, skip=EXPORT_SKIPS)
@click.pass_context
def export_cmd(ctx: click.Context, **fields: Any) -> None:
    """Write the brain (or what the filters keep) to standard output as JSON lines, one note a line.

    Each line holds the note's file exactly (frontmatter and body), its root and path: `pinky-brain import`
    puts it back byte for byte.

    Example:

        pinky-brain export --scope global > brain.jsonl
    """
    kb = open_kb(ctx)
    kb.reindex(embed=False)  # export what is on disk now, notes edited by hand included
    records = kb.hygiene.export(Selection(**fields))
    for record in records:
        click.echo(json.dumps(record, ensure_ascii=False))
    click.echo(f"exported {len(records)} notes", err=True)


@cli.command("import")
@click.argument("file")
@click.option("--root", type=click.Choice(["project", "global"]), help="Put every note in this root instead of "
              "the one it was exported from.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def import_cmd(ctx: click.Context, file: str, root: str | None, as_json: bool) -> None:
    """Import notes from a `pinky-brain export` file (`-` for standard input) and index them.

    A note already in the root it goes to (the same text) is skipped; one whose path is taken by a
    different note gets a new name, and the report says so; so does a path holding a line break or control
    character (each becomes `-`). Nothing is ever overwritten. A project note
    imported into another project belongs to this one (its `project:` field follows). A bad record is
    refused with its line number and the reason, and the rest is imported; the exit status is 1 when any was.

    Example:

        pinky-brain import brain.jsonl
    """
    with progress_shown() as progress:
        report = open_kb(ctx).hygiene.import_file(file, root=root, pipes=True, progress=progress)
    refused = len(report["errors"])
    if as_json:
        emit_json(report)
    else:
        click.echo(f"imported {len(report['imported'])} notes, {len(report['duplicates'])} already there, "
                   f"{len(report['renamed'])} renamed, {refused} refused")
        for item in report["renamed"]:
            click.echo(f"renamed {item['slug']} -> {item['new_slug']} ({item['why']})")
        for item in report["rescoped"]:
            click.echo(f"now in {item['now']}: {item['slug']} (exported from {item['was']})")
        for item in report["secrets"]:
            click.echo(f"holds a credential: {item['slug']} ({', '.join(item['kinds'])}); written as it is, "
                       "hidden on display, held back by `pinky-brain sync` until removed or allowed")
        for error in report["errors"]:
            click.echo(f"refused: {error}", err=True)
    if refused:
        sys.exit(1)


@cli.command()
@click.argument("slug")
@click.argument("verdict", type=click.Choice(["useful", "wrong", "outdated"]))
@click.option("--query", help="The search that returned it (default: the last search that did).")
@click.option("--json", "as_json", is_flag=True, help="Print what was recorded as JSON.")
@click.pass_context
def feedback(ctx: click.Context, slug: str, verdict: str, query: str | None, as_json: bool) -> None:
    """Say whether SLUG was useful, wrong or outdated; wrong and outdated flag it for review.

    Example:

        pinky-brain feedback gotcha/old-trap outdated
    """
    done = open_kb(ctx).hygiene.feedback(slug, verdict, query)
    if as_json:
        emit_json(done)
        return
    if not done["recorded"]:
        click.echo(f"not recorded: {done['notice']}")
        return
    against = f" (search: {done['query']!r})" if done["query"] else ""
    click.echo(f"recorded {verdict} for {done['slug']}{against}")
    if done["flagged"]:
        click.echo("flagged for review: pinky-brain doctor lists it until the note is edited or "
                   "`pinky-brain verify`-ed")


@cli.command()
@click.option("--months", type=int, default=6, show_default=True, help="Unused for this long (1-1200).")
@click.option("--apply", is_flag=True,
              help="Archive the candidates into .archive/ (pinky-brain restore brings each back).")
@click.option("--json", "as_json", is_flag=True, help="Print the candidates (and what was archived) as JSON.")
@click.pass_context
def prune(ctx: click.Context, months: int, apply: bool, as_json: bool) -> None:
    """List entries no search returned and nobody marked useful in MONTHS; --apply archives them.

    Entries changed or verified since are kept, and diaries always are. Nothing is deleted. Use is
    read from each knowledge folder's `.pinky/usage.log` too, which outlives a rebuild of the index;
    where use has not been recorded for the whole span (a new clone, a new machine), nothing is pruned.

    Example:

        pinky-brain prune --months 12 && pinky-brain prune --months 12 --apply
    """
    done = open_kb(ctx).hygiene.prune(months, apply=apply)
    if as_json:
        emit_json(done)
        return
    if not done["telemetry"]:
        click.echo("warning: PINKY_TELEMETRY=0, so no search is recorded: every old entry looks unused", err=True)
    verb = "archived" if apply else "would archive"
    click.echo(f"{verb} {len(done['candidates'])} entries unused since {done['since'][:10]}")
    for item in done["candidates"]:
        click.echo(f"  {item['slug']}  [{item['type']}]  {item['title']}")
    if done["candidates"] and not apply:
        click.echo("run again with --apply to archive them (pinky-brain restore SLUG brings one back)")
    if done["unwatched"]:
        known = ", ".join(f"{root} notes since {since[:10]}" if since else f"{root} notes never"
                          for root, since in done["watched_since"].items())
        click.echo(f"kept {len(done['unwatched'])} more that look unused but may not be: use has been recorded on "
                   f"this machine only for a part of the {months} months ({known}); they are pruned once it "
                   "has been for all of them")


@cli.command()
@click.option("--all", "include_closed", is_flag=True, help="Also gaps a later save closed.")
@click.option("--limit", "-n", type=int, default=50, show_default=True, help="How many (1-1000).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `gaps` array.")
@click.pass_context
def gaps(ctx: click.Context, include_closed: bool, limit: int, as_json: bool) -> None:
    """Knowledge gaps: searches whose best hit was weak, most frequent first.

    The query's text is kept only with PINKY_LOG_QUERIES=1 (else its hash). A save that answers a gap closes it.

    Example:

        pinky-brain gaps --all
    """
    found = open_kb(ctx).hygiene.gaps(include_closed=include_closed, limit=limit)
    if as_json:
        emit_json({"count": len(found), "gaps": found})
        return
    if not found:
        click.echo("no knowledge gaps recorded")
    for gap in found:
        what = repr(gap["query"]) if gap["query"] else f"query #{gap['query_hash']} (PINKY_LOG_QUERIES=1 keeps text)"
        closed = f"  closed by {gap['closed_by']}" if gap["closed_by"] else ""
        click.echo(f"{gap['count']:>4}x  {what}  last {gap['last_seen'][:10]}{closed}")


@cli.command()
@click.argument("slug", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `pairs` array.")
@click.pass_context
def check(ctx: click.Context, slug: str | None, as_json: bool) -> None:
    """Find entries that may contradict each other (all, or those involving SLUG), with the differing spans.

    Compares near-duplicates (a number, version, port, flag or negation that differs) and entries
    with the same key or subject. Exits 1 when it found a pair.

    Example:

        pinky-brain check gotcha/pg-pool-size
    """
    kb = open_kb(ctx)
    done = kb.hygiene.check(slug)
    found = kb.hygiene.duplicates()
    wanted = kb.get(slug).slug if slug else None
    done["duplicates"] = [p for p in found["pairs"] if wanted in (None, p["a"], p["b"])]
    if as_json:
        emit_json(done)
    else:
        if done["notice"]:
            click.echo(f"note: {done['notice']}", err=True)
        click.echo(f"{done['count']} possible contradictions among {done['checked']} entries checked")
        for pair in done["pairs"]:
            click.echo(f"{pair['a']}  <->  {pair['b']}  ({pair['reason']})")
            for diff in pair["differences"]:
                click.echo(f"    {diff['kind']}: {diff['a'] or '∅'!r} vs {diff['b'] or '∅'!r}"
                           + (f"  … {diff['context_a']} | {diff['context_b']}" if diff["context_a"] else ""))
        _echo_duplicates(done["duplicates"])
    if done["count"]:
        ctx.exit(1)


def _echo_duplicates(pairs: list[dict]) -> None:
    if not pairs:
        return
    click.echo(f"{len(pairs)} likely duplicates (the same fact twice; `pinky-brain merge KEEP OTHER` folds OTHER into "
               "KEEP):")
    for pair in pairs:
        click.echo(f"{pair['a']}  ==  {pair['b']}  (similar {pair['similarity']:.2f})")


@cli.command()
@click.argument("keep")
@click.argument("other")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: {kept, archived, archived_to, version}.")
@click.pass_context
def merge(ctx: click.Context, keep: str, other: str, as_json: bool) -> None:
    """Fold OTHER into KEEP: OTHER's text is appended to KEEP under "Merged from", its tags joined, and OTHER
    archived (`pinky-brain restore OTHER` brings it back).

    Example (after a save warned that two notes say the same):

        pinky-brain merge gotcha/postgres-pool-hangs-on-shutdown gotcha/pg-pool-hangs-on-shutdown
    """
    done = open_kb(ctx).hygiene.merge(keep, other)
    if as_json:
        emit_json({k: v for k, v in done.items() if k != "previous"})
        return
    click.echo(f"merged {done['archived']} into {done['kept']} (version {done['version']}); "
               f"{done['archived']} archived: pinky-brain restore {done['archived']} brings it back")
