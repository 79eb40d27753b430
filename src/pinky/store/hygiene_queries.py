"""What keeps knowledge true: tag counts, supersession lookups, feedback, gaps (see documentation/HYGIENE.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinky.store.migrations import NOT_CURRENT_WHERE

# --- tags ------------------------------------------------------------------------------------------


def tag_counts(conn: Any) -> list[tuple[str, int]]:
    """Every tag with how many entries carry it, matched without case or surrounding space, most used first."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT lower(trim(j.value)) AS tag, count(DISTINCT e.id) FROM entry e, json_each(e.tags) j "
        "WHERE trim(j.value) != '' GROUP BY tag ORDER BY 2 DESC, tag")]


def entries_tagged(conn: Any, tag: str) -> list[Any]:
    """root, path and slug of the entries carrying `tag` (normalised), in slug order."""
    return conn.execute(
        "SELECT e.root, e.path, e.slug FROM entry e WHERE EXISTS "
        "(SELECT 1 FROM json_each(e.tags) j WHERE lower(trim(j.value)) = ?) ORDER BY e.slug", (tag,)).fetchall()


# --- supersession and validity ---------------------------------------------------------------------


def same_fact(conn: Any, field: str, value: str, scope: str, exclude_id: str) -> list[Any]:
    """Current entries (not superseded) of `scope` whose frontmatter `field` (key or subject) is `value`."""
    assert field in {"key", "subject"}
    return conn.execute(
        f"SELECT id, root, path, slug FROM entry WHERE scope = ? AND id != ? "
        f"AND lower(trim(json_extract(meta, '$.{field}'))) = lower(trim(?)) "
        f"AND json_extract(meta, '$.superseded_by') IS NULL ORDER BY created, slug",
        (scope, exclude_id, value)).fetchall()


def not_current(conn: Any, entry_ids: Sequence[str], today: str) -> set[str]:
    """Which of these entries left the default results: superseded, or valid only until `today` or before.

    Reads the few such entries through the partial index `entry_not_current` (migration m009), not
    the frontmatter of every candidate: a search pays ~0.005 ms for it instead of ~0.3 ms (200 candidates, SciFact)."""
    if not entry_ids:
        return set()
    wanted = set(entry_ids)
    rows = conn.execute(f"SELECT id, json_extract(meta, '$.superseded_by'), "
                        f"substr(json_extract(meta, '$.valid_until'), 1, 10) FROM entry WHERE {NOT_CURRENT_WHERE}")
    return {entry for entry, by, until in rows
            if entry in wanted and (by is not None or (until is not None and str(until) <= today))}


# --- staleness and review --------------------------------------------------------------------------


def _stale_where(cutoffs: dict[str, str]) -> tuple[str, list[Any]]:
    """Current entries of a type with a threshold whose last confirmation is before that type's cutoff day."""
    clauses = " OR ".join("(type = ? AND substr(coalesce(last_verified, created), 1, 10) < ?)" for _ in cutoffs)
    params = [value for pair in cutoffs.items() for value in pair]
    return (f"coalesce(last_verified, created) IS NOT NULL AND json_extract(meta, '$.superseded_by') IS NULL "
            f"AND ({clauses or '0'})"), params


def stale_entries(conn: Any, cutoffs: dict[str, str], limit: int) -> tuple[int, list[Any]]:
    """How many entries are stale by `cutoffs` ({type: ISO day}), and the longest unverified few."""
    where, params = _stale_where(cutoffs)
    count = conn.execute(f"SELECT count(*) FROM entry WHERE {where}", params).fetchone()[0]
    rows = conn.execute(f"SELECT slug, type, root, path, title, last_verified, created FROM entry WHERE {where} "
                        f"ORDER BY coalesce(last_verified, created), slug LIMIT ?", (*params, limit)).fetchall()
    return count, rows


def flagged_entries(conn: Any, limit: int) -> list[Any]:
    """Entries someone marked wrong or outdated since the note last changed, most recently flagged first."""
    return conn.execute(
        "SELECT e.slug, e.type, e.root, e.path, e.title, f.verdict, f.query, f.at FROM feedback f "
        "JOIN entry e ON e.id = f.entry_id WHERE f.verdict IN ('wrong', 'outdated') AND f.at_ns > e.mtime_ns "
        "AND f.rowid = (SELECT max(g.rowid) FROM feedback g WHERE g.entry_id = f.entry_id "
        "AND g.verdict IN ('wrong', 'outdated')) ORDER BY f.at DESC LIMIT ?", (limit,)).fetchall()


# --- export and import -----------------------------------------------------------------------------


def export_rows(conn: Any, where: str, params: Sequence[Any]) -> list[Any]:
    """Slug, root, path, scope, project, type and title of every entry `where` keeps (a Filters clause
    over `e`), in root and path order."""
    return conn.execute(f"SELECT e.slug, e.root, e.path, e.scope, e.project, e.type, e.title FROM entry e "
                        f"WHERE {where} ORDER BY e.root, e.path", list(params)).fetchall()


def slugs_by_hash(conn: Any) -> dict[tuple[str, str], str]:
    """(root, content hash) -> a slug holding that exact text in that root (import skips what is already there)."""
    return {(r[0], r[1]): r[2] for r in conn.execute("SELECT root, content_hash, slug FROM entry ORDER BY slug DESC")}


# --- feedback and pruning --------------------------------------------------------------------------


def last_query_for(conn: Any, entry_id: str) -> str | None:
    """The most recent search that returned this entry (usage telemetry), if any."""
    row = conn.execute("SELECT query FROM usage WHERE entry_id = ? ORDER BY retrieved_at DESC, rowid DESC LIMIT 1",
                       (entry_id,)).fetchone()
    return row[0] if row else None


def record_feedback(conn: Any, entry_id: str, verdict: str, query: str | None, at: str, at_ns: int) -> None:
    conn.execute("INSERT INTO feedback(entry_id, verdict, query, at, at_ns) VALUES (?, ?, ?, ?, ?)",
                 (entry_id, verdict, query, at, at_ns))


def feedback_counts(conn: Any, entry_id: str) -> dict[str, int]:
    return dict(conn.execute("SELECT verdict, count(*) FROM feedback WHERE entry_id = ? GROUP BY verdict",
                             (entry_id,)).fetchall())


def record_open(conn: Any, entry_id: str, at: str) -> None:
    conn.execute("INSERT INTO opened(entry_id, at) VALUES (?, ?)", (entry_id, at))


def opened_after_search(conn: Any, window_days: float) -> list[Any]:
    """(query, slug, times) for every entry a search returned and an agent then opened within the window."""
    return conn.execute(
        "SELECT u.query, e.slug, count(DISTINCT o.rowid) AS times FROM opened o "
        "JOIN usage u ON u.entry_id = o.entry_id AND julianday(o.at) - julianday(u.retrieved_at) BETWEEN 0 AND ? "
        "JOIN entry e ON e.id = o.entry_id "
        "GROUP BY u.query, e.slug", (window_days,)).fetchall()


def verdicts_by_query(conn: Any) -> list[Any]:
    """(query, slug, verdict, times) of the feedback recorded against a known search."""
    return conn.execute(
        "SELECT f.query, e.slug, f.verdict, count(*) AS times FROM feedback f JOIN entry e ON e.id = f.entry_id "
        "WHERE f.query IS NOT NULL GROUP BY f.query, e.slug, f.verdict").fetchall()

def prune_candidates(conn: Any, cutoff_iso: str, cutoff_ns: int) -> list[Any]:
    """Entries (diaries aside) older than the cutoff, not changed or verified since, that no search returned
    and nobody marked useful since: slug, root, path, title, type, created, last_verified, oldest first."""
    day = cutoff_iso[:10]
    return conn.execute(
        "SELECT e.slug, e.root, e.path, e.title, e.type, e.created, e.last_verified FROM entry e "
        "WHERE e.type != 'diary' AND e.mtime_ns < ? AND COALESCE(e.created, '') < ? "
        "AND substr(COALESCE(e.last_verified, ''), 1, 10) < ? "
        "AND NOT EXISTS (SELECT 1 FROM usage u WHERE u.entry_id = e.id AND u.retrieved_at >= ?) "
        "AND NOT EXISTS (SELECT 1 FROM feedback f WHERE f.entry_id = e.id AND f.verdict = 'useful' AND f.at >= ?) "
        "ORDER BY e.mtime_ns, e.slug", (cutoff_ns, cutoff_iso, day, cutoff_iso, cutoff_iso)).fetchall()


# --- knowledge gaps --------------------------------------------------------------------------------


def record_gap(conn: Any, query_hash: str, query: str | None, terms: str, best: float, when: str) -> None:
    """Count one more weak search; a closed gap asked again opens again."""
    conn.execute(
        "INSERT INTO gap(query_hash, query, terms, count, best_score, first_seen, last_seen) "
        "VALUES (?, ?, ?, 1, ?, ?, ?) ON CONFLICT(query_hash) DO UPDATE SET count = count + 1, "
        "best_score = excluded.best_score, last_seen = excluded.last_seen, query = coalesce(excluded.query, query), "
        "closed_by = NULL, closed_at = NULL", (query_hash, query, terms, best, when, when))


def open_gaps(conn: Any) -> list[Any]:
    return conn.execute("SELECT query_hash, terms FROM gap WHERE closed_by IS NULL").fetchall()


def close_gaps(conn: Any, hashes: Sequence[str], slug: str, when: str) -> None:
    conn.executemany("UPDATE gap SET closed_by = ?, closed_at = ? WHERE query_hash = ?",
                     [(slug, when, h) for h in hashes])


def open_gap_terms(conn: Any, limit: int = 1000) -> list[Any]:
    """Open gaps with their hashed words (query, count, last_seen, terms), most frequent first."""
    return conn.execute("SELECT query, count, last_seen, terms FROM gap WHERE closed_by IS NULL "
                        "ORDER BY count DESC, last_seen DESC LIMIT ?", (limit,)).fetchall()


def gaps(conn: Any, include_closed: bool, limit: int) -> list[Any]:
    where = "" if include_closed else "WHERE closed_by IS NULL"
    return conn.execute(f"SELECT query_hash, query, count, best_score, first_seen, last_seen, closed_by, closed_at "
                        f"FROM gap {where} ORDER BY count DESC, last_seen DESC LIMIT ?", (limit,)).fetchall()


# --- contradictions --------------------------------------------------------------------------------


def current_entries(conn: Any) -> list[Any]:
    """Every entry that is not superseded, diaries aside: what may contradict what."""
    return conn.execute(
        "SELECT id, slug, root, path, title, body, meta, type, scope FROM entry WHERE type != 'diary' "
        "AND json_extract(meta, '$.superseded_by') IS NULL ORDER BY slug").fetchall()


def chunk_vectors(conn: Any) -> list[tuple[str, int, bytes]]:
    """(entry id, chunk ord, vector) of every embedded chunk of a current entry (diaries aside)."""
    from pinky.store.vectors import VEC_TABLE, vector_table_exists

    if not vector_table_exists(conn):
        return []
    return conn.execute(
        f"SELECT c.entry_id, c.ord, v.embedding FROM chunk c JOIN {VEC_TABLE} v ON v.chunk_id = c.id "
        f"JOIN entry e ON e.id = c.entry_id WHERE e.type != 'diary' "
        f"AND json_extract(e.meta, '$.superseded_by') IS NULL").fetchall()


def feedback_in(path: str) -> list[tuple[Any, ...]]:
    """Every feedback row of another index file, read-only (a read-only project's copy in the user's
    cache: what its user said there); empty when it cannot be read."""
    import sqlite3
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return conn.execute("SELECT entry_id, verdict, query, at, at_ns FROM feedback").fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def add_feedback_missing(conn: Any, rows: list[tuple[Any, ...]]) -> int:
    """Insert the feedback rows this index lacks (the same entry, verdict and moment count as one)."""
    added = 0
    for entry_id, verdict, query, at, at_ns in rows:
        if conn.execute("SELECT 1 FROM feedback WHERE entry_id = ? AND verdict = ? AND at_ns = ?",
                        (entry_id, verdict, at_ns)).fetchone() is None:
            record_feedback(conn, entry_id, verdict, query, at, at_ns)
            added += 1
    return added
