"""Looking after the index: its size (`stats`), garbage collection, and its health as `pinky-brain doctor` reads it
(`IndexHealth`: schema, FTS5, stored vectors, links, unreadable notes)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pinky.base.dates import now_utc, to_ns
from pinky.indexing.index import Index
from pinky.indexing.sources import ALSO, TOO_LARGE
from pinky.search import second_stage
from pinky.store import entries, link_queries
from pinky.store import migrations as store_migrations
from pinky.store import vectors as store_vectors
from pinky.store.connect import has_fts5, write_transaction

# An entry no search has returned for this long (and not changed since) is reported as unused:
# knowledge nobody retrieves is a candidate for pruning (usage telemetry, plan §8.6).
UNUSED_DAYS = 180


def is_empty(index: Index) -> bool:
    return entries.entry_count(index.conn) == 0


def stats(index: Index) -> dict[str, Any]:
    conn = index.conn
    data: dict[str, Any] = entries.counts(conn)
    data["by_type"] = entries.grouped(conn, "type")
    data["by_scope"] = entries.grouped(conn, "scope")
    data["embedder"] = store_vectors.get_meta(conn, "embedder") or index.config.embedder
    data["dims"] = int(store_vectors.get_meta(conn, "dims") or 0)
    data["fingerprint"] = store_vectors.get_meta(conn, "fingerprint")
    data["vectors_available"] = index.db.vec_available
    second = second_stage.summary(index)
    data["second_stage_model"], data["second_stage_vectors"] = second["model"], second["chunks"]
    cutoff = now_utc() - dt.timedelta(days=UNUSED_DAYS)
    data["unused"], data["unused_sample"] = entries.unused_entries(conn, cutoff.isoformat(), to_ns(cutoff))
    data["unused_days"] = UNUSED_DAYS
    data["db_path"] = str(index.path)
    data["db_bytes"] = index.path.stat().st_size if index.path.exists() else 0
    data["index_note"] = index.config.db_note
    return data


def gc(index: Index) -> dict[str, int]:
    """Drop orphan rows and cached embeddings nothing uses, then compact the file."""
    conn = index.conn
    has_vec = index.vectors_writable()
    with write_transaction(conn):
        removed = entries.collect_garbage(conn, store_vectors.get_meta(conn, "fingerprint"), has_vec)
    before = index.config.db_path.stat().st_size
    entries.compact(conn)
    removed["bytes_reclaimed"] = max(0, before - index.config.db_path.stat().st_size)
    return removed


class IndexHealth:
    """What `pinky-brain doctor` asks of the index (`KnowledgeBase.health`), each a question of its own so one
    that fails leaves the others answered."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def fts5(self) -> bool:
        """Whether this SQLite build has full-text search."""
        return has_fts5(self.index.db)

    def corruption(self) -> str | None:
        """The damage found when this run opened the index (it was moved aside and a fresh one started)."""
        return self.index.corruption

    def migrations(self) -> tuple[list[str], list[str]]:
        """The migrations applied to this index, in order, and every one this version knows."""
        return store_migrations.applied(self.index.conn), list(store_migrations.KNOWN)

    def stored_vectors(self) -> tuple[str | None, str | None]:
        """The fingerprint and the embedder the stored vectors were made with (None before the first)."""
        conn = self.index.conn
        return store_vectors.get_meta(conn, "fingerprint"), store_vectors.get_meta(conn, "embedder")

    def pending_vectors(self) -> int:
        """Chunks still without a vector."""
        return store_vectors.count_pending(self.index.conn)

    def unresolved_links(self) -> list[tuple[Any, ...]]:
        """Links that name no entry: (root, path, line, target, kind) of a note's, (None, file, line, target,
        "breadcrumb") of code."""
        return [tuple(row) for row in link_queries.unresolved_links(self.index.conn)]

    def link_count(self) -> int:
        return link_queries.link_count(self.index.conn)

    def breadcrumb_count(self) -> int:
        return link_queries.breadcrumb_count(self.index.conn)

    def malformed(self) -> list[str]:
        """Notes indexed despite a problem in their text (bad YAML, an unknown type), with the problem."""
        return [f"{self.index.display_path(r, p)}: {e}" for r, p, e in entries.parse_errors(self.index.conn)
                if not e.startswith(TOO_LARGE) or ALSO in e]

    def oversized(self) -> list[str]:
        """Notes over PINKY_MAX_NOTE_BYTES, indexed by their title and first bytes only."""
        return [f"{self.index.display_path(r, p)}: {e.split(ALSO)[0].removeprefix(TOO_LARGE)}"
                for r, p, e in entries.parse_errors(self.index.conn) if e.startswith(TOO_LARGE)]

    def skipped(self) -> list[str]:
        """Files named .md that are not notes (binary, not UTF-8, special files, links out of their root),
        with the reason; never indexed (links and special files never even opened)."""
        index = self.index
        return [f"{index.display_path(f.root, f.path)}: {f.reason}" for f in entries.skipped_files(index.conn).values()]
