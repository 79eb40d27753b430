"""The second-stage vectors (`pinky.search.second_stage`): which chunks have one, storing them, reading them back.

They live in `chunk_quality`, one int8 blob per chunk (`quantize`; `unpack` reads them back), and go with their chunk
(ON DELETE CASCADE). `meta` holds the fingerprint of the model that made them; any change of model
empties the table. Each has its CRC-32 beside it (`sum`, as the first stage's vectors do: `pinky.store.vectors`):
a vector is taken again (by another chunk, through an edit or a rebuild) only while it matches, and
`doctor --full` checks them all (`damaged`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinky.store.readonly import readonly_uri
from pinky.store.vectors import get_meta, intact, set_meta, vector_sum

if TYPE_CHECKING:
    import numpy as np

TABLE = "chunk_quality"
STASH = "quality_stash"
FINGERPRINT_KEY = "quality_fingerprint"
GENERATION_KEY = "quality_generation"
DIMS = 384  # multilingual-e5-small's
VECTOR_BYTES = DIMS  # int8: one byte a component (quantize)


def quantize(vectors: np.ndarray) -> list[bytes]:
    """Each row as DIMS signed bytes, scaled so its largest component is ±127 (cosine ignores the scale).
    A quarter of float32's size (384 bytes a chunk: +11 MB at 20,000 chunks instead of +46 MB); measured
    on CoSQA, e5 alone loses 0.0016 nDCG@10 to it."""
    import numpy as np

    peaks = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = np.rint(vectors * (127.0 / np.where(peaks > 0, peaks, 1.0)))
    return [row.tobytes() for row in scaled.astype(np.int8)]


def unpack(blobs: list[bytes]) -> np.ndarray:
    """Stored vectors as unit-length float32 rows (for a matrix product)."""
    import numpy as np

    rows = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), DIMS).astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def generation(conn: Any) -> str:
    return get_meta(conn, GENERATION_KEY) or "0"


def bump_generation(conn: Any) -> None:
    """Every change bumps a counter, so in-memory copies (pinky.indexing.vectors.VectorCache) know to reload."""
    conn.execute(f"INSERT INTO meta(key, value) VALUES ('{GENERATION_KEY}', '1') "
                 "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def ensure_fingerprint(conn: Any, fingerprint: str) -> bool:
    """Make `fingerprint` the table's; True when vectors of another model were dropped for it."""
    current = get_meta(conn, FINGERPRINT_KEY)
    if current == fingerprint:
        return False
    dropped = conn.execute(f"DELETE FROM {TABLE}").rowcount > 0
    conn.execute(f"DELETE FROM {STASH}")
    set_meta(conn, FINGERPRINT_KEY, fingerprint)
    bump_generation(conn)
    return dropped


def fingerprint(conn: Any) -> str | None:
    return get_meta(conn, FINGERPRINT_KEY)


def pending(conn: Any, limit: int) -> list[tuple[int, str, str, str, str, str]]:
    """(chunk id, hash, title, heading, text, the note's body) of chunks without a second-stage vector,
    oldest first (a note's chunks come together)."""
    return conn.execute(
        f"SELECT c.id, c.hash, e.title, c.heading, c.text, e.body FROM chunk c JOIN entry e ON e.id = c.entry_id "
        f"WHERE NOT EXISTS (SELECT 1 FROM {TABLE} q WHERE q.chunk_id = c.id) ORDER BY c.id LIMIT ?",
        (limit,),
    ).fetchall()


def made_for(conn: Any, passages: Sequence[str]) -> dict[str, bytes]:
    """passage hash -> a vector already made for that text (another chunk of the note, a copy elsewhere,
    or kept through a full rebuild)."""
    found: dict[str, bytes] = {}
    for passage in dict.fromkeys(passages):
        rows = conn.execute(f"SELECT vector, sum FROM {TABLE} WHERE passage = ? UNION ALL "
                            f"SELECT vector, sum FROM {STASH} WHERE passage = ?", (passage, passage))
        vector = next((vector for vector, kept in rows if intact(vector, kept)), None)
        if vector is not None:
            found[passage] = vector
    return found


def for_rebuild(conn: Any) -> tuple[str | None, list[tuple[str, bytes]]]:
    """The fingerprint and (passage, vector) rows to keep through a full rebuild (none before m012)."""
    if conn.execute(f"SELECT 1 FROM sqlite_master WHERE name = '{TABLE}'").fetchone() is None:
        return None, []
    rows = conn.execute(f"SELECT passage, vector, {_sum_of(conn, TABLE)} FROM {TABLE} "
                        f"UNION SELECT passage, vector, {_sum_of(conn, STASH)} FROM {STASH}")
    return fingerprint(conn), [(passage, vector) for passage, vector, kept in rows if intact(vector, kept)]


def after_rebuild(conn: Any, kept_fingerprint: str | None, rows: Sequence[tuple[str, bytes]]) -> None:
    """Put what for_rebuild kept into the new, empty index's stash."""
    if kept_fingerprint is None or not rows:
        return
    set_meta(conn, FINGERPRINT_KEY, kept_fingerprint)
    conn.executemany(f"INSERT OR IGNORE INTO {STASH}(passage, vector, sum) VALUES (?, ?, ?)",
                     [(passage, vector, vector_sum(vector)) for passage, vector in rows])


def salvage(path: Path) -> tuple[str | None, list[tuple[str, bytes]]]:
    """What a file about to be replaced (damaged, or rebuilt where it cannot be emptied in place) can
    still give of for_rebuild's rows, read-only: those of each table whose pages pass quick_check (the
    damage was elsewhere), each a whole vector. They cost an hour of cores at 10,000 notes."""
    import sqlite3

    rows: dict[str, bytes] = {}
    try:
        conn = sqlite3.connect(readonly_uri(str(path)), uri=True)
    except sqlite3.Error:
        return None, []
    try:
        kept = fingerprint(conn)
        for table in (TABLE, STASH):
            if conn.execute(f"PRAGMA quick_check({table})").fetchone() != ("ok",):
                continue
            for passage, vector, kept in conn.execute(f"SELECT passage, vector, {_sum_of(conn, table)} FROM {table}"):
                if isinstance(passage, str) and isinstance(vector, bytes) and len(vector) == VECTOR_BYTES \
                        and intact(vector, kept):
                    rows.setdefault(passage, vector)
    except sqlite3.Error:
        return None, []  # no meta, no such table (an older index), or damage the checks did not see
    finally:
        conn.close()
    return kept, list(rows.items())


def _sum_of(conn: Any, table: str) -> str:
    """The column holding `table`'s checksums; NULL in an index made before they were kept."""
    return "sum" if any(column[1] == "sum" for column in conn.execute(f"PRAGMA table_info({table})")) else "NULL"


def stash_size(conn: Any) -> int:
    return conn.execute(f"SELECT count(*) FROM {STASH}").fetchone()[0]


def clear_stash(conn: Any) -> int:
    return conn.execute(f"DELETE FROM {STASH}").rowcount


def count_pending(conn: Any) -> int:
    return conn.execute(f"SELECT count(*) FROM chunk c WHERE NOT EXISTS "
                        f"(SELECT 1 FROM {TABLE} q WHERE q.chunk_id = c.id)").fetchone()[0]


def any_vector(conn: Any) -> bool:
    return conn.execute(f"SELECT 1 FROM {TABLE} LIMIT 1").fetchone() is not None


def count(conn: Any) -> int:
    return conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]


def store(conn: Any, rows: Sequence[tuple[int, str, str, bytes]]) -> int:
    """Attach (chunk id, chunk text hash, passage hash, vector) rows to chunks that still exist with that
    text (an edit meanwhile gave the note new chunks, which are pending)."""
    stored = 0
    for chunk_id, text_hash, passage, vector in rows:
        stored += conn.execute(
            f"INSERT OR REPLACE INTO {TABLE}(chunk_id, passage, vector, sum) SELECT id, ?, ?, ? FROM chunk "
            "WHERE id = ? AND hash = ?", (passage, vector, vector_sum(vector), chunk_id, text_hash)).rowcount
    if stored:
        bump_generation(conn)
    return stored


def all_vectors(conn: Any) -> list[tuple[int, bytes]]:
    return conn.execute(f"SELECT chunk_id, vector FROM {TABLE}").fetchall()


def of_entry(conn: Any, entry_id: str) -> dict[str, bytes]:
    """passage hash -> vector of an entry's chunks (kept across an edit where the model's input is unchanged)."""
    rows = conn.execute(f"SELECT q.passage, q.vector, q.sum FROM chunk c JOIN {TABLE} q ON q.chunk_id = c.id "
                        "WHERE c.entry_id = ?", (entry_id,))
    return {passage: vector for passage, vector, kept in rows if intact(vector, kept)}


def entries_lacking(conn: Any, entry_ids: Sequence[str]) -> set[str]:
    """Those of `entry_ids` with a chunk that has no second-stage vector yet."""
    if not entry_ids:
        return set()
    marks = ",".join("?" * len(entry_ids))
    return {r[0] for r in conn.execute(
        f"SELECT DISTINCT c.entry_id FROM chunk c WHERE c.entry_id IN ({marks}) AND NOT EXISTS "
        f"(SELECT 1 FROM {TABLE} q WHERE q.chunk_id = c.id)", list(entry_ids))}


def nearest(conn: Any, query_vector: bytes, filters: Any, depth: int) -> list[tuple[str, float, int]]:
    """(entry id, cosine similarity, best chunk id), one per entry, best first, scored by sqlite-vec's
    vec_distance_cosine over the blobs: ~20 ms for 20,000 chunks, half of reading them into numpy, which
    only pays off for a process that keeps them (pinky.indexing.vectors.VectorCache)."""
    from pinky.store.retrieval import best_per_entry

    distance = "vec_distance_cosine(vec_int8(q.vector), vec_int8(?))"
    if not filters.active:  # the best rows first, then their chunks: joining every row costs as much as the scan
        rows = conn.execute(
            f"SELECT c.entry_id, v.d, c.id FROM (SELECT q.chunk_id, {distance} AS d FROM {TABLE} q ORDER BY d "
            "LIMIT ?) v JOIN chunk c ON c.id = v.chunk_id ORDER BY v.d", (query_vector, depth * 2))
    else:
        where, params = filters.sql()
        rows = conn.execute(
            f"SELECT c.entry_id, {distance} AS d, c.id FROM {TABLE} q JOIN chunk c ON c.id = q.chunk_id "
            f"JOIN entry e ON e.id = c.entry_id WHERE {where} ORDER BY d LIMIT ?", (query_vector, *params, depth * 2))
    return best_per_entry((r[0], 1.0 - r[1], r[2]) for r in rows if r[1] is not None)[:depth]


def forget(conn: Any, chunk_ids: Sequence[int]) -> None:
    """Drop these chunks' vectors (damaged): the background fill makes them again."""
    conn.executemany(f"DELETE FROM {TABLE} WHERE chunk_id = ?", [(i,) for i in chunk_ids])
    if chunk_ids:
        bump_generation(conn)


def damaged(conn: Any) -> tuple[list[int], list[int]]:
    """(chunks whose second-stage vector no longer matches its sum, chunks whose vector has none yet)."""
    changed, unsummed = [], []
    for chunk_id, vector, kept in conn.execute(f"SELECT chunk_id, vector, sum FROM {TABLE}"):
        if kept is None:
            unsummed.append(chunk_id)
        elif not intact(vector, kept):
            changed.append(chunk_id)
    return changed, unsummed


def record_sums(conn: Any, chunk_ids: Sequence[int]) -> None:
    """Keep the sums of vectors stored before sums were (found sound otherwise)."""
    for chunk_id in chunk_ids:
        row = conn.execute(f"SELECT vector FROM {TABLE} WHERE chunk_id = ?", (chunk_id,)).fetchone()
        if row:
            conn.execute(f"UPDATE {TABLE} SET sum = ? WHERE chunk_id = ?", (vector_sum(row[0]), chunk_id))
