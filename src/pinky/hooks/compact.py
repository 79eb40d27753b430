"""PreCompact: before Claude Code compacts the conversation, keep what the brain can keep.

Flushes the turn so far into the diary (as Stop does, from the same per-session offset) and
appends the decisions and open threads of everything said since the previous checkpoint
(`pinky.checkpoint`), read from a checkpoint offset of its own. Prints nothing: compaction proceeds.
"""

from __future__ import annotations

import os

from pinky.locations import Locations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pinky.hooks import StateFiles


def pre_compact(payload: dict, loc: Locations, state: StateFiles) -> None:
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str) or not transcript:
        return
    if loc.save_dir is None or not os.path.isdir(loc.save_dir):
        return
    from datetime import datetime
    from pathlib import Path

    from pinky.checkpoint import decisions_and_open_threads
    from pinky.diary import append_diary, as_local, format_line, short_session
    from pinky.errors import NotFound
    from pinky.hooks.stop import index_files
    from pinky.recorder import OffsetStore, clean_line, record_turn
    from pinky.transcript import read_new_events

    transcript_path = Path(os.path.expanduser(transcript))
    diary, _ = record_turn(transcript_path, session_id, Path(loc.save_dir),
                           Path(os.path.join(loc.state_dir, "diary-offsets.json")))
    store = OffsetStore(Path(os.path.join(loc.state_dir, "hooks", "checkpoint-offsets.json")))
    with store.lock():
        start = store.get(session_id, transcript_path)
        try:
            events, end = read_new_events(transcript_path, start)
        except NotFound:
            events, end = [], start
        decided, still_open = decisions_and_open_threads(events)
        now = datetime.now().astimezone()
        at, session = as_local(now), short_session(session_id)
        lines = [format_line(at, session, "decided", clean_line(t)) for t in decided]
        lines += [format_line(at, session, "open", clean_line(t)) for t in still_open]
        if lines:
            diary = append_diary(Path(loc.save_dir), lines, now)
        if end != start:
            store.set(session_id, end, transcript_path)
    if diary is not None:
        index_files(loc, [diary])
