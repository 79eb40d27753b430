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
    from pathlib import Path

    from pinky.checkpoint import decisions_and_open_threads
    from pinky.errors import NotFound
    from pinky.hooks.stop import index_files, offsets_path
    from pinky.recorder import OffsetStore, append_notes, record_turn
    from pinky.transcript import read_new_events

    transcript_path = Path(os.path.expanduser(transcript))
    diary, _ = record_turn(transcript_path, session_id, Path(loc.save_dir), Path(offsets_path(loc)))
    store = OffsetStore(Path(os.path.join(loc.state_dir, "hooks", "checkpoint-offsets.json")))
    with store.lock():
        start = store.get(session_id, transcript_path)
        try:
            events, end = read_new_events(transcript_path, start)
        except NotFound:
            events, end = [], start
        decided, still_open = decisions_and_open_threads(events)
        notes = [("decided", text) for text in decided] + [("open", text) for text in still_open]
        diary = append_notes(Path(loc.save_dir), session_id, notes) or diary
        if end != start:
            store.set(session_id, end, transcript_path)
    if diary is not None:
        index_files(loc, [diary])
