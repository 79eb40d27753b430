"""pinky.store.term_counts: the chunk count of every full-text term, kept by the writer beside the FTS index,
always equal to what FTS5 itself counts, and never trusted once a writer that does not count changed a chunk."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import add_entry, migrated_database, write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.store import corpus, migrations, term_counts
from pinky.store.connect import Database

POOL = "---\ntitle: Postgres pools hang on shutdown\ntype: gotcha\n---\nCall pool.close(timeout=5) before exiting.\n"
WORDS = ["pool", "pools", "pooling", "hang", "hanging", "shutdown", "timeout", "deploying", "foo_bar", 'say "hi"',
         "café", "cafe", "absent", "postgres"]


def vocabulary(conn: sqlite3.Connection) -> dict[str, int]:
    """What FTS5 counts: every term of the index and how many chunks hold it."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.test_terms USING fts5vocab(main, chunk_fts, row)")
    return dict(conn.execute("SELECT term, doc FROM temp.test_terms").fetchall())


def kept(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT term, chunks FROM term_count").fetchall())


def fts_counts(conn: sqlite3.Connection, words: list[str]) -> list[tuple[str, int]]:
    return [(word, corpus._fts_count(conn, word)) for word in words]


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    write_note(project / "documentation", "gotcha/pool.md", POOL)
    write_note(project / "documentation", "note/cafe.md", "# Café notes\n\nThe café deploys on Fridays.\n")
    base = KnowledgeBase(load_config())
    base.reindex()
    yield base
    base.close()


def test_every_write_keeps_the_counts_equal_to_fts5s(kb: KnowledgeBase, project: Path) -> None:
    conn = kb.db.conn
    assert kept(conn) == vocabulary(conn) and kept(conn)
    saved = kb.save("Deploying the pooling proxy", "Hanging deploys: raise the pool timeout.\n\n## More\n\nfoo_bar")
    assert kept(conn) == vocabulary(conn)
    kb.update(saved.slug, saved.version, title="Deploy proxy", body="The proxy pools connections.")
    assert kept(conn) == vocabulary(conn)
    kb.delete("gotcha/pool", "fixed upstream")
    assert kept(conn) == vocabulary(conn)
    (project / "documentation" / "note" / "cafe.md").write_text("# Cafe\n\nClosed.\n", encoding="utf-8")
    kb.reindex()
    assert kept(conn) == vocabulary(conn)
    assert term_counts.in_step(conn)
    assert corpus.term_chunk_counts(conn, WORDS) == fts_counts(conn, WORDS)
    assert corpus.chunk_total(conn) == conn.execute("SELECT count(*) FROM chunk").fetchone()[0] > 0


def test_a_writer_that_does_not_count_is_noticed_and_the_next_store_recounts(tmp_path: Path) -> None:
    database: Database = migrated_database(tmp_path / "brain.db")
    conn = database.conn
    add_entry(conn, "gotcha/pool", chunks=["the pool hangs", "restart the pool"])
    assert term_counts.in_step(conn)
    # an older pinky stores a chunk (and its FTS row) the way it always did, without counting
    entry = conn.execute("SELECT id FROM entry").fetchone()[0]
    cur = conn.execute("INSERT INTO chunk(entry_id, ord, heading, line, text, hash) VALUES (?, 9, '', 1, "
                       "'pools everywhere', 'h')", (entry,))
    conn.execute("INSERT INTO chunk_fts(rowid, title, heading, text, questions, idents) SELECT id, title, heading, "
                 "text, questions, idents FROM chunk_fts_source WHERE id = ?", (cur.lastrowid,))
    assert not term_counts.in_step(conn)
    assert corpus.chunk_total(conn) == 3  # the triggers count every writer's chunks
    assert kept(conn)["pool"] == 2  # stale, so not used:
    assert corpus.term_chunk_counts(conn, ["pool", "everywhere"]) == [("pool", 3), ("everywhere", 1)]
    add_entry(conn, "note/other", chunks=["nothing in common"])
    assert term_counts.in_step(conn) and kept(conn) == vocabulary(conn)
    database.close()


def test_garbage_collection_and_a_full_text_rebuild_recount(tmp_path: Path) -> None:
    from pinky.store import entries

    database = migrated_database(tmp_path / "brain.db")
    conn = database.conn
    add_entry(conn, "gotcha/pool", chunks=["the pool hangs"])
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("DELETE FROM entry")  # the chunk is an orphan now: garbage
    conn.execute("PRAGMA foreign_keys=ON")
    entries.collect_garbage(conn, None, has_vec_table=False)
    assert term_counts.in_step(conn) and kept(conn) == vocabulary(conn) == {}
    add_entry(conn, "note/again", chunks=["pools again"])
    conn.execute("DELETE FROM term_count")  # damaged: the rebuild of the full-text index counts again
    entries.rebuild_fts(conn)
    assert kept(conn) == vocabulary(conn) == {"again": 1, "pool": 1}
    database.close()


def test_an_index_from_before_the_counts_is_counted_when_migrated(tmp_path: Path) -> None:
    database = migrated_database(tmp_path / "brain.db")
    conn = database.conn
    add_entry(conn, "gotcha/pool", chunks=["the pool hangs", "pools"])
    for statement in ("DROP TABLE term_count", "DROP TABLE term_count_state", "DROP TRIGGER chunk_inserted_count",
                      "DROP TRIGGER chunk_deleted_count", "DROP TRIGGER chunk_changed_count",
                      "DELETE FROM _pinky_migrations WHERE name = 'm014_term_counts'"):
        conn.execute(statement)
    assert corpus.term_chunk_counts(conn, ["pool"]) == [("pool", 2)]  # FTS5 counts: no table
    assert migrations.migrate(conn) == ["m014_term_counts"]
    assert kept(conn) == vocabulary(conn) and kept(conn)["pool"] == 2
    database.close()


def test_a_read_only_connection_reads_the_counts(kb: KnowledgeBase) -> None:
    """The hooks' way in: `_sqlite3` read-only; the word's term is found in a temporary table."""
    from pinky.store.readonly import connect_ro

    conn = connect_ro(str(kb.config.db_path))
    assert conn is not None
    try:
        assert corpus.term_chunk_counts(conn, WORDS) == fts_counts(conn, WORDS)
        assert corpus._kept_counts(conn, ["pools", "foo_bar"]) == {"pools": 1}  # a phrase is FTS5's to count
    finally:
        conn.close()


def test_a_large_reindex_counts_once_at_its_end(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting each note's terms as it is stored made a rebuild of 10,000 notes 60 % slower: from
    indexer.BULK_FILES changed notes on, the counts are made once, from FTS5's vocabulary, at the end."""
    from pinky.indexing import indexer

    monkeypatch.setattr(indexer, "BULK_FILES", 3)
    tokenised = []
    monkeypatch.setattr(term_counts, "terms_of", lambda conn, ids: tokenised.append(ids) or Counter())
    for n in range(4):
        write_note(project / "documentation", f"note/n{n}.md", f"# Note {n}\n\nPools hang {n} times.\n")
    with KnowledgeBase(load_config()) as base:
        base.reindex()
        conn = base.db.conn
        assert tokenised == [] and term_counts.in_step(conn)
        assert kept(conn) == vocabulary(conn) and kept(conn)["pool"] == 4
        write_note(project / "documentation", "note/n9.md", "# Nine\n\nA pool again.\n")
        base.reindex()  # one note: counted as it is stored
        assert len(tokenised) == 1


def test_a_reindex_with_nothing_to_store_recounts_counts_that_lag(kb: KnowledgeBase) -> None:
    """Counts left behind by a writer that does not count (or a rebuild killed before its recount) are made
    right by the next reindex even when no note changed."""
    conn = kb.db.conn
    entry = conn.execute("SELECT id FROM entry LIMIT 1").fetchone()[0]
    conn.execute("INSERT INTO chunk(entry_id, ord, heading, line, text, hash) VALUES (?, 9, '', 1, 'lagging', 'h')",
                 (entry,))
    conn.execute("INSERT INTO chunk_fts(rowid, title, heading, text, questions, idents) SELECT id, title, heading, "
                 "text, questions, idents FROM chunk_fts_source WHERE id = last_insert_rowid()")
    assert not term_counts.in_step(conn)
    report = kb.reindex()
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert term_counts.in_step(conn) and kept(conn) == vocabulary(conn) and kept(conn)["lag"] == 1
