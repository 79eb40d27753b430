"""The commands on entries: search, save, update, get, delete, restore (the brain's set-up and upkeep are
`pinky.cli.upkeep_commands`)."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import click

from pinky.base.layout import ENTRY_TYPES, folder_type
from pinky.base.operations import SaveRequest, SearchRequest, UpdateRequest
from pinky.base.shown import plain
from pinky.cli.app import cli, emit_json, open_kb, ready_kb
from pinky.cli.options import request_options

TYPE_CHOICE = click.Choice(ENTRY_TYPES, case_sensitive=False)


BAND_NOTES = {"weak": "  (weak: below the relevance floor)", "similar": "  (close in meaning)"}


@cli.command()
@click.argument("query")
@request_options(SearchRequest)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with a `hits` array.")
@click.pass_context
def search(ctx: click.Context, query: str, as_json: bool, **fields: Any) -> None:
    """Hybrid search (BM25 + vectors) over project and global knowledge.

    Example:

        pinky-brain search "timeout al cerrar el pool de postgres" --type gotcha --limit 5
    """
    kb = ready_kb(ctx)
    from pinky.services.relevance import relevance

    request = SearchRequest(query, **fields)
    if as_json:
        emit_json(kb.search(request).as_dict())
        return
    result = kb.search(replace(request, explain=True))  # each side's score: what `relevance` judges by
    if result.notice:
        click.echo(f"note: {result.notice}", err=True)
    if not result.hits:
        click.echo("no results")
    bands = relevance(kb, query, result.hits)
    if result.hits and all(bands[hit.slug][1] == "weak" for hit in result.hits):
        click.echo("nothing relevant: no hit shares enough of the query's words or comes close in meaning; the "
                   "closest:", err=True)
    for rank, hit in enumerate(result.hits, 1):
        if hit.type == "diary" and rank > 1 and result.hits[rank - 2].type != "diary" and fields["type"] != "diary":
            click.echo("history comes last: diary lines record what happened, not what holds (--type diary ranks "
                       "them alone)", err=True)
        where = f"{hit.path}:{hit.line}"
        slug = plain(hit.slug)  # names on one line, also from an index written before the gate
        gone = BAND_NOTES.get(bands[hit.slug][1], "")
        gone += f"  (superseded by {plain(hit.superseded_by)})" if hit.superseded_by else ""
        gone += f"  (stale: unverified for {hit.age_days} days; pinky-brain verify {slug})" if hit.stale else ""
        title = click.style(plain(hit.title), bold=True)
        click.echo(f"{rank:>2}. {title}  [{hit.type}, {plain(hit.scope)}]  {slug}{gone}")
        click.echo(f"    {where}{'  § ' + hit.heading if hit.heading else ''}")
        click.echo(f"    {hit.snippet}")


@cli.command()
@request_options(SaveRequest)
@click.option("--json", "as_json", is_flag=True, help="Print the saved entry as JSON.")
@click.pass_context
def save(ctx: click.Context, as_json: bool, **fields: Any) -> None:
    """Save a note; the markdown body is read from standard input.

    Example:

        echo "Call pool.close(timeout=5) first." | pinky-brain save -t "PG pool hangs on exit" --type gotcha \\
            --tag postgres
    """
    if sys.stdin.isatty():
        click.echo("reading the body from standard input; end with Ctrl-D", err=True)
    body = sys.stdin.read()
    kb = open_kb(ctx)
    entry = kb.save(SaveRequest(body=body, unscoped_outside_project="ask", **fields), classify=True)
    similar = kb.similar(entry.slug)
    if as_json:
        emit_json({**entry.as_dict(), "similar": [h.as_dict() for h in similar]})
        return
    where = "the global brain" if entry.scope == "global" else f"project {entry.project}"
    click.echo(f"saved {entry.slug} -> {entry.path}  ({where})")
    _print_classification(entry.classification)
    if fields.get("candidate"):
        click.echo(f"candidate {fields['candidate']} settled: it leaves the list of past-session candidates")
    if entry.redacted:
        _echo_redacted(entry.redacted, "replaced by [REDACTED:<kind>] markers before writing")
    if entry.meta.get("supersedes"):
        click.echo(f"supersedes: {entry.meta['supersedes']} (it leaves default results; pinky-brain history shows "
                   "both)")
    for hit in similar:
        click.echo(f"note: likely a duplicate of {hit.slug} (similar {hit.score:.2f}); if it repeats "
                   f"that note, `pinky-brain merge {hit.slug} {entry.slug}` folds this one into it", err=True)


def _print_classification(found: dict[str, Any] | None) -> None:
    if found and found["type_applied"]:
        click.echo(f"type: {found['suggested_type']} (suggested; --type chooses)")
    if found and found["tags_applied"]:
        click.echo(f"tags: {', '.join(found['suggested_tags'])} (suggested; --tag chooses)")
    for given, existing in (found or {}).get("renamed_tags", {}).items():
        click.echo(f"tag {given!r} written as the existing tag {existing!r}")


@cli.command()
@click.argument("slug")
@request_options(UpdateRequest)
@click.option("--no-questions", is_flag=True, help="Remove the questions it answers.")
@click.option("--body", "body_from_stdin", is_flag=True, help="Replace the body with standard input.")
@click.option("--json", "as_json", is_flag=True, help="Print the updated entry as JSON.")
@click.pass_context
def update(ctx: click.Context, slug: str, no_questions: bool, body_from_stdin: bool, as_json: bool,
           **fields: Any) -> None:
    """Change an entry's title, type, tags, questions or body; what is not given stays.

    Without --expected-version it changes the version it reads now; with it, a file changed since is a
    conflict.

    Example:

        pinky-brain update gotcha/pg-pool-hangs-on-exit --question "why does the worker hang on shutdown?"
    """
    if fields["questions"] and no_questions:
        raise click.UsageError("give --question or --no-questions, not both")
    request = UpdateRequest(slug, **{**fields, "tags": fields["tags"] or None, "questions": [] if no_questions else
                                     (fields["questions"] or None)})
    if not (body_from_stdin or any(value is not None for value in request.changes().values())):
        raise click.UsageError("nothing to change: give --title, --type, --tag, --question, --no-questions or --body")
    kb = open_kb(ctx)
    if body_from_stdin:
        request = replace(request, body=sys.stdin.read())
    entry = kb.update(slug, request.expected_version or kb.get(slug).version, **request.changes())
    type_ = request.type
    if as_json:
        emit_json(entry.as_dict())
        return
    click.echo(f"updated {entry.slug} -> {entry.path}  version {entry.version}")
    folder, bare = folder_type(entry.slug.removeprefix("global/")), entry.slug.removeprefix("global/")
    if type_ and folder not in (None, entry.type):  # the folder says one type, the note another
        new = f"{entry.slug[:len(entry.slug) - len(bare)]}{entry.type}/{bare.split('/', 1)[1]}"
        click.echo(f"note: it is a {entry.type} in {bare.split('/', 1)[0]}/, the folder of {folder}s; "
                   f"`pinky-brain mv {entry.slug} {new}` files it where `pinky-brain save` puts a {entry.type}")
    if entry.redacted:
        _echo_redacted(entry.redacted, "replaced by [REDACTED:<kind>] markers before writing")


@cli.command()
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print the entry as JSON (with its version).")
@click.pass_context
def get(ctx: click.Context, slug: str, as_json: bool) -> None:
    """Show a whole entry by its slug (a unique last part of the slug is enough).

    Example:

        pinky-brain get gotcha/pg-pool-hangs-on-exit
    """
    entry = open_kb(ctx).get(slug)
    if as_json:
        emit_json(entry.as_dict())
        return
    click.echo(click.style(plain(entry.title), bold=True))
    click.echo(f"{plain(entry.slug)}  [{entry.type}, {plain(entry.scope)}]  {entry.path}  version {entry.version}")
    if entry.tags:
        click.echo("tags: " + ", ".join(map(plain, entry.tags)))
    for field in ("supersedes", "superseded_by"):
        if entry.meta.get(field):
            click.echo(f"{field.replace('_', ' ')}: {plain(str(entry.meta[field]))}")
    if entry.redacted:
        _echo_redacted(entry.redacted, "shown as [REDACTED:<kind>], the file still holds them")
    click.echo("")
    click.echo(entry.body.rstrip())


@cli.command()
@click.argument("slug")
@click.option("--reason", required=True, help="Why it goes (kept in the archived file).")
@click.pass_context
def delete(ctx: click.Context, slug: str, reason: str) -> None:
    """Soft-delete an entry: its file moves to .archive/ and it leaves search.

    Example:

        pinky-brain delete gotcha/old-trap --reason "fixed upstream in v2"
    """
    kb = open_kb(ctx)
    archived = kb.delete(slug, reason)
    click.echo(f"archived {slug} -> {archived}  (undo: {kb.hygiene.restore_command(archived)})")


@cli.command()
@click.argument("slug")
@click.option("--version", metavar="N", help="Which archived version, when there are several: its number "
              "(1 = the oldest) or its label (2026-11-27T101500Z).")
@click.pass_context
def restore(ctx: click.Context, slug: str, version: str | None) -> None:
    """Bring back a soft-deleted entry. With several archived versions, lists them unless --version picks one
    (pinky-brain list --archived shows every archived entry).

    Example:

        pinky-brain restore gotcha/old-trap
        pinky-brain restore note/release-plan --version 2
    """
    from pinky.cli.listing import archived_line
    from pinky.kb import SeveralVersions

    try:
        entry = open_kb(ctx).restore(slug, version)
    except SeveralVersions as several:
        click.echo(f"{several.copies[0].slug} has {len(several.copies)} archived versions, oldest first:")
        for copy in several.copies:
            click.echo("  " + archived_line(copy))
        raise click.ClickException(f"choose one: pinky-brain restore {several.copies[0].slug} --version N") from None
    click.echo(f"restored {entry.slug} -> {entry.path}")


def _echo_redacted(kinds: list[str], what: str) -> None:
    """`redacted: <kind> (<why it counts>), …; <what happened to them>`."""
    from pinky.base.secret_words import describe

    click.echo(f"redacted: {describe(kinds)}; {what}")
