"""Sync the global brain and bring the index up to date: what `pinky sync` and MCP brain_sync call.

`pinky.sync` moves files through git; this module is the glue to the KnowledgeBase: it gives
dulwich a private error stream (never stdout, which carries the MCP protocol and hook output)
and reindexes exactly the files the merge changed. brain.db is shared SQLite, so a pinky-mcp
server running on the same machine sees the pulled entries as soon as this returns.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pinky.base.layout import is_note
from pinky.errors import SyncError
from pinky.kb import KnowledgeBase
from pinky.sync.report import SyncReport as SyncReport  # re-exported: brain_sync's output model derives from it

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

# Above this many pulled files one incremental reindex pass (a stat per file) beats
# indexing them one by one; both only parse and embed what changed.
FULL_SCAN_THRESHOLD = 200
_URL_SECRET = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")


def sync_global(kb: KnowledgeBase, remote: str | None = None, *,
                errstream: BinaryIO | None = None, allow: Sequence[str] = ()) -> dict[str, Any]:
    """Sync ``kb.config.global_dir`` with its git remote, then reindex the pulled files.

    ``remote`` (re)sets ``origin``. ``errstream`` receives dulwich's progress (bytes); the
    default swallows it. ``allow``: files whose credentials may be pushed (`pinky sync --allow`).
    Returns the SyncReport fields plus ``brain`` and ``reindexed``.
    Raises SyncError with one clear line; if the merge had already changed files when the
    push failed, those files are indexed first, so the index always matches the markdown.
    """
    from pinky.sync.run import sync

    brain = kb.config.global_dir
    before = _head(brain)
    try:
        report = sync(brain, remote, errstream=errstream if errstream is not None else io.BytesIO(),
                      union_limit=kb.config.max_note_bytes, allow=allow)
    except SyncError as exc:
        if _head(brain) != before:
            kb.reindex()  # merged, then the push failed: the files changed, keep the index true
        raise SyncError(hide_secret(str(exc))) from exc.__cause__
    data: dict[str, Any] = asdict(report)
    data["remote"] = hide_secret(report.remote) if report.remote else None
    data["brain"] = str(brain)
    data["reindexed"] = reindex_paths(kb, brain, report.pulled_paths)
    return data


def hide_secret(text: str) -> str:
    """``https://me:token@host/x`` -> ``https://me:***@host/x``: output never shows a password."""
    return _URL_SECRET.sub(r"\1:***@", text)


def reindex_paths(kb: KnowledgeBase, root: Path, paths: list[str]) -> int:
    """Index (or drop, when deleted) each changed markdown file under ``root``; returns the count."""
    wanted = [rel for rel in paths if is_note(rel)]
    if not wanted:
        return 0
    if len(wanted) > FULL_SCAN_THRESHOLD:
        report = kb.reindex()
        return report.added + report.updated + report.removed
    for rel in wanted:
        kb.index_file(root / rel, embed=False)
    kb.embed_pending()  # one embedding pass for all of them, not one per file
    return len(wanted)


def _head(brain: Path) -> ObjectID | None:
    """The brain's HEAD commit, None when it is not a repository yet."""
    from pinky.sync.repo import head_commit

    return head_commit(brain) if (brain / ".git").exists() else None
