"""The brain's set-up and upkeep: init, stats, doctor, gc, watch (the commands on entries are
`pinky.cli.entry_commands`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pinky.cli.app import cli, config_of, emit_json, open_kb
from pinky.cli.plugin import claude_options

WAIT_SLICE_S = 0.5  # pinky watch: how long the main thread ever blocks before it can see Ctrl-C


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
