"""PreCompact: before Claude Code compacts the conversation, keep what the brain can keep.

Flushes the turn so far into the diary (as Stop does, from the same per-session offset) and
appends the decisions and open threads of everything said since the previous checkpoint
(`pinky.capture.checkpoint`), read from a checkpoint offset of its own, in the same pass over the
transcript. A backlog longer than PINKY_RECORD_SECONDS is continued by the next hook that runs.
Prints nothing: compaction proceeds.
"""

from __future__ import annotations

import os

from pinky.base.locations import Locations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from pinky.hooks.state import StateFiles


def pre_compact(payload: dict, loc: Locations, state: StateFiles,
                translate: Callable[[dict], list[dict]] | None = None) -> None:
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str) or not transcript:
        return
    if loc.save_dir is None or not os.path.isdir(loc.save_dir):
        return
    from pathlib import Path

    from pinky.capture.recorder import CheckpointTrack, OffsetStore, TurnTrack, record
    from pinky.hooks.stop import index_files, offsets_path, record_budget

    path = Path(os.path.expanduser(transcript))
    checkpoints = OffsetStore(Path(os.path.join(loc.state_dir, "hooks", "checkpoint-offsets.json")),
                              top=loc.state_dir)
    tracks = [TurnTrack(OffsetStore(Path(offsets_path(loc)), top=loc.state_dir), session_id, path),
              CheckpointTrack(checkpoints, session_id, path)]
    written = record(path, Path(loc.save_dir), tracks, budget=record_budget(), translate=translate)  # one pass
    if written:
        index_files(loc, written)
