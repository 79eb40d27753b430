"""Candidate generation for search: full-text (BM25) and vector hits under filters, the rows a hit
is built from, and the usage telemetry a search records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from pinky.store.vectors import VEC_TABLE
from pinky.text.fts import fts_term


@dataclass(frozen=True)
class Filters:
    """What a search, list or export keeps. Every field narrows the candidates and so takes a search off its fast
    path (`active`), unless its metadata says `fast_path`: a field the fast path applies itself. A new filter is a
    field here and its clause in `sql()`; tests/store/test_filters.py fails, naming the field, if either is left
    out."""

    scope: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    fresh_since: tuple[str, int] | None = None  # (ISO date, ns): verified, created or changed since
    at: str | None = None  # ISO day: only entries valid then (valid_from/created .. valid_until)
    # ISO day (today): leave out entries superseded or valid only until then. Not `active`: an
    # unfiltered search keeps its fast path and drops such entries from its candidates instead.
    current_on: str | None = field(default=None, metadata={"fast_path": True})

    @property
    def active(self) -> bool:
        """Whether any narrowing filter is set (derived from the fields, so a new one cannot be forgotten)."""
        return any(getattr(self, name) for name in NARROWING)

    def sql(self) -> tuple[str, list[Any]]:
        clauses: list[str] = ["1"]
        params: list[Any] = []
        if self.scope:
            clauses.append("e.scope = ?")
            params.append(self.scope)
        if self.type:
            clauses.append("e.type = ?")
            params.append(self.type)
        for tag in self.tags:
            clauses.append("EXISTS (SELECT 1 FROM json_each(e.tags) WHERE lower(trim(json_each.value)) = ?)")
            params.append(tag)
        if self.fresh_since:
            day, ns = self.fresh_since
            clauses.append("(e.last_verified >= ? OR e.created >= ? OR e.mtime_ns >= ?)")
            params += [day, day, ns]
        if self.at:
            clauses.append("substr(coalesce(json_extract(e.meta, '$.valid_from'), e.created, ''), 1, 10) <= ? "
                           "AND coalesce(substr(json_extract(e.meta, '$.valid_until'), 1, 10) > ?, 1)")
            params += [self.at, self.at]
        if self.current_on:
            clauses.append("json_extract(e.meta, '$.superseded_by') IS NULL "
                           "AND coalesce(substr(json_extract(e.meta, '$.valid_until'), 1, 10) > ?, 1)")
            params.append(self.current_on)
        return " AND ".join(clauses), params


NARROWING = tuple(f.name for f in fields(Filters) if not f.metadata.get("fast_path"))


def fts_hits(conn: Any, match: str, filters: Filters, depth: int,
             weights: Sequence[float] = ()) -> list[tuple[str, float, int]]:
    """(entry id, score where higher is better, best chunk id), one per entry, best first; `weights`: one
    bm25() weight per full-text column (pinky.text.fts.FTS_COLUMNS; missing ones weigh 1)."""
    bm25 = f"bm25(chunk_fts{', ?' * len(weights)})"
    if not filters.active:
        rows = _top_rows(conn, bm25, weights, match, depth * 2, depth * 2)
    else:
        rows = _filtered_fts(conn, bm25, weights, match, filters, depth * 2)
    return best_per_entry((r[0], -r[1], r[2]) for r in rows)[:depth]


def _top_rows(conn: Any, bm25: str, weights: Sequence[float], match: str, ranked: int, wanted: int,
              where: str = "1", params: Sequence[Any] = ()) -> list[Any]:
    """The first `wanted` of the best `ranked` matches that pass `where`. Ranking inside FTS5 first and
    joining only its top rows: joining every match before sorting costs more than the ranking itself on
    a large brain."""
    return conn.execute(
        f"SELECT c.entry_id, f.s, c.id FROM (SELECT rowid, {bm25} AS s FROM chunk_fts "
        f"WHERE chunk_fts MATCH ? ORDER BY s LIMIT ?) f CROSS JOIN chunk c ON c.id = f.rowid "
        f"CROSS JOIN entry e ON e.id = c.entry_id WHERE {where} ORDER BY f.s LIMIT ?",
        (*weights, match, ranked, *params, wanted)).fetchall()


OVERFETCH = 20  # a filtered search first ranks this many times the rows it needs, then filters those


def _filtered_fts(conn: Any, bm25: str, weights: Sequence[float], match: str, filters: Filters,
                  wanted: int) -> list[Any]:
    """The best `wanted` matching chunks that pass `filters`, best first.

    The filtered top rows are the first rows of the unfiltered ranking that pass: so rank inside FTS5
    first (as the unfiltered path does) and filter only the top `wanted * OVERFETCH`; when fewer than
    `wanted` of those pass, rank every match that passes (joining every match before ranking, which
    costs ~100 ms per search at 100,000 notes, is then the only exact way)."""
    where, params = filters.sql()
    head = _top_rows(conn, bm25, weights, match, wanted * OVERFETCH, wanted, where, params)
    if len(head) >= wanted:
        return head
    return conn.execute(
        f"SELECT c.entry_id, {bm25} AS s, c.id FROM chunk_fts "
        f"JOIN chunk c ON c.id = chunk_fts.rowid JOIN entry e ON e.id = c.entry_id "
        f"WHERE chunk_fts MATCH ? AND {where} ORDER BY s LIMIT ?",
        (*weights, match, *params, wanted)).fetchall()


def chunk_texts(conn: Any, chunk_ids: Sequence[int]) -> list[str]:
    """The text of each chunk, in the order given (missing ones left out)."""
    if not chunk_ids:
        return []
    marks = ",".join("?" * len(chunk_ids))
    found = dict(conn.execute(f"SELECT id, text FROM chunk WHERE id IN ({marks})", list(chunk_ids)).fetchall())
    return [found[i] for i in chunk_ids if i in found]


def data_version(conn: Any) -> int:
    """Changes when another connection commits to the file (this connection's own writes: total_changes)."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def terms_matching_chunk(conn: Any, chunk_id: int, terms: Sequence[str]) -> int:
    """How many of the query's words (each quoted, so stemmed like the index) the chunk contains."""
    found = 0
    for term in terms:
        row = conn.execute("SELECT 1 FROM chunk_fts WHERE chunk_fts MATCH ? AND rowid = ?",
                           (fts_term(term), chunk_id)).fetchone()
        found += row is not None
    return found


def vector_hits(conn: Any, query_vector: bytes, filters: Filters, depth: int) -> list[tuple[str, float, int]]:
    """(entry id, cosine similarity, best chunk id), one per entry, best first."""
    if not filters.active:
        rows = conn.execute(
            f"SELECT c.entry_id, v.distance, c.id FROM "
            f"(SELECT chunk_id, distance FROM {VEC_TABLE} WHERE embedding MATCH ? AND k = ?) v "
            f"JOIN chunk c ON c.id = v.chunk_id ORDER BY v.distance",
            (query_vector, depth * 2),
        )
    else:
        # Filtered: score exactly over the matching chunks instead of post-filtering a KNN list,
        # which could leave a narrow filter with no results.
        where, params = filters.sql()
        rows = conn.execute(
            f"SELECT c.entry_id, vec_distance_cosine(v.embedding, ?) AS d, c.id FROM chunk c "
            f"JOIN entry e ON e.id = c.entry_id JOIN {VEC_TABLE} v ON v.chunk_id = c.id "
            f"WHERE {where} ORDER BY d LIMIT ?",
            (query_vector, *params, depth * 2),
        )
    return best_per_entry((r[0], 1.0 - r[1], r[2]) for r in rows if r[1] is not None)[:depth]


def best_per_entry(rows: Iterable[tuple[str, float, int]]) -> list[tuple[str, float, int]]:
    best: dict[str, tuple[str, float, int]] = {}
    for entry_id, score, chunk_id in rows:
        if entry_id not in best or score > best[entry_id][1]:
            best[entry_id] = (entry_id, score, chunk_id)
    return sorted(best.values(), key=lambda r: -r[1])


def chunk_ids_matching(conn: Any, filters: Filters, among: Sequence[int] | None = None) -> list[int]:
    """The chunks whose entries pass `filters`: all of them, or those of `among`."""
    where, params = filters.sql()
    if among is None:
        return [r[0] for r in conn.execute(
            f"SELECT c.id FROM chunk c JOIN entry e ON e.id = c.entry_id WHERE {where}", params)]
    if not among:
        return []
    marks = ",".join("?" * len(among))
    # CROSS JOIN keeps chunk the outer loop: from the few ids given, not from every entry of a type
    return [r[0] for r in conn.execute(f"SELECT c.id FROM chunk c CROSS JOIN entry e ON e.id = c.entry_id "
                                       f"WHERE c.id IN ({marks}) AND {where}", (*among, *params))]


def chunk_entries(conn: Any, chunk_ids: Sequence[int]) -> dict[int, str]:
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    return dict(conn.execute(f"SELECT id, entry_id FROM chunk WHERE id IN ({marks})", list(chunk_ids)))


def diary_entries(conn: Any, entry_ids: Sequence[str]) -> set[str]:
    """Which of these entries are diaries (the daily files and the rollups)."""
    marks = ",".join("?" * len(entry_ids))
    return {r[0] for r in conn.execute(f"SELECT id FROM entry WHERE type = 'diary' AND id IN ({marks})",
                                       list(entry_ids))} if entry_ids else set()


def hit_rows(conn: Any, chunk_ids: Sequence[int]) -> dict[int, Any]:
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    rows = conn.execute(
        f"SELECT c.id AS chunk_id, c.heading, c.line, c.text, e.slug, e.path, e.root, e.title, e.type, "
        f"e.scope, e.project, e.tags, e.last_verified, e.created, e.meta, e.id AS entry_id FROM chunk c "
        f"JOIN entry e ON e.id = c.entry_id WHERE c.id IN ({marks})",
        list(chunk_ids),
    )
    return {r["chunk_id"]: r for r in rows}


def unused_since(conn: Any, entry_ids: Sequence[str], since: str) -> list[tuple[str, str]]:
    """(root, path) of these entries that no search returned since `since`: their first use of the day."""
    marks = ",".join("?" * len(entry_ids))
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT e.root, e.path FROM entry e WHERE e.id IN ({marks}) AND NOT EXISTS "
        "(SELECT 1 FROM usage u WHERE u.entry_id = e.id AND u.retrieved_at >= ?)", (*entry_ids, since))]


def record_usage(conn: Any, entry_ids: Sequence[str], query: str, when: str) -> None:
    conn.executemany(
        "INSERT INTO usage(entry_id, retrieved_at, query) VALUES (?, ?, ?)",
        [(e, when, query[:2000]) for e in entry_ids],
    )


def filtered_entries(conn: Any, filters: Filters, limit: int) -> list[Any]:
    """Entries the filters keep, most recently changed first (listing without a query)."""
    where, params = filters.sql()
    return conn.execute(
        f"SELECT e.slug, e.root, e.path, e.title, e.type, e.scope, e.project, e.tags, e.created, e.last_verified, "
        f"e.mtime_ns, e.meta FROM entry e WHERE {where} ORDER BY e.mtime_ns DESC, e.slug LIMIT ?",
        (*params, limit),
    ).fetchall()
