"""Stop: append what the turn did to today's diary and make it searchable at once.

`pinky.diary.record_stop` reads the transcript from a per-session byte offset (so nothing
is written twice), redacts credential-shaped strings and appends a few lines to
`<save_dir>/diary/YYYY-MM-DD.md`. The diary file is then indexed for full text right away
(`index_file(embed=False)`); its vectors come with the next reindex or the MCP server.
When a week or month has just closed, its rollup is written by a detached `pinky-hooks
rollup` process, because reading every note's frontmatter does not fit the Stop budget.

Then the capture step (`pinky.hooks.learned`) may ask the agent, once per session, to save what
the turn learned: the only output this hook ever prints, since any output makes Claude continue.

Skipped: SubagentStop (the parent's transcript records the subagent's work; the empty-agent_type
one that /compact fires is noise) and projects without a save dir (never `pinky init`ed). With
`stop_hook_active` (Claude continues because a Stop hook asked) the turn is recorded, never asked.
"""

from __future__ import annotations

import os
import time

from pinky.locations import ENV_HOOKS_NO_BACKGROUND, Locations

TYPE_CHECKING = False  # `typing` is not loaded on the hooks' path
if TYPE_CHECKING:
    from pinky.hooks import StateFiles


def offsets_path(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "diary-offsets.json")


def stop(payload: dict, loc: Locations, state: StateFiles) -> dict | None:
    """Record the turn in the diary; return the capture ask (`decision: block`) or None."""
    if payload.get("hook_event_name") == "SubagentStop":
        return None
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str) or not transcript:
        return None
    if loc.save_dir is None or not os.path.isdir(loc.save_dir):
        return None
    from pathlib import Path

    from pinky.hooks.learned import capture_turn
    from pinky.recorder import append_notes, record_turn

    diary, events = record_turn(Path(os.path.expanduser(transcript)), session_id, Path(loc.save_dir),
                                Path(offsets_path(loc)))
    # While Claude continues because a Stop hook asked it to, record the turn but never ask again.
    ask, notes = capture_turn(payload, loc, state, events, continuing=payload.get("stop_hook_active") is True)
    del events  # a 2 MB transcript is ~6 MB of objects: not kept alive (and re-scanned by the GC) while indexing
    diary = append_notes(Path(loc.save_dir), session_id, [("capture", text) for text in notes]) or diary
    if diary is not None:
        index_files(loc, [diary])
    if _rollups_due(loc, state) and not os.environ.get(ENV_HOOKS_NO_BACKGROUND):
        from pinky.hooks.session import spawn_detached

        spawn_detached(["-c", "import sys; from pinky.hooks import main; sys.exit(main(['rollup']))"], loc)
    return ask


def index_files(loc: Locations, paths: list) -> None:
    """Full-text index these markdown files now; vectors are left for the next reindex."""
    from pathlib import Path

    from pinky.config import config_from
    from pinky.kb import KnowledgeBase

    with KnowledgeBase(config_from(loc)) as kb:  # opening the index loads sqlite-vec by path: no numpy
        for path in paths:
            kb.index_file(Path(path), embed=False)


# --- weekly / monthly rollups ------------------------------------------------------------------


def _rollup_state(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "hooks", "rollups.json")


def _last_rollup(loc: Locations, state: StateFiles) -> str | None:
    value = state.read(_rollup_state(loc)).get(loc.save_dir or "")
    return value if isinstance(value, str) else None


def _rollups_due(loc: Locations, state: StateFiles) -> bool:
    """True once per day at most: a period can only close when the date changes."""
    return _last_rollup(loc, state) != time.strftime("%Y-%m-%d")


def rollup(payload: dict, loc: Locations, state: StateFiles) -> None:
    """Write the rollups of the weeks and months closed since the last run, then index them."""
    import datetime as dt
    from pathlib import Path

    from pinky.rollup import closed_periods, read_diary_lines, write_rollup

    today = dt.date.today()
    last = _last_rollup(loc, state)
    _save_last_rollup(loc, today.isoformat(), state)  # first, so concurrent Stops do not start a second run
    last_run = dt.date.fromisoformat(last) if last else None
    if loc.save_dir is None:
        return
    root = Path(loc.save_dir)
    written = [write_rollup(root, period) for period in closed_periods(last_run, today)
               if read_diary_lines(root, period)]  # a period without diary lines gets no rollup
    if written:
        index_files(loc, written)


def _save_last_rollup(loc: Locations, day: str, state: StateFiles) -> None:
    path = _rollup_state(loc)
    data = state.read(path)
    data[loc.save_dir or ""] = day
    state.write(path, data)