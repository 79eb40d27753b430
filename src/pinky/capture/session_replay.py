"""Replay one past session: its diary written as the Stop hook would have written it, turn by turn, on the day it ran.

A host fires its Stop hook when a turn ends, and the hook records what the transcript gained since the previous Stop
(`pinky.capture.recorder`). A past session is replayed the same way: it is streamed line by line
(`pinky.capture.transcript.Transcript`, so memory stays bounded however large the file), cut into turns at each
prompt the user typed, and each turn goes through the Stop hook's own `TurnTrack` and `append_diary` with the moment
of the turn's last line as the hook's clock: the same lines, dated and timed as they would have been, redacted,
tagged with the host, `learned:` for what the agent saved, damaged lines counted in `skipped:`. The turns' lines go
to a `Spool` on disk, which gives every session's back in the order their Stops fired (written by
`pinky.capture.session_import`).
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from pinky.capture.candidates import Candidate, candidate_from
from pinky.capture.evidence import Timeline
from pinky.capture.past_sessions import PastSession
from pinky.capture.recorder import OffsetStore, TurnTrack
from pinky.capture.transcript import Transcript, prompt_text
from pinky.errors import NotFound

__all__ = ["ImportResult", "SessionImport", "Spool"]

Progress = Callable[[int], None]  # bytes read since the last call
PER_SESSION = 20  # candidates kept of one session


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
