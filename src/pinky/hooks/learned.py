"""The Stop hook's capture: when a turn shows that something was learned and nothing was saved this
session, ask the agent once to save it (PINKY_CAPTURE=suggest, the default), or write a draft note
from the evidence (auto); never twice in a session, never while Claude already continues because
of a Stop hook, never in a sub-agent. The diary records the ask and whether a save followed.
"""

from __future__ import annotations

import os
import time

from pinky.base.locations import ENV_CAPTURE, Locations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pinky.capture.evidence import Evidence, Timeline
    from pinky.hooks.state import StateFiles

MODES = ("off", "suggest", "auto")
STATE_MAX_AGE_S = 30 * 24 * 3600


def capture_mode() -> str:
    value = os.environ.get(ENV_CAPTURE, "").strip().lower() or "suggest"
    if value not in MODES:
        import sys

        sys.stderr.write(f"pinky-hooks stop: {ENV_CAPTURE}={value!r} is not one of {', '.join(MODES)}; "
                         "using suggest\n")
        return "suggest"
    return value


def _state_path(loc: Locations) -> str:
    return os.path.join(loc.state_dir, "hooks", "capture.json")


def capture_turn(payload: dict, loc: Locations, state: StateFiles, timeline: Timeline, *,
                 continuing: bool) -> tuple[dict | None, list[str]]:
    """(what to print, diary texts of kind 'capture') for this Stop, judged on the turn's timeline."""
    mode = capture_mode()
    session = str(payload.get("session_id") or "")
    if mode == "off" or not session:
        return None, []
    path = _state_path(loc)
    data = state.read(path)
    stored = data.get(session)
    entry: dict = stored if isinstance(stored, dict) else {}
    notes: list[str] = []
    if timeline.saved:
        entry["saved"] = True
    if entry.get("asked") and not entry.get("followed"):
        entry["followed"] = True
        notes.append("a save followed the ask" if entry.get("saved") else "no save followed the ask")
    result = None
    if not continuing and not entry.get("asked") and not entry.get("saved") and not payload.get("agent_id"):
        evidence = timeline.evidence()
        if evidence:
            entry["asked"] = time.time()
            if mode == "auto":
                entry["followed"] = True
                notes.append(f"draft {_write_draft(loc, evidence)} written from: {evidence[0].text}")
            else:
                result = {"decision": "block", "reason": ask_reason(evidence)}
                notes.append(f"asked to save what was learned: {evidence[0].text}")
    entry["seen"] = time.time()
    data[session] = entry
    _prune(data)
    state.write(path, data)
    return result, notes


def ask_reason(evidence: list[Evidence]) -> str:
    from pinky.base.redact import redact

    seen = redact("; ".join(e.text for e in evidence[:2]))  # the model's context is no place for a token
    from pinky.capture.foreign import ASK_OPENING

    return (f"{ASK_OPENING}: {seen}. If it is a reusable "
            "gotcha, decision or pattern (not a one-off), save it now with brain_save (type, a specific title, "
            "a few lines on cause and fix; files: the code it is about); if not, just stop. "
            "pinky asks this once per session (PINKY_CAPTURE=off turns it off).")


def _write_draft(loc: Locations, evidence: list[Evidence]) -> str:
    """A gotcha marked `draft: true`, written from the evidence alone, for the user to keep or delete."""
    from pinky.config import config_from
    from pinky.kb import KnowledgeBase

    title = "Draft: " + evidence[0].text.replace("`", "")
    body = ("Captured at the end of a turn (PINKY_CAPTURE=auto) from what the session showed. Rewrite it "
            "into a real note (cause, fix, where) and drop `draft: true`, or delete it.\n\nEvidence:\n"
            + "\n".join(f"- {e.kind}: {e.text}" for e in evidence))
    with KnowledgeBase(config_from(loc)) as kb:
        entry = kb.save(title[:200], body, type="gotcha", tags=["capture"], embed=False, draft=True)
    return entry.slug


def _prune(data: dict) -> None:
    now = time.time()
    for key in [k for k, v in data.items() if not isinstance(v, dict) or now - float(v.get("seen") or 0)
                > STATE_MAX_AGE_S]:
        data.pop(key, None)
