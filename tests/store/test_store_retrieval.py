"""pinky.store.retrieval: filters, full-text and vector candidates, hit rows and usage telemetry."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import add_entry, migrated_database

from pinky.store import corpus, retrieval
from pinky.store import vectors as store_vectors
from pinky.store.connect import Database
from pinky.text.lexical import field_weights


def vec(*values: float) -> bytes:
    return array("f", values).tobytes()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = migrated_database(tmp_path / "brain.db")
    yield database
    database.close()


@pytest.fixture
def brain(db: Database) -> dict[str, str]:
    """Four entries with distinct scopes, types, tags and dates; returns slug -> entry id."""
    conn = db.conn
    return {
        "gotcha/pool": add_entry(conn, "gotcha/pool", type="gotcha", tags=("db", "postgres"), mtime_ns=100,
                                 last_verified="2026-11-20", created="2026-01-01",
                                 chunks=["the connection pool hangs under load", "restart the pool"]),
        "decision/wal": add_entry(conn, "decision/wal", type="decision", tags=("db",), mtime_ns=100,
                                  created="2026-01-01", chunks=["we chose WAL mode for the pool database"]),
        "global/pattern/retry": add_entry(conn, "global/pattern/retry", root="global", type="pattern",
                                          tags=("net",), mtime_ns=5_000, chunks=["retry with backoff"]),
        "note/misc": add_entry(conn, "note/misc", tags=("db/postgres",), mtime_ns=100, created="2026-11-24",
                               chunks=["unrelated words"]),
    }


def matching(conn: Any, filters: retrieval.Filters) -> list[str]:
    where, params = filters.sql()
    return sorted(r[0] for r in conn.execute(f"SELECT e.slug FROM entry e WHERE {where}", params))


# --- filters -------------------------------------------------------------------------------------------------


def test_no_filter_is_inactive_and_matches_everything(db: Database, brain: dict[str, str]) -> None:
    filters = retrieval.Filters()
    assert not filters.active
    assert filters.sql() == ("1", [])
    assert matching(db.conn, filters) == sorted(brain)


def test_filters_sql_clauses_and_parameters_line_up() -> None:
    filters = retrieval.Filters(scope="global", type="gotcha", tags=("a", "b"), fresh_since=("2026-11-01", 42))
    where, params = filters.sql()
    assert filters.active
    assert where.count("?") == len(params)
    assert params == ["global", "gotcha", "a", "b", "2026-11-01", "2026-11-01", 42]


@pytest.mark.parametrize(("filters", "slugs"), [
    (retrieval.Filters(scope="global"), ["global/pattern/retry"]),
    (retrieval.Filters(scope="project:demo"), ["decision/wal", "gotcha/pool", "note/misc"]),
    (retrieval.Filters(type="gotcha"), ["gotcha/pool"]),
    (retrieval.Filters(tags=("db",)), ["decision/wal", "gotcha/pool"]),
    (retrieval.Filters(tags=("db", "postgres")), ["gotcha/pool"]),  # every tag, and tags match whole
    (retrieval.Filters(tags=("postgres",)), ["gotcha/pool"]),
    (retrieval.Filters(tags=("DB",)), []),
    (retrieval.Filters(type="gotcha", scope="global"), []),
    (retrieval.Filters(fresh_since=("2026-11-15", 1000)), ["global/pattern/retry", "gotcha/pool", "note/misc"]),
    (retrieval.Filters(fresh_since=("2026-11-22", 10**18)), ["note/misc"]),
    (retrieval.Filters(fresh_since=("2026-11-22", 10**18), tags=("db",)), []),
])
def test_filters_select_the_right_entries(db: Database, brain: dict[str, str], filters: retrieval.Filters,
                                          slugs: list[str]) -> None:
    assert matching(db.conn, filters) == slugs


def test_chunk_ids_matching_and_chunk_entries(db: Database, brain: dict[str, str]) -> None:
    ids = retrieval.chunk_ids_matching(db.conn, retrieval.Filters(type="gotcha"))
    assert len(ids) == 2
    assert retrieval.chunk_entries(db.conn, ids) == dict.fromkeys(ids, brain["gotcha/pool"])
    assert retrieval.chunk_entries(db.conn, []) == {}
    assert len(retrieval.chunk_ids_matching(db.conn, retrieval.Filters())) == corpus.chunk_total(db.conn) == 5


# --- full text -------------------------------------------------------------------------------------------------


def test_fts_hits_one_per_entry_best_first(db: Database, brain: dict[str, str]) -> None:
    hits = retrieval.fts_hits(db.conn, "pool", retrieval.Filters(), depth=10)
    assert {h[0] for h in hits} == {brain["gotcha/pool"], brain["decision/wal"]}
    assert hits[0][1] >= hits[1][1]
    assert all(score > 0 for _, score, _ in hits)  # higher is better: BM25's sign is flipped
    chunk_entry = retrieval.chunk_entries(db.conn, [h[2] for h in hits])
    assert all(chunk_entry[chunk] == entry for entry, _, chunk in hits)
    assert len(retrieval.fts_hits(db.conn, "pool", retrieval.Filters(), depth=1)) == 1


def test_fts_hits_under_a_filter(db: Database, brain: dict[str, str]) -> None:
    assert [h[0] for h in retrieval.fts_hits(db.conn, "pool", retrieval.Filters(type="decision"), depth=10)] == [
        brain["decision/wal"]]
    assert retrieval.fts_hits(db.conn, "pool", retrieval.Filters(scope="global"), depth=10) == []
    assert retrieval.fts_hits(db.conn, "nothingmatches", retrieval.Filters(), depth=10) == []


def test_fts_title_weight_changes_the_ranking(db: Database) -> None:
    add_entry(db.conn, "a", title="pool", chunks=["something else entirely here"])
    add_entry(db.conn, "b", title="other", chunks=["pool pool pool"])
    by_text = retrieval.fts_hits(db.conn, "pool", retrieval.Filters(), 10, weights=field_weights({"title": 0.0}))
    by_title = retrieval.fts_hits(db.conn, "pool", retrieval.Filters(), 10, weights=field_weights({"title": 10.0,
                                                                                                   "text": 0.0}))
    ids = {slug: db.conn.execute("SELECT id FROM entry WHERE slug = ?", (slug,)).fetchone()[0] for slug in "ab"}
    assert by_text[0][0] == ids["b"]
    assert by_title[0][0] == ids["a"]


def test_term_counts_are_stemmed_like_the_index(db: Database, brain: dict[str, str]) -> None:
    assert corpus.term_chunk_counts(db.conn, ["pools", "retry", "absent", 'say "hi"']) == [
        ("pools", 3), ("retry", 1), ("absent", 0), ('say "hi"', 0)]
    first_pool_chunk = retrieval.chunk_ids_matching(db.conn, retrieval.Filters(type="gotcha"))[0]
    assert retrieval.terms_matching_chunk(db.conn, first_pool_chunk, ["hangs", "pool", "retry"]) == 2
    assert retrieval.terms_matching_chunk(db.conn, first_pool_chunk, []) == 0


# --- vectors ---------------------------------------------------------------------------------------------------


def test_vector_hits_with_and_without_filters(db: Database, brain: dict[str, str]) -> None:
    if not db.vec_available:
        pytest.skip(f"sqlite-vec unavailable: {db.vec_error}")
    conn = db.conn
    store_vectors.reset_vector_table(conn, 3, "fp", "test")
    chunks = {r[0]: r[1] for r in conn.execute("SELECT id, entry_id FROM chunk")}
    directions = [vec(1, 0, 0), vec(0.9, 0.1, 0), vec(0, 1, 0), vec(0, 0, 1), vec(-1, 0, 0)]
    store_vectors.store_vectors(conn, list(zip(sorted(chunks), directions, strict=True)))
    query = vec(1, 0, 0)
    hits = retrieval.vector_hits(conn, query, retrieval.Filters(), depth=10)
    assert hits[0][0] == brain["gotcha/pool"]
    assert hits[0][1] == pytest.approx(1.0)
    assert len({h[0] for h in hits}) == len(hits)  # one per entry: the pool note's two chunks count once
    assert [h[1] for h in hits] == sorted((h[1] for h in hits), reverse=True)
    filtered = retrieval.vector_hits(conn, query, retrieval.Filters(type="note"), depth=10)
    assert [h[0] for h in filtered] == [brain["note/misc"]]
    assert filtered[0][1] == pytest.approx(-1.0)
    assert retrieval.vector_hits(conn, query, retrieval.Filters(tags=("nope",)), depth=10) == []


# --- rows and usage --------------------------------------------------------------------------------------------


def test_hit_rows_carry_what_a_citation_needs(db: Database, brain: dict[str, str]) -> None:
    ids = retrieval.chunk_ids_matching(db.conn, retrieval.Filters(scope="global"))
    rows = retrieval.hit_rows(db.conn, ids)
    row = rows[ids[0]]
    assert (row["slug"], row["root"], row["path"], row["type"], row["scope"], row["text"]) == (
        "global/pattern/retry", "global", "pattern/retry.md", "pattern", "global", "retry with backoff")
    assert row["entry_id"] == brain["global/pattern/retry"]
    assert retrieval.hit_rows(db.conn, []) == {}


def test_record_usage_one_row_per_entry_and_cuts_long_queries(db: Database, brain: dict[str, str]) -> None:
    retrieval.record_usage(db.conn, [brain["gotcha/pool"], brain["decision/wal"]], "q" * 5000, "2026-11-25T10:00:00Z")
    rows = db.conn.execute("SELECT entry_id, retrieved_at, length(query) FROM usage ORDER BY rowid").fetchall()
    assert [tuple(r) for r in rows] == [(brain["gotcha/pool"], "2026-11-25T10:00:00Z", 2000),
                                        (brain["decision/wal"], "2026-11-25T10:00:00Z", 2000)]
    retrieval.record_usage(db.conn, [], "nothing", "now")
    assert db.conn.execute("SELECT count(*) FROM usage").fetchone()[0] == 2
