"""pinky.store.connect: the connection factory (driver, WAL, foreign keys, sqlite-vec) and transactions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pinky.store.connect import BUSY_TIMEOUT_MS, has_fts5, open_database, read_snapshot, write_transaction


def test_open_database_creates_the_file_and_its_folder_with_wal_and_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "brain.db"
    db = open_database(path)
    try:
        assert path.is_file()
        assert db.path == path
        assert db.conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
        assert db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        assert db.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.sqlite_version.count(".") == 2
        assert db.driver in {"sqlite3", "sqlean"}
        assert has_fts5(db)
        row = db.conn.execute("SELECT 1 AS one").fetchone()
        assert row["one"] == 1  # rows are addressable by name
        assert not db.conn.in_transaction  # autocommit: transactions are explicit
    finally:
        db.close()


def test_vectors_load_unless_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = open_database(tmp_path / "a.db")
    try:
        if db.vec_available:
            assert db.vec_error is None
            assert db.vec_version and db.vec_version.startswith("v")
            assert db.conn.execute("SELECT vec_version()").fetchone()[0] == db.vec_version
        else:
            assert db.vec_error
    finally:
        db.close()
    monkeypatch.setenv("PINKY_NO_VEC", "1")
    db = open_database(tmp_path / "b.db")
    try:
        assert not db.vec_available
        assert db.vec_version is None
        assert db.vec_error == "disabled by PINKY_NO_VEC=1"
    finally:
        db.close()


def test_the_stdlib_driver_can_be_forced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_SQLITE_DRIVER", "sqlite3")
    db = open_database(tmp_path / "a.db")
    try:
        assert db.driver == "sqlite3"
        assert has_fts5(db)
        if not hasattr(db.conn, "enable_load_extension"):
            assert not db.vec_available
            assert "cannot load extensions" in (db.vec_error or "")
    finally:
        db.close()
    db = open_database(tmp_path / "b.db", driver="sqlite3")
    try:
        assert db.driver == "sqlite3"
    finally:
        db.close()


def test_write_transaction_commits_or_rolls_back_whole(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db")
    try:
        conn = db.conn
        conn.execute("CREATE TABLE t(x)")
        with write_transaction(conn):
            conn.execute("INSERT INTO t VALUES (1)")
            conn.execute("INSERT INTO t VALUES (2)")
        with pytest.raises(RuntimeError, match="boom"), write_transaction(conn):
            conn.execute("INSERT INTO t VALUES (3)")
            raise RuntimeError("boom")
        assert [r[0] for r in conn.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
        assert not conn.in_transaction
    finally:
        db.close()


def test_a_writer_waits_for_another_instead_of_failing(tmp_path: Path) -> None:
    first, second = open_database(tmp_path / "a.db"), open_database(tmp_path / "a.db")
    try:
        first.conn.execute("CREATE TABLE t(x)")
        holding, released = threading.Event(), threading.Event()

        def hold() -> None:
            with write_transaction(first.conn):
                first.conn.execute("INSERT INTO t VALUES (1)")
                holding.set()
                time.sleep(0.3)
                released.set()

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(10)
        with write_transaction(second.conn):  # queues on busy_timeout
            assert released.is_set()
            second.conn.execute("INSERT INTO t VALUES (2)")
        holder.join()
        assert [r[0] for r in second.conn.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
    finally:
        first.close()
        second.close()


def test_read_snapshot_is_one_consistent_view(tmp_path: Path) -> None:
    reader, writer = open_database(tmp_path / "a.db"), open_database(tmp_path / "a.db")
    try:
        writer.conn.execute("CREATE TABLE t(x)")
        writer.conn.execute("INSERT INTO t VALUES (1)")
        with read_snapshot(reader.conn):
            assert reader.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 1
            with write_transaction(writer.conn):
                writer.conn.execute("INSERT INTO t VALUES (2)")
            assert reader.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 1
        assert reader.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 2
        assert not reader.conn.in_transaction
    finally:
        reader.close()
        writer.close()


def test_a_file_that_is_not_a_database_fails_at_open(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database, just some text " * 100)
    with pytest.raises(Exception, match="not a database"):
        open_database(path)
