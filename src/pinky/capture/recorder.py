"""What the Stop and PreCompact hooks record: each turn of a session, once, as a few redacted diary lines.

`record` streams the transcript from the byte offset where the previous hook of the same session
ended (`OffsetStore`), one line at a time (`pinky.capture.transcript`), feeds each event to its tracks (what
the turns did, `TurnTrack`; the checkpoint's decisions, `CheckpointTrack`) and appends what they
give to the day's diary (`pinky.capture.diary`). A line that cannot be read is skipped and counted in the
diary (`skipped: …`); the lines around it are recorded.

Progress is kept as it is made: after 1 s of reading, then 2 s more, 4 s more..., what was read is
written and its offset stored, so a hook killed at Claude Code's time limit keeps at least half of its
work, and one given a `budget` stops in time and leaves the rest for its next run. Memory is bounded by
what a diary line can show, however long the stretch. An offset
advances only after the diary write succeeded, so a crash loses nothing, and the advanced offset
means nothing is written twice: each write first checks, under the offsets file's lock, that no
other hook recorded the same stretch meanwhile. Stdlib only, because the Stop hook must start quickly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path

from pinky.base import fileio, private
from pinky.base.redact import redact
from pinky.capture.checkpoint import Checkpoint
from pinky.capture.diary import append_diary, as_local, format_line, short_session
from pinky.capture.transcript import SessionSummary, Summarizer, Transcript
from pinky.errors import InvalidInput, NotFound

__all__ = ["CheckpointTrack", "OffsetStore", "Track", "TurnTrack", "append_notes", "format_lines", "record",
           "record_stop"]

LINE_LIMIT = 300
COMMAND_LIMIT = 80
PROMPT_LIMIT = 120
NOTE_LIMIT = LINE_LIMIT - 40
OFFSET_MAX_AGE_S = 30 * 24 * 3600
# While a long transcript is read, what was read is written after 1 s, then after 2 s more, 4 s more...:
# a hook stopped midway keeps at least half of its work, and a long backlog gets a few sets of lines.
FIRST_BATCH_SECONDS = 1.0

_WHITESPACE = re.compile(r"\s+")
# Control characters (NUL makes git take the diary for a binary file), the replacement character that stands for
# bytes that were not text, and the marks that reorder a line's display: none belongs in a markdown line.
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ufffd\u200e\u200f\u202a-\u202e\u2066-\u2069]+")
FIELDS = {"asked": "prompts", "files": "files", "commands": "commands"}  # a line's kind -> SessionSummary field


# --- the hooks' flow --------------------------------------------------------------------------


class Track:
    """One reader of a session's transcript with an offset of its own in an OffsetStore.

    `record` feeds it every line at or after its offset (`feed`), and at each batch asks what to
    append to the diary and what to keep beside the offset (`flush`)."""

    def __init__(self, store: OffsetStore, session_id: str, transcript: Path) -> None:
        if not session_id:
            raise InvalidInput("session_id is required")
        self.store, self.session_id, self.transcript = store, session_id, transcript
        self.entry = store.entry(session_id)  # as read: a write first checks that nobody moved it since
        self.offset = store.get(session_id, transcript)

    def feed(self, start: int, item: dict | str) -> None:
        """One line starting at byte `start`: its event, or why it was skipped."""

    def flush(self, when: datetime, done: bool) -> tuple[list[str], dict]:
        """(diary lines, state kept with the offset) for what was fed since the last flush; `done`
        when the transcript was read to its end."""
        return [], {}


class TurnTrack(Track):
    """What the turns did: prompts, files, tools, commands, commits, and the lines that were skipped.
    `listeners` see each event too (the Stop hook's capture)."""

    def __init__(self, store: OffsetStore, session_id: str, transcript: Path,
                 listeners: Iterable[Callable[[dict], None]] = ()) -> None:
        super().__init__(store, session_id, transcript)
        self.listeners = tuple(listeners)
        self._reset()

    def _reset(self) -> None:
        self.summarizer = Summarizer()
        self.skipped: dict[str, int] = {}
        self.first_skipped = -1

    def feed(self, start: int, item: dict | str) -> None:
        if isinstance(item, str):
            self.skipped[item] = self.skipped.get(item, 0) + 1
            self.first_skipped = start if self.first_skipped < 0 else self.first_skipped
            return
        self.summarizer.add(item)
        for listener in self.listeners:
            listener(item)

    def flush(self, when: datetime, done: bool) -> tuple[list[str], dict]:
        lines = format_lines(self.summarizer.summary(), when=when, session_id=self.session_id)
        if self.skipped:
            at, session = as_local(when), short_session(self.session_id)
            lines.append(format_line(at, session, "skipped", skipped_text(self.skipped, self.first_skipped)))
        self._reset()
        return lines, {}


def skipped_text(reasons: dict[str, int], first: int) -> str:
    """`2 unreadable transcript lines (1 not JSON, 1 with a lone surrogate escape; the first at byte 512)`."""
    count = sum(reasons.values())
    if count == 1:
        return f"1 unreadable transcript line ({next(iter(reasons))}, at byte {first:,})"
    why = ", ".join(f"{n} {reason}" for reason, n in reasons.items())
    return f"{count:,} unreadable transcript lines ({why}; the first at byte {first:,})"


class CheckpointTrack(Track):
    """The decisions and open threads said since the previous checkpoint (PreCompact). They are written
    once the transcript was read to its end; until then they wait beside the offset, redacted."""

    def __init__(self, store: OffsetStore, session_id: str, transcript: Path) -> None:
        super().__init__(store, session_id, transcript)
        kept = self.entry if self.entry and self.entry.get("path") == str(transcript) else {}
        self.checkpoint = Checkpoint(_strings(kept.get("decided")), _strings(kept.get("open")))

    def feed(self, start: int, item: dict | str) -> None:
        if isinstance(item, dict):
            self.checkpoint.add(item)

    def flush(self, when: datetime, done: bool) -> tuple[list[str], dict]:
        # Redacted as the diary will show them, and once each (a sentence read again after a restart
        # came back unredacted beside its kept, redacted copy).
        decided, still_open = ([*dict.fromkeys(_clean(text, NOTE_LIMIT) for text in texts)]
                               for texts in self.checkpoint.result())
        if not done:
            return [], {key: value for key, value in (("decided", decided), ("open", still_open)) if value}
        self.checkpoint = Checkpoint()
        return note_lines(self.session_id, [("decided", t) for t in decided] + [("open", t) for t in still_open],
                          when), {}


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class _Moved(Exception):
    """Another hook recorded this stretch of the session meanwhile."""


def record(transcript_path: Path, save_dir: Path, tracks: Sequence[Track], *, now: datetime | None = None,
           budget: float | None = None, translate: Callable[[dict], list[dict]] | None = None) -> list[Path]:
    """Read the transcript once from the earliest track's offset, feeding each track the lines from its
    own offset on, and write batch by batch; return the diary files written to.

    `budget`: seconds after which reading stops at the next line and the rest is left for the next
    run. A missing transcript counts as nothing new. `translate` reads another host's transcript: each
    line becomes the Claude Code events it stands for (`pinky.capture.foreign`)."""
    try:
        transcript = Transcript(transcript_path)
    except NotFound:
        return []
    written: dict[Path, None] = {}
    started = time.monotonic()
    next_batch, interval = started + FIRST_BATCH_SECONDS, FIRST_BATCH_SECONDS
    with transcript:
        for track in tracks:
            track.offset = transcript.resume(track.offset)
        done = True
        try:
            for start, _, item in transcript.lines(min(track.offset for track in tracks)):
                for event in (translate(item) if translate is not None and isinstance(item, dict) else (item,)):
                    for track in tracks:
                        if start >= track.offset:
                            track.feed(start, event)
                clock = time.monotonic()
                if budget is not None and clock - started >= budget:
                    done = False
                    break
                if clock >= next_batch:
                    _commit(tracks, transcript.end, save_dir, now, False, written)
                    interval *= 2
                    next_batch = time.monotonic() + interval
            _commit(tracks, transcript.end, save_dir, now, done, written)
        except _Moved:
            pass
    return list(written)


def _commit(tracks: Sequence[Track], position: int, save_dir: Path, now: datetime | None, done: bool,
            written: dict[Path, None]) -> None:
    when = datetime.now().astimezone() if now is None else now
    for track in tracks:
        if position < track.offset:
            continue  # it starts further on: nothing of its own was read yet
        lines, state = track.flush(when, done)
        if position == track.offset and not lines and state == _kept(track.entry):
            continue  # nothing read, nothing to write, nothing to keep that is not kept already
        with track.store.lock():
            if track.store.entry(track.session_id) != track.entry:
                raise _Moved
            if lines:
                written.setdefault(append_diary(save_dir, lines, when))
            track.entry = track.store.set(track.session_id, position, track.transcript, extra=state)
            track.offset = position


def _kept(entry: dict | None) -> dict:
    """The state an offset entry keeps beside the offset (a checkpoint waiting for its end)."""
    return {key: value for key, value in (entry or {}).items() if key not in ("offset", "seen", "path")}


def record_stop(
    transcript_path: Path,
    session_id: str,
    save_dir: Path,
    offsets_path: Path,
    now: datetime | None = None,
) -> Path | None:
    """Append what happened since the last Stop to today's diary; return its path, or None if nothing new."""
    written = record(Path(transcript_path), save_dir, [TurnTrack(OffsetStore(offsets_path), session_id,
                                                                  Path(transcript_path))], now=now)
    return written[-1] if written else None


# --- summary -> diary lines -------------------------------------------------------------------


def format_lines(summary: SessionSummary, *, when: datetime, session_id: str) -> list[str]:
    """Render a summary as self-contained `- HH:MM [session] kind: text` lines.

    Every item is redacted, each line is capped, and empty kinds are omitted.
    """
    at, session = as_local(when), short_session(session_id)
    sections = (
        ("asked", summary.prompts, "; then: ", PROMPT_LIMIT),
        ("learned", summary.learned, "; ", LINE_LIMIT),
        ("files", summary.files, ", ", LINE_LIMIT),
        ("tools", tuple(f"{name}×{count}" for name, count in summary.tools), ", ", LINE_LIMIT),
        ("commands", summary.commands, "; ", COMMAND_LIMIT),
        ("commits", summary.commits, "; ", PROMPT_LIMIT),
    )
    more = dict(summary.more)
    lines = []
    for kind, items, sep, item_limit in sections:
        room = LINE_LIMIT - len(format_line(at, session, kind, ""))
        text = _join_capped(items, sep, room, item_limit, more.get(FIELDS.get(kind, ""), 0))
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
    return append_diary(save_dir, note_lines(session_id, notes, now), now)


def note_lines(session_id: str, notes: Sequence[tuple[str, str]], when: datetime) -> list[str]:
    """(kind, text) notes as diary lines, each redacted and capped."""
    at, session = as_local(when), short_session(session_id)
    return [format_line(at, session, kind, _clean(text, NOTE_LIMIT)) for kind, text in notes]


def _clean(text: str, limit: int) -> str:
    """Redact, flatten whitespace and control characters, then cut to `limit`, in that order, so a cut never
    splits a secret. Text from a transcript: a key pasted bare in a prompt is redacted without a label too."""
    flat = _WHITESPACE.sub(" ", _NOT_TEXT.sub(" ", redact(_head(text, limit * 8 + 4096), unlabelled=True)))
    return _truncate(flat.strip(), limit)


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


def _join_capped(items: Sequence[str], sep: str, limit: int, item_limit: int, unlisted: int = 0) -> str:
    """Clean and join items while they fit in `limit`, then end with `… +N more` for the rest (and for
    `unlisted` more that were only counted).

    Items are cleaned lazily, so a long session only pays for redacting what is shown.
    """
    out = ""
    for index, raw in enumerate(items):
        item = _clean(raw, item_limit)
        rest = len(items) - index - 1 + unlisted
        piece = item if not out else sep + item
        reserve = len(f" … +{rest} more") if rest else 0
        if len(out) + len(piece) + reserve <= limit:
            out += piece
            continue
        if out:
            return f"{out} … +{rest + 1} more"
        more = f" +{rest} more" if rest else ""
        return _truncate(item, limit - len(more)) + more  # even the first item is too long: cut it
    return f"{out} … +{unlisted} more" if out and unlisted else out


# --- offsets ----------------------------------------------------------------------------------


class OffsetStore:
    """Per-session transcript byte offsets in one JSON file, so each Stop reads only what is new.

    Entries are `{session_id: {"offset": int, "path": str, "seen": epoch}}`, plus any
    state a track keeps beside its offset (the checkpoint's waiting decisions). The
    file is replaced atomically; a corrupt file is treated as empty (the worst
    case is one session logged twice, not a broken hook); entries unseen for
    `max_age_s` are pruned on write. Hold `lock()` around check-write-advance (is the
    entry still the one read before the transcript was?) so two hooks cannot both log
    the same events.
    """

    def __init__(self, path: Path, *, max_age_s: float = OFFSET_MAX_AGE_S, top: Path | str | None = None) -> None:
        self.path = Path(path)
        self.max_age_s = max_age_s
        self.top = top  # the state folder: the file is the owner's alone from there down (pinky.base.private)

    def get(self, session_id: str, transcript_path: Path | str | None = None) -> int:
        """The stored offset, or 0 when unknown or recorded for a different transcript file."""
        entry = self._load().get(session_id)
        if entry is None:
            return 0
        if transcript_path is not None and entry.get("path") not in (None, str(transcript_path)):
            return 0
        return entry["offset"]

    def offsets(self) -> dict[str, tuple[int, str | None]]:
        """Every session's (offset, transcript path), read once (an import checks hundreds of sessions)."""
        return {sid: (e["offset"], e.get("path")) for sid, e in self._load().items()}

    def entry(self, session_id: str) -> dict | None:
        """The stored entry as it is (offset, path, seen, and any state kept beside them), or None."""
        return self._load().get(session_id)

    def set(
        self,
        session_id: str,
        offset: int,
        transcript_path: Path | str | None = None,
        *,
        now: float | None = None,
        extra: dict | None = None,
    ) -> dict:
        """Record `offset` (and `extra`, JSON values kept beside it) for `session_id`, pruning stale
        sessions, and write the file atomically; return the entry as stored."""
        if offset < 0:
            raise InvalidInput(f"offset must be >= 0, got {offset}")
        now = time.time() if now is None else now
        entries = {sid: e for sid, e in self._load().items() if now - e.get("seen", now) <= self.max_age_s}
        entry: dict = {**(extra or {}), "offset": offset, "seen": now}
        if transcript_path is not None:
            entry["path"] = str(transcript_path)
        entries[session_id] = entry
        private.write_private(self.path, json.dumps(entries, sort_keys=True), self.top, durable=True)
        return entry

    def set_many(self, offsets: dict[str, tuple[int, str]], *, now: float | None = None) -> None:
        """Record many sessions' (offset, transcript path) in one write (an import of a thousand sessions would
        rewrite the file a thousand times); an entry already further on is kept. Hold `lock()` around it."""
        now = time.time() if now is None else now
        entries = {sid: e for sid, e in self._load().items() if now - e.get("seen", now) <= self.max_age_s}
        for session_id, (offset, path) in offsets.items():
            kept = entries.get(session_id)
            if kept is not None and kept.get("path") in (None, path) and kept["offset"] >= offset:
                continue
            entries[session_id] = {"offset": offset, "seen": now, "path": path}
        fileio.atomic_write(self.path, json.dumps(entries, sort_keys=True))

    def lock(self) -> fileio.FileLock:
        """An exclusive advisory lock beside the offsets file (a no-op where fcntl is missing)."""
        private.private_folders(self.path.parent, self.top or self.path.parent)
        return fileio.file_lock(self.path.with_name(self.path.name + ".lock"), mode=private.PRIVATE_FILE)

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
