"""pinky.store.readonly: the hooks' read path (stdlib `_sqlite3`, read-only), linked entries and the digest."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import add_entry, migrated_database

from pinky.store import readonly as store_readonly

DB_NAME = "brain.db"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / DB_NAME
    migrated_database(path).close()
    return path


def write(db_path: Path, fill: Any) -> None:
    """Fill the index through the writing side, then close it (the hooks only ever read)."""
    db = migrated_database(db_path)
    try:
        fill(db.conn)
    finally:
        db.close()


@pytest.fixture
def ro_conn(db_path: Path) -> Iterator[Any]:
    conn = store_readonly.connect_ro(str(db_path))
    assert conn is not None
    yield conn
    conn.close()


# --- opening ---------------------------------------------------------------------------------------------------


def test_a_missing_index_is_none_not_an_error(tmp_path: Path) -> None:
    assert store_readonly.connect_ro(str(tmp_path / "absent.db")) is None
    assert not (tmp_path / "absent.db").exists()
    assert store_readonly.connect_ro(str(tmp_path)) is None  # a folder is not an index


def test_the_connection_is_read_only(db_path: Path) -> None:
    conn = store_readonly.connect_ro(str(db_path))
    assert conn is not None
    try:
        with pytest.raises(store_readonly.sqlite_module().OperationalError, match="readonly"):
            conn.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')")
    finally:
        conn.close()


def test_paths_with_uri_characters_open(tmp_path: Path) -> None:
    folder = tmp_path / "we?ird #100%"
    folder.mkdir()
    path = folder / DB_NAME
    write(path, lambda conn: add_entry(conn, "gotcha/pool"))
    conn = store_readonly.connect_ro(str(path))
    assert conn is not None
    try:
        assert conn.execute("SELECT slug FROM entry").fetchall() == [("gotcha/pool",)]
    finally:
        conn.close()


def test_a_file_without_the_schema_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    store_readonly.sqlite_module().connect(str(path)).close()
    path.write_bytes(b"")
    with pytest.raises(store_readonly.sqlite_module().OperationalError):
        store_readonly.connect_ro(str(path))


def test_rows_is_empty_when_a_table_is_missing(ro_conn: Any) -> None:
    assert store_readonly.rows(ro_conn, "SELECT * FROM table_from_a_newer_pinky") == []
    assert store_readonly.rows(ro_conn, "SELECT count(*) FROM entry") == [(0,)]


def test_importing_readonly_stays_light() -> None:
    script = ("import sys\nbefore = set(sys.modules)\nimport pinky.store.readonly\n"
              "print(sorted(set(sys.modules) - before))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    for heavy in ("'sqlite3'", "'typing'", "'re'", "'dataclasses'", "'logging'", "'sqlite_vec'", "'numpy'"):
        assert heavy not in loaded, loaded


# --- entries linked to a file -----------------------------------------------------------------------------------


def linked_brain(conn: Any) -> None:
    add_entry(conn, "note/by-crumb", type="note", body="named by a breadcrumb")
    add_entry(conn, "gotcha/by-files", type="gotcha", files=("src/db/pool.py",), body="pool gotcha")
    add_entry(conn, "decision/by-files", type="decision", files=("db/pool.py",), body="a decision")
    add_entry(conn, "bug/by-long-path", type="bug", files=("repo/src/db/pool.py",), body="a bug")
    add_entry(conn, "pattern/by-mention", type="pattern", body="see src/db/pool.py for the retry loop")
    add_entry(conn, "diary/2026-11-25", type="diary", body="touched src/db/pool.py today")
    add_entry(conn, "note/other-file", files=("src/db/pool.pyc",), body="pool.pyc is not pool.py's neighbour")


def test_linked_entries_breadcrumbs_first_then_files_then_mentions(db_path: Path) -> None:
    write(db_path, linked_brain)
    conn = store_readonly.connect_ro(str(db_path))
    try:
        found = store_readonly.linked_entries(conn, "src/db/pool.py", "/abs/repo/src/db/pool.py", ["by-crumb"])
    finally:
        conn.close()
    assert [(slug, why) for slug, _type, _title, _body, why in found] == [
        ("note/by-crumb", "breadcrumb"),
        ("gotcha/by-files", "files"),
        ("decision/by-files", "files"),
        ("bug/by-long-path", "files"),
        ("pattern/by-mention", "mentions"),
    ]
    slug, type_, title, body, why = found[1]
    assert (type_, title, body) == ("gotcha", "by-files", "pool gotcha")


def test_an_entry_linked_several_ways_is_listed_once_under_its_strongest_link(db_path: Path) -> None:
    write(db_path, lambda conn: add_entry(conn, "gotcha/pool", type="gotcha", files=("src/db/pool.py",),
                                          body="src/db/pool.py hangs"))
    conn = store_readonly.connect_ro(str(db_path))
    try:
        found = store_readonly.linked_entries(conn, "src/db/pool.py", "src/db/pool.py", ["gotcha/pool", "pool"])
    finally:
        conn.close()
    assert [(r[0], r[4]) for r in found] == [("gotcha/pool", "breadcrumb")]


def test_linked_entries_filtered_by_type(db_path: Path) -> None:
    write(db_path, linked_brain)
    conn = store_readonly.connect_ro(str(db_path))
    try:
        found = store_readonly.linked_entries(conn, "src/db/pool.py", "/abs/src/db/pool.py", ["by-crumb"],
                                              types=("gotcha", "pattern"))
        nothing = store_readonly.linked_entries(conn, "src/db/pool.py", "/abs/src/db/pool.py", [], types=())
    finally:
        conn.close()
    assert [r[0] for r in found] == ["gotcha/by-files", "pattern/by-mention"]
    assert nothing == []


def test_linked_by_the_absolute_path_and_by_a_dot_slash_path(db_path: Path) -> None:
    def fill(conn: Any) -> None:
        add_entry(conn, "a", files=("/home/me/repo/app.py",))
        add_entry(conn, "b", files=("./app.py",))
    write(db_path, fill)
    conn = store_readonly.connect_ro(str(db_path))
    try:
        found = store_readonly.linked_entries(conn, "app.py", "/home/me/repo/app.py", [])
        relative_only = store_readonly.linked_entries(conn, "app.py", "app.py", [])
    finally:
        conn.close()
    assert sorted(r[0] for r in found) == ["a", "b"]
    assert [r[0] for r in relative_only] == ["b"]


def test_an_unlinked_file_has_no_entries(db_path: Path) -> None:
    write(db_path, linked_brain)
    conn = store_readonly.connect_ro(str(db_path))
    try:
        assert store_readonly.linked_entries(conn, "src/other.py", "/abs/src/other.py", ["no-such-slug"]) == []
        # LIKE wildcards in a path are literal
        assert store_readonly.linked_entries(conn, "src/db/pool_py", "/x/src/db/pool_py", []) == []
    finally:
        conn.close()


def test_the_body_preview_is_cut(db_path: Path) -> None:
    write(db_path, lambda conn: add_entry(conn, "a", files=("x.py",), body="y" * 5000))
    conn = store_readonly.connect_ro(str(db_path))
    try:
        (found,) = store_readonly.linked_entries(conn, "x.py", "x.py", [])
    finally:
        conn.close()
    assert found[3] == "y" * store_readonly.BODY_PREVIEW


# --- the session-start digest ---------------------------------------------------------------------------------


def digest_brain(conn: Any) -> None:
    add_entry(conn, "gotcha/old", type="gotcha", mtime_ns=1, created="2025-01-01")
    add_entry(conn, "gotcha/critical", type="gotcha", mtime_ns=2, meta={"importance": "Critical"},
              created="2026-01-01", last_verified="2026-11-01")
    add_entry(conn, "decision/high", type="decision", mtime_ns=3, meta={"priority": "high"}, created="2025-06-01")
    popular = add_entry(conn, "pattern/popular", type="pattern", mtime_ns=4, created="2026-11-20")
    add_entry(conn, "bug/newest", type="bug", mtime_ns=9, created="2026-11-24")
    add_entry(conn, "gotcha/undated", type="gotcha", mtime_ns=5)
    add_entry(conn, "diary/2026-11-25", type="diary", mtime_ns=10, created="2020-01-01")
    add_entry(conn, "global/gotcha/g", root="global", type="gotcha", mtime_ns=11, meta={"importance": "critical"},
              created="2020-01-01")
    conn.executemany("INSERT INTO usage VALUES (?, 'now', 'q')", [(popular,)] * 3)


def test_entries_by_root_and_commonest_types(db_path: Path) -> None:
    write(db_path, digest_brain)
    conn = store_readonly.connect_ro(str(db_path))
    try:
        assert store_readonly.entries_by_root(conn) == {"project": 7, "global": 1}
        assert store_readonly.commonest_types(conn, 1) == [("gotcha", 4)]
        assert dict(store_readonly.commonest_types(conn, 10)) == {"gotcha": 4, "decision": 1, "pattern": 1, "bug": 1}
    finally:
        conn.close()


def test_key_entries_importance_then_use_then_latest(db_path: Path) -> None:
    write(db_path, digest_brain)
    conn = store_readonly.connect_ro(str(db_path))
    types = ("gotcha", "decision", "pattern", "bug")
    try:
        ranked = store_readonly.key_entries(conn, "project", types, important=3, recent=2, limit=10)
        only_two = store_readonly.key_entries(conn, "project", types, limit=2)
        globals_ = store_readonly.key_entries(conn, "global", types)
    finally:
        conn.close()
    assert [slug for slug, _, _ in ranked] == ["gotcha/critical", "decision/high", "pattern/popular",
                                               "bug/newest", "gotcha/undated"]
    assert ranked[0] == ("gotcha/critical", "gotcha", "critical")
    assert [slug for slug, _, _ in only_two] == ["gotcha/critical", "decision/high"]
    assert [slug for slug, _, _ in globals_] == ["global/gotcha/g"]


def test_stale_entries_counts_and_lists_the_oldest(db_path: Path) -> None:
    write(db_path, digest_brain)
    conn = store_readonly.connect_ro(str(db_path))
    types = ("gotcha", "decision", "pattern", "bug")
    try:
        count, oldest = store_readonly.stale_entries(conn, types, "2026-06-01", limit=1)
        assert count == 2  # gotcha/old and decision/high; verified later, undated, diary or global ones are not
        assert oldest == [("gotcha/old", "2025-01-01")]
        assert store_readonly.stale_entries(conn, types, "2026-06-01", limit=5)[1] == [("gotcha/old", "2025-01-01"),
                                                                           ("decision/high", "2025-06-01")]
        assert store_readonly.stale_entries(conn, types, "2000-01-01", limit=5) == (0, [])
        assert store_readonly.stale_entries(conn, ("note",), "2099-01-01", limit=5) == (0, [])
    finally:
        conn.close()
