"""Take in a project's past sessions: find those with something not recorded yet, replay them into the diary
(`pinky.capture.session_replay`: turn by turn, as the Stop hook would have written them), keep what they learned as
candidate notes, and remember how far each was read.

The turns of all sessions are spooled on disk and written in the order their Stops fired, so a day's file holds
them where the Stop hooks would have put them. Nothing is recorded twice: reading starts where the Stop hook's offset
for the session stopped (a session pinky already watched) or where an earlier import stopped
(`imported-sessions.json`, kept without expiry), and after each batch written both offsets move past it: a second
import, or a later Stop hook on the resumed session, reads only what is new. The capture rules
(`pinky.capture.evidence`) judge each turn as the Stop hook would, but nothing is asked or saved: what they find is
kept as candidate notes (`pinky.capture.candidates`) for a person or the agent.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pinky.base import fileio
from pinky.capture.candidates import candidates_path, merge_candidates
from pinky.capture.diary import append_diary
from pinky.capture.past_sessions import PastSession, SessionSource, find_sessions
from pinky.capture.recorder import OFFSET_MAX_AGE_S, OffsetStore
from pinky.capture.session_replay import SessionImport, Spool
from pinky.errors import Conflict

__all__ = ["IMPORT_COMMAND", "ImportSummary", "Places", "import_sessions", "ledger_path", "unread",
           "waiting_line"]

RECENT_S = OFFSET_MAX_AGE_S  # sessions changed this recently get a Stop-hook offset too: the host may resume them
BATCH_LINES = 2000  # diary lines appended in one write


def ledger_path(state_dir: str) -> Path:
    """Where imports keep how far they read each session (never pruned: an import of last year stays done)."""
    return Path(state_dir) / "imported-sessions.json"


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
