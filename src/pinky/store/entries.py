"""Entries and their chunks: what the indexer writes, how a slug finds its entry, listings, counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pinky.base.layout import slug_candidates
from pinky.store import corpus, quality, term_counts
from pinky.store.link_queries import replace_note_links
from pinky.store.vectors import (
    VEC_TABLE,
    bump_vector_generation,
    drop_orphan_vectors,
    stash_vectors,
    store_vectors,
    vectors_by_hash,
)
from pinky.text.fts import FTS_COLUMNS
from pinky.text.linkrefs import LinkRef, link_row
from pinky.text.model_input import quality_input, text_hash


class IndexedFile(NamedTuple):  # a tuple: 100,000 of them are built on every reindex (~3x cheaper)
    id: str
    root: str
    path: str
    content_hash: str
    mtime_ns: int
    size: int
    ctime_ns: int
    inode: int

    @property
    def stamp(self) -> tuple[int, int, int, int]:
        return self.mtime_ns, self.size, self.ctime_ns, self.inode


STAMPED = "mtime_ns, size, ctime_ns, inode"  # a file's stamp as stored (pinky.base.global_signature.stamp_of)


def indexed_files_by_id(conn: Any, entry_id: str) -> IndexedFile | None:
    row = conn.execute(f"SELECT id, root, path, content_hash, {STAMPED} FROM entry WHERE id = ?",
                       (entry_id,)).fetchone()
    return IndexedFile(*row) if row else None


def holds(conn: Any, entry_id: str, content_hash: str) -> bool:
    """Whether the entry is stored with these bytes."""
    return conn.execute("SELECT 1 FROM entry WHERE id = ? AND content_hash = ?", (entry_id, content_hash)).fetchone() \
        is not None


def links_pending(conn: Any) -> set[tuple[str, str]]:
    """(root, path) of the notes stored by a reindex that did not live to write their links."""
    return {(r[0], r[1]) for r in conn.execute(
        "SELECT e.root, e.path FROM link_pending p JOIN entry e ON e.id = p.entry_id")}


def mark_links_pending(conn: Any, entry_ids: Sequence[str], pending: bool) -> None:
    """Note (or, once written, forget) that these notes' links are still to be written."""
    sql = ("INSERT OR IGNORE INTO link_pending(entry_id) VALUES (?)" if pending
           else "DELETE FROM link_pending WHERE entry_id = ?")
    conn.executemany(sql, [(eid,) for eid in entry_ids])


def indexed_files(conn: Any) -> dict[tuple[str, str], IndexedFile]:
    rows = conn.execute(f"SELECT id, root, path, content_hash, {STAMPED} FROM entry")
    return {(r[1], r[2]): IndexedFile(*r) for r in rows}


def indexed_files_under(conn: Any, root: str, prefix: str) -> dict[tuple[str, str], IndexedFile]:
    """The entries of `root` whose path starts with `prefix` (a folder's, ending in '/'; '' for all): a range of
    the (root, path) index, not a scan of every entry."""
    if not prefix:
        rows = conn.execute(f"SELECT id, root, path, content_hash, {STAMPED} FROM entry WHERE root = ?", (root,))
    else:
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first path after every one that starts with prefix
        rows = conn.execute(f"SELECT id, root, path, content_hash, {STAMPED} FROM entry WHERE root = ? AND path >= ? "
                            "AND path < ?", (root, prefix, end))
    return {(r[1], r[2]): IndexedFile(*r) for r in rows}


@dataclass(frozen=True)
class SkippedFile:
    root: str
    path: str
    mtime_ns: int
    size: int
    reason: str
    ctime_ns: int = 0
    inode: int = 0

    @property
    def stamp(self) -> tuple[int, int, int, int]:
        return self.mtime_ns, self.size, self.ctime_ns, self.inode


def skipped_files(conn: Any) -> dict[tuple[str, str], SkippedFile]:
    rows = conn.execute("SELECT root, path, mtime_ns, size, reason, ctime_ns, inode FROM skipped_file "
                        "ORDER BY root, path")
    return {(r[0], r[1]): SkippedFile(*r) for r in rows}


def record_skipped(conn: Any, skipped: SkippedFile) -> None:
    conn.execute("INSERT INTO skipped_file(root, path, mtime_ns, size, reason, ctime_ns, inode) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(root, path) DO UPDATE SET mtime_ns = excluded.mtime_ns, "
                 "size = excluded.size, reason = excluded.reason, ctime_ns = excluded.ctime_ns, inode = excluded.inode",
                 (skipped.root, skipped.path, skipped.mtime_ns, skipped.size, skipped.reason, skipped.ctime_ns,
                  skipped.inode))


FTS_FIELDS = ", ".join(FTS_COLUMNS)


def forget_skipped(conn: Any, root: str, path: str) -> None:
    conn.execute("DELETE FROM skipped_file WHERE root = ? AND path = ?", (root, path))


def content_hashes(conn: Any, entry_ids: list[str]) -> dict[str, str]:
    """Entry id -> content hash, for the ids that are indexed."""
    found: dict[str, str] = {}
    for start in range(0, len(entry_ids), 500):
        part = entry_ids[start : start + 500]
        found.update(conn.execute(f"SELECT id, content_hash FROM entry WHERE id IN ({','.join('?' * len(part))})",
                                  part).fetchall())
    return found


def touch_entry(conn: Any, entry_id: str, stamp: tuple[int, int, int, int]) -> None:
    """Record the file's new stamp (mtime_ns, size, ctime_ns, inode): its bytes are the ones indexed."""
    conn.execute("UPDATE entry SET mtime_ns = ?, size = ?, ctime_ns = ?, inode = ? WHERE id = ?", (*stamp, entry_id))


def _delete_chunks(conn: Any, entry_id: str, has_vec_table: bool,
                   reused: frozenset[str] = frozenset()) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Delete an entry's chunks; return the vectors of those whose text hash is in `reused` (the
    entry's new chunks take them back at once; the others' are stashed for later runs), and their
    second-stage vectors by input hash (pinky.search.second_stage: the new chunks take back those that match)."""
    ids = [r[0] for r in conn.execute("SELECT id FROM chunk WHERE entry_id = ?", (entry_id,))]
    if not ids:
        return {}, {}
    refined = quality.of_entry(conn, entry_id)
    term_counts.chunks_going(conn, ids)
    marks = ",".join("?" * len(ids))
    conn.execute(f"DELETE FROM chunk_fts WHERE rowid IN ({marks})", ids)
    carried: dict[str, bytes] = {}
    if has_vec_table:
        vectors = vectors_by_hash(conn, ids)
        carried = {h: v for h, v in vectors.items() if h in reused}
        stash_vectors(conn, {h: v for h, v in vectors.items() if h not in reused})
        # one key at a time: vec0 answers `chunk_id = ?` from its key index but scans (and sorts) the
        # whole table for `chunk_id IN (...)`, which made re-indexing a 100,000-note brain quadratic
        conn.executemany(f"DELETE FROM {VEC_TABLE} WHERE chunk_id = ?", [(i,) for i in ids])
        bump_vector_generation(conn)
    conn.execute("DELETE FROM chunk WHERE entry_id = ?", (entry_id,))
    return carried, refined


def delete_entry(conn: Any, entry_id: str, has_vec_table: bool) -> None:
    counted = term_counts.in_step(conn)
    _delete_chunks(conn, entry_id, has_vec_table)
    conn.execute("DELETE FROM entry WHERE id = ?", (entry_id,))
    conn.execute("DELETE FROM link_pending WHERE entry_id = ?", (entry_id,))
    term_counts.settle(conn, counted)


def slug_taken(conn: Any, slug: str, entry_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM entry WHERE slug = ? AND id != ?", (slug, entry_id)).fetchone()
    return row is not None


def upsert_entry(conn: Any, row: dict[str, Any], links: Sequence[LinkRef] | None, mentions: Sequence[str],
                 chunks: Sequence[dict[str, Any]], has_vec_table: bool) -> None:
    """Replace an entry, its links and all of its chunks (FTS rows and vectors included) in one go.

    Its links are stored unresolved (the caller resolves them); None leaves them to the caller. A chunk
    whose text is unchanged keeps its vector (an edit re-embeds only the paragraphs it changed)."""
    counted = term_counts.in_step(conn)
    carried, refined = _delete_chunks(conn, row["id"], has_vec_table, frozenset(c["hash"] for c in chunks))
    columns = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
    conn.execute(
        f"INSERT INTO entry({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT(id) DO UPDATE SET {updates}",
        [row[c] for c in columns],
    )
    for table in ("entry_file", "entry_mention"):
        conn.execute(f"DELETE FROM {table} WHERE entry_id = ?", (row["id"],))
    if links is not None:
        replace_note_links(conn, row["id"], [link_row(ref) for ref in links])
        conn.execute("DELETE FROM link_pending WHERE entry_id = ?", (row["id"],))
    conn.executemany("INSERT INTO entry_mention(entry_id, name) VALUES (?, ?)", [(row["id"], n) for n in mentions])
    conn.executemany("INSERT INTO entry_file(entry_id, path) VALUES (?, ?)",
                     [(row["id"], f) for f in json.loads(row["files"])])
    stored = []
    for chunk in chunks:
        cur = conn.execute(
            "INSERT INTO chunk(entry_id, ord, heading, line, text, hash, idents) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row["id"], chunk["ord"], chunk["heading"], chunk["line"], chunk["text"], chunk["hash"],
             chunk.get("idents", "")),
        )
        # From the view FTS5 reads to delete the row again, so both always see the same values.
        conn.execute(f"INSERT INTO chunk_fts(rowid, {FTS_FIELDS}) SELECT id, {FTS_FIELDS} FROM chunk_fts_source "
                     "WHERE id = ?", (cur.lastrowid,))
        stored.append(cur.lastrowid)
        if chunk["hash"] in carried:
            store_vectors(conn, [(cur.lastrowid, carried[chunk["hash"]])])
        if refined:
            passage = text_hash(quality_input(row["title"], chunk["heading"], chunk["text"], row["body"]))
            if passage in refined:
                quality.store(conn, [(cur.lastrowid, chunk["hash"], passage, refined[passage])])
    term_counts.chunks_added(conn, stored)
    term_counts.settle(conn, counted)


ENTRY_COLUMNS = ("id, root, path, slug, scope, type, project, tags, files, created, last_verified, "
                 "title, body, meta, content_hash, mtime_ns, size, parse_error, indexed_at")


def entry_by(conn: Any, column: str, value: str) -> Any:
    assert column in {"id", "slug"}
    return conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE {column} = ?", (value,)).fetchone()


def entry_at(conn: Any, root: str, path: str) -> Any:
    return conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE root = ? AND path = ?", (root, path)).fetchone()


def resolve_slug(conn: Any, name: str, limit: int = 5) -> list[Any]:
    """The entries a (possibly shortened) slug names: the slug itself if it exists; else each entry
    the name may stand for (`global/`, a type folder left out), else every entry whose slug ends
    in `/<name>`. More than one row means the name is ambiguous."""
    candidates = slug_candidates(name)
    if not candidates:
        return []
    marks = ",".join("?" * len(candidates))
    rows = conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE slug IN ({marks})", candidates).fetchall()
    exact = [r for r in rows if r["slug"] == candidates[0]]
    if exact or rows:
        rank = {slug: i for i, slug in enumerate(candidates)}
        return exact or sorted(rows, key=lambda r: rank[r["slug"]])[:limit]
    pattern = "%/" + candidates[0].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE slug LIKE ? ESCAPE '\\' ORDER BY slug LIMIT ?",
                        (pattern, limit)).fetchall()


def entries_titled(conn: Any, title: str, limit: int = 2) -> list[Any]:
    return conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entry WHERE lower(title) = lower(?) LIMIT ?",
                        (title, limit)).fetchall()


def recent_entries(conn: Any, limit: int) -> list[Any]:
    return conn.execute("SELECT slug, title, type, scope, root, path FROM entry ORDER BY mtime_ns DESC LIMIT ?",
                        (limit,)).fetchall()


def changed_since(conn: Any, since_ns: int, since_day: str) -> list[Any]:
    """Entries (diaries aside) created on or after `since_day` or whose file changed since `since_ns`."""
    return conn.execute(
        "SELECT slug, root, path, title, type, scope, project, tags, created, mtime_ns, body FROM entry "
        "WHERE type != 'diary' AND (mtime_ns >= ? OR created >= ?)",
        (since_ns, since_day),
    ).fetchall()


def entry_count(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM entry").fetchone()[0]


def compact(conn: Any) -> None:
    """Merge the FTS segments, rewrite the file without free pages, and empty the WAL."""
    conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def counts(conn: Any) -> dict[str, int]:
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    return {
        "entries": one("SELECT count(*) FROM entry"),
        "chunks": corpus.chunk_total(conn),
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


def fts_matches_chunks(conn: Any) -> bool:
    """Whether the full-text index holds exactly the terms of the chunks it is built from (it keeps no
    copy of the text: an orphan row cannot be found by rowid, only by this check)."""
    try:
        conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 1)")
    except Exception as exc:  # SQLITE_CORRUPT_VTAB, reported by both drivers as a DatabaseError
        if "malformed" in str(exc) or "corrupt" in str(exc).lower():
            return False
        raise
    return True


def rebuild_fts(conn: Any) -> int:
    """Build the full-text index again from the chunks; returns 1 (one rebuild)."""
    conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('rebuild')")
    term_counts.recount(conn)
    return 1


def collect_garbage(conn: Any, fingerprint: str | None, has_vec_table: bool) -> dict[str, int]:
    removed: dict[str, int] = {}
    removed["orphan_chunks"] = conn.execute(
        "DELETE FROM chunk WHERE entry_id NOT IN (SELECT id FROM entry)").rowcount
    removed["fts_rebuilt"] = 0 if fts_matches_chunks(conn) else rebuild_fts(conn)
    if not term_counts.in_step(conn):  # orphan chunks went, or a writer that does not count wrote
        term_counts.recount(conn)
    if has_vec_table:
        removed["orphan_vectors"] = drop_orphan_vectors(conn)
    # Kept vectors of deleted chunks serve the next embedding run; those of another embedder, or
    # whose text a live chunk holds with its vector, never will.
    removed["stale_cached_embeddings"] = conn.execute(
        "DELETE FROM embedding_cache WHERE fingerprint != ? OR hash IN (SELECT hash FROM chunk WHERE has_vector = 1)",
        (fingerprint or "",),
    ).rowcount
    removed["orphan_usage_rows"] = conn.execute(
        "DELETE FROM usage WHERE entry_id NOT IN (SELECT id FROM entry)").rowcount
    return removed


# --- the content audit (pinky.indexing.audit) ---------------------------------------------------------------


def audited_entries(conn: Any) -> list[tuple[str, str, str, str, bytes, bytes]]:
    """(id, root, path, content_hash, title, body) of every entry, the texts as the stored bytes: a damaged
    row must be reported, not raise on decoding."""
    return conn.execute("SELECT id, root, path, content_hash, CAST(title AS BLOB), CAST(body AS BLOB) "
                        "FROM entry").fetchall()


def audited_chunks(conn: Any) -> dict[str, list[tuple[int, bytes, bytes, str]]]:
    """entry id -> its chunks as (ord, heading, text, hash), in order, the texts as the stored bytes."""
    out: dict[str, list[tuple[int, bytes, bytes, str]]] = {}
    for entry, order, heading, text, digest in conn.execute(
            "SELECT entry_id, ord, CAST(heading AS BLOB), CAST(text AS BLOB), hash FROM chunk ORDER BY entry_id, ord"):
        out.setdefault(entry, []).append((order, heading, text, digest))
    return out


def mark_for_reading(conn: Any, entry_ids: Sequence[str]) -> None:
    """Make the next reindex read these entries' files again and replace every row they hold."""
    conn.executemany("UPDATE entry SET content_hash = '', mtime_ns = -1 WHERE id = ?", [(i,) for i in entry_ids])
