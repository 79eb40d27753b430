"""UserPromptSubmit: bring back the few brain entries the prompt is clearly about, or nothing.

Full-text only (`pinky.search.recall`): the hook has 150 ms, and loading the embedder alone takes a
second. An entry is shown at most once per session (the model still has it in context), within
PINKY_RECALL_CHARS characters (default 600); PINKY_RECALL=off turns the hook off.
"""

from __future__ import annotations

import os
import time

from pinky.base.locations import ENV_RECALL, ENV_RECALL_CHARS, Locations, env_number

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pinky.hooks.state import StateFiles

DEFAULT_CHARS = 600
SEEN_MAX_AGE_S = 3 * 24 * 3600
SEEN_MAX_SESSIONS = 200


def _seen_path(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "hooks", "recalled.json")


def user_prompt(payload: dict, loc: Locations, state: StateFiles) -> dict | None:
    if os.environ.get(ENV_RECALL, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or prompt.lstrip().startswith("/"):
        return None  # a slash command is Claude Code's business, not a question
    from pinky.base.global_signature import HOOK_WALK_LIMIT
    from pinky.hooks.hook_index import fresh_connection
    from pinky.store.readonly import connect_ro

    conn = connect_ro(loc.read_db)
    if conn is not None:  # the global brain as it is now (a note saved elsewhere, synced or edited by hand)
        conn = fresh_connection(loc, conn, walk_limit=HOOK_WALK_LIMIT)
    if conn is None:
        return None
    from pinky.search.recall import MAX_SHOWN, floor, recall

    session = str(payload.get("session_id") or "")
    try:
        # what this session was shown is read only once something clears the gate: most prompts recall nothing
        found = recall(conn, prompt, threshold=floor(), limit=None)
        if not found:
            return None
        seen_file = _seen_path(loc)
        seen = state.read(seen_file)
        shown = _seen_ids(seen, session)
        context, ids = _context(conn, [r.entry_id for r in found if r.entry_id not in shown][:MAX_SHOWN])
    finally:
        conn.close()
    if not context:
        return None
    if session:
        _remember(seen, session, shown + ids)
        state.write(seen_file, seen)
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}


def _context(conn: object, found: list[str]) -> tuple[str, list[str]]:
    """The lines the model is shown for the entries `found` (best first) and the ids of those shown."""
    from pinky.search.recall import render
    from pinky.store.readonly import recall_entries

    if not found:
        return "", []
    rows = recall_entries(conn, found)  # type: ignore[arg-type]
    picked = [entry_id for entry_id in found if entry_id in rows]
    text = render([rows[i] for i in picked], budget=int(env_number(ENV_RECALL_CHARS, DEFAULT_CHARS, 120, 4000)),
                  stale_days=_stale_days())
    shown_count = text.count("\n")  # one line per entry after the header
    return text, picked[:shown_count]


def _stale_days() -> dict[str, int | None]:
    """The per-type staleness thresholds search uses (PINKY_STALE_DAYS); the defaults when it is malformed:
    a bad setting must not silence recall (doctor and the CLI report it)."""
    from pinky.base.staleness import DEFAULT_STALE_DAYS, ENV_STALE_DAYS, parse_stale_days

    setting = os.environ.get(ENV_STALE_DAYS)
    if not setting:
        return dict(DEFAULT_STALE_DAYS)
    from pinky.errors import InvalidInput

    try:
        return parse_stale_days(setting)
    except InvalidInput:
        return dict(DEFAULT_STALE_DAYS)


def _seen_ids(seen: dict, session: str) -> list[str]:
    entry = seen.get(session) if session else None
    ids = entry.get("ids") if isinstance(entry, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _remember(seen: dict, session: str, ids: list[str]) -> None:
    """Record what this session was shown; forget sessions idle for days (the file stays small)."""
    now = time.time()
    seen[session] = {"ids": ids, "at": now}
    stale = [k for k, v in seen.items() if not isinstance(v, dict) or now - float(v.get("at") or 0) > SEEN_MAX_AGE_S]
    for key in stale:
        seen.pop(key, None)
    if len(seen) > SEEN_MAX_SESSIONS:
        for key in sorted(seen, key=lambda k: seen[k].get("at") or 0)[: len(seen) - SEEN_MAX_SESSIONS]:
            seen.pop(key, None)
