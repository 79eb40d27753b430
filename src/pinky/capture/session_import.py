"""Take in a past session: its diary written as the Stop hook would have written it, turn by turn, on the day it ran.

A host fires its Stop hook when a turn ends, and the hook records what the transcript gained since the previous Stop
(`pinky.capture.recorder`). A past session is replayed the same way: it is streamed line by line
(`pinky.capture.transcript.Transcript`, so memory stays bounded however large the file), cut into turns at each
prompt the user typed, and each turn goes through the Stop hook's own `TurnTrack` and `append_diary` with the moment
of the turn's last line as the hook's clock: the same lines, dated and timed as they would have been, redacted,
tagged with the host, `learned:` for what the agent saved, damaged lines counted in `skipped:`.

Nothing is recorded twice. Reading starts where the Stop hook's offset for the session stopped (a session pinky
already watched) or where an earlier import stopped (`imported-sessions.json`, kept without expiry), and after
each turn written both offsets move past it: a second import, or a later Stop hook on the resumed session, reads only
what is new. The capture rules (`pinky.capture.evidence`) judge each turn as the Stop hook would, but nothing is
asked or saved: what they find is kept as candidate notes (`pinky.capture.candidates`) for a person or the agent.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pinky.capture.candidates import Candidate, candidate_from, candidates_path, merge_candidates
from pinky.capture.diary import append_diary
from pinky.capture.evidence import Timeline
from pinky.capture.foreign import translator
from pinky.capture.past_sessions import PastSession, find_sessions
from pinky.capture.recorder import OffsetStore, TurnTrack
from pinky.capture.transcript import Transcript, prompt_text
from pinky.errors import NotFound

__all__ = ["IMPORT_COMMAND", "ImportResult", "ImportSummary", "Places", "SessionImport", "import_sessions", "ledger_path",
           "unread", "waiting_line"]

Progress = Callable[[int], None]  # bytes read since the last call


def ledger_path(state_dir: str) -> Path:
    """Where imports keep how far they read each session (never pruned: an import of last year stays done)."""
    return Path(state_dir) / "imported-sessions.json"


@dataclass
class ImportResult:
    """What one session's import did."""

    session: PastSession
    turns: int = 0
    lines: int = 0
    skipped: int = 0
    written: list[Path] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


class SessionImport:
    """Replays one past session into the project's diary: `SessionImport(session, save_dir, ...).run()`."""

    def __init__(self, session: PastSession, save_dir: Path, stop_offsets: Path, ledger: Path,
                 progress: Progress | None = None) -> None:
        self.session, self.save_dir = session, save_dir
        self.path = str(session.path)
        self.stop_store, self.ledger = OffsetStore(stop_offsets), OffsetStore(ledger, max_age_s=float("inf"))
        self.progress = progress or (lambda n: None)
        self.result = ImportResult(session)

    def start_offset(self) -> int:
        return max(self.stop_store.get(self.session.session_id, self.path),
                   self.ledger.get(self.session.session_id, self.path))

    def run(self) -> ImportResult:
        try:
            transcript = Transcript(self.session.path)
        except (NotFound, OSError):
            return self.result
        with transcript:
            start = transcript.resume(self.start_offset())
            self.progress(start)
            if start < transcript.size:
                self._replay(transcript, start)
        return self.result

    def _replay(self, transcript: Transcript, start: int) -> None:
        translate = translator(self.session.host, self.session.cwd)
        self._new_turn()
        stamp = self._file_time()
        position = start
        for begin, end, item in transcript.lines(start):
            self.progress(end - position)
            position = end
            events = translate(item) if translate is not None and isinstance(item, dict) else [item]
            typed = any(isinstance(e, dict) and e.get("type") == "user" and prompt_text(e) for e in events)
            if typed and self.prompted:  # a new prompt: the previous turn ended, and its Stop fired
                if not self._close_turn(begin, stamp):
                    return
            self.prompted = self.prompted or typed
            stamp = _stamp(item) or stamp
            for event in events:
                self.fed = True
                self.track.feed(begin, event)
                if isinstance(event, dict):
                    self.timeline.add(event)
                else:
                    self.result.skipped += 1
        if self.fed:
            self._close_turn(transcript.end, stamp)
        self._advance(transcript.end)

    def _new_turn(self) -> None:
        self.track = TurnTrack(self.stop_store, self.session.session_id, self.session.path)
        self.timeline, self.fed, self.prompted = Timeline(), False, False

    def _close_turn(self, end: int, when: datetime) -> bool:
        """Write the turn that ends at byte `end` as its Stop would have; False when a live Stop hook of the same
        session recorded past it meanwhile (the rest is the hook's)."""
        lines, _ = self.track.flush(when, True)
        if not self.timeline.saved:
            self.result.candidates += [candidate_from(e, self.session, when, self.timeline.prompts)
                                       for e in self.timeline.evidence()]
        self.result.turns += 1
        self._new_turn()
        if not lines:
            return True
        with self.stop_store.lock():
            if self.stop_store.get(self.session.session_id, self.path) >= end:
                return False
            written = append_diary(self.save_dir, lines, when)
            self._advance(end)
        self.result.lines += len(lines)
        if written not in self.result.written:
            self.result.written.append(written)
        return True

    def _advance(self, end: int) -> None:
        """Both offsets past `end`: the Stop hook's (a resumed session is recorded from there) and the import's."""
        session = self.session.session_id
        if self.stop_store.get(session, self.path) < end:
            self.stop_store.set(session, end, self.path)
        if self.ledger.get(session, self.path) < end:
            self.ledger.set(session, end, self.path)

    def _file_time(self) -> datetime:
        try:
            return datetime.fromtimestamp(os.stat(self.session.path).st_mtime).astimezone()
        except OSError:
            return datetime.now().astimezone()


def _stamp(item: dict | str) -> datetime | None:
    """When a transcript line was written: its `timestamp` (ISO 8601, as all three hosts write it)."""
    value = item.get("timestamp") if isinstance(item, dict) else None
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


# --- a project's import -----------------------------------------------------------------------


@dataclass
class ImportSummary:
    """What a project's import did, over every session of it the hosts kept."""

    sessions: int = 0
    imported: int = 0  # sessions that had something not recorded yet
    turns: int = 0
    lines: int = 0
    skipped: int = 0
    new_candidates: int = 0
    written: list[Path] = field(default_factory=list)
    hosts: dict[str, int] = field(default_factory=dict)


def unread(sessions: list[PastSession], stop_offsets: Path, ledger: Path) -> list[PastSession]:
    """The sessions with bytes that neither the Stop hook nor an import recorded yet."""
    stop, done = OffsetStore(stop_offsets), OffsetStore(ledger, max_age_s=float("inf"))
    return [s for s in sessions if max(stop.get(s.session_id, str(s.path)), done.get(s.session_id, str(s.path)))
            < s.size]


def import_sessions(sessions: list[PastSession], save_dir: Path, stop_offsets: Path, ledger: Path,
                    candidates: Path, progress: Callable[[int, int], None] | None = None) -> ImportSummary:
    """Replay each session into the diary and keep what the capture rules saw as candidates. `progress(done, total)`
    in bytes, as the sessions are read."""
    summary = ImportSummary(sessions=len(sessions))
    total, done = sum(s.size for s in sessions), 0

    def advance(read: int) -> None:
        nonlocal done
        done += read
        if progress is not None:
            progress(min(done, total), total)

    for session in sessions:
        before = done
        result = SessionImport(session, save_dir, stop_offsets, ledger, advance).run()
        done = before + session.size
        advance(0)
        summary.turns += result.turns
        summary.lines += result.lines
        summary.skipped += result.skipped
        summary.new_candidates += merge_candidates(candidates, result.candidates)
        if result.lines:
            summary.imported += 1
            summary.hosts[session.host] = summary.hosts.get(session.host, 0) + 1
        summary.written += [p for p in result.written if p not in summary.written]
    return summary


STOP_OFFSETS = "diary-offsets.json"  # the Stop hook's offsets under pinky's state folder (pinky.hooks.stop)


@dataclass(frozen=True)
class Places:
    """Where a project's import reads and writes: its root and save dir, and pinky's state folder."""

    root: Path
    save_dir: Path
    state_dir: Path

    @property
    def stop_offsets(self) -> Path:
        return self.state_dir / STOP_OFFSETS

    @property
    def ledger(self) -> Path:
        return ledger_path(str(self.state_dir))

    @property
    def candidates(self) -> Path:
        return candidates_path(str(self.state_dir), str(self.save_dir))

    def sessions(self, home: str | None = None) -> list[PastSession]:
        """Every session of the project the hosts kept on this machine."""
        return find_sessions(str(self.root), home)

    def waiting(self, home: str | None = None) -> list[PastSession]:
        """The sessions with something neither the Stop hook nor an import recorded yet."""
        return unread(self.sessions(home), self.stop_offsets, self.ledger)

    def run(self, sessions: list[PastSession], progress: Callable[[int, int], None] | None = None) -> ImportSummary:
        return import_sessions(sessions, self.save_dir, self.stop_offsets, self.ledger, self.candidates, progress)


IMPORT_COMMAND = "pinky-brain import-sessions"


def waiting_line(count: int) -> str:
    """The one line `init`, `doctor` and the page show while past sessions wait to be taken in."""
    sessions = "1 past session" if count == 1 else f"{count:,} past sessions"
    return (f"{sessions} of this project on this machine (Claude Code, Codex, Gemini CLI) can be taken in: "
            f"`{IMPORT_COMMAND}` writes their diary and lists what they learned")
