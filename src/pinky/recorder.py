"""What the Stop hook records: each turn of a session, once, as a few redacted diary lines.

`record_stop` reads the transcript from the byte offset where the previous Stop of the same
session ended (`OffsetStore`), summarises the new events (`pinky.transcript`), turns the summary
into capped, redacted lines (`format_lines`) and appends them to the day's diary
(`pinky.diary`). The offset advances only after the diary write succeeded.
Stdlib only, because the Stop hook must start quickly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pinky import fileio
from pinky.diary import append_diary, as_local, format_line, short_session
from pinky.errors import InvalidInput, NotFound
from pinky.redact import redact
from pinky.transcript import SessionSummary, read_new_events, summarize

__all__ = ["OffsetStore", "append_notes", "format_lines", "record_stop", "record_turn"]

LINE_LIMIT = 300
COMMAND_LIMIT = 80
PROMPT_LIMIT = 120
OFFSET_MAX_AGE_S = 30 * 24 * 3600

_WHITESPACE = re.compile(r"\s+")


# --- the Stop-hook flow -----------------------------------------------------------------------


def record_stop(
    transcript_path: Path,
    session_id: str,
    save_dir: Path,
    offsets_path: Path,
    now: datetime | None = None,
) -> Path | None:
    """Append what happened since the last Stop to today's diary; return its path, or None if nothing new."""
    return record_turn(transcript_path, session_id, save_dir, offsets_path, now)[0]


def record_turn(
    transcript_path: Path,
    session_id: str,
    save_dir: Path,
    offsets_path: Path,
    now: datetime | None = None,
) -> tuple[Path | None, list[dict]]:
    """`record_stop`, also returning the new transcript events (the Stop hook's capture reads them).

    The offset advances only after the diary write succeeded, so a crash loses
    nothing, and the advanced offset means nothing is written twice. A missing
    transcript counts as nothing new.
    """
    if not session_id:
        raise InvalidInput("session_id is required")
    now = datetime.now().astimezone() if now is None else now
    store = OffsetStore(offsets_path)
    with store.lock():
        start = store.get(session_id, transcript_path)
        try:
            events, end = read_new_events(Path(transcript_path), start)
        except NotFound:
            return None, []
        lines = format_lines(summarize(events), when=now, session_id=session_id)
        path = append_diary(save_dir, lines, now) if lines else None
        if end != start:
            store.set(session_id, end, transcript_path)
        return path, events


# --- summary -> diary lines -------------------------------------------------------------------


def format_lines(summary: SessionSummary, *, when: datetime, session_id: str) -> list[str]:
    """Render a summary as self-contained `- HH:MM [session] kind: text` lines.

    Every item is redacted, each line is capped, and empty kinds are omitted.
    """
    at, session = as_local(when), short_session(session_id)
    sections = (
        ("asked", summary.prompts, "; then: ", PROMPT_LIMIT),
        ("files", summary.files, ", ", LINE_LIMIT),
        ("tools", tuple(f"{name}×{count}" for name, count in summary.tools), ", ", LINE_LIMIT),
        ("commands", summary.commands, "; ", COMMAND_LIMIT),
        ("commits", summary.commits, "; ", PROMPT_LIMIT),
    )
    lines = []
    for kind, items, sep, item_limit in sections:
        room = LINE_LIMIT - len(format_line(at, session, kind, ""))
        text = _join_capped(items, sep, room, item_limit)
        if text:
            lines.append(format_line(at, session, kind, text))
    return lines


def append_notes(save_dir: Path, session_id: str, notes: Sequence[tuple[str, str]],
                 now: datetime | None = None) -> Path | None:
    """Append (kind, text) notes of the hooks themselves (capture, checkpoint) to today's diary, each
    redacted and capped like the turn's own lines; None when there is nothing to write."""
    if not notes:
        return None
    now = datetime.now().astimezone() if now is None else now
    at, session = as_local(now), short_session(session_id)
    lines = [format_line(at, session, kind, _clean(text, LINE_LIMIT - 40)) for kind, text in notes]
    return append_diary(save_dir, lines, now)


def _clean(text: str, limit: int) -> str:
    """Redact, flatten whitespace, then cut to `limit`, in that order, so a cut never splits a secret.
    Text from a transcript: a key pasted bare in a prompt is redacted without a label too."""
    return _truncate(_WHITESPACE.sub(" ", redact(_head(text, limit * 8 + 4096), unlabelled=True)).strip(), limit)


def _head(text: str, size: int) -> str:
    """A prefix of about `size` characters ending at whitespace, so no token is cut in half.

    Redacting a huge pasted log just to show its first words would be slow; the
    text past the prefix is never shown anyway.
    """
    if len(text) <= size:
        return text
    cut = max(text.rfind(" ", 0, size), text.rfind("\n", 0, size))
    return text[:cut] if cut > 0 else text


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _join_capped(items: Sequence[str], sep: str, limit: int, item_limit: int) -> str:
    """Clean and join items while they fit in `limit`, then end with `… +N more` for the rest.

    Items are cleaned lazily, so a long session only pays for redacting what is shown.
    """
    out = ""
    for index, raw in enumerate(items):
        item = _clean(raw, item_limit)
        rest = len(items) - index - 1
        piece = item if not out else sep + item
        reserve = len(f" … +{rest} more") if rest else 0
        if len(out) + len(piece) + reserve <= limit:
            out += piece
            continue
        if out:
            return f"{out} … +{rest + 1} more"
        more = f" +{rest} more" if rest else ""
        return _truncate(item, limit - len(more)) + more  # even the first item is too long: cut it
    return out


# --- offsets ----------------------------------------------------------------------------------


class OffsetStore:
    """Per-session transcript byte offsets in one JSON file, so each Stop reads only what is new.

    Entries are `{session_id: {"offset": int, "path": str, "seen": epoch}}`. The
    file is replaced atomically; a corrupt file is treated as empty (the worst
    case is one session logged twice, not a broken hook); entries unseen for
    `max_age_s` are pruned on write. Hold `lock()` around read-summarise-write so
    two Stop hooks cannot both log the same events.
    """

    def __init__(self, path: Path, *, max_age_s: float = OFFSET_MAX_AGE_S) -> None:
        self.path = Path(path)
        self.max_age_s = max_age_s

    def get(self, session_id: str, transcript_path: Path | str | None = None) -> int:
        """The stored offset, or 0 when unknown or recorded for a different transcript file."""
        entry = self._load().get(session_id)
        if entry is None:
            return 0
        if transcript_path is not None and entry.get("path") not in (None, str(transcript_path)):
            return 0
        return entry["offset"]

    def set(
        self,
        session_id: str,
        offset: int,
        transcript_path: Path | str | None = None,
        *,
        now: float | None = None,
    ) -> None:
        """Record `offset` for `session_id`, pruning stale sessions, and write the file atomically."""
        if offset < 0:
            raise InvalidInput(f"offset must be >= 0, got {offset}")
        now = time.time() if now is None else now
        entries = {sid: e for sid, e in self._load().items() if now - e.get("seen", now) <= self.max_age_s}
        entry: dict = {"offset": offset, "seen": now}
        if transcript_path is not None:
            entry["path"] = str(transcript_path)
        entries[session_id] = entry
        fileio.atomic_write(self.path, json.dumps(entries, sort_keys=True))

    def lock(self) -> fileio.FileLock:
        """An exclusive advisory lock beside the offsets file (a no-op where fcntl is missing)."""
        return fileio.file_lock(self.path.with_name(self.path.name + ".lock"))

    def _load(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            sid: e
            for sid, e in data.items()
            if isinstance(e, dict)
            and isinstance(e.get("offset"), int)
            and e["offset"] >= 0
            and isinstance(e.get("seen", 0), int | float)
        }
