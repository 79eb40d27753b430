"""Candidate notes from past sessions: what the capture rules saw in a turn, kept for a person or the agent to decide.

An import (`pinky.capture.session_import`) judges each past turn with the Stop hook's capture rules
(`pinky.capture.evidence`: a command that failed and then passed after an edit, an error fixed by editing the file it
named, a user's correction). It neither asks nor saves: each sign becomes a candidate here, with its evidence, the
prompt of its turn, its session, host and time, all redacted. The list is a JSON file beside pinky's other state, one
per project, never in the project's notes: nothing enters the save dir until someone saves it (`brain_save`,
`pinky-brain save`, naming the candidate it settles: `candidate`/`--candidate`) or dismisses it (`pinky-brain
import-sessions --dismiss ID`). A candidate dismissed, or kept once, is never offered again, even by a later import
of the same session.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from pinky.base import fileio
from pinky.base.redact import redact
from pinky.capture.diary import as_local, short_session
from pinky.capture.evidence import Evidence
from pinky.capture.past_sessions import PastSession
from pinky.errors import NotFound

__all__ = ["Candidate", "candidate_from", "candidates_path", "dismiss", "load_candidates", "merge_candidates",
           "open_candidate", "reopen"]

NOTE_TYPE = {"fixed": "gotcha", "error-fixed": "gotcha", "correction": "decision"}
PROMPT_SHOWN = 200
MAX_OPEN = 1000  # candidates on the list: the newest (more than anyone reviews; the file stays small)


@dataclass(frozen=True)
class Candidate:
    """One sign that a past turn learned something: `kind` (fixed, error-fixed, correction), the `evidence` quoted,
    the `prompt` of its turn, the note `type` it suggests, and where it came from."""

    id: str
    kind: str
    evidence: str
    prompt: str
    type: str
    host: str
    session: str  # the diary's tag of the session
    when: str  # local ISO time of the turn's end
    transcript: str


def candidate_from(evidence: Sequence[Evidence], session: PastSession, when: datetime,
                   prompts: Iterable[str]) -> Candidate:
    """One candidate for a turn ending at `when` that shows these signs (the first names its kind: one learning
    often shows two, a failure fixed and the file its error named edited); its text redacted as the diary's is."""
    asked = [p for p in prompts if p.strip()]
    prompt = _flat(redact(asked[0][:4000], unlabelled=True), PROMPT_SHOWN) if asked else ""
    if any(e.kind == "fixed" for e in evidence):  # the same failure told twice: keep the fuller telling
        evidence = [e for e in evidence if e.kind != "error-fixed"]
    text = _flat(redact("; ".join(e.text for e in evidence), unlabelled=True), 400)
    first = evidence[0]
    key = hashlib.sha1(f"{session.session_id}\0{first.kind}\0{first.text}".encode()).hexdigest()[:12]
    return Candidate(key, first.kind, text, prompt, NOTE_TYPE.get(first.kind, "note"), session.host,
                     short_session(session.session_id), as_local(when).isoformat(timespec="minutes"),
                     str(session.path))


def _flat(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def candidates_path(state_dir: str, save_dir: str) -> Path:
    """The project's candidate list: one file per save dir under pinky's state folder."""
    key = hashlib.sha1(str(Path(save_dir).resolve()).encode()).hexdigest()[:16]
    return Path(state_dir) / "candidates" / f"{key}.json"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_candidates(path: Path) -> list[dict]:
    """The open candidates, newest first; [] when there are none (or the file is unreadable)."""
    items = _read(path).get("open")
    fields = set(Candidate.__dataclass_fields__)
    shown = [item for item in items if isinstance(item, dict) and fields <= set(item)] if isinstance(items, list) \
        else []
    return sorted(shown, key=lambda item: str(item["when"]), reverse=True)


def merge_candidates(path: Path, found: Sequence[Candidate]) -> int:
    """Add what an import found to the list (each once; never one already decided); how many are new."""
    if not found:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with fileio.file_lock(path.with_name(path.name + ".lock")):
        data = _read(path)
        items = [i for i in data.get("open") or [] if isinstance(i, dict)]
        decided = set(data.get("decided") or [])
        known = {i.get("id") for i in items} | decided
        new = [asdict(c) for c in {c.id: c for c in found}.values() if c.id not in known]
        if new:
            kept = sorted(items + new, key=lambda item: str(item.get("when")))[-MAX_OPEN:]
            fileio.atomic_write(path, json.dumps({"open": kept, "decided": sorted(decided)}, indent=1))
        return len(new)


def open_candidate(state_dir: str, save_dir: str | None, candidate: str) -> Path:
    """The list that holds `candidate` open, for a save that settles it (checked before the note is written);
    NotFound when no open candidate has that id."""
    path = candidates_path(state_dir, save_dir) if save_dir else None
    if path is None or not any(item["id"] == candidate for item in load_candidates(path)):
        raise NotFound(f"no open candidate {candidate!r}: brain_briefing lists them (`pinky-brain import-sessions "
                       "--candidates`); nothing was saved")
    return path


def dismiss(path: Path, ids: Iterable[str]) -> list[str]:
    """Take these candidates off the list for good (saved or not worth a note); the ids that were on it."""
    wanted = set(ids)
    if not path.exists():
        return []
    with fileio.file_lock(path.with_name(path.name + ".lock")):
        data = _read(path)
        items = [i for i in data.get("open") or [] if isinstance(i, dict)]
        gone = [str(i.get("id")) for i in items if i.get("id") in wanted]
        if gone:
            decided = sorted(set(data.get("decided") or []) | set(gone))
            kept = [i for i in items if i.get("id") not in wanted]
            fileio.atomic_write(path, json.dumps({"open": kept, "decided": decided}, indent=1))
        return gone


def reopen(path: Path, item: dict) -> None:
    """Put a dismissed candidate back on the list (the page's undo)."""
    with fileio.file_lock(path.with_name(path.name + ".lock")):
        data = _read(path)
        items = [i for i in data.get("open") or [] if isinstance(i, dict) and i.get("id") != item.get("id")]
        decided = sorted(set(data.get("decided") or []) - {item.get("id")})
        fileio.atomic_write(path, json.dumps({"open": [*items, item], "decided": decided}, indent=1))
