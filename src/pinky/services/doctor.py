"""`pinky doctor`: every check says what it found and, when something is wrong, how to fix it; the notes, the
project and the installation are checked here, the index and its search engine in `pinky.services.index_checks`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pinky.base.command import NAME, installed, is_ours, on_path
from pinky.base.locations import ENV_CACHE_DIR, ENV_DB, ENV_MAX_NOTE_BYTES
from pinky.errors import PinkyError
from pinky.kb import KnowledgeBase
from pinky.services import index_checks
from pinky.setup.check import Check


def _cli_on_path(kb: KnowledgeBase) -> Check:
    """Whether the user's shell finds `pinky-brain`, the name every hint uses; if not, the one command that
    fixes it. The plugin's CLI is only on the agent's PATH, and pip/pipx may put it in a folder not on PATH."""
    from pinky.setup.cli_install import this_cli

    name = f"command `{NAME}` on PATH"
    found = installed()
    other = on_path("pinky")
    shadowed = (f"; `pinky` runs {other}, another program (Debian's finger clone), so type `{NAME}`"
                if other and not is_ours(other) else "")
    if found and is_ours(found):
        return Check(name, "ok", found + shadowed)
    try:
        kind, source = this_cli()
        launcher = os.path.join(source, "bin", NAME) if kind == "plugin" else source
        fix = f"{launcher} install-cli"
    except PinkyError:
        fix = "pipx install ~/src/pinky-brain (a clone), or the plugin's bin/pinky-brain install-cli"
    if found:
        return Check(name, "warn", f"`{NAME}` runs {found}, which is not pinky-brain's CLI",
                     f"remove {found}, or {fix} --dir DIR with a DIR before {Path(found).parent} on PATH")
    return Check(name, "warn", f"your shell does not find `{NAME}` (every fix here names it){shadowed}",
                 f"{fix}   (links it into ~/.local/bin and says whether that is on PATH)")


def _project(kb: KnowledgeBase) -> Check:
    config = kb.config
    if config.project_root is None:
        return Check("project", "warn", "not inside a pinky project (no pinky.toml in this folder or above): "
                     "only the global brain is searched and saved to",
                     "cd into your repository and run `pinky-brain init`")
    if config.db_note:  # a read-only checkout: where its index is instead
        return Check("project", "ok", f"{config.project} at {config.project_root}; {config.db_note}")
    return Check("project", "ok", f"{config.project} at {config.project_root} (index {config.db_path.name})")


def _roots(kb: KnowledgeBase) -> Check:
    config = kb.config
    found = [str(p) for p in config.roots().values() if p.is_dir()]
    if config.save_dir is not None and not config.save_dir.is_dir():
        return Check("knowledge folders", "warn", f"{config.save_dir} is missing", "pinky-brain init")
    later = "" if config.global_dir.is_dir() else \
        f"; the global brain ({config.global_dir}) appears with the first global save or `pinky-brain sync`"
    return Check("knowledge folders", "ok", (", ".join(found) or "none yet") + later)


def _drift(kb: KnowledgeBase) -> Check:
    drift = kb.drift()
    total = sum(len(v) for v in drift.values())
    if not total:
        return Check("markdown vs index", "ok", "the index matches the markdown")
    parts = [f"{len(v)} {k} ({', '.join(v[:3])}{', …' if len(v) > 3 else ''})" for k, v in drift.items() if v]
    return Check("markdown vs index", "warn", "; ".join(parts), "pinky-brain reindex")


def _listed(name: str, found: list[str], count: str, fix: str) -> Check:
    """A check that lists the files it found (the first five), or says none."""
    if not found:
        return Check(name, "ok", "none")
    return Check(name, "warn", count.format(n=len(found)) + "; ".join(found[:5]), fix)


def _skipped(kb: KnowledgeBase) -> Check:
    """Files named .md that are not notes: never indexed, so never found; the user should know."""
    return _listed("unreadable files", kb.health.skipped(), "{n} not indexed: ",
                   "convert them to UTF-8 markdown, or move them out of the knowledge folder (a symbolic link "
                   "out of it: copy the note in instead; a FIFO, device or socket: remove it)")


def _oversized(kb: KnowledgeBase) -> Check:
    """Notes over PINKY_MAX_NOTE_BYTES: only their title and first bytes can be found."""
    return _listed("oversized notes", kb.health.oversized(), "{n} indexed in part: ",
                   f"split them into smaller notes, or raise {ENV_MAX_NOTE_BYTES} (bytes)")


def _malformed(kb: KnowledgeBase) -> Check:
    return _listed("malformed notes", kb.health.malformed(), "{n}: ",
                   "fix the frontmatter between the --- lines (bad YAML, an unknown type); they are indexed "
                   "meanwhile, as notes")


def _sync(kb: KnowledgeBase) -> Check:
    """Unresolved sync conflict copies (global brain and project), and a brain repo without a remote."""
    from pinky.sync.merge import list_conflicts

    brain = kb.config.global_dir
    copies = [p for root in kb.config.roots().values() for p in list_conflicts(root)]
    remote = _origin_url(brain)
    if copies:
        more = f", … (+{len(copies) - 10})" if len(copies) > 10 else ""
        shown = ", ".join(str(p) for p in copies[:10]) + more
        return Check("brain sync", "warn",
                     f"{len(copies)} unresolved conflict copies (an entry edited on two machines): {shown}",
                     "compare each .conflict-<sha> copy with the file it is named after, keep what is "
                     "right in the original, delete the .conflict- copy, then run pinky-brain sync")
    if remote is None:
        return Check("brain sync", "warn", f"{brain} is a git repo with no origin remote: it syncs nowhere",
                     "pinky-brain sync --remote URL (a bare repo on a shared disk, or a private git host)")
    if remote:
        from pinky.services.brain_sync import hide_secret

        return Check("brain sync", "ok", f"no conflict copies; syncs with origin {hide_secret(remote)}")
    return Check("brain sync", "ok",
                 "no conflict copies; the global brain is not synced (pinky-brain sync --remote URL)")


def _origin_url(brain: Path) -> str | None:
    """origin's URL; '' when the brain is not a git repo (nothing to hint), None when it has no origin."""
    config_path = brain / ".git" / "config"
    if not config_path.is_file():
        return ""
    from dulwich.config import ConfigFile

    try:
        return ConfigFile.from_path(str(config_path)).get((b"remote", b"origin"), b"url").decode()
    except KeyError:
        return None


def _breadcrumbs(kb: KnowledgeBase) -> Check:
    """`Brain: <slug>` comments in code that name no entry (renamed or deleted knowledge)."""
    dangling = [f"{file}:{line} ({target})" for root, file, line, target, kind in kb.health.unresolved_links()
                if kind == "breadcrumb"]
    if not dangling:
        count = kb.health.breadcrumb_count()
        return Check("code breadcrumbs", "ok", f"{count} breadcrumbs, all pointing at entries")
    return Check("code breadcrumbs", "warn",
                 f"{len(dangling)} name no single entry: " + "; ".join(dangling[:5])
                 + ("; …" if len(dangling) > 5 else ""),
                 "point them at an existing slug (pinky-brain search …), or restore the entry "
                 "(pinky-brain restore SLUG)")


def _links(kb: KnowledgeBase) -> Check:
    """`[[links]]`, `.md` links and typed `links:` in notes that name no entry, with file and line."""
    broken = [f"{kb.display_path(root, path)}:{line} ({target})"
              for root, path, line, target, kind in kb.health.unresolved_links() if kind != "breadcrumb"]
    if not broken:
        return Check("note links", "ok", f"{kb.health.link_count()} links, none broken")
    return Check("note links", "warn",
                 f"{len(broken)} name no single entry: " + "; ".join(broken[:5]) + ("; …" if len(broken) > 5 else ""),
                 "fix the link (a slug, a title or a relative .md path), or rename notes with `pinky-brain mv`, "
                 "which rewrites the links that point at them")


def _renames(kb: KnowledgeBase) -> Check:
    """Renames a killed `pinky mv` left half done: links still on the old name until they are finished."""
    from pinky.graph.renames import belongs_here

    pending, unreadable = kb.graph.pending_moves()
    if not pending and not unreadable:
        return Check("renames", "ok", "none left half done")
    here = [r for r in pending if belongs_here(r, kb.config.project_root)]
    elsewhere = [r for r in pending if r not in here]
    parts = [f"{r.old_slug} -> {r.new_rel.removesuffix('.md')} ({len(r.notes)} notes, {len(r.code)} code files "
             "to check)" for r in here]
    parts += [f"{r.old_slug} -> {r.new_rel.removesuffix('.md')} (started in {r.project_root})" for r in elsewhere]
    parts += [f"unreadable journal {problem}" for problem in unreadable]
    fixes = []
    if here:
        fixes.append("pinky-brain doctor --fix (or pinky-brain reindex, or the next pinky-brain mv) finishes them")
    if elsewhere:
        fixes.append("run pinky-brain reindex in the project each was started in")
    if unreadable:
        fixes.append("check the links to the renamed note by hand (pinky-brain doctor lists broken ones), then delete "
                     "the unreadable journal")
    return Check("renames", "warn", f"{len(pending) + len(unreadable)} cut short: " + "; ".join(parts[:5]),
                 "; ".join(fixes))


CHECK_CONTRADICTIONS_UP_TO = 5000  # entries (~1 s at 5,000); beyond, `pinky check` does it


def _review(kb: KnowledgeBase) -> Check:
    """Knowledge to check before relying on it (documentation/HYGIENE.md)."""
    review = kb.hygiene.needs_review(5)
    flagged = [f"{i['slug']} ({i['verdict']})" for i in review["flagged"]]
    detail = f"{review['stale_count']} stale (unverified past their type's threshold), {len(flagged)} flagged"
    if kb.stats()["entries"] <= CHECK_CONTRADICTIONS_UP_TO:
        pairs = kb.hygiene.check()["pairs"]
        detail += f", {len(pairs)} possible contradictions"
        flagged += [f"{p['a']} vs {p['b']} (pinky-brain check)" for p in pairs[:3]]
    if not flagged:
        hint = ": pinky-brain list --json marks them `stale`" if review["stale"] else ""
        return Check("knowledge review", "ok", detail + hint)
    return Check("knowledge review", "warn", detail + ": " + ", ".join(flagged),
                 "fix each (pinky-brain check shows the differing spans; pinky-brain verify SLUG if it still holds); "
                 "see documentation/HYGIENE.md")


def _change_detection(kb: KnowledgeBase) -> Check:
    """How changes made by other processes are seen: pinky-mcp's change feed where one can run, and how far the
    processes without one (the CLI, the hooks) look."""
    from pinky.base.global_signature import HOOK_WALK_LIMIT, ONE_SHOT_WALK_LIMIT, walk
    from pinky.indexing.change_feed import ChangeFeed, FeedUnavailable

    name = "change detection"
    notes = int(walk(os.fspath(kb.config.global_dir))[0].split(":", 1)[0])
    if notes <= HOOK_WALK_LIMIT:
        others = f"the CLI and the hooks walk the stats of the global brain's notes ({notes:,})"
    elif notes <= ONE_SHOT_WALK_LIMIT:
        others = (f"the CLI and the session-start hook walk the global brain's {notes:,} notes' stats, the per-prompt "
                  "hook its folders")
    else:
        others = (f"the global brain has {notes:,} notes: the CLI and the hooks look at its folders (notes created, "
                  "deleted, renamed or replaced); an edit written into an existing note reaches them through a "
                  "running pinky-mcp, the session start's reindex or `pinky-brain reindex`")
    try:
        feed = ChangeFeed(kb.config.roots())
        feed.start()
    except FeedUnavailable as exc:
        fix = "raise fs.inotify.max_user_watches (sysctl)" if "max_user_watches" in str(exc) else None
        return Check(name, "warn", f"no change feed here ({exc}): pinky-mcp checks the global brain before each "
                     f"request as the CLI does; {others}", fix)
    folders = feed.folders
    feed.close()
    return Check(name, "ok", f"pinky-mcp follows changes as the OS reports them (inotify over {folders:,} "
                 f"folders); {others}")


CHECKS: list[Callable[[KnowledgeBase], Check]] = [
    *index_checks.CHECKS, _cli_on_path, _project, _roots, _change_detection, _renames, _drift, _malformed, _oversized,
    _skipped, _breadcrumbs, _links, _sync, _review,
]


def repair(kb: KnowledgeBase) -> list[str]:
    """`pinky doctor --fix`: what can be repaired without a decision; one line per thing done."""
    report = kb.reindex()  # which finishes the renames a killed `pinky mv` left half done
    done = [line for line in report.warnings if line.startswith("finished the interrupted rename")]
    changed = report.added + report.updated + report.removed
    if changed:
        done.append(f"reindexed: {report.added} added, {report.updated} updated, {report.removed} removed")
    return done


# The checks that do not read the index: they still run when it cannot be opened.
WITHOUT_INDEX: tuple[Callable[[KnowledgeBase], Check], ...] = (index_checks.embedder, _cli_on_path, _project, _roots,
                                                               _sync)


def _index_unavailable(kb: KnowledgeBase) -> Check | None:
    """One line for an index that cannot be opened at all, in place of a failure in every check that reads it."""
    try:
        kb.db  # noqa: B018 - opening it is the check
    except PinkyError as exc:
        folder = kb.config.db_path.parent
        return Check("index", "error", str(exc),
                     f"make {folder} writable, or point {ENV_DB} (--db) at a file in a folder you can write; in a "
                     f"read-only project, {ENV_CACHE_DIR} names where its index goes")
    return None


def run_checks(kb: KnowledgeBase, *, full: bool = False) -> list[Check]:
    """Every check; `full` runs SQLite's integrity_check instead of quick_check (slower: it reads every
    row of every table and looks each up in its indexes)."""
    unavailable = _index_unavailable(kb)
    checks = [index_checks.full_integrity if full and check is index_checks.integrity else check for check in CHECKS]
    if unavailable is not None:
        checks = [check for check in checks if check in WITHOUT_INDEX]
    results = [unavailable] if unavailable is not None else []
    for check in checks:
        try:
            results.append(check(kb))
        except Exception as exc:  # a broken check must not hide the others
            results.append(Check(check.__name__.strip("_"), "error", f"check failed: {exc}"))
    try:
        from pinky.setup.claude_doctor import claude_checks

        results += claude_checks(kb.config)
    except Exception as exc:
        results.append(Check("claude code integration", "error", f"check failed: {exc}"))
    try:
        from pinky.setup.host_doctor import host_checks

        results += host_checks()
    except Exception as exc:
        results.append(Check("agent hosts", "error", f"check failed: {exc}"))
    return results
