"""What the view's pages ask of the brain, and the changes they make, on the same core as the CLI.

Reads and writes go through one shared KnowledgeBase (`pinky.runtime.process.Runtime`: in-memory vectors for
search as you type, and the notes watched so an edit on disk shows at once), one call at a time. The
slow whole-brain scans of the review page (contradictions, duplicates) run on a connection of their own
so a search never waits behind them, and are kept until the next change made here (or a minute).

Every change is one of the CLI's, through the facade: verify (`hygiene.verify_entry`), archive
(`delete`), supersede and merge (`hygiene.supersede`, `hygiene.merge`); each is recorded with what
undoing it needs, and undone through the core too (`update` with the version it wrote, `restore` of the
archived copy it made, `unsupersede`, `unmerge`), which refuses when the note changed since.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

from pinky.errors import InvalidInput, NotFound
from pinky.view import clusters

if TYPE_CHECKING:
    from pinky.base.operations import SearchRequest, Selection
    from pinky.config import Config
    from pinky.kb import KnowledgeBase
    from pinky.runtime.process import Runtime

T = TypeVar("T")
SCAN_TTL_S = 60.0
DIARY_PAGE = 30
MAX_UNDO = 200


@dataclass
class Action:
    id: int
    label: str
    undo: Callable[[KnowledgeBase], Any]
    at: float = field(default_factory=time.time)
    undone: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "at": self.at, "undone": self.undone}


class Brain:
    def __init__(self, runtime: Runtime, config: Config) -> None:
        self.runtime = runtime
        self.config = config
        self._scan_lock = threading.Lock()
        self._scans: dict[str, tuple[float, Any]] = {}
        self._actions: list[Action] = []
        self._ids = itertools.count(1)

    def call(self, fn: Callable[[KnowledgeBase], T]) -> T:
        return self.runtime.call(fn)

    # --- reading -------------------------------------------------------------------------------

    def about(self) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> dict[str, Any]:
            return {"project": kb.config.project if kb.config.in_project else None,
                    "roots": {name: str(path) for name, path in kb.config.roots().items()},
                    "types": [t for t, _ in sorted(kb.stats()["by_type"].items())],
                    "tags": [t["tag"] for t in kb.hygiene.tags()[:200]], "telemetry": kb.config.telemetry}
        return self.call(run)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """The search's hits, explained, each with its rank and relevance band (`pinky.services.relevance`: the
        words it shares with the query, or its closeness in meaning); `relevant`: how many are not weak."""
        from pinky.services.relevance import relevance

        started = time.perf_counter()

        def run(kb: KnowledgeBase) -> dict[str, Any]:
            found = kb.search(replace(request, explain=True)).as_dict()
            bands = relevance(kb, request.query, found["hits"])
            for rank, hit in enumerate(found["hits"], 1):
                hit["rank"], (hit["relevance"], hit["band"]) = rank, bands[hit["slug"]]
            found["relevant"] = sum(hit["band"] != "weak" for hit in found["hits"])
            return found
        return {**self.call(run), "ms": round((time.perf_counter() - started) * 1000, 1)}

    def recent(self, selection: Selection, limit: int) -> dict[str, Any]:
        return {"entries": self.call(lambda kb: kb.list_entries(selection, limit=limit))}

    def note(self, slug: str) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> dict[str, Any]:
            entry = kb.get(slug)
            root = "global" if entry.scope == "global" else "project"
            rel = kb.file_of(entry.slug).relative_to(kb.root_dir(root)).as_posix()
            out = entry.as_dict()
            out.update(root=root, rel=rel, related=kb.graph.related(entry.slug),
                       feedback=kb.hygiene.feedback_counts(entry.slug),
                       chain=kb.hygiene.chain(entry.slug) if _in_chain(entry.meta) else [])
            return out
        return self.call(run)

    def timeline(self, slug: str) -> dict[str, Any]:
        return self.call(lambda kb: kb.graph.timeline(slug))

    def neighbourhood(self, slug: str, depth: int) -> dict[str, Any]:
        return self.call(lambda kb: kb.graph.neighbourhood(slug, depth=depth))

    def overview(self, cluster: str | None) -> dict[str, Any]:
        whole = self._scan("overview", lambda kb: kb.graph.overview())
        with self._scan_lock:  # the communities are found once per overview, not once per click
            kept = self._scans.get("communities")
            if kept is None or kept[1][0] is not whole:
                kept = (time.monotonic(), (whole, clusters.communities(whole["nodes"], whole["edges"])))
                self._scans["communities"] = kept
        return clusters.picture(whole, cluster, groups=kept[1][1])

    def review(self, limit: int) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> dict[str, Any]:
            return {**kb.hygiene.needs_review(limit), "gaps": kb.hygiene.gaps(limit=limit),
                    "telemetry": kb.config.telemetry}
        return self.call(run)

    def past_sessions(self) -> dict[str, Any]:
        """The candidate notes imports found in past sessions, and the line saying how many sessions still wait
        to be taken in (counted once per SCAN_TTL_S: it reads the head of every session the hosts kept)."""
        from pinky.capture.candidates import load_candidates
        from pinky.capture.session_import import IMPORT_COMMAND, waiting_line

        places = self._places()
        if places is None:
            return {"candidates": [], "waiting": 0, "line": None, "command": IMPORT_COMMAND}
        waiting = self._scan("past-sessions", lambda kb: places.waiting())
        return {"candidates": load_candidates(places.candidates), "waiting": len(waiting),
                "line": waiting_line(waiting) if waiting else None, "command": IMPORT_COMMAND}

    def dismiss_candidate(self, candidate: str) -> dict[str, Any]:
        from pinky.capture.candidates import dismiss, load_candidates, reopen

        places = self._places()
        item = next((i for i in load_candidates(places.candidates) if i["id"] == candidate), None) if places else None
        if places is None or item is None:
            raise NotFound(f"no open candidate {candidate!r}")

        def run(kb: KnowledgeBase) -> tuple[str, Callable[[KnowledgeBase], Any]]:
            dismiss(places.candidates, [candidate])
            return f"dismissed the candidate {candidate}", lambda kb: reopen(places.candidates, item)
        return self._act(run)

    def _places(self) -> Any:
        from pinky.capture.session_import import Places

        config = self.config
        if config.save_dir is None or config.project_root is None:
            return None
        from pinky.hosts.catalog import all_hosts

        return Places(config.project_root, config.save_dir, config.state_dir, all_hosts())

    def contradictions(self) -> dict[str, Any]:
        return self._scan("contradictions", lambda kb: kb.hygiene.check())

    def duplicates(self) -> dict[str, Any]:
        return self._scan("duplicates", lambda kb: kb.hygiene.duplicates())

    def diary(self, offset: int) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> dict[str, Any]:
            listed = kb.list_entries(type="diary", limit=10_000, include_superseded=True)
            listed.sort(key=lambda e: (_sort_day(e["slug"]), e["slug"]), reverse=True)
            page = []
            for item in listed[offset:offset + DIARY_PAGE]:
                entry = kb.get(item["slug"])
                links = kb.graph.related(entry.slug)["links"]
                page.append({"slug": entry.slug, "title": entry.title, "path": entry.path, "body": entry.body,
                             "day": _day_of(entry.slug), "month": _sort_day(entry.slug)[:7],
                             "kind": _diary_kind(entry.slug),
                             "mentions": [link for link in links if link["slug"]]})
            return {"days": page, "total": len(listed), "offset": offset, "more": offset + DIARY_PAGE < len(listed)}
        return self.call(run)

    def read_file(self, root: str, rel: str) -> bytes:
        return self.call(lambda kb: kb.graph.read_file(root, rel))

    def _scan(self, name: str, job: Callable[[KnowledgeBase], T]) -> T:
        """A whole-brain scan on a connection of its own, kept until a change made here or SCAN_TTL_S."""
        from pinky.kb import KnowledgeBase

        with self._scan_lock:
            kept = self._scans.get(name)
            if kept is not None and time.monotonic() - kept[0] < SCAN_TTL_S:
                return kept[1]
            with KnowledgeBase(self.config) as kb:
                result = job(kb)
            self._scans[name] = (time.monotonic(), result)
            return result

    # --- changing ------------------------------------------------------------------------------

    def verify(self, slug: str) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> tuple[str, Callable[[KnowledgeBase], Any]]:
            before = kb.get(slug)
            flag = next((f for f in kb.hygiene.needs_review(1000)["flagged"] if f["slug"] == before.slug), None)
            after = kb.hygiene.verify_entry(before.slug)

            def undo(kb: KnowledgeBase) -> Any:
                kb.update(after.slug, after.version, fields={"last_verified": before.last_verified})
                if flag is not None:  # the verdict that flagged it counts again (the edit cleared it)
                    kb.hygiene.feedback(after.slug, flag["verdict"], flag["query"])
            return f"verified {after.slug}", undo
        return self._act(run)

    def archive(self, slug: str, reason: str) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> tuple[str, Callable[[KnowledgeBase], Any]]:
            name = kb.get(slug).slug
            copy = kb.delete(name, reason).name  # the archive keeps every copy: undo brings back this one
            return f"archived {name}", lambda kb: kb.restore(name, copy)
        return self._act(run)

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> tuple[str, Callable[[KnowledgeBase], Any]]:
            done = kb.hygiene.supersede(old, new)
            return f"{done['new']} supersedes {done['old']}", lambda kb: kb.hygiene.unsupersede(done)
        return self._act(run)

    def merge(self, keep: str, other: str) -> dict[str, Any]:
        def run(kb: KnowledgeBase) -> tuple[str, Callable[[KnowledgeBase], Any]]:
            done = kb.hygiene.merge(keep, other)
            return f"merged {done['archived']} into {done['kept']}", lambda kb: kb.hygiene.unmerge(done)
        return self._act(run)

    def undo(self, action_id: int) -> dict[str, Any]:
        action = next((a for a in self._actions if a.id == action_id), None)
        if action is None:
            raise NotFound(f"no change {action_id} to undo in this session")
        if action.undone:
            raise InvalidInput(f"{action.label!r} was undone already")
        self.call(action.undo)
        action.undone = True
        self._scans.clear()
        return {"undone": action.as_dict(), "actions": self.actions()}

    def actions(self) -> list[dict[str, Any]]:
        return [a.as_dict() for a in reversed(self._actions)]

    def _act(self, run: Callable[[KnowledgeBase], tuple[str, Callable[[KnowledgeBase], Any]]]) -> dict[str, Any]:
        label, undo = self.call(run)
        action = Action(next(self._ids), label, undo)
        self._actions = [*self._actions, action][-MAX_UNDO:]
        self._scans.clear()
        return {"done": action.as_dict(), "actions": self.actions()}


def _in_chain(meta: dict[str, Any]) -> bool:
    return any(meta.get(name) for name in ("key", "subject", "supersedes", "superseded_by"))


def _day_of(slug: str) -> str:
    """'2026-11-25', '2026-W48' or '2026-11' from a diary slug (its file name)."""
    return slug.rsplit("/", 1)[-1]


def _sort_day(slug: str) -> str:
    """The last day a diary file covers, for the timeline's order: a day, a week's Sunday, a month's last day."""
    name = _day_of(slug)
    try:
        if len(name) == 10:
            return date.fromisoformat(name).isoformat()
        year, _, rest = name.partition("-")
        if rest.startswith("W"):
            return date.fromisocalendar(int(year), int(rest[1:]), 7).isoformat()
        month = int(rest)
        following = date(int(year) + month // 12, month % 12 + 1, 1)
        return date.fromordinal(following.toordinal() - 1).isoformat()
    except ValueError:
        return "0000-00-00"


def _diary_kind(slug: str) -> str:
    return "weekly" if "/weekly/" in slug else "monthly" if "/monthly/" in slug else "day"
