"""Every SQL statement pinky runs. Functions take a DB-API connection and plain values."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

VEC_TABLE = "chunk_vec"


@contextmanager
def write_transaction(conn: Any) -> Iterator[None]:
    """BEGIN IMMEDIATE takes the write lock up front, so waiting happens on busy_timeout
    instead of failing later with "database is locked" when a reader upgrades."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def get_meta(conn: Any, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def serialize(vector: Sequence[float]) -> bytes:
    return struct.pack(f"{len(vector)}f", *vector)


# --- vectors -------------------------------------------------------------------------------------


def bump_vector_generation(conn: Any) -> None:
    """Every change to the vectors bumps a counter, so in-memory copies know when to reload."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('vector_generation', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def vector_generation(conn: Any) -> str:
    return get_meta(conn, "vector_generation") or "0"


def all_vectors(conn: Any) -> list[tuple[int, bytes]]:
    return conn.execute(f"SELECT chunk_id, embedding FROM {VEC_TABLE}").fetchall()


def chunk_ids_matching(conn: Any, filters: Filters) -> list[int]:
    where, params = filters.sql()
    return [r[0] for r in conn.execute(
        f"SELECT c.id FROM chunk c JOIN entry e ON e.id = c.entry_id WHERE {where}", params)]


def chunk_entries(conn: Any, chunk_ids: Sequence[int]) -> dict[int, str]:
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    return dict(conn.execute(f"SELECT id, entry_id FROM chunk WHERE id IN ({marks})", list(chunk_ids)))


def vector_table_exists(conn: Any) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (VEC_TABLE,)).fetchone()
    return row is not None


def reset_vector_table(conn: Any, dims: int, fingerprint: str, embedder: str) -> None:
    """(Re)create the vec0 table for a new embedder; every chunk then needs a vector again."""
    conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
    conn.execute(
        f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0("
        f"chunk_id INTEGER PRIMARY KEY, embedding float[{int(dims)}] distance_metric=cosine)"
    )
    conn.execute("UPDATE chunk SET has_vector = 0 WHERE has_vector != 0")
    bump_vector_generation(conn)
    set_meta(conn, "fingerprint", fingerprint)
    set_meta(conn, "dims", str(dims))
    set_meta(conn, "embedder", embedder)


def pending_chunks(conn: Any, limit: int) -> list[tuple[int, str, str, str, str]]:
    """(chunk id, hash, title, heading, text) of chunks still lacking a vector."""
    return conn.execute(
        "SELECT c.id, c.hash, e.title, c.heading, c.text FROM chunk c JOIN entry e ON e.id = c.entry_id "
        "WHERE c.has_vector = 0 ORDER BY c.id LIMIT ?",
        (limit,),
    ).fetchall()


def count_pending(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM chunk WHERE has_vector = 0").fetchone()[0]


def cached_vectors(conn: Any, hashes: Iterable[str], fingerprint: str) -> dict[str, bytes]:
    hashes = list(set(hashes))
    found: dict[str, bytes] = {}
    for i in range(0, len(hashes), 500):
        part = hashes[i : i + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT hash, vector FROM embedding_cache WHERE fingerprint = ? AND hash IN ({marks})",
            (fingerprint, *part),
        )
        found.update((h, v) for h, v in rows)
    return found


def cache_vectors(conn: Any, rows: Iterable[tuple[str, bytes]], fingerprint: str) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache(hash, fingerprint, vector) VALUES (?, ?, ?)",
        [(h, fingerprint, v) for h, v in rows],
    )


def store_vectors(conn: Any, rows: Sequence[tuple[int, bytes]]) -> int:
    """Attach vectors to chunks that still exist and still lack one (another process may have won)."""
    if not rows:
        return 0
    wanted = dict(rows)
    marks = ",".join("?" * len(wanted))
    live = [r[0] for r in conn.execute(
        f"SELECT id FROM chunk WHERE has_vector = 0 AND id IN ({marks})", tuple(wanted))]
    for chunk_id in live:
        conn.execute(f"DELETE FROM {VEC_TABLE} WHERE chunk_id = ?", (chunk_id,))
        conn.execute(f"INSERT INTO {VEC_TABLE}(chunk_id, embedding) VALUES (?, ?)", (chunk_id, wanted[chunk_id]))
    if live:
        conn.execute(f"UPDATE chunk SET has_vector = 1 WHERE id IN ({','.join('?' * len(live))})", live)
        bump_vector_generation(conn)
    return len(live)


# --- entries -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexedFile:
    id: str
    root: str
    path: str
    content_hash: str
    mtime_ns: int
    size: int


def indexed_files(conn: Any) -> dict[tuple[str, str], IndexedFile]:
    rows = conn.execute("SELECT id, root, path, content_hash, mtime_ns, size FROM entry")
    return {(r[1], r[2]): IndexedFile(*r) for r in rows}


def touch_entry(conn: Any, entry_id: str, mtime_ns: int, size: int) -> None:
    conn.execute("UPDATE entry SET mtime_ns = ?, size = ? WHERE id = ?", (mtime_ns, size, entry_id))


def _delete_chunks(conn: Any, entry_id: str, has_vec_table: bool) -> None:
    ids = [r[0] for r in conn.execute("SELECT id FROM chunk WHERE entry_id = ?", (entry_id,))]
    if not ids:
        return
    marks = ",".join("?" * len(ids))
    conn.execute(f"DELETE FROM chunk_fts WHERE rowid IN ({marks})", ids)
    if has_vec_table:
        conn.execute(f"DELETE FROM {VEC_TABLE} WHERE chunk_id IN ({marks})", ids)
        bump_vector_generation(conn)
    conn.execute("DELETE FROM chunk WHERE entry_id = ?", (entry_id,))


def delete_entry(conn: Any, entry_id: str, has_vec_table: bool) -> None:
    _delete_chunks(conn, entry_id, has_vec_table)
    conn.execute("DELETE FROM entry WHERE id = ?", (entry_id,))


def linked_file_names(conn: Any, entry_id: str | None = None) -> set[str]:
    """Base names of every file some entry (or this one) lists in `files:` or names in its text."""
    where, args = ("WHERE entry_id = ?", (entry_id,)) if entry_id else ("", ())
    names = {r[0] for r in conn.execute(f"SELECT DISTINCT name FROM entry_mention {where}", args)}
    names |= {r[0].rstrip("/").rsplit("/", 1)[-1] for r in conn.execute(
        f"SELECT DISTINCT path FROM entry_file {where}", args)}
    return names


def slug_taken(conn: Any, slug: str, entry_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM entry WHERE slug = ? AND id != ?", (slug, entry_id)).fetchone()
    return row is not None


def upsert_entry(conn: Any, row: dict[str, Any], links: Sequence[str], mentions: Sequence[str],
                 chunks: Sequence[dict[str, Any]], has_vec_table: bool) -> None:
    """Replace an entry and all of its chunks (FTS rows and vectors included) in one go."""
    _delete_chunks(conn, row["id"], has_vec_table)
    columns = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
    conn.execute(
        f"INSERT INTO entry({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT(id) DO UPDATE SET {updates}",
        [row[c] for c in columns],
    )
    for table in ("entry_file", "entry_link", "backlink", "entry_mention"):
        conn.execute(f"DELETE FROM {table} WHERE entry_id = ?", (row["id"],))
    conn.executemany("INSERT INTO entry_mention(entry_id, name) VALUES (?, ?)", [(row["id"], n) for n in mentions])
    conn.executemany("INSERT INTO entry_file(entry_id, path) VALUES (?, ?)",
                     [(row["id"], f) for f in json.loads(row["files"])])
    conn.executemany("INSERT INTO entry_link(entry_id, target) VALUES (?, ?)", [(row["id"], t) for t in links])
    for chunk in chunks:
        cur = conn.execute(
            "INSERT INTO chunk(entry_id, ord, heading, line, text, hash) VALUES (?, ?, ?, ?, ?, ?)",
            (row["id"], chunk["ord"], chunk["heading"], chunk["line"], chunk["text"], chunk["hash"]),
        )
        conn.execute(
            "INSERT INTO chunk_fts(rowid, title, heading, text) VALUES (?, ?, ?, ?)",
            (cur.lastrowid, row["title"], chunk["heading"], chunk["text"]),
        )


ENTRY_COLUMNS = ("id, root, path, slug, scope, type, project, tags, files, created, last_verified, "
                 "title, body, meta, content_hash, mtime_ns, size, parse_error, indexed_at")


def entry_by(conn: Any, column: str, value: str) -> Any:
    assert column in {"id", "slug"}
    return conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE {column} = ?", (value,)).fetchone()


def recent_entries(conn: Any, limit: int) -> list[Any]:
    return conn.execute("SELECT slug, title, type, scope, root, path FROM entry ORDER BY mtime_ns DESC LIMIT ?",
                        (limit,)).fetchall()


def slugs_ending(conn: Any, suffix: str) -> list[str]:
    pattern = "%/" + suffix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return [r[0] for r in conn.execute(
        "SELECT slug FROM entry WHERE slug LIKE ? ESCAPE '\\' ORDER BY slug", (pattern,))]


# --- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    scope: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    fresh_since: tuple[str, int] | None = None  # (ISO date, ns): verified, created or changed since

    @property
    def active(self) -> bool:
        return bool(self.scope or self.type or self.tags or self.fresh_since)

    def sql(self) -> tuple[str, list[Any]]:
        clauses, params = ["1"], []
        if self.scope:
            clauses.append("e.scope = ?")
            params.append(self.scope)
        if self.type:
            clauses.append("e.type = ?")
            params.append(self.type)
        for tag in self.tags:
            clauses.append("EXISTS (SELECT 1 FROM json_each(e.tags) WHERE json_each.value = ?)")
            params.append(tag)
        if self.fresh_since:
            day, ns = self.fresh_since
            clauses.append("(e.last_verified >= ? OR e.created >= ? OR e.mtime_ns >= ?)")
            params += [day, day, ns]
        return " AND ".join(clauses), params


def fts_hits(conn: Any, match: str, filters: Filters, depth: int,
             weights: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> list[tuple[str, float, int]]:
    """(entry id, score where higher is better, best chunk id), one per entry, best first."""
    if not filters.active:
        # Rank inside FTS5 first and join only the top rows: joining every match before
        # sorting costs more than the ranking itself on a large brain.
        rows = conn.execute(
            "SELECT c.entry_id, f.s, c.id FROM (SELECT rowid, bm25(chunk_fts, ?, ?, ?) AS s FROM chunk_fts "
            "WHERE chunk_fts MATCH ? ORDER BY s LIMIT ?) f JOIN chunk c ON c.id = f.rowid",
            (*weights, match, depth * 2),
        )
    else:
        where, params = filters.sql()
        rows = conn.execute(
            f"SELECT c.entry_id, bm25(chunk_fts, ?, ?, ?) AS s, c.id FROM chunk_fts "
            f"JOIN chunk c ON c.id = chunk_fts.rowid JOIN entry e ON e.id = c.entry_id "
            f"WHERE chunk_fts MATCH ? AND {where} ORDER BY s LIMIT ?",
            (*weights, match, *params, depth * 2),
        )
    return _best_per_entry((r[0], -r[1], r[2]) for r in rows)[:depth]


def term_chunk_counts(conn: Any, terms: Sequence[str]) -> list[tuple[str, int]]:
    """How many chunks contain each word (stemmed like the index)."""
    return [(term, conn.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                                ('"' + term.replace('"', '""') + '"',)).fetchone()[0]) for term in terms]


def chunk_count(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM chunk").fetchone()[0]


def terms_matching_chunk(conn: Any, chunk_id: int, terms: Sequence[str]) -> int:
    """How many of the query's words (each quoted, so stemmed like the index) the chunk contains."""
    found = 0
    for term in terms:
        row = conn.execute("SELECT 1 FROM chunk_fts WHERE chunk_fts MATCH ? AND rowid = ?",
                           ('"' + term.replace('"', '""') + '"', chunk_id)).fetchone()
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
    return _best_per_entry((r[0], 1.0 - r[1], r[2]) for r in rows if r[1] is not None)[:depth]


def _best_per_entry(rows: Iterable[tuple[str, float, int]]) -> list[tuple[str, float, int]]:
    best: dict[str, tuple[str, float, int]] = {}
    for entry_id, score, chunk_id in rows:
        if entry_id not in best or score > best[entry_id][1]:
            best[entry_id] = (entry_id, score, chunk_id)
    return sorted(best.values(), key=lambda r: -r[1])


def hit_rows(conn: Any, chunk_ids: Sequence[int]) -> dict[int, Any]:
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    rows = conn.execute(
        f"SELECT c.id AS chunk_id, c.heading, c.line, c.text, e.slug, e.path, e.root, e.title, e.type, "
        f"e.scope, e.project, e.tags, e.last_verified, e.id AS entry_id FROM chunk c "
        f"JOIN entry e ON e.id = c.entry_id WHERE c.id IN ({marks})",
        list(chunk_ids),
    )
    return {r["chunk_id"]: r for r in rows}


def record_usage(conn: Any, entry_ids: Sequence[str], query: str, when: str) -> None:
    conn.executemany(
        "INSERT INTO usage(entry_id, retrieved_at, query) VALUES (?, ?, ?)",
        [(e, when, query[:2000]) for e in entry_ids],
    )


# --- stats and upkeep ------------------------------------------------------------------------------


def counts(conn: Any) -> dict[str, int]:
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    return {
        "entries": one("SELECT count(*) FROM entry"),
        "chunks": one("SELECT count(*) FROM chunk"),
        "vectors": one("SELECT count(*) FROM chunk WHERE has_vector = 1"),
        "pending_vectors": one("SELECT count(*) FROM chunk WHERE has_vector = 0"),
        "cached_embeddings": one("SELECT count(*) FROM embedding_cache"),
        "usage_events": one("SELECT count(*) FROM usage"),
    }


def grouped(conn: Any, column: str) -> dict[str, int]:
    assert column in {"type", "scope"}
    return dict(conn.execute(f"SELECT {column}, count(*) FROM entry GROUP BY {column} ORDER BY {column}"))


def unused_entries(conn: Any, cutoff_iso: str, cutoff_ns: int, limit: int = 20) -> tuple[int, list[str]]:
    """Entries older than the cutoff that no search has returned since: candidates for pruning.

    Diaries are history and are left out. Returns (how many, the oldest few slugs)."""
    where = ("e.type != 'diary' AND e.mtime_ns < ? AND COALESCE(e.created, '') < ? AND NOT EXISTS "
             "(SELECT 1 FROM usage u WHERE u.entry_id = e.id AND u.retrieved_at >= ?)")
    args = (cutoff_ns, cutoff_iso, cutoff_iso)
    count = conn.execute(f"SELECT count(*) FROM entry e WHERE {where}", args).fetchone()[0]
    slugs = [r[0] for r in conn.execute(f"SELECT e.slug FROM entry e WHERE {where} ORDER BY e.mtime_ns LIMIT ?",
                                        (*args, limit))]
    return count, slugs


def parse_errors(conn: Any) -> list[tuple[str, str, str]]:
    return conn.execute(
        "SELECT root, path, parse_error FROM entry WHERE parse_error IS NOT NULL ORDER BY root, path"
    ).fetchall()


def drop_orphan_vectors(conn: Any) -> int:
    """Vector rows whose chunk is gone (left by a process that could not load sqlite-vec)."""
    stale = [r[0] for r in conn.execute(
        f"SELECT chunk_id FROM {VEC_TABLE} WHERE chunk_id NOT IN (SELECT id FROM chunk)")]
    for chunk_id in stale:
        conn.execute(f"DELETE FROM {VEC_TABLE} WHERE chunk_id = ?", (chunk_id,))
    if stale:
        bump_vector_generation(conn)
    return len(stale)


def vector_rows(conn: Any) -> int:
    return conn.execute(f"SELECT count(*) FROM {VEC_TABLE}").fetchone()[0]


def collect_garbage(conn: Any, fingerprint: str | None, has_vec_table: bool) -> dict[str, int]:
    removed: dict[str, int] = {}
    removed["orphan_chunks"] = conn.execute(
        "DELETE FROM chunk WHERE entry_id NOT IN (SELECT id FROM entry)").rowcount
    removed["orphan_fts_rows"] = conn.execute(
        "DELETE FROM chunk_fts WHERE rowid NOT IN (SELECT id FROM chunk)").rowcount
    if has_vec_table:
        removed["orphan_vectors"] = drop_orphan_vectors(conn)
    removed["stale_cached_embeddings"] = conn.execute(
        "DELETE FROM embedding_cache WHERE fingerprint != ? OR hash NOT IN (SELECT hash FROM chunk)",
        (fingerprint or "",),
    ).rowcount
    removed["orphan_usage_rows"] = conn.execute(
        "DELETE FROM usage WHERE entry_id NOT IN (SELECT id FROM entry)").rowcount
    return removed
