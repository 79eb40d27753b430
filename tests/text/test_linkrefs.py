"""pinky.text.linkrefs (pure: link syntaxes, typed links, keys) and pinky.indexing.linkresolve (the in-memory
resolver answers exactly as the SQL one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import add_entry, migrated_database

from pinky.indexing.linkresolve import EntryNames, resolve_crumb, resolve_link
from pinky.store.connect import Database
from pinky.text.linkrefs import LinkRef, body_links, entry_keys, rewrite_body_target, target_key, typed_links, valid_on


def test_body_links_with_aliases_headings_and_lines() -> None:
    body = "intro [[a/b|shown]] and [[Some Title#Part]]\n\n[x](../c/d.md#y) [web](https://x.org/e.md)\n[[ ]] [[c]]\n"
    assert body_links(body, first_line=5) == [LinkRef("wiki", "a/b", 5), LinkRef("wiki", "Some Title", 5),
                                              LinkRef("md", "../c/d.md", 7), LinkRef("wiki", "c", 8)]
    assert body_links("[[" * 5000 + "x]]") == [LinkRef("wiki", "x", 1)]  # linear, no overlap


def test_typed_links_read_rel_dates_and_report_bad_items() -> None:
    refs, problems = typed_links([{"to": "a", "rel": "Depends_On", "since": "2026-01-02"}, "b",
                                  {"to": "c", "rel": "blocks"}, {"rel": "x"}, {"to": "d", "rel": "two words"},
                                  {"to": "e", "until": "soon"}], line=4)
    assert refs == [LinkRef("typed", "a", 4, "depends_on", "2026-01-02"), LinkRef("typed", "b", 4),
                    LinkRef("typed", "c", 4, "blocks")]  # a relation of the project's own is fine
    assert [p.split(":")[0] for p in problems] == ["links item 4", "links item 5", "links item 6"]
    assert typed_links(None) == ([], [])


def test_valid_on_since_inclusive_until_exclusive() -> None:
    ref = LinkRef("typed", "a", 1, since="2026-01-01", until="2026-02-01")
    assert [valid_on(ref, d) for d in ("2025-12-31", "2026-01-01", "2026-01-31", "2026-02-01")] == [
        False, True, True, False]


def test_keys_match_between_links_and_entries() -> None:
    assert target_key("../gotcha/Pool.md#fix") == "pool" == target_key("gotcha/pool")
    assert target_key("PG Pool Hangs") == "pg pool hangs"
    assert entry_keys("gotcha/pool-ab12", "gotcha/pool.md", "PG Pool") == {"pool", "pool-ab12", "pg pool"}


def test_rewrite_body_target_keeps_alias_heading_and_other_links() -> None:
    line = "see [[old|alias]], [[old#h]], [[older]] and [t](../x/old.md#part) [u](../x/old.md)"
    assert rewrite_body_target(line, "wiki", "old", "new/slug") == (
        "see [[new/slug|alias]], [[new/slug#h]], [[older]] and [t](../x/old.md#part) [u](../x/old.md)")
    moved = rewrite_body_target(line, "md", "../x/old.md", "../y/new.md")
    assert moved.endswith("[t](../y/new.md#part) [u](../y/new.md)")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = migrated_database(tmp_path / "brain.db")
    yield database
    database.close()


def test_the_in_memory_resolver_answers_as_sql_does(db: Database) -> None:
    conn = db.conn
    for slug, title in [("gotcha/pool", "Pool hangs"), ("global/gotcha/pool", "Pool hangs"), ("decision/wal", "WAL"),
                        ("note/deep/x/Item", "Item"), ("note/other/item", "Other item"), ("guide/run", "Run"),
                        ("global/note/solo", "Solo")]:
        add_entry(conn, slug, root="global" if slug.startswith("global/") else "project", title=title)
    names = EntryNames(conn)
    targets = ["gotcha/pool", "pool", "global/gotcha/pool", "wal", "WAL", "pool hangs", "item", "x/item", "Item",
               "solo", "../decision/wal.md", "decision/wal.md", "./guide/run", "nothing", "", "deep/x/item", "Run"]
    for root, source in [("project", "note/a.md"), ("project", "gotcha/b.md"), ("global", "note/c.md")]:
        for target in targets:
            sql = resolve_link(conn, root, source, target)
            assert names.link(root, source, target) == (sql["id"] if sql else None), (root, source, target)
    for target in targets:
        sql = resolve_crumb(conn, target)
        assert names.crumb(target) == (sql["id"] if sql else None), target


def test_frontmatter_line_finds_the_key_only_in_the_frontmatter() -> None:
    from pinky.text.linkrefs import frontmatter_line

    text = "---\ntitle: x\nlinksfoo: 1\nlinks:\n  - a\nfiles: [a]\n---\nlinks: in the body\n"
    assert [frontmatter_line(text, k) for k in ("links", "files", "tags")] == [4, 6, 1]
    assert frontmatter_line("no frontmatter\nlinks: x\n", "links") == 1
