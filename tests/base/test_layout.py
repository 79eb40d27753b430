"""pinky.base.layout: which files are notes, how a path becomes a slug, and how a short name finds it again."""

from __future__ import annotations

import re

import pytest

from pinky.base.layout import (
    ENTRY_TYPES,
    entry_id,
    is_note,
    is_skipped,
    names_of,
    slug_candidates,
    slug_for,
)


@pytest.mark.parametrize(("name", "skipped"), [
    (".archive", True), (".git", True), ("_templates", True), ("_draft.md", True), (".#swap.md", True),
    ("", True), ("gotcha", False), ("pool.md", False), ("a_b.md", False), ("x.", False),
])
def test_is_skipped(name: str, skipped: bool) -> None:
    assert is_skipped(name) is skipped


@pytest.mark.parametrize(("rel", "note"), [
    ("pool.md", True),
    ("gotcha/pool.md", True),
    ("guide/setup/deep/db.md", True),
    ("README.MD", True),
    ("gotcha/pool.txt", False),
    ("gotcha/pool.md.bak", False),
    ("gotcha/pool", False),
    (".hidden.md", False),
    ("_template.md", False),
    (".archive/gotcha/pool.md", False),
    ("gotcha/_drafts/pool.md", False),
    ("a/b/.git/c.md", False),
    ("gotcha\\_drafts\\pool.md", False),
    ("gotcha\\pool.md", True),
])
def test_is_note(rel: str, note: bool) -> None:
    assert is_note(rel) is note


def test_slug_for_drops_md_and_marks_global() -> None:
    assert slug_for("project", "gotcha/pool.md") == "gotcha/pool"
    assert slug_for("global", "gotcha/pool.md") == "global/gotcha/pool"
    assert slug_for("project", "README.MD") == "README"
    assert slug_for("project", "guide/a.md.md") == "guide/a.md"
    assert slug_for("project", "notes") == "notes"


def test_slug_candidates_most_literal_first() -> None:
    got = slug_candidates("pool")
    assert got[:4] == ["pool", "global/pool", "gotcha/pool", "global/gotcha/pool"]
    expected = ["pool", "global/pool"] + [c for kind in ENTRY_TYPES for c in (f"{kind}/pool", f"global/{kind}/pool")]
    assert got == expected
    assert len(got) == len(set(got))


@pytest.mark.parametrize("spelling", ["gotcha/pool.md", "./gotcha/pool", "/gotcha/pool/", "  gotcha/pool  ",
                                      "./gotcha/pool.md"])
def test_slug_candidates_normalise_how_people_write_a_name(spelling: str) -> None:
    got = slug_candidates(spelling)
    assert got[0] == "gotcha/pool"
    assert got[1] == "global/gotcha/pool"
    assert "gotcha/gotcha/pool" in got  # a type folder named like the entry's own is still tried


def test_slug_candidates_of_a_global_slug_start_with_it() -> None:
    got = slug_candidates("global/gotcha/pool")
    assert got[0] == "global/gotcha/pool"
    assert got.count("global/gotcha/pool") == 1


def test_names_of_every_way_a_breadcrumb_may_name_an_entry() -> None:
    assert names_of("global/gotcha/pool", "gotcha/pool.md") == ["global/gotcha/pool", "gotcha/pool", "pool"]
    assert names_of("gotcha/pool", "gotcha/pool.md") == ["gotcha/pool", "pool"]
    assert names_of("guide/setup/db", "guide/setup/db.md") == ["guide/setup/db", "setup/db", "db"]
    assert names_of("top", "top.md") == ["top"]
    # a slug made unique by the indexer (`-ab12`) still answers to the file's stem
    assert names_of("gotcha/pool-ab12", "gotcha/pool.md") == ["gotcha/pool-ab12", "pool-ab12", "pool"]


def test_entry_id_is_stable_short_and_depends_on_root_and_path() -> None:
    first = entry_id("project", "gotcha/pool.md")
    assert first == entry_id("project", "gotcha/pool.md")
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert len({first, entry_id("global", "gotcha/pool.md"), entry_id("project", "gotcha/pool2.md")}) == 3


def test_entry_id_never_changes_between_releases() -> None:
    # stored in every index and in usage rows: a different hash would orphan them all
    import hashlib

    assert entry_id("project", "gotcha/pool.md") == hashlib.sha1(b"project:gotcha/pool.md").hexdigest()[:16]

