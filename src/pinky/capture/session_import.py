"""Take in a past session: its diary written as the Stop hook would have written it, turn by turn, on the day it ran.

A host fires its Stop hook when a turn ends, and the hook records what the transcript gained since the previous Stop
(`pinky.capture.recorder`). A past session is replayed the same way: it is streamed line by line
(`pinky.capture.transcript.Transcript`, so memory stays bounded however large the file), cut into turns at each
prompt the user typed, and each turn goes through the Stop hook's own `TurnTrack` and `append_diary` with the moment
of the turn's last line as the hook's clock: the same lines, dated and timed as they would have been, redacted,
tagged with the host, `learned:` for what the agent saved, damaged lines counted in `skipped:`.

The turns of all sessions are spooled on disk and written in the order their Stops fired, so a day's file holds
them where the Stop hooks would have put them. Nothing is recorded twice: reading starts where the Stop hook's offset
for the session stopped (a session pinky already watched) or where an earlier import stopped
(`imported-sessions.json`, kept without expiry), and after each batch written both offsets move past it: a second
import, or a later Stop hook on the resumed session, reads only what is new. The capture rules
(`pinky.capture.evidence`) judge each turn as the Stop hook would, but nothing is asked or saved: what they find is
kept as candidate notes (`pinky.capture.candidates`) for a person or the agent.
"""

from __future__ import annotations

import heapq
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from pinky.base import fileio
from pinky.capture.candidates import Candidate, candidate_from, candidates_path, merge_candidates
from pinky.capture.diary import append_diary
from pinky.capture.evidence import Timeline
from pinky.capture.past_sessions import PastSession, SessionSource, find_sessions
from pinky.capture.recorder import OFFSET_MAX_AGE_S, OffsetStore, TurnTrack
from pinky.capture.transcript import Transcript, prompt_text
from pinky.errors import Conflict, NotFound

__all__ = ["IMPORT_COMMAND", "ImportResult", "ImportSummary", "Places", "SessionImport", "import_sessions",
           "ledger_path", "unread", "waiting_line"]

Progress = Callable[[int], None]  # bytes read since the last call
RECENT_S = OFFSET_MAX_AGE_S  # sessions changed this recently get a Stop-hook offset too: the host may resume them
BATCH_LINES = 2000  # diary lines appended in one write
PER_SESSION = 20  # candidates kept of one session


def ledger_path(state_dir: str) -> Path:
    """Where imports keep how far they read each session (never pruned: an import of last year stays done)."""
    return Path(state_dir) / "imported-sessions.json"


@dataclass
class ImportResult:
    """What one session's replay found."""

    session: PastSession
    end: int = 0  # where reading stopped
    turns: int = 0
    skipped: int = 0
    candidates: list[Candidate] = field(default_factory=list)


class Spool:
    """The turns' diary lines of every session, kept on disk until all are read and then given back in the order
    their Stops fired: a day's file gets each session's lines where the Stop hook would have put them, in memory
    bounded however many gigabytes the sessions hold. One JSON-lines file per session, each in its own order
    already, merged FAN_IN at a time (an external merge sort) in a temporary folder."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files: list[str] = []
        self._out: TextIO | None = None
        self.seq = 0

    def start(self, session: int) -> None:
        self._close()
        self.files.append(os.path.join(self.folder, f"session-{session}.jsonl"))
        self._out = open(self.files[-1], "w", encoding="utf-8")  # noqa: SIM115 - closed by the next start or close

    def add(self, moment: float, session: int, when: datetime, lines: list[str], end: int) -> None:
        assert self._out is not None, "start(session) first"
        self.seq += 1
        self._out.write(json.dumps([moment, session, self.seq, when.isoformat(), lines, end]) + "\n")

    def in_order(self) -> Iterator[tuple[int, datetime, list[str], int]]:
        """(session index, when, lines, end offset) by the moment their Stops fired."""
        self._close()
        files, round_ = self.files, 0
        while len(files) > FAN_IN:
            merged = []
            for group in range(0, len(files), FAN_IN):
                merged.append(os.path.join(self.folder, f"merge-{round_}-{group}.jsonl"))
                with open(merged[-1], "w", encoding="utf-8") as out:
                    out.writelines(_merged(files[group:group + FAN_IN]))
            files, round_ = merged, round_ + 1
        for line in _merged(files):
            _, session, _, at, lines, end = json.loads(line)
            yield session, datetime.fromisoformat(at), lines, end

    def _close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def close(self) -> None:
        self._close()


FAN_IN = 64  # spool files merged at once (each an open file)


def _merged(paths: list[str]) -> Iterator[str]:
    """The lines of these sorted spool files, merged by (moment, session, seq)."""
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, encoding="utf-8")) for path in paths]
        yield from heapq.merge(*handles, key=_order)


def _order(line: str) -> tuple[float, int, int]:
    moment, session, seq = json.loads(line)[:3]
    return moment, session, seq


class SessionImport:
    """Replays one past session into the spool, turn by turn as its Stops would have recorded it."""

    def __init__(self, session: PastSession, index: int, start: int, spool: Spool,
                 progress: Progress | None = None) -> None:
        self.session, self.index, self.start, self.spool = session, index, start, spool
        self.progress = progress or (lambda n: None)
        self.result = ImportResult(session, end=start)
        self.store = OffsetStore(Path(os.devnull))  # TurnTrack's own offset is not used: the import keeps its own
        self.moment = float("-inf")
        self.fed = self.prompted = False

    def run(self) -> ImportResult:
        try:
            transcript = Transcript(self.session.path)
        except (NotFound, OSError):
            return self.result
        with transcript:
            start = transcript.resume(self.start)
            self.progress(start)
            if start < transcript.size:
                self._replay(transcript, start)
            self.result.end = max(transcript.end, start)
        return self.result

    def _replay(self, transcript: Transcript, start: int) -> None:
        source = self.session.source
        translate = source.translator(self.session.cwd) if source is not None else None
        self._new_turn()
        stamp = self._file_time()
        position = start
        for begin, end, item in transcript.lines(start):
            self.progress(end - position)
            position = end
            events = translate(item) if translate is not None and isinstance(item, dict) else [item]
            typed = any(isinstance(e, dict) and e.get("type") == "user" and prompt_text(e) for e in events)
            if typed and self.prompted:  # a new prompt: the previous turn ended, and its Stop fired
                self._close_turn(begin, stamp)
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

    def _new_turn(self) -> None:
        self.track = TurnTrack(self.store, self.session.session_id, self.session.path)
        self.timeline = Timeline()
        self.fed = self.prompted = False

    def _close_turn(self, end: int, when: datetime) -> None:
        """The turn ending at byte `end`, as its Stop at `when` would have recorded it, into the spool."""
        lines, _ = self.track.flush(when, True)
        evidence = [] if self.timeline.saved else self.timeline.evidence()
        if self.timeline.saved:  # the agent saved: what the session learned so far was decided (as the ask does)
            self.result.candidates.clear()
        if evidence:
            self.result.candidates.append(candidate_from(evidence, self.session, when, self.timeline.prompts))
            del self.result.candidates[:-PER_SESSION]  # the newest: a session that learns all day is still one
        self.result.turns += 1
        self._new_turn()
        self.moment = max(self.moment, when.timestamp())  # a session's turns stay in its order if its clock jumped
        if lines:
            self.spool.add(self.moment, self.index, when, lines, end)

    def _file_time(self) -> datetime:
        try:
            return datetime.fromtimestamp(os.stat(self.session.path).st_mtime).astimezone()
        except OSError:
            return datetime.now().astimezone()


# Lines whose time is not the turn's: Claude Code's queue-operation (the user queued the next prompt, written before
# the turn ends); Copilot CLI's hook runs (its agentStop hook's end comes seconds after the turn's), and the shutdown
# and resume of a session continued later (a resume the next day would date the turn before it that day).
NOT_THE_TURN = ("queue-operation", "hook.start", "hook.end", "session.shutdown", "session.resume")


def _stamp(item: dict | str) -> datetime | None:
    """When a transcript line was written: its `timestamp` (ISO 8601, as the hosts with transcripts write it)."""
    if not isinstance(item, dict) or item.get("type") in NOT_THE_TURN:
        return None
    value = item.get("timestamp")
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


def _starts(sessions: list[PastSession], stop_offsets: Path, ledger: Path) -> list[int]:
    """Where each session's recording stopped: the Stop hook's offset or an earlier import's, the further on."""
    stop, done = OffsetStore(stop_offsets), OffsetStore(ledger, max_age_s=float("inf"))
    return [max(stop.get(s.session_id, str(s.path)), done.get(_ledger_key(s), str(s.path))) for s in sessions]


def _ledger_key(session: PastSession) -> str:
    """The import's own key: the session and its file (a host that continues a session in a new file, as a resumed
    Codex session may, must not make the import forget how far it read the first)."""
    return f"{session.session_id} {session.path}"


def unread(sessions: list[PastSession], stop_offsets: Path, ledger: Path) -> list[PastSession]:
    """The sessions with bytes that neither the Stop hook nor an import recorded yet."""
    return [s for s, start in zip(sessions, _starts(sessions, stop_offsets, ledger), strict=True) if start < s.size]


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

    starts = _starts(sessions, stop_offsets, ledger)
    with tempfile.TemporaryDirectory(prefix="pinky-import-") as folder:
        spool = Spool(folder)
        try:
            ends = []
            for index, session in enumerate(sessions):
                before = done
                spool.start(index)
                result = SessionImport(session, index, starts[index], spool, advance).run()
                done = before + session.size
                advance(0)
                ends.append(result.end)
                summary.turns += result.turns
                summary.skipped += result.skipped
                summary.new_candidates += merge_candidates(candidates, result.candidates)
            _write(spool, sessions, (starts, ends), save_dir, OffsetStore(stop_offsets), ledger, summary)
        finally:
            spool.close()
    return summary


def _write(spool: Spool, sessions: list[PastSession], read: tuple[list[int], list[int]], save_dir: Path,
           stop: OffsetStore, ledger: Path, summary: ImportSummary) -> None:
    """Append the spooled turns day by day in the order their Stops fired; after each write, move the offsets past
    what it holds, so an import stopped midway resumes without writing a line twice. A session whose Stop hook
    recorded it meanwhile (it is running now) is left to the hook from there. `read`: where each session's reading
    started and ended."""
    done = OffsetStore(ledger, max_age_s=float("inf"))
    ours = dict(enumerate(read[0]))  # how far the Stop hook's offset may be without another writer
    moved: dict[int, int] = {}
    batch: list[str] = []
    day, when, live = None, None, _live(stop, sessions, ours)
    imported: set[int] = set()

    def flush() -> None:
        nonlocal live
        if batch and when is not None:
            path = append_diary(save_dir, batch, when)
            if path not in summary.written:
                summary.written.append(path)
            summary.lines += len(batch)
            batch.clear()
        _save(stop, done, sessions, moved)
        ours.update(moved)
        live = _live(stop, sessions, ours)

    for index, at, lines, end in spool.in_order():
        if at.astimezone().date() != day or len(batch) >= BATCH_LINES:
            flush()
            day = at.astimezone().date()
        if index in live:
            continue
        when = at
        batch += lines
        moved[index] = end
        imported.add(index)
    flush()
    _save(stop, done, sessions, {i: end for i, end in enumerate(read[1]) if i not in live})
    summary.imported = len(imported)
    for index in imported:
        summary.hosts[sessions[index].host] = summary.hosts.get(sessions[index].host, 0) + 1


def _live(stop: OffsetStore, sessions: list[PastSession], ours: dict[int, int]) -> set[int]:
    """The sessions whose Stop hook offset moved past what this import wrote: a hook records them now."""
    stored = stop.offsets()
    return {i for i, s in enumerate(sessions) if s.session_id in stored
            and stored[s.session_id][1] in (None, str(s.path)) and stored[s.session_id][0] > ours.get(i, 0)}


def _save(stop: OffsetStore, done: OffsetStore, sessions: list[PastSession], moved: dict[int, int]) -> None:
    """The import's offsets for these sessions, and the Stop hook's for those the host may still resume."""
    if not moved:
        return
    recent = time.time() - RECENT_S
    offsets = {_ledger_key(sessions[i]): (end, str(sessions[i].path)) for i, end in moved.items()}
    with done.lock():
        done.set_many(offsets)
    fresh = {sessions[i].session_id: (end, str(sessions[i].path)) for i, end in moved.items()
             if _mtime(sessions[i].path) >= recent}
    if fresh:
        with stop.lock():
            stop.set_many(fresh)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


STOP_OFFSETS = "diary-offsets.json"  # the Stop hook's offsets under pinky's state folder (pinky.hooks.stop)


@dataclass(frozen=True)
class Places:
    """Where a project's import reads and writes: its root and save dir, and pinky's state folder."""

    root: Path
    save_dir: Path
    state_dir: Path
    hosts: Sequence[SessionSource] = ()  # the hosts whose sessions are read (pinky.hosts.catalog.all_hosts())

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
        return find_sessions(str(self.root), self.hosts, home, str(self.state_dir))

    def waiting(self, home: str | None = None) -> list[PastSession]:
        """The sessions with something neither the Stop hook nor an import recorded yet."""
        return unread(self.sessions(home), self.stop_offsets, self.ledger)

    def run(self, sessions: list[PastSession], progress: Callable[[int, int], None] | None = None) -> ImportSummary:
        """Take these sessions in; one import at a time (two would both write what neither had recorded)."""
        self.ledger.parent.mkdir(parents=True, exist_ok=True)
        try:
            with fileio.file_lock(self.ledger.with_name("import-sessions.lock"), blocking=False):
                return import_sessions(sessions, self.save_dir, self.stop_offsets, self.ledger, self.candidates,
                                       progress)
        except BlockingIOError:
            raise Conflict("another `pinky-brain import-sessions` is running on this machine; "
                           "run it again when that one is done") from None


IMPORT_COMMAND = "pinky-brain import-sessions"


def waiting_line(sessions: list[PastSession]) -> str:
    """The one line `init` and the page show while past sessions wait to be taken in, naming their hosts."""
    count = len(sessions)
    hosts = ", ".join(dict.fromkeys(session.display or session.host for session in sessions))
    return (f"{'1 past session' if count == 1 else f'{count:,} past sessions'} of this project on this machine "
            f"({hosts}) can be taken in: `{IMPORT_COMMAND}` writes their diary and lists what they learned")
