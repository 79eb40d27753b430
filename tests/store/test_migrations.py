"""pinky.store.migrations: ordered, named schema migrations, each applied once, unknown schemas spotted."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinky.errors import IndexUnavailable
from pinky.store import migrations as store_migrations
from pinky.store.connect import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_database(tmp_path / "brain.db")
    yield database
    database.close()


def tables(conn: object) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}


def columns(conn: object, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def apply_by_hand(conn: object, count: int) -> None:
    """What an older pinky did: the first `count` migrations, each recorded."""
    store_migrations.applied(conn)
    for name, fn in store_migrations.MIGRATIONS[:count]:
        conn.execute("BEGIN IMMEDIATE")
        fn(conn)
        conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES (?, datetime('now'))", (name,))
        conn.execute("COMMIT")


def test_migrations_are_named_in_order() -> None:
    assert store_migrations.KNOWN == [name for name, _ in store_migrations.MIGRATIONS]
    assert store_migrations.KNOWN == sorted(store_migrations.KNOWN)
    known = store_migrations.KNOWN
    assert [name[:4] for name in known] == [f"m{n:03d}" for n in range(1, len(known) + 1)]
    assert len(set(store_migrations.KNOWN)) == len(store_migrations.KNOWN)


def test_a_fresh_file_gets_every_migration_once_in_order(db: Database) -> None:
    assert store_migrations.applied(db.conn) == []
    assert not store_migrations.is_unknown_schema(db.conn)
    assert store_migrations.migrate(db.conn) == store_migrations.KNOWN
    assert store_migrations.applied(db.conn) == store_migrations.KNOWN
    found = tables(db.conn)
    assert {"entry", "chunk", "chunk_fts", "embedding_cache", "meta", "entry_file", "link", "usage",
            "entry_mention", "code_file", "usage_entry", "link_target", "link_key"} <= found
    assert not {"backlink", "entry_link", "breadcrumb"} & found  # one link table replaced them
    assert columns(db.conn, "usage") == ["entry_id", "retrieved_at", "query"]
    store_migrations.check_readable(db.conn)
    assert not db.conn.in_transaction


def test_a_second_run_applies_nothing(db: Database) -> None:
    store_migrations.migrate(db.conn)
    stamps = db.conn.execute("SELECT name, applied_at FROM _pinky_migrations ORDER BY rowid").fetchall()
    assert store_migrations.migrate(db.conn) == []
    assert db.conn.execute("SELECT name, applied_at FROM _pinky_migrations ORDER BY rowid").fetchall() == stamps


def test_a_second_connection_finds_the_schema_current(db: Database, tmp_path: Path) -> None:
    store_migrations.migrate(db.conn)
    other = open_database(tmp_path / "brain.db")
    try:
        assert store_migrations.migrate(other.conn) == []
        assert not store_migrations.is_unknown_schema(other.conn)
    finally:
        other.close()


def test_an_unknown_migration_name_is_an_unknown_schema(db: Database) -> None:
    store_migrations.migrate(db.conn)
    db.conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES ('m999_from_the_future', 'x')")
    assert store_migrations.is_unknown_schema(db.conn)


def test_known_migrations_out_of_order_are_an_unknown_schema(db: Database) -> None:
    store_migrations.applied(db.conn)
    db.conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES (?, 'x')", (store_migrations.KNOWN[1],))
    assert store_migrations.is_unknown_schema(db.conn)


def test_a_partly_migrated_file_is_known(db: Database) -> None:
    apply_by_hand(db.conn, 2)
    assert not store_migrations.is_unknown_schema(db.conn)
    assert store_migrations.migrate(db.conn) == store_migrations.KNOWN[2:]


def test_an_index_built_at_m004_migrates_keeping_its_usage_rows(db: Database) -> None:
    conn = db.conn
    apply_by_hand(conn, 4)
    assert store_migrations.applied(conn) == store_migrations.KNOWN[:4]
    assert "backlink" in tables(conn)
    assert "was_useful" in columns(conn, "usage")
    conn.execute("INSERT INTO entry(id, root, path, slug, scope, type, title, body, content_hash, indexed_at) "
                 "VALUES ('e1', 'project', 'a.md', 'a', 'project:x', 'note', 'A', 'b', 'h', 'now')")
    conn.execute("INSERT INTO backlink(entry_id, file_path, line) VALUES ('e1', 'src/a.py', 3)")
    usage = [("e1", "2026-11-01T10:00:00Z", "pool timeout", 1), ("gone", "2026-11-02T10:00:00Z", "wal", None)]
    conn.executemany("INSERT INTO usage(entry_id, retrieved_at, query, was_useful) VALUES (?, ?, ?, ?)", usage)

    assert store_migrations.migrate(conn) == store_migrations.KNOWN[4:]

    assert store_migrations.applied(conn) == store_migrations.KNOWN
    assert "backlink" not in tables(conn)
    assert columns(conn, "usage") == ["entry_id", "retrieved_at", "query"]
    assert [tuple(r) for r in conn.execute("SELECT * FROM usage ORDER BY retrieved_at")] == [u[:3] for u in usage]
    assert "usage_entry" in tables(conn)
    plan = " ".join(str(tuple(r)) for r in conn.execute("EXPLAIN QUERY PLAN SELECT * FROM usage WHERE entry_id='e1'"))
    assert "usage_entry" in plan
    assert conn.execute("SELECT slug FROM entry").fetchall()[0][0] == "a"


def test_a_failing_migration_is_rolled_back_and_named(db: Database) -> None:
    db.conn.execute("CREATE TABLE entry(x)")  # something else owns the name m001 needs
    with pytest.raises(IndexUnavailable, match=r"^migration m001_entries_and_chunks failed: .*entry"):
        store_migrations.migrate(db.conn)
    assert store_migrations.applied(db.conn) == []
    assert "chunk" not in tables(db.conn)
    assert not db.conn.in_transaction


def test_check_readable_fails_on_a_file_without_the_schema(db: Database) -> None:
    with pytest.raises(Exception, match="no such table: entry"):
        store_migrations.check_readable(db.conn)


def test_an_index_built_before_m011_gets_weighted_fields_without_a_reindex(db: Database) -> None:
    """m011 on a file written by the previous schema (m001-m009 as an older pinky wrote them): the new
    columns are filled from the rows already there, and the index keeps working for later edits."""
    conn = db.conn
    before = store_migrations.KNOWN.index("m011_weighted_fields")
    apply_by_hand(conn, before)
    assert "idents" not in columns(conn, "chunk")
    conn.execute("INSERT INTO entry(id, root, path, slug, scope, type, tags, title, body, meta, content_hash, "
                 "indexed_at) VALUES ('e1', 'project', 'a.md', 'a', 'project:x', 'note', '[\"postgres\"]', "
                 "'writeBoolean', 'b', '{\"questions\": [\"why does shutdown hang?\"]}', 'h', 'now')")
    conn.execute("INSERT INTO chunk(id, entry_id, ord, heading, line, text, hash) "
                 "VALUES (7, 'e1', 0, '', 1, 'call parseXMLDoc first', 'x')")
    conn.execute("INSERT INTO chunk_fts(rowid, title, heading, text) VALUES (7, 'writeBoolean', '', "
                 "'call parseXMLDoc first')")

    assert store_migrations.migrate(conn)[0] == "m011_weighted_fields"

    assert "idents" in columns(conn, "chunk")
    assert conn.execute("SELECT idents FROM chunk WHERE id = 7").fetchone()[0] == "write boolean parse xml doc"

    def found(match: str) -> list[int]:
        return [r[0] for r in conn.execute("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ?", (match,))]

    assert found("idents : xml") == [7]
    assert found("postgres") == []  # tags are filters, not searched words
    assert found("questions : hang") == [7]
    assert found("text : parsexmldoc") == [7]
    assert found("title : writeboolean") == [7]
    conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 1)")
    # Deleting the chunk's terms reads them through the new view: the index stays sound.
    conn.execute("DELETE FROM chunk_fts WHERE rowid = 7")
    conn.execute("DELETE FROM chunk WHERE id = 7")
    assert found("xml OR hang") == []
    conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 1)")
