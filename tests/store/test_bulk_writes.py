"""Large rebuilds write for volume: the rollback journal into an empty index nobody else has open
(appended pages are never journaled), the WAL with rare checkpoints otherwise; WAL again afterwards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.indexing import indexer
from pinky.kb import KnowledgeBase
from pinky.store.connect import bulk_writes, open_database, write_transaction


def journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


def test_an_empty_index_nobody_holds_is_built_with_the_rollback_journal_then_back_to_wal(tmp_path: Path) -> None:
    db = open_database(tmp_path / "brain.db")
    seen = []
    with bulk_writes(db.conn, empty=True):
        seen.append(str(db.conn.execute("PRAGMA journal_mode").fetchone()[0]))
        with write_transaction(db.conn):
            db.conn.execute("CREATE TABLE t(x)")
            db.conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
    assert seen == ["truncate"]
    db.conn.close()
    assert journal_mode(tmp_path / "brain.db") == "wal"


def test_an_index_another_connection_holds_keeps_the_wal(tmp_path: Path) -> None:
    db = open_database(tmp_path / "brain.db")
    other = open_database(tmp_path / "brain.db")  # a server that has it open: its reads must keep working
    other.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    with bulk_writes(db.conn, empty=True):
        assert str(db.conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"
        assert int(db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) > 1000
        with write_transaction(db.conn):
            db.conn.execute("CREATE TABLE t(x)")
        assert other.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    assert int(db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 1000
    db.conn.close()
    other.conn.close()


@pytest.mark.parametrize("full", [False, True])
def test_a_large_reindex_indexes_everything_and_leaves_the_wal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               full: bool) -> None:
    monkeypatch.setattr(indexer, "BULK_FILES", 5)  # the same path as 500 changed notes, on a few
    write_note(tmp_path, "pinky.toml", "")
    for i in range(12):
        write_note(tmp_path, f"documentation/note/n{i}.md", f"---\ntitle: Note {i}\n---\nPapaya {i} and the pool.\n")
    config = load_config(cwd=tmp_path)
    with KnowledgeBase(config) as kb:
        first = kb.reindex()
        again = kb.reindex(full=full)
        assert first.added == 12 and (again.added == 12 if full else again.unchanged == 12)
        assert [h.slug for h in kb.search("papaya 7", mode="bm25").hits][:1] == ["note/n7"]
        assert kb.stats()["entries"] == 12
    assert journal_mode(config.db_path) == "wal"
