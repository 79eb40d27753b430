"""The vector side of the index: the vec0 table, the embedder fingerprint and settings in `meta`,
chunks still waiting for a vector, and where a chunk's vector can be had without the model.

A chunk whose text was embedded before reuses that vector, looked up by the text's hash: among the
live chunks (a paragraph that also appears elsewhere), and in `embedding_cache`, which holds the
vectors of chunks deleted since the last embedding run (an edited note's unchanged paragraphs, a
renamed file, a reverted edit). After each embedding run it is trimmed to vectors no live chunk
holds, at most STASH_MAX of them: a cache of every vector ever made was 47 % of the index (each
2 KB blob on an overflow page of its own) and duplicated the vectors the index already holds.

Each stored vector has its CRC-32 beside it (`chunk.vector_sum`, `embedding_cache.sum`), written with it: a
vector is only reused (by another chunk of the same text, from the cache) when it still matches, and
`doctor --full` checks them all (`damaged_vectors`). Searches never check: the hot path reads no sums."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import Any

VEC_TABLE = "chunk_vec"
STASH_MAX = 2000  # kept vectors of deleted chunks (~4.7 KB each at 512 dimensions)
REBUILD_PENDING = "rebuild_pending"  # meta key: emptied for a rebuild that has not completed yet


def get_meta(conn: Any, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def delete_meta(conn: Any, key: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


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
    conn.execute("UPDATE chunk SET has_vector = 0, vector_sum = NULL WHERE has_vector != 0")
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
    """Vectors already made for these chunk-text hashes: kept from deleted chunks, or on live ones."""
    hashes = list(set(hashes))
    found: dict[str, bytes] = {}
    live_ok = get_meta(conn, "fingerprint") == fingerprint and vector_table_exists(conn)
    for i in range(0, len(hashes), 500):
        part = hashes[i : i + 500]
        marks = ",".join("?" * len(part))
        found.update((text_hash, vector) for text_hash, vector, kept in conn.execute(
            f"SELECT hash, vector, sum FROM embedding_cache WHERE fingerprint = ? AND hash IN ({marks})",
            (fingerprint, *part)) if intact(vector, kept))
        missing = [h for h in part if h not in found]
        if live_ok and missing:
            found.update(_live_vectors(conn, missing))
    return found


def _live_vectors(conn: Any, hashes: list[str]) -> dict[str, bytes]:
    marks = ",".join("?" * len(hashes))
    owners = [r[0] for r in conn.execute(
        f"SELECT min(id) FROM chunk WHERE has_vector = 1 AND hash IN ({marks}) GROUP BY hash", hashes)]
    return vectors_by_hash(conn, owners) if owners else {}


def vectors_by_hash(conn: Any, chunk_ids: Sequence[int]) -> dict[str, bytes]:
    """text hash -> vector of those chunks that have one (vec0 answers point lookups by its key)."""
    marks = ",".join("?" * len(chunk_ids))
    rows = conn.execute(f"SELECT id, hash, vector_sum FROM chunk WHERE has_vector = 1 AND id IN ({marks})",
                        list(chunk_ids)).fetchall()
    found = {}
    for chunk_id, text_hash, kept in rows:
        row = conn.execute(f"SELECT embedding FROM {VEC_TABLE} WHERE chunk_id = ?", (chunk_id,)).fetchone()
        if row and intact(row[0], kept):  # a damaged vector is made again, never handed on
            found[text_hash] = row[0]
    return found


def vector_sum(vector: bytes) -> int:
    """The checksum kept with a stored vector."""
    return zlib.crc32(vector)


def intact(vector: bytes, kept: int | None) -> bool:
    """True when `vector` matches the sum kept with it (or none was kept: stored before sums were)."""
    return kept is None or zlib.crc32(vector) == kept


def stash_vectors(conn: Any, vectors: dict[str, bytes]) -> None:
    """Keep the vectors of chunks about to be deleted, by text hash, for the next embedding run."""
    fingerprint = get_meta(conn, "fingerprint")
    if fingerprint is None or not vectors:
        return
    conn.executemany("INSERT OR IGNORE INTO embedding_cache(hash, fingerprint, vector, sum) VALUES (?, ?, ?, ?)",
                     [(text_hash, fingerprint, vector, vector_sum(vector)) for text_hash, vector in vectors.items()])


def stash_size(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]


def trim_stash(conn: Any, keep: int = STASH_MAX) -> int:
    """Drop kept vectors of another embedder or that a live chunk now holds (found there anyway),
    then any beyond `keep`."""
    removed = conn.execute("DELETE FROM embedding_cache WHERE fingerprint != coalesce("
                           "(SELECT value FROM meta WHERE key = 'fingerprint'), '') OR hash IN "
                           "(SELECT hash FROM chunk WHERE has_vector = 1)").rowcount
    excess = stash_size(conn) - keep
    if excess > 0:
        removed += conn.execute("DELETE FROM embedding_cache WHERE (hash, fingerprint) IN "
                                "(SELECT hash, fingerprint FROM embedding_cache LIMIT ?)", (excess,)).rowcount
    return removed


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
        conn.executemany("UPDATE chunk SET has_vector = 1, vector_sum = ? WHERE id = ?",
                         [(vector_sum(wanted[chunk_id]), chunk_id) for chunk_id in live])
        bump_vector_generation(conn)
    return len(live)


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


def forget_vectors(conn: Any, chunk_ids: Sequence[int]) -> None:
    """Drop these chunks' vectors (damaged): the next embedding pass makes them again."""
    for chunk_id in chunk_ids:
        conn.execute(f"DELETE FROM {VEC_TABLE} WHERE chunk_id = ?", (chunk_id,))
    conn.executemany("UPDATE chunk SET has_vector = 0, vector_sum = NULL WHERE id = ?", [(i,) for i in chunk_ids])
    if chunk_ids:
        bump_vector_generation(conn)


def damaged_vectors(conn: Any) -> tuple[list[int], list[int]]:
    """(chunks whose stored vector no longer matches its sum, or is missing though the chunk says it has one;
    chunks whose vector has no sum yet). One pass over the vector table, for `doctor --full`."""
    kept = dict(conn.execute("SELECT id, vector_sum FROM chunk WHERE has_vector = 1"))
    stored = set()
    damaged, unsummed = [], []
    for chunk_id, vector in all_vectors(conn):
        stored.add(chunk_id)
        if chunk_id not in kept:
            continue  # an orphan: the reindex drops it (drop_orphan_vectors)
        if kept[chunk_id] is None:
            unsummed.append(chunk_id)
        elif zlib.crc32(vector) != kept[chunk_id]:
            damaged.append(chunk_id)
    damaged += [chunk_id for chunk_id in kept if chunk_id not in stored]
    return damaged, unsummed


def record_sums(conn: Any, chunk_ids: Sequence[int]) -> None:
    """Keep the sums of vectors stored before sums were (found sound otherwise)."""
    for chunk_id in chunk_ids:
        row = conn.execute(f"SELECT embedding FROM {VEC_TABLE} WHERE chunk_id = ?", (chunk_id,)).fetchone()
        if row:
            conn.execute("UPDATE chunk SET vector_sum = ? WHERE id = ? AND has_vector = 1",
                         (vector_sum(row[0]), chunk_id))
