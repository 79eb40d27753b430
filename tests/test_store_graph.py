"""pinky.store.graph: links between entries and code (`files:`, mentions, `[[links]]`, breadcrumbs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import add_entry, migrated_database

from pinky.store import graph as gq
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
    assert gq.linked_file_names(conn) == {"pool.py", "docs", "Makefile", "settings.toml", "app.js"}
    assert gq.linked_file_names(conn, a) == {"pool.py", "docs", "Makefile", "settings.toml"}
    assert gq.linked_file_names(conn, b) == {"pool.py", "app.js"}
    assert gq.linked_file_names(conn, "nobody") == set()


def test_outgoing_links_and_listed_files_keep_their_order(db: Database) -> None:
    eid = add_entry(db.conn, "a", files=("z.py", "a.py", "m.py"), links=("zeta", "alpha", "[[mid]]"))
    assert gq.listed_files(db.conn, eid) == ["z.py", "a.py", "m.py"]
    assert gq.outgoing_links(db.conn, eid) == ["zeta", "alpha", "[[mid]]"]
    assert gq.listed_files(db.conn, "nobody") == []


def test_link_candidates_by_stem_or_title_never_the_entry_itself(db: Database) -> None:
    conn = db.conn
    target = add_entry(conn, "gotcha/pool_hangs", title="Pool hangs", links=("gotcha/pool_hangs",))
    add_entry(conn, "b", links=("gotcha/pool_hangs.md",))
    add_entry(conn, "c", links=("POOL HANGS",))
    add_entry(conn, "d", links=("poolXhangs",))  # `_` is literal, not a LIKE wildcard
    add_entry(conn, "e", links=("other",))
    found = gq.link_candidates(conn, target, "pool_hangs", "Pool hangs")
    assert [(r["slug"], r["target"]) for r in found] == [("b", "gotcha/pool_hangs.md"), ("c", "POOL HANGS")]


def test_breadcrumbs_are_stored_per_file_and_replaced_whole(db: Database) -> None:
    conn = db.conn
    gq.store_breadcrumbs(conn, "src/b.py", 10, 100, [(3, "gotcha/pool"), (9, "wal")])
    gq.store_breadcrumbs(conn, "src/a.py", 20, 200, [(1, "pool")])
    assert gq.breadcrumb_count(conn) == 3
    assert gq.all_breadcrumbs(conn) == [("pool", "src/a.py", 1), ("gotcha/pool", "src/b.py", 3),
                                        ("wal", "src/b.py", 9)]
    assert gq.scanned_code_files(conn) == {"src/a.py": (20, 200), "src/b.py": (10, 100)}

    gq.store_breadcrumbs(conn, "src/b.py", 11, 50, [(4, "wal")])

    assert gq.all_breadcrumbs(conn) == [("pool", "src/a.py", 1), ("wal", "src/b.py", 4)]
    assert gq.scanned_code_files(conn)["src/b.py"] == (11, 50)
    gq.store_breadcrumbs(conn, "src/b.py", 12, 0, [])
    assert gq.breadcrumb_count(conn) == 1
    assert "src/b.py" in gq.scanned_code_files(conn)  # a file without crumbs is still known as read


def test_forgetting_a_code_file_drops_its_breadcrumbs(db: Database) -> None:
    conn = db.conn
    gq.store_breadcrumbs(conn, "src/a.py", 1, 1, [(1, "x"), (2, "y")])
    gq.store_breadcrumbs(conn, "src/b.py", 1, 1, [(1, "x")])
    gq.forget_code_file(conn, "src/a.py")
    assert gq.all_breadcrumbs(conn) == [("x", "src/b.py", 1)]
    assert list(gq.scanned_code_files(conn)) == ["src/b.py"]
    gq.forget_code_file(conn, "never/scanned.py")


def test_breadcrumbs_naming_any_of_an_entrys_names(db: Database) -> None:
    conn = db.conn
    gq.store_breadcrumbs(conn, "src/b.py", 1, 1, [(7, "pool"), (2, "gotcha/pool")])
    gq.store_breadcrumbs(conn, "src/a.py", 1, 1, [(5, "global/gotcha/pool"), (6, "poolish")])
    assert gq.breadcrumbs_naming(conn, ["gotcha/pool", "pool"]) == [("src/b.py", 2), ("src/b.py", 7)]
    assert gq.breadcrumbs_naming(conn, ["global/gotcha/pool"]) == [("src/a.py", 5)]
    assert gq.breadcrumbs_naming(conn, []) == []
