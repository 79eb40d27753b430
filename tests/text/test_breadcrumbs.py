"""pinky.text.breadcrumbs: `Brain: <slug>` comments in code, parsed from bytes by the code scan and the hooks."""

from __future__ import annotations

import pytest

from pinky.text.breadcrumbs import MAX_CRUMBS, breadcrumbs, breadcrumbs_by_line


def test_find_breadcrumbs_reports_lines() -> None:
    data = b"import os\n# Brain: gotcha/pool, decision/wal\nx = 1  // Brain: pool-note\nnotBrain: x\n"
    assert breadcrumbs_by_line(data) == [(2, "gotcha/pool"), (2, "decision/wal"), (3, "pool-note")]
    assert breadcrumbs_by_line(b"no crumbs here") == []


@pytest.mark.parametrize(("data", "found"), [
    (b"# Brain: gotcha/pool", ["gotcha/pool"]),
    (b"Brain: at-the-start", ["at-the-start"]),
    (b"pool.close()  # Brain: gotcha/pg-pool-hangs\n", ["gotcha/pg-pool-hangs"]),
    (b"-- Brain: global/decision/wal_mode.v2", ["global/decision/wal_mode.v2"]),
    (b"# Brain:gotcha/pool", ["gotcha/pool"]),
    (b"# Brain: a, b,c ,  d", ["a", "b", "c", "d"]),
    (b"# Brain: a b", ["a"]),  # a list needs commas: what follows a slug after a space is prose
    (b"# Brain: a, a, b", ["a", "b"]),
    (b"# Brain: a\r\n", ["a"]),
    (b"/* Brain: gotcha/pool */", ["gotcha/pool"]),
])
def test_breadcrumbs(data: bytes, found: list[str]) -> None:
    assert breadcrumbs(data) == found


@pytest.mark.parametrize("data", [
    b"MyBrain: gotcha/pool",
    b"x.myBrain: y",
    b"_Brain: gotcha/pool",
    b"9Brain: z",
    b"brain: gotcha/pool",
    b"BRAIN: gotcha/pool",
    b"Brain gotcha/pool",
    b"# Brain:",
    b"# Brain:   \n next line",
    b"# Brain: /etc/passwd",
    b"# Brain: caf\xc3\xa9",
    b"# Brain: \"quoted\"",
    b"# Brain: ...",
])
def test_not_breadcrumbs(data: bytes) -> None:
    assert breadcrumbs(data) == []


@pytest.mark.parametrize(("data", "found"), [
    (b"# Brain: gotcha/pool.", ["gotcha/pool"]),
    (b"# Brain: gotcha/pool;", ["gotcha/pool"]),
    (b"# Brain: gotcha/pool:", ["gotcha/pool"]),
    (b"(see Brain: gotcha/pool)", ["gotcha/pool"]),
    (b"(Brain: a).", ["a"]),
    (b"# Brain: a, /abs, b", ["a"]),  # the list stops at the first token that is not a slug
    (b"# Brain: a (and more)", ["a"]),
])
def test_punctuation_around_and_after_a_crumb(data: bytes, found: list[str]) -> None:
    assert breadcrumbs(data) == found


def test_several_marks_on_one_line() -> None:
    assert breadcrumbs(b"x = 1  # Brain: gotcha/pool  // Brain: decision/wal") == ["gotcha/pool", "decision/wal"]
    assert breadcrumbs(b"# Brain: a; Brain: b") == ["a", "b"]


def test_a_second_mark_on_the_line_is_not_a_slug() -> None:
    assert breadcrumbs(b"# Brain: a Brain: b") == ["a", "b"]
    assert breadcrumbs(b"# Brain: a, Brain: b") == ["a", "b"]


def test_crumbs_across_lines_keep_their_order_and_are_unique() -> None:
    data = b"# Brain: b\ncode()\n# Brain: a, b\n// Brain: c"
    assert breadcrumbs(data) == ["b", "a", "c"]
    assert breadcrumbs_by_line(data) == [(1, "b"), (3, "a"), (3, "b"), (4, "c")]


def test_at_most_max_crumbs() -> None:
    names = [f"n{i}" for i in range(MAX_CRUMBS + 5)]
    one_line = b"# Brain: " + ", ".join(names).encode()
    assert breadcrumbs(one_line) == names[:MAX_CRUMBS]
    many_lines = b"\n".join(b"# Brain: " + n.encode() for n in names)
    assert breadcrumbs(many_lines) == names[:MAX_CRUMBS]


def test_by_line_numbers_from_one_and_ignores_binary_junk() -> None:
    data = b"\x00\xff\n\n  # Brain: gotcha/pool\n\x89PNG Brain: \xff\xfe\n"
    assert breadcrumbs_by_line(data) == [(3, "gotcha/pool")]
    assert breadcrumbs_by_line(b"") == []


def test_prose_after_a_breadcrumb_is_not_more_crumbs() -> None:
    assert breadcrumbs(b"pool.close(timeout=5)  # Brain: gotcha/pool explains why") == ["gotcha/pool"]
    assert breadcrumbs(b"# Brain: a, b -- see the runbook") == ["a", "b"]
