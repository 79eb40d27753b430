"""KnowledgeBase: the one API every front end (CLI, MCP server, hooks, sync) calls.

A thin facade: it opens (and repairs) the index through `pinky.indexing.index.Index`, then delegates each
operation to the module that owns it — `indexer` (reindex, index one file, embed), `search`
(hybrid ranking), `entries` (save/get/update/similar), `archive` (delete/restore), `links` (related),
`briefing`, `listing` and `maintenance` (stats, gc). Markdown under the roots is the truth;
brain.db is derived from it and may be rebuilt at any time: every operation follows a file another
process replaced, and repairs a damaged one and runs again (`pinky.indexing.healing`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pinky import maintenance
from pinky.base.operations import EntryHead
from pinky.base.validate import resolve_scope
from pinky.config import Config, load_config
from pinky.graph.api import KnowledgeGraph
from pinky.hygiene.api import Hygiene
from pinky.indexing import healing, indexer
from pinky.indexing.index import Index
from pinky.indexing.indexer import ReindexReport
from pinky.indexing.vector_fill import Progress
from pinky.knowledge import archive, entries
from pinky.knowledge.archive import SeveralVersions
from pinky.knowledge.classify import Suggestion
from pinky.knowledge.entries import Entry, SaveRequest
from pinky.search import hybrid as search
from pinky.search import listing, second_stage
from pinky.search.hybrid import Hit, SearchResult
from pinky.search.request import SearchRequest, Selection, filters_for
from pinky.store.connect import Database

__all__ = ["Entry", "EntryHead", "Hit", "KnowledgeBase", "ReindexReport", "SaveRequest", "SearchRequest",
           "SearchResult", "Selection", "SeveralVersions", "Suggestion"]


@healing.healed
class KnowledgeBase:
    """The brain: the markdown roots and the SQLite index derived from them."""

    def __init__(self, config: Config | None = None, *, cache_vectors: bool = False) -> None:
        """`cache_vectors`: keep vectors in memory between searches (long-running processes)."""
        self.index = Index(config or load_config(), cache_vectors=cache_vectors)

    # --- lifecycle ---------------------------------------------------------------------------------

    @property
    def config(self) -> Config:
        return self.index.config

    @config.setter
    def config(self, config: Config) -> None:
        """Swap the settings (e.g. fusion weights in an evaluation); the index file stays open."""
        self.index.config = config

    @property
    def db(self) -> Database:
        return self.index.db

    @property
    def rebuilt_reason(self) -> str | None:
        """Why the index file was replaced on opening (corrupt, unknown schema), if it was."""
        return self.index.rebuilt_reason

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- paths and vectors ------------------------------------------------------------------------

    def root_dir(self, root: str) -> Path:
        return self.index.root_dir(root)

    def display_path(self, root: str, rel: str) -> str:
        return self.index.display_path(root, rel)

    @property
    def embedder(self) -> Any:
        return self.index.embedder

    def fingerprint(self) -> str:
        return self.index.fingerprint()

    def vector_status(self) -> tuple[bool, str]:
        return self.index.vector_status()

    # --- indexing ----------------------------------------------------------------------------------

    def reindex(self, *, full: bool = False, progress: Progress | None = None, embed: bool = True) -> ReindexReport:
        """Bring the index up to date with the markdown (`full`: from scratch), then finish renames left half done."""
        report = healing.reindex(self.index, full=full, progress=progress, embed=embed)
        report.warnings += self.graph.finished_moves()
        return report

    def index_file(self, path: Path, *, embed: bool = True) -> str | None:
        """Index one markdown file now; returns its slug (None when the file is gone)."""
        return indexer.index_file(self.index, path, embed=embed)

    def embed_pending(self, progress: Progress | None = None) -> int:
        """Give every chunk lacking a vector one; returns how many the model embedded."""
        return indexer.embed_pending(self.index, progress)

    def refine_pending(self, **options: Any) -> int:
        """Second-stage vectors (second_stage.refine_pending: limit, progress, threads; `threads="all"` for every
        core this process may use); how many got one."""
        if options.get("threads") == "all":
            options["threads"] = second_stage.all_cores()
        return second_stage.refine_pending(self.index, **options)

    def second_stage(self) -> dict[str, Any]:
        """Whether the second stage can rank, why not, and how many chunks have its vectors."""
        return second_stage.summary(self.index)

    def drift(self) -> dict[str, list[str]]:
        """Markdown files the index does not reflect yet (new, changed, deleted)."""
        return indexer.drift(self.index)

    # --- search ------------------------------------------------------------------------------------

    def resolve_scope(self, scope: str | None, project: str | None) -> str | None:
        """'global' or 'project:<name>' from a scope and/or project argument; None for both scopes."""
        return resolve_scope(scope, project, self.config.project)

    def search(self, query: SearchRequest | str, **options: Any) -> SearchResult:
        """Hybrid search over project and global knowledge in one ranking: a `SearchRequest`, or a query and
        the request's fields as keywords (`kb.search("pool hangs", type="gotcha", limit=5)`); the fields are
        described on `SearchRequest` and `Selection` (pinky.search.request)."""
        if isinstance(query, SearchRequest):
            if options:
                raise TypeError("pass a SearchRequest or keyword options, not both")
            return search.search(self.index, query)
        return search.search(self.index, SearchRequest(query, **options))

    def research(self, topic: str, *, max_tokens: int = 2000) -> dict[str, Any]:
        """A dossier on a topic for the caller to synthesise: top entries, their links, open contradictions
        and gaps, diary mentions, packed to a token budget (`pinky.research`)."""
        from pinky.research import dossier

        return dossier(self.index, topic, max_tokens=max_tokens)

    # --- entries -----------------------------------------------------------------------------------

    def save(self, title: SaveRequest | str, body: str | None = None, *, embed: bool = True,
             draft: bool = False, classify: bool = False, **fields: Any) -> Entry:
        """Write a new note into the project's (or the global) knowledge folder and index it: a `SaveRequest`, or
        a title, a body and the request's fields as keywords. With a `key` or `subject` it supersedes the current
        entry with the same one. `classify`: suggest a type (when None) and tags (when none) from the nearest
        entries and simple rules, and apply them. `embed=False` leaves the vectors to a later fill."""
        request = title
        if not isinstance(request, SaveRequest):
            request = SaveRequest(request, body if body is not None else "", **fields)
        elif body is not None or fields:
            raise TypeError("pass a SaveRequest or a title, body and keyword fields, not both")
        return entries.save(self.index, request, embed=embed, draft=draft, classify=classify)

    def get(self, slug: str) -> Entry:
        return entries.get(self.index, slug)

    def update(self, slug: str, expected_version: str, *, title: str | None = None, body: str | None = None,
               tags: list[str] | None = None, type: str | None = None, last_verified: str | None = None,
               questions: list[str] | None = None, fields: dict[str, str | None] | None = None) -> Entry:
        """Change an entry only if nobody changed it since `expected_version`; `fields`: entries.EDITABLE_FIELDS."""
        return entries.update(self.index, slug, expected_version, title=title, body=body, tags=tags, type=type,
                              last_verified=last_verified, questions=questions, fields=fields)

    def delete(self, slug: str, reason: str) -> Path:
        """Soft delete into a new copy in the root's .archive/; returns where the file went."""
        return archive.delete(self.index, slug, reason)

    def restore(self, slug: str, version: int | str | None = None) -> Entry:
        return archive.restore(self.index, slug, version)

    def similar(self, slug: str, *, threshold: float | None = None, limit: int = 3) -> list[Hit]:
        """Entries whose text is nearly the same as this one's (likely duplicates)."""
        return entries.similar(self.index, slug, threshold=threshold, limit=limit)

    def related(self, slug: str) -> dict[str, Any]:
        """An entry's outgoing links, backlinks and the code it is about (links that hold today)."""
        return self.graph.related(slug)

    @property
    def graph(self) -> KnowledgeGraph:
        """Neighbourhoods, timelines, typed links and renames (`pinky.graph.api`)."""
        return KnowledgeGraph(self.index)

    # --- overview ----------------------------------------------------------------------------------

    def briefing(self, since: str, *, compact: bool = True, offset: int = 0) -> dict[str, Any]:
        """New and updated entries since `since`, and the diary lines written since then (from `offset`)."""
        from pinky.briefing import briefing

        return briefing(self.index, since, compact=compact, offset=offset)

    def list_entries(self, selection: Selection | None = None, *, limit: int = 50, **fields: Any) -> list[Any]:
        """Entries a `Selection` (or its fields as keywords) keeps: current, or valid `at` a date; latest first."""
        chosen = Selection(**fields) if selection is None else replace(selection, **fields)
        return listing.list_entries(self.index, filters_for(self.index, chosen), limit)

    def file_of(self, slug: str) -> Path:
        """The markdown file of an entry (to open it in an editor)."""
        return entries.file_of(self.index, slug)

    def entry_summaries(self, limit: int = 5000) -> list[dict[str, Any]]:
        """Slug, title, type, scope and citable path of every indexed entry, newest first."""
        return listing.summaries(self.index, limit)

    def is_empty(self) -> bool:
        return maintenance.is_empty(self.index)

    def stats(self) -> dict[str, Any]:
        return maintenance.stats(self.index)

    def gc(self) -> dict[str, int]:
        return maintenance.gc(self.index)

    @property
    def hygiene(self) -> Hygiene:
        """Tags, supersession, verification, feedback, pruning, gaps, contradictions, export and import."""
        return Hygiene(self.index)

    def verify(self, *, full: bool = False) -> str | None:
        """quick_check (`full`: integrity_check, then every row against its file): None when sound, else the damage."""
        return healing.verify(self.index, full=full)

    @property
    def health(self) -> maintenance.IndexHealth:
        """What `pinky-brain doctor` reads of the index: schema, FTS5, stored vectors, links, unreadable notes."""
        return maintenance.IndexHealth(self.index)
