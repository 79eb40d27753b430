"""Stop: append what the turn did to today's diary and make it searchable at once.

`pinky.capture.recorder.record` streams the transcript from a per-session byte offset (so nothing
is written twice), redacts credential-shaped strings and appends a few lines to
`<save_dir>/diary/YYYY-MM-DD.md`, batch by batch, within PINKY_RECORD_SECONDS (the rest of a
long backlog waits for the next run). The diary file is then indexed for full text right away
(`index_file(embed=False)`); its vectors come with the next reindex or the MCP server.
When a week or month has just closed, its rollup is written by a detached `pinky-hooks
rollup` process, because reading every note's frontmatter does not fit the Stop budget; the same
process refreshes a rollup of the current week or month that a user made and the turn outdated.

Then the capture step (`pinky.hooks.learned`) may ask the agent, once per session, to save what
the turn learned: the only output this hook ever prints, since any output makes Claude continue.

Skipped: SubagentStop (the parent's transcript records the subagent's work; the empty-agent_type
one that /compact fires is noise) and projects without a save dir (never `pinky init`ed). With
`stop_hook_active` (Claude continues because a Stop hook asked) the turn is recorded, never asked.
"""

from __future__ import annotations

import os
import time

from pinky.base.locations import ENV_HOOKS_NO_BACKGROUND, ENV_RECORD_SECONDS, Locations

TYPE_CHECKING = False  # `typing` is not loaded on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Callable

    from pinky.hooks.state import StateFiles


RECORD_SECONDS = 20.0  # Claude Code stops the Stop and PreCompact hooks at 30 s; indexing follows the reading


def offsets_path(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "diary-offsets.json")


def record_budget() -> float:
    """Seconds a hook may spend reading the transcript (PINKY_RECORD_SECONDS, default 20)."""
    value = os.environ.get(ENV_RECORD_SECONDS, "").strip()
    try:
        seconds = float(value) if value else RECORD_SECONDS
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        import sys

        sys.stderr.write(f"pinky-hooks: {ENV_RECORD_SECONDS}={value!r} is not a positive number of seconds; "
                         f"using {RECORD_SECONDS:g}\n")
        return RECORD_SECONDS
    return seconds


def stop(payload: dict, loc: Locations, state: StateFiles, translate: Callable[[dict], list[dict]] | None = None,
         ) -> dict | None:
    """Record the turn in the diary; return the capture ask (`decision: block`) or None. `translate` reads another
    host's transcript (`pinky.capture.foreign`)."""
    if payload.get("hook_event_name") == "SubagentStop":
        return None
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str) or not transcript:
        return None
    if loc.save_dir is None or not os.path.isdir(loc.save_dir):
        return None
    from pathlib import Path

    from pinky.capture.evidence import Timeline
    from pinky.capture.recorder import OffsetStore, TurnTrack, append_notes, record
    from pinky.hooks.learned import capture_turn

    path, timeline = Path(os.path.expanduser(transcript)), Timeline()
    offsets = OffsetStore(Path(offsets_path(loc)), top=loc.state_dir)
    turns = TurnTrack(offsets, session_id, path, listeners=[timeline.add])
    written = record(path, Path(loc.save_dir), [turns], budget=record_budget(), translate=translate)
    # While Claude continues because a Stop hook asked it to, record the turn but never ask again.
    ask, notes = capture_turn(payload, loc, state, timeline, continuing=payload.get("stop_hook_active") is True)
    noted = append_notes(Path(loc.save_dir), session_id, [("capture", text) for text in notes])
    written = list(dict.fromkeys(written + ([noted] if noted else [])))
    if written:
        index_files(loc, written)
    if (_rollups_due(loc, state) or _open_rollup_stale(loc, state, written)) and not os.environ.get(
            ENV_HOOKS_NO_BACKGROUND):
        from pinky.hooks.session import spawn_detached

        spawn_detached(["-c", "import sys; from pinky.hooks.dispatch import main; sys.exit(main(['rollup']))"], loc)
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


REFRESH_SECONDS = 600


def _rollup_state(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "hooks", "rollups.json")


def _last_rollup(loc: Locations, state: StateFiles) -> str | None:
    value = state.read(_rollup_state(loc)).get(loc.save_dir or "")
    return value if isinstance(value, str) else None


def _rollups_due(loc: Locations, state: StateFiles) -> bool:
    """True once per day at most: a period can only close when the date changes."""
    return _last_rollup(loc, state) != time.strftime("%Y-%m-%d")


def _open_rollup_stale(loc: Locations, state: StateFiles, written: list) -> bool:
    """Whether this turn's diary lines outdate a rollup of the week or month not over yet that a user made
    (`pinky-brain rollup`): it is refreshed in the background, not left a snapshot of the period's first
    days; at most once every REFRESH_SECONDS (each refresh reads every note's frontmatter)."""
    import datetime as dt
    from pathlib import Path

    from pinky.capture.rollup import stale_open_rollups

    if loc.save_dir is None or not written:
        return False
    refreshed = state.read(_rollup_state(loc)).get(f"refreshed:{loc.save_dir}")
    if isinstance(refreshed, (int, float)) and time.time() - refreshed < REFRESH_SECONDS:
        return False
    return bool(stale_open_rollups(Path(loc.save_dir), dt.date.today(), time.time()))


def rollup(payload: dict, loc: Locations, state: StateFiles) -> None:
    """Write the rollups of the weeks and months closed since the last run, and refresh those of the
    week and month not over yet that a user made (`pinky-brain rollup`) and later diary lines outdate;
    then index them."""
    import datetime as dt
    from pathlib import Path

    from pinky.capture.rollup import closed_periods, read_diary_lines, stale_open_rollups, write_rollup

    today = dt.date.today()
    last = _last_rollup(loc, state)
    _save_last_rollup(loc, today.isoformat(), state)  # first, so concurrent Stops do not start a second run
    last_run = dt.date.fromisoformat(last) if last else None
    if loc.save_dir is None:
        return
    root = Path(loc.save_dir)
    due = [p for p in closed_periods(last_run, today) if read_diary_lines(root, p)]  # none for a period without
    _save_refreshed(loc, time.time(), state)
    written = [write_rollup(root, period, today) for period in due + stale_open_rollups(root, today, time.time())]
    if written:
        index_files(loc, written)


def _save_refreshed(loc: Locations, when: float, state: StateFiles) -> None:
    path = _rollup_state(loc)
    data = state.read(path)
    data[f"refreshed:{loc.save_dir}"] = when
    state.write(path, data)


def _save_last_rollup(loc: Locations, day: str, state: StateFiles) -> None:
    path = _rollup_state(loc)
    data = state.read(path)
    data[loc.save_dir or ""] = day
    state.write(path, data)