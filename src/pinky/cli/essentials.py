"""Core commands: init, search, save, get, delete, restore, stats, doctor, gc, watch."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from pinky.base.layout import ENTRY_TYPES, folder_type
from pinky.base.operations import SaveRequest, SearchRequest, UpdateRequest
from pinky.base.shown import plain
from pinky.cli.app import cli, config_of, emit_json, open_kb, ready_kb
from pinky.cli.options import request_options
from pinky.cli.plugin import claude_options

TYPE_CHOICE = click.Choice(ENTRY_TYPES, case_sensitive=False)
WAIT_SLICE_S = 0.5  # pinky watch: how long the main thread ever blocks before it can see Ctrl-C


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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Index size: entries, chunks, vectors, embedder.

    Example:

        pinky-brain stats --json
    """
    data = open_kb(ctx).stats()
    if as_json:
        emit_json(data)
        return
    vectors = (f"{data['vectors']} vectors ({data['embedder']}, {data['dims']} dims)" if data["dims"]
               else f"no vectors yet ({data['embedder']} builds them on `pinky-brain reindex`)")
    click.echo(f"{data['entries']} entries, {data['chunks']} chunks, {vectors}")
    if data["second_stage_model"]:
        click.echo(f"second stage: {data['second_stage_vectors']} of {data['chunks']} chunks have a "
                   f"{data['second_stage_model']} vector")
    click.echo("by type:  " + ", ".join(f"{k} {v}" for k, v in data["by_type"].items()))
    click.echo("by scope: " + ", ".join(f"{k} {v}" for k, v in data["by_scope"].items()))
    click.echo(f"index:    {data['db_path']} ({data['db_bytes'] / 1e6:.1f} MB)")
    if data["unused"]:
        click.echo(f"unused:   {data['unused']} entries no search returned in {data['unused_days']} days "
                   f"(oldest: {', '.join(data['unused_sample'][:5])}); prune with pinky-brain delete SLUG --reason …")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"ok": bool, "checks": [...]}.')
@click.option("--fix", is_flag=True,
              help="First repair what needs no decision: finish renames a killed `pinky-brain mv` left half done, "
                   "and bring the index up to date with the markdown.")
@click.option("--full", is_flag=True, help="Check the index with SQLite's integrity_check (every row looked up in "
              "every index) instead of quick_check (pages only).")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, fix: bool, full: bool) -> None:
    """Check the installation and the index, with a fix for every problem.

    Exits 1 when a check fails (warnings do not fail).

    Example:

        pinky-brain doctor
        pinky-brain doctor --fix
        pinky-brain doctor --full
    """
    from pinky.services.doctor import repair, run_checks

    kb = open_kb(ctx, say_where=False)  # the project check says where the index is
    fixed = repair(kb) if fix else []
    checks = run_checks(kb, full=full)
    ok = all(c.status != "error" for c in checks)
    if as_json:
        emit_json({"ok": ok, "checks": [c.as_dict() for c in checks], **({"fixed": fixed} if fix else {})})
    else:
        marks = {"ok": click.style("ok  ", fg="green"), "warn": click.style("warn", fg="yellow"),
                 "error": click.style("FAIL", fg="red")}
        for line in fixed:
            click.echo(f"{click.style('fixed', fg='green')} {line}")
        for check in checks:
            click.echo(f"{marks[check.status]}  {check.name}: {check.detail}")
            if check.fix and check.status != "ok":
                click.echo(f"      fix: {check.fix}")
    if not ok:
        ctx.exit(1)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.pass_context
def gc(ctx: click.Context, as_json: bool) -> None:
    """Remove orphan rows and stale cached embeddings, then compact the index.

    Example:

        pinky-brain gc
    """
    removed = open_kb(ctx).gc()
    if as_json:
        emit_json(removed)
    else:
        click.echo(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in removed.items()))


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@claude_options(mcp=False)
@click.option("--json", "as_json", is_flag=True, help="Print what was created as JSON.")
@click.pass_context
def init(ctx: click.Context, folder: Path | None, mcp: bool, claude_md: str, allow_tools: bool,
         as_json: bool) -> None:
    """Make FOLDER a pinky project: pinky.toml (the marker every command finds from any subfolder),
    documentation/ for the knowledge, brain.db in .gitignore, diaries merged as a line union in
    .gitattributes. With --mcp, also the pinky server in .mcp.json (for Claude Code without the
    pinky plugin, which brings its own server).

    Without FOLDER: the project you are in, else the current folder. Safe to run again: it only
    adds what is missing.

    Example:

        cd my-repo && pinky-brain init --claude-md append
    """
    from pinky.setup.claude_setup import extend_init
    from pinky.setup.project import default_root, git_top, init_project, init_writes, write_marker

    root = (folder.expanduser().resolve() if folder else default_root(Path.cwd()))
    with init_writes(root):
        root.mkdir(parents=True, exist_ok=True)
        fresh = write_marker(root)  # first: from here on the folder is found as a project
        config = config_of(ctx, cwd=root)
        report = init_project(config.project_root, config.save_dir, config.db_moved_from or config.db_path)
        created = (["pinky.toml"] if fresh else []) + report.created
        created += extend_init(config, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)
    top = git_top(report.root)
    if fresh and top is not None and top != report.root:
        click.echo(f"note: {report.root} is inside the git repository {top}; if the knowledge should live at "
                   f"its top, remove {report.root / 'pinky.toml'} and run `pinky-brain init {top}`", err=True)
    waiting = _past_sessions(config)
    if as_json:
        emit_json({"root": str(report.root), "created": created, "save_dir": str(config.save_dir),
                   "past_sessions": len(waiting)})
        return
    _print_init_summary(report.root, config, created)
    if waiting:
        from pinky.capture.session_import import waiting_line

        click.echo("next: " + waiting_line(waiting))


def _past_sessions(config: Any) -> list[Any]:
    """The past sessions of this project the hosts kept that no Stop hook or import recorded yet."""
    from pinky.capture.session_import import Places
    from pinky.hosts.catalog import all_hosts

    return Places(config.project_root, config.save_dir, config.state_dir, all_hosts()).waiting()


def _grouped(created: Any) -> list[str]:
    """One item for the templates folder instead of one per template."""
    items: list[str] = []
    templates = 0
    for item in created:
        if "/_templates/" in item:
            templates += 1
            if templates == 1:
                items.append(item.rsplit("/", 1)[0] + "/")
        else:
            items.append(item)
    return items


def _print_init_summary(root: Path, config: Any, created: list[str]) -> None:
    saves = config.save_dir.relative_to(root).as_posix() if config.save_dir.is_relative_to(root) else config.save_dir
    verb = "initialised" if "pinky.toml" in created else "already initialised"
    click.echo(f"{verb}: {root}  (knowledge in {saves}/, index {config.db_path.name} git-ignored)")
    for line in created:
        if "\n" in line:  # the CLAUDE.md snippet to paste
            click.echo(line)
    if created:
        click.echo("added: " + ", ".join(_grouped(line for line in created if "\n" not in line)))
    click.echo("next: the agent saves with brain_save (or `pinky-brain save`); `pinky-brain doctor` checks the setup")


@cli.command()
@click.option("--no-embed", is_flag=True, help="Index full text only; leave vectors to the next reindex.")
@click.pass_context
def watch(ctx: click.Context, no_embed: bool) -> None:
    """Keep the index in step with the markdown while it runs (Ctrl-C stops it).

    Catches up first, then indexes every note created, changed, moved or deleted under the
    project's save dir and the global brain within about a second. pinky-mcp does this by itself.

    Example:

        pinky-brain watch
    """
    import time

    from pinky.runtime.process import Runtime

    def report(paths: set[Path]) -> None:
        for path in sorted(paths):
            click.echo(f"{'indexed' if path.exists() else 'removed'} {path}", err=True)

    runtime = Runtime(config_of(ctx), embed=not no_embed, warm_search=False, on_indexed=report)
    runtime.start()  # watches first, then catches up: a note edited meanwhile is not missed
    try:
        # Every wait in the main thread is short: the kernel may hand Ctrl-C's SIGINT to one of the
        # watcher's threads, and then only the main thread's next bytecode, not an interrupted
        # sleep, raises KeyboardInterrupt (a `time.sleep(3600)` here outlived SIGINT under load).
        while not runtime.caught_up.wait(WAIT_SLICE_S):
            pass
        if runtime.status["catch_up"] != "done":
            raise click.ClickException(f"catching up failed: {runtime.status['last_error']}")
        counts = runtime.status["catch_up_report"]
        click.echo(f"caught up ({counts['added']} added, {counts['updated']} updated, {counts['removed']} removed); "
                   f"watching {', '.join(str(p) for p in runtime.watched) or 'nothing (no knowledge folder yet)'}",
                   err=True)
        while True:
            time.sleep(WAIT_SLICE_S)
    except KeyboardInterrupt:
        pass
    finally:
        runtime.stop()
    runtime.exit_if_busy()


def _echo_redacted(kinds: list[str], what: str) -> None:
    """`redacted: <kind> (<why it counts>), …; <what happened to them>`."""
    from pinky.base.secret_words import describe

    click.echo(f"redacted: {describe(kinds)}; {what}")
