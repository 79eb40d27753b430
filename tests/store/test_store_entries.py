"""pinky.store.entries: entries and chunks as the indexer writes them, slug lookup, listings, counts, gc."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import add_entry, migrated_database

from pinky.base.layout import entry_id
from pinky.store import entries as store_entries
from pinky.store.connect import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = migrated_database(tmp_path / "brain.db")
    yield database
    database.close()


def slugs(rows: list[Any]) -> list[str]:
    return [r["slug"] for r in rows]


def fts_rowids(conn: Any, words: str) -> list[int]:
    """The chunks the full-text index finds for any of these words, after checking the index matches
    its content (it keeps no copy of the text, so there is no table of its rows to list)."""
    assert store_entries.fts_matches_chunks(conn)
    match = " OR ".join(words.split())
    return [r[0] for r in conn.execute("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY rowid", (match,))]


# --- writing ---------------------------------------------------------------------------------------------


def test_upsert_writes_the_entry_its_chunks_fts_rows_and_links(db: Database) -> None:
    conn = db.conn
    eid = add_entry(conn, "gotcha/pool", type="gotcha", body="pool hangs", chunks=["pool hangs", "restart it"],
                    files=("src/db/pool.py",), links=("decision/wal",), mentions=("pool.py",))
    row = store_entries.entry_by(conn, "id", eid)
    assert (row["slug"], row["type"], row["path"]) == ("gotcha/pool", "gotcha", "gotcha/pool.md")
    assert store_entries.entry_by(conn, "slug", "gotcha/pool")["id"] == eid
    assert store_entries.entry_at(conn, "project", "gotcha/pool.md")["id"] == eid
    assert store_entries.entry_at(conn, "global", "gotcha/pool.md") is None
    chunk_ids = [r[0] for r in conn.execute("SELECT id FROM chunk WHERE entry_id = ? ORDER BY ord", (eid,))]
    assert len(chunk_ids) == 2
    assert fts_rowids(conn, "pool hangs restart") == chunk_ids
    assert conn.execute("SELECT path FROM entry_file").fetchall()[0][0] == "src/db/pool.py"
    assert conn.execute("SELECT target FROM link WHERE kind = 'wiki'").fetchall()[0][0] == "decision/wal"
    assert conn.execute("SELECT name FROM entry_mention").fetchall()[0][0] == "pool.py"


def test_upsert_replaces_every_chunk_and_link_of_the_entry(db: Database) -> None:
    conn = db.conn
    eid = add_entry(conn, "gotcha/pool", chunks=["one", "two", "three"], files=("a.py", "b.py"), links=("x",))
    add_entry(conn, "gotcha/other", chunks=["keep me"], files=("c.py",))
    add_entry(conn, "gotcha/pool", chunks=["only"], files=("d.py",), links=(), body="new")
    assert conn.execute("SELECT count(*) FROM entry").fetchone()[0] == 2
    assert [r[0] for r in conn.execute("SELECT text FROM chunk WHERE entry_id = ?", (eid,))] == ["only"]
    assert len(fts_rowids(conn, "one two three keep only")) == 2
    assert fts_rowids(conn, "three") == []
    assert sorted(r[0] for r in conn.execute("SELECT path FROM entry_file")) == ["c.py", "d.py"]
    assert conn.execute("SELECT count(*) FROM link WHERE kind = 'wiki'").fetchone()[0] == 0
    assert store_entries.entry_by(conn, "id", eid)["body"] == "new"


def test_delete_entry_removes_its_chunks_and_fts_rows_only(db: Database) -> None:
    conn = db.conn
    gone = add_entry(conn, "a", chunks=["x", "y"], files=("f.py",))
    kept = add_entry(conn, "b", chunks=["z"])
    store_entries.delete_entry(conn, gone, has_vec_table=False)
    assert store_entries.entry_by(conn, "id", gone) is None
    assert store_entries.entry_by(conn, "id", kept) is not None
    assert conn.execute("SELECT count(*) FROM chunk").fetchone()[0] == 1
    assert len(fts_rowids(conn, "x y z")) == 1
    assert conn.execute("SELECT count(*) FROM entry_file").fetchone()[0] == 0  # foreign keys cascade
    store_entries.delete_entry(conn, "no-such-id", has_vec_table=False)  # deleting nothing is fine


def test_touch_slug_taken_and_indexed_files(db: Database) -> None:
    conn = db.conn
    eid = add_entry(conn, "gotcha/pool", mtime_ns=5)
    assert store_entries.slug_taken(conn, "gotcha/pool", "someone-else")
    assert not store_entries.slug_taken(conn, "gotcha/pool", eid)
    assert not store_entries.slug_taken(conn, "gotcha/free", "x")
    store_entries.touch_entry(conn, eid, (99, 1234, 77, 42))
    files = store_entries.indexed_files(conn)
    assert list(files) == [("project", "gotcha/pool.md")]
    known = files[("project", "gotcha/pool.md")]
    assert (known.id, known.stamp, known.content_hash) == (eid, (99, 1234, 77, 42), f"hash-{eid}")


# --- resolving a slug --------------------------------------------------------------------------------------


def test_an_exact_slug_wins_over_every_shortening(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "gotcha/pool", type="gotcha")
    add_entry(conn, "global/gotcha/pool", root="global", type="gotcha")
    add_entry(conn, "pool")
    assert slugs(store_entries.resolve_slug(conn, "gotcha/pool")) == ["gotcha/pool"]
    assert slugs(store_entries.resolve_slug(conn, "global/gotcha/pool")) == ["global/gotcha/pool"]
    assert slugs(store_entries.resolve_slug(conn, "pool")) == ["pool"]
    assert slugs(store_entries.resolve_slug(conn, "pool.md")) == ["pool"]


def test_a_shortened_slug_finds_its_entry(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "decision/wal", type="decision")
    add_entry(conn, "global/pattern/retry", root="global", type="pattern")
    assert slugs(store_entries.resolve_slug(conn, "wal")) == ["decision/wal"]
    assert slugs(store_entries.resolve_slug(conn, "./decision/wal.md")) == ["decision/wal"]
    assert slugs(store_entries.resolve_slug(conn, "retry")) == ["global/pattern/retry"]
    assert slugs(store_entries.resolve_slug(conn, "pattern/retry")) == ["global/pattern/retry"]
    assert store_entries.resolve_slug(conn, "nothing") == []


def test_a_shortened_slug_naming_several_entries_returns_them_all_project_first(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "global/gotcha/pool", root="global", type="gotcha")
    add_entry(conn, "gotcha/pool", type="gotcha")
    add_entry(conn, "bug/pool", type="bug")
    assert slugs(store_entries.resolve_slug(conn, "pool")) == ["gotcha/pool", "global/gotcha/pool", "bug/pool"]
    assert slugs(store_entries.resolve_slug(conn, "pool", limit=2)) == ["gotcha/pool", "global/gotcha/pool"]


def test_a_name_may_be_the_last_part_of_a_deeper_slug(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "guide/setup/db-pool", type="guide")
    add_entry(conn, "guide/teardown/db-pool", type="guide")
    add_entry(conn, "guide/setup/db-pool-extra", type="guide")
    assert slugs(store_entries.resolve_slug(conn, "setup/db-pool")) == ["guide/setup/db-pool"]
    assert slugs(store_entries.resolve_slug(conn, "db-pool")) == ["guide/setup/db-pool", "guide/teardown/db-pool"]
    assert slugs(store_entries.resolve_slug(conn, "db-pool", limit=1)) == ["guide/setup/db-pool"]
    assert store_entries.resolve_slug(conn, "pool") == []  # only whole `/`-bounded parts


def test_like_wildcards_in_a_name_are_taken_literally(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "guide/deep/aXb", type="guide")
    add_entry(conn, "guide/deep/a%c", type="guide")
    assert store_entries.resolve_slug(conn, "a_b") == []
    assert store_entries.resolve_slug(conn, "a%") == []
    assert slugs(store_entries.resolve_slug(conn, "a%c")) == ["guide/deep/a%c"]


# --- listings and counts -------------------------------------------------------------------------------------


def test_entries_titled_ignores_case(db: Database) -> None:
    add_entry(db.conn, "a", title="Pool Hangs")
    add_entry(db.conn, "b", title="pool hangs")
    add_entry(db.conn, "c", title="Pool")
    assert sorted(slugs(store_entries.entries_titled(db.conn, "POOL HANGS"))) == ["a", "b"]
    assert len(store_entries.entries_titled(db.conn, "pool hangs", limit=1)) == 1
    assert store_entries.entries_titled(db.conn, "pool h") == []


def test_recent_entries_newest_file_first(db: Database) -> None:
    for n, slug in enumerate(["old", "newest", "middle"]):
        add_entry(db.conn, slug, mtime_ns=[1, 3, 2][n])
    assert [r["slug"] for r in store_entries.recent_entries(db.conn, 2)] == ["newest", "middle"]


def test_changed_since_by_file_time_or_creation_day_leaving_diaries_out(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "old", mtime_ns=100, created="2026-01-01")
    add_entry(conn, "touched", mtime_ns=500, created="2026-01-01")
    add_entry(conn, "created", mtime_ns=100, created="2026-11-20T08:00:00+00:00")
    add_entry(conn, "nodate", mtime_ns=100)
    add_entry(conn, "diary/2026-11-21", type="diary", mtime_ns=900, created="2026-11-21")
    assert sorted(r["slug"] for r in store_entries.changed_since(conn, 500, "2026-11-20")) == ["created", "touched"]
    assert sorted(r["slug"] for r in store_entries.changed_since(conn, 10**18, "2099-01-01")) == []
    assert sorted(r["slug"] for r in store_entries.changed_since(conn, 0, "")) == ["created", "nodate", "old",
                                                                                   "touched"]


def test_counts_grouped_and_entry_count(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "gotcha/a", type="gotcha", chunks=["1", "2"])
    add_entry(conn, "gotcha/b", type="gotcha")
    add_entry(conn, "global/note/c", root="global")
    conn.execute("INSERT INTO usage(entry_id, retrieved_at, query) VALUES ('x', 'now', 'q')")
    assert store_entries.entry_count(conn) == 3
    assert store_entries.counts(conn) == {"entries": 3, "chunks": 4, "vectors": 0, "pending_vectors": 4,
                                          "cached_embeddings": 0, "usage_events": 1}
    assert store_entries.grouped(conn, "type") == {"gotcha": 2, "note": 1}
    assert store_entries.grouped(conn, "scope") == {"global": 1, "project:demo": 2}
    with pytest.raises(AssertionError):
        store_entries.grouped(conn, "title; DROP TABLE entry")


def test_unused_entries_are_old_and_never_returned_since(db: Database) -> None:
    conn = db.conn
    cutoff_iso, cutoff_ns = "2026-06-01", 1000
    add_entry(conn, "old-unused-2", mtime_ns=20, created="2026-01-02")
    add_entry(conn, "old-unused-1", mtime_ns=10, created="2026-01-01")
    old_used = add_entry(conn, "old-used", mtime_ns=10, created="2026-01-01")
    add_entry(conn, "old-but-used-long-ago", mtime_ns=10)
    add_entry(conn, "recent-file", mtime_ns=5000, created="2026-01-01")
    add_entry(conn, "recent-creation", mtime_ns=10, created="2026-07-01")
    add_entry(conn, "diary/2026-01-01", type="diary", mtime_ns=1)
    conn.execute("INSERT INTO usage VALUES (?, '2026-07-01T00:00:00Z', 'q')", (old_used,))
    conn.execute("INSERT INTO usage VALUES (?, '2026-01-01T00:00:00Z', 'q')",
                 (entry_id("project", "old-but-used-long-ago.md"),))
    count, oldest = store_entries.unused_entries(conn, cutoff_iso, cutoff_ns)
    assert count == 3
    assert set(oldest) == {"old-unused-1", "old-unused-2", "old-but-used-long-ago"}
    assert oldest[-1] == "old-unused-2"
    assert store_entries.unused_entries(conn, cutoff_iso, cutoff_ns, limit=1)[0] == 3
    assert len(store_entries.unused_entries(conn, cutoff_iso, cutoff_ns, limit=1)[1]) == 1


def test_parse_errors_listed_by_root_and_path(db: Database) -> None:
    conn = db.conn
    add_entry(conn, "b")
    add_entry(conn, "a")
    add_entry(conn, "global/z", root="global")
    conn.execute("UPDATE entry SET parse_error = 'bad yaml' WHERE slug IN ('b', 'global/z')")
    assert [tuple(r) for r in store_entries.parse_errors(conn)] == [("global", "z.md", "bad yaml"), ("project", "b.md",
                                                                                                     "bad yaml")]


# --- garbage ---------------------------------------------------------------------------------------------------


def test_collect_garbage_removes_orphans_and_stale_cache_rows_only(db: Database) -> None:
    conn = db.conn
    kept = add_entry(conn, "kept", chunks=["alive text"])
    gone = add_entry(conn, "gone", chunks=["orphan one", "orphan two"])
    live_hash = conn.execute("SELECT hash FROM chunk WHERE entry_id = ?", (kept,)).fetchone()[0]
    conn.execute("PRAGMA foreign_keys=OFF")  # what a crash between two statements, or an old pinky, leaves
    conn.execute("DELETE FROM entry WHERE id = ?", (gone,))
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("INSERT INTO chunk_fts(rowid, title, heading, text) VALUES (9999, 't', '', 'stray')")
    assert not store_entries.fts_matches_chunks(conn)
    conn.executemany("INSERT INTO embedding_cache(hash, fingerprint, vector) VALUES (?, ?, x'00')",
                     [(live_hash, "fp-now"), (live_hash, "fp-old"), ("no-chunk-has-this", "fp-now")])
    conn.executemany("INSERT INTO usage VALUES (?, 'now', 'q')", [(kept,), (gone,), (gone,)])

    removed = store_entries.collect_garbage(conn, "fp-now", has_vec_table=False)

    assert removed == {"orphan_chunks": 2, "fts_rebuilt": 1, "stale_cached_embeddings": 1, "orphan_usage_rows": 2}
    assert [r[0] for r in conn.execute("SELECT entry_id FROM chunk")] == [kept]
    assert len(fts_rowids(conn, "alive orphan stray")) == 1
    kept_vectors = sorted(tuple(r) for r in conn.execute("SELECT hash, fingerprint FROM embedding_cache"))
    assert kept_vectors == sorted([(live_hash, "fp-now"), ("no-chunk-has-this", "fp-now")])  # only fp-old goes
    assert [r[0] for r in conn.execute("SELECT entry_id FROM usage")] == [kept]
    assert store_entries.collect_garbage(conn, "fp-now", has_vec_table=False) == dict.fromkeys(removed, 0)


def test_collect_garbage_without_a_fingerprint_empties_the_cache(db: Database) -> None:
    add_entry(db.conn, "kept", chunks=["text"])
    live_hash = db.conn.execute("SELECT hash FROM chunk").fetchone()[0]
    db.conn.execute("INSERT INTO embedding_cache(hash, fingerprint, vector) VALUES (?, 'fp', x'00')", (live_hash,))
    assert store_entries.collect_garbage(db.conn, None, has_vec_table=False)["stale_cached_embeddings"] == 1


def test_compact_keeps_the_content(db: Database) -> None:
    for n in range(30):
        add_entry(db.conn, f"n{n}", body="filler " * 200)
    for n in range(25):
        store_entries.delete_entry(db.conn, entry_id("project", f"n{n}.md"), has_vec_table=False)
    store_entries.compact(db.conn)
    assert store_entries.entry_count(db.conn) == 5
    assert db.conn.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH 'filler'").fetchone()[0] == 5
    assert db.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
