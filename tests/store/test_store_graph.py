"""pinky.store.link_queries: links between entries and code (`files:`, mentions, `[[links]]`, breadcrumbs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import add_entry, all_breadcrumbs, migrated_database

from pinky.store import link_queries
from pinky.store.connect import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = migrated_database(tmp_path / "brain.db")
    yield database
    database.close()


def test_linked_file_names_are_base_names_from_files_and_mentions(db: Database) -> None:
    conn = db.conn
    a = add_entry(conn, "a", files=("src/db/pool.py", "docs/", "Makefile"), mentions=("settings.toml",))
    b = add_entry(conn, "b", files=("lib/pool.py",), mentions=("app.js",))
    assert link_queries.linked_file_names(conn) == {"pool.py", "docs", "Makefile", "settings.toml", "app.js"}
    assert link_queries.linked_file_names(conn, a) == {"pool.py", "docs", "Makefile", "settings.toml"}
    assert link_queries.linked_file_names(conn, b) == {"pool.py", "app.js"}
    assert link_queries.linked_file_names(conn, "nobody") == set()


def test_a_notes_links_are_stored_in_file_order_with_kind_and_code_paths(db: Database) -> None:
    eid = add_entry(db.conn, "a", files=("./z.py", "src\\a.py"), links=("zeta", "alpha"))
    rows = link_queries.links_from(db.conn, [eid], None, 100)
    assert [(r["kind"], r["target"], r["target_file"]) for r in rows] == [
        ("wiki", "zeta", None), ("wiki", "alpha", None), ("files", "./z.py", "z.py"),
        ("files", "src\\a.py", "src/a.py")]
    assert link_queries.links_from(db.conn, ["nobody"], None, 100) == []
    assert link_queries.link_count(db.conn) == 4


def test_links_to_resolve_by_source_and_by_key_and_only_notes_or_code(db: Database) -> None:
    conn = db.conn
    a = add_entry(conn, "a", links=("gotcha/Pool-Hangs.md",), files=("pool.py",))
    add_entry(conn, "b", links=("other",))
    link_queries.store_breadcrumbs(conn, "src/x.py", (1, 1, 0, 0), [(3, "gotcha/pool-hangs")])
    by_key = link_queries.links_to_resolve(conn, [], [], ["pool-hangs"])
    assert sorted(r["target"] for r in by_key) == ["gotcha/Pool-Hangs.md", "gotcha/pool-hangs"]
    assert [r["target"] for r in link_queries.links_to_resolve(conn, [a], [],
                                                               [])] == ["gotcha/Pool-Hangs.md"]  # never files:
    assert [r["root"] for r in link_queries.links_to_resolve(conn, [], ["src/x.py"], [])] == [None]


def test_typed_links_hold_from_since_until_until(db: Database) -> None:
    from pinky.store.entries import upsert_entry
    from pinky.text.linkrefs import LinkRef

    eid = add_entry(db.conn, "a")
    row = dict(db.conn.execute("SELECT * FROM entry WHERE id = ?", (eid,)).fetchone())
    upsert_entry(db.conn, row, [LinkRef("typed", "b", 2, "depends_on", "2026-01-01", "2026-06-01")], (), [], False)
    assert [r["rel"] for r in link_queries.links_from(db.conn, [eid], "2026-03-01", 10)] == ["depends_on"]
    assert link_queries.links_from(db.conn, [eid], "2026-06-01", 10) == []  # until is exclusive
    assert link_queries.links_from(db.conn, [eid], "2025-12-31", 10) == []
    assert len(link_queries.links_from(db.conn, [eid], None, 10)) == 1


def test_breadcrumbs_are_stored_per_file_and_replaced_whole(db: Database) -> None:
    conn = db.conn
    link_queries.store_breadcrumbs(conn, "src/b.py", (10, 100, 0, 0), [(3, "gotcha/pool"), (9, "wal")])
    link_queries.store_breadcrumbs(conn, "src/a.py", (20, 200, 0, 0), [(1, "pool")])
    assert link_queries.breadcrumb_count(conn) == 3
    assert all_breadcrumbs(conn) == [("pool", "src/a.py", 1), ("gotcha/pool", "src/b.py", 3),
                                        ("wal", "src/b.py", 9)]
    assert link_queries.scanned_code_files(conn) == {"src/a.py": (20, 200, 0, 0), "src/b.py": (10, 100, 0, 0)}

    link_queries.store_breadcrumbs(conn, "src/b.py", (11, 50, 0, 0), [(4, "wal")])

    assert all_breadcrumbs(conn) == [("pool", "src/a.py", 1), ("wal", "src/b.py", 4)]
    assert link_queries.scanned_code_files(conn)["src/b.py"] == (11, 50, 0, 0)
    link_queries.store_breadcrumbs(conn, "src/b.py", (12, 0, 0, 0), [])
    assert link_queries.breadcrumb_count(conn) == 1
    assert "src/b.py" in link_queries.scanned_code_files(conn)  # a file without crumbs is still known as read


def test_forgetting_a_code_file_drops_its_breadcrumbs(db: Database) -> None:
    conn = db.conn
    link_queries.store_breadcrumbs(conn, "src/a.py", (1, 1, 0, 0), [(1, "x"), (2, "y")])
    link_queries.store_breadcrumbs(conn, "src/b.py", (1, 1, 0, 0), [(1, "x")])
    link_queries.forget_code_file(conn, "src/a.py")
    assert all_breadcrumbs(conn) == [("x", "src/b.py", 1)]
    assert list(link_queries.scanned_code_files(conn)) == ["src/b.py"]
    link_queries.forget_code_file(conn, "never/scanned.py")
