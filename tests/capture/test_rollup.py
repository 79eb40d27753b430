"""Weekly/monthly rollups: built from a fixture month of diaries written by the test."""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path

import pytest

from pinky.capture.rollup import (
    build_rollup,
    closed_periods,
    month_period,
    parse_period,
    week_period,
    write_rollup,
)
from pinky.errors import InvalidInput

# 2026-11-23 (Mon) .. 2026-11-29 (Sun) is ISO week 2026-W48
AFTER = date(2027, 1, 4)  # "today" for the rollups of closed periods: a week in the future is dated today
DIARIES = {
    "2026-11-02": [
        "- 09:00 [aaaaaaaa] files: src/a.py, src/b.py",
        "- 09:30 [aaaaaaaa] asked: early november question",
    ],
    "2026-11-23": [
        "- 09:00 [aaaaaaaa] files: src/pool.py, src/db.py",
        "- 09:10 [aaaaaaaa] asked: why does the pool time out under load?",
        "- 11:00 [bbbbbbbb] files: src/pool.py",
        "- 11:05 [bbbbbbbb] note: short",
    ],
    "2026-11-25": [
        "- 14:00 [cccccccc] commits: 1a2b3c4 raise pool size to 20 in src/pool.py",
        "- 14:05 [cccccccc] files: src/pool.py, tests/test_pool.py",
        "- 15:00 [cccccccc] ok",
        "- 15:01 [cccccccc] skipped: 2 unreadable transcript lines (1 not JSON, 1 nested too deeply; the first at "
        "byte 4,096)",
    ],
    "2026-11-30": ["- 10:00 [dddddddd] files: src/late.py"],
}


def note(root: Path, rel: str, **meta: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "".join(f"{k}: {v}\n" for k, v in meta.items())
    path.write_text(f"---\n{header}---\nbody\n")


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    for day, lines in DIARIES.items():
        path = tmp_path / "diary" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntype: diary\n---\n# Diary {day}\n\n" + "".join(x + "\n" for x in lines))
    note(tmp_path, "gotcha/pool-timeout.md", type="gotcha", title="Pool timeout", created="2026-11-24")
    note(tmp_path, "decision/use-sqlite.md", type="decision", title="Use SQLite", created="2026-10-01",
         last_verified="2026-11-26")
    note(tmp_path, "reference/old.md", type="reference", title="Old", created="2026-01-01")
    note(tmp_path, "howto/deploy.md", type="howto", title="Deploy", created="2026-11-27T10:00:00")
    # an earlier rollup inside the period must not count as an entry or a diary
    note(tmp_path, "diary/weekly/2026-W47.md", type="diary", title="Week 2026-W47", created="2026-11-24")
    return tmp_path


def test_week_rollup_sections(brain: Path) -> None:
    path, text = build_rollup(brain, week_period(2026, 48), AFTER)
    assert path == brain / "diary/weekly/2026-W48.md"
    front, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    assert front == (
        "title: Week 2026-W48\ntype: diary\ntags: [diary, rollup]\ncreated: 2026-11-29\n"
        "rollup: week\nperiod_start: 2026-11-23\nperiod_end: 2026-11-29\n"
    )
    assert "- Sessions: 3 (claude 3)\n- Active days: 2 of 7\n" in body
    files = body.split("## Files most touched\n\n")[1].split("\n\n")[0].splitlines()
    assert files == [
        "- `src/pool.py` (3)",
        "- `src/db.py` (1)",
        "- `tests/test_pool.py` (1)",
    ]
    entries = body.split("## Entries created or changed\n\n")[1].split("\n\n")[0].splitlines()
    assert entries == [
        "- 2026-11-24 created: Pool timeout [gotcha] (gotcha/pool-timeout.md)",
        "- 2026-11-26 verified: Use SQLite [decision] (decision/use-sqlite.md)",
        "- 2026-11-27 created: Deploy [howto] (howto/deploy.md)",
    ]
    decisions = body.split("## Decisions and gotchas\n\n")[1].split("\n\n")[0].splitlines()
    assert decisions == [
        "- gotcha: Pool timeout (gotcha/pool-timeout.md)",
        "- decision: Use SQLite (decision/use-sqlite.md)",
    ]
    highlights = body.split("## Highlights\n\n")[1].splitlines()
    assert highlights[0].startswith("- 2026-11-25 14:00 [cccccccc] commits: 1a2b3c4")
    assert highlights[1].startswith("- 2026-11-23 09:10 [aaaaaaaa] asked: why does the pool")
    assert highlights[-1] == "- 2026-11-25 15:00 [cccccccc] ok"
    assert not any("files:" in line or "skipped:" in line for line in highlights)
    assert "early november" not in text and "src/late.py" not in text


def test_month_rollup_covers_whole_month(brain: Path) -> None:
    path, text = build_rollup(brain, month_period(2026, 11), AFTER)
    assert path == brain / "diary/monthly/2026-11.md"
    assert "title: Month 2026-11\n" in text and "created: 2026-11-30\n" in text and "rollup: month\n" in text
    assert "- Sessions: 4 (claude 4)\n- Active days: 4 of 30\n" in text
    assert "- `src/pool.py` (3)" in text and "- `src/late.py` (1)" in text
    assert "early november question" in text
    assert "Old" not in text


def test_rewrite_is_byte_identical_and_never_touches_diaries(brain: Path) -> None:
    diaries = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (brain / "diary").glob("*.md")}
    period = week_period(2026, 48)
    first = write_rollup(brain, period, AFTER).read_bytes()
    os.utime(brain / "gotcha/pool-timeout.md", (0, 0))  # mtimes are not an input
    second = write_rollup(brain, period, date(2030, 5, 6)).read_bytes()  # nor the day, once the period is over
    assert first == second
    assert build_rollup(brain, period, AFTER)[1].encode() == first
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in diaries} == diaries
    assert not list((brain / "diary/weekly").glob(".*.tmp"))
    # and the rollup itself is not read back as input for the month
    assert "Week 2026-W48" not in build_rollup(brain, month_period(2026, 11), AFTER)[1]


def test_iso_week_across_year_boundary(tmp_path: Path) -> None:
    for day, session in [("2026-12-27", "11111111"), ("2026-12-28", "22222222"),
                         ("2027-01-03", "33333333"), ("2027-01-04", "44444444")]:
        path = tmp_path / "diary" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Diary {day}\n\n- 10:00 [{session}] asked: {day}\n")
    period = parse_period("2026-W53", None, date(2026, 1, 1))
    assert (period.start, period.end) == (date(2026, 12, 28), date(2027, 1, 3))
    assert parse_period(None, None, date(2027, 1, 2)) == period
    assert parse_period(None, None, date(2027, 1, 4)).label == "2027-W01"
    path, text = build_rollup(tmp_path, period)
    assert path.name == "2026-W53.md"
    assert "- Sessions: 2 (claude 2)\n- Active days: 2 of 7\n" in text
    assert "2026-12-28" in text and "2027-01-03" in text
    assert "asked: 2026-12-27" not in text and "asked: 2027-01-04" not in text


@pytest.mark.parametrize(
    ("week", "month", "needle"),
    [
        ("2026-48", None, "bad week"),
        ("2026-W5", None, "bad week"),
        ("2026-W00", None, "does not exist"),
        ("2025-W53", None, "does not exist"),  # 2025 has 52 ISO weeks
        (None, "2026-13", "does not exist"),
        (None, "2026-1", "bad month"),
        (None, "November", "bad month"),
        ("2026-W48", "2026-11", "not both"),
    ],
)
def test_invalid_periods(week: str | None, month: str | None, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        parse_period(week, month, date(2026, 11, 20))


def test_parse_period_defaults_and_months() -> None:
    assert parse_period(None, None, date(2026, 11, 25)).label == "2026-W48"
    feb = parse_period(None, "2028-02", date(2026, 1, 1))
    assert (feb.start, feb.end) == (date(2028, 2, 1), date(2028, 2, 29))
    dec = parse_period(None, "2026-12", date(2026, 1, 1))
    assert dec.end == date(2026, 12, 31)


def test_closed_periods() -> None:
    labels = lambda ps: [p.label for p in ps]  # noqa: E731
    # Sunday 2026-11-29 closed W48; Monday 2026-11-30 is not yet the end of November
    assert labels(closed_periods(date(2026, 11, 29), date(2026, 11, 30))) == ["2026-W48"]
    assert labels(closed_periods(date(2026, 11, 30), date(2026, 12, 1))) == ["2026-11"]
    assert closed_periods(date(2026, 12, 1), date(2026, 12, 1)) == []
    backlog = closed_periods(date(2026, 11, 20), date(2026, 12, 1))
    assert labels(backlog) == ["2026-W47", "2026-W48", "2026-11"]
    assert labels(closed_periods(None, date(2027, 1, 5))) == ["2026-12", "2026-W53"]


def test_short_and_hyphenated_session_tags_are_counted(tmp_path: Path) -> None:
    """diary.py keeps [A-Za-z0-9_-] of the first 8 characters of a session id, which may be shorter."""
    import datetime as dt

    from pinky.capture.recorder import format_lines
    from pinky.capture.rollup import build_rollup, parse_period
    from pinky.capture.transcript import summarize

    summary = summarize([{"type": "user", "message": {"content": "rebuild the cache"}}])
    lines = format_lines(summary, when=dt.datetime(2026, 11, 24, 9, 30), session_id="ab-_1")
    diary = tmp_path / "diary" / "2026-11-24.md"
    diary.parent.mkdir(parents=True)
    header = "---\ntitle: Diary 2026-11-24\ntype: diary\n---\n\n# Diary 2026-11-24\n\n"
    diary.write_text(header + "\n".join(lines) + "\n")
    _, text = build_rollup(tmp_path, parse_period("2026-W48", None, dt.date(2026, 11, 25)))
    assert "rebuild the cache" in text


def test_read_notes_takes_the_notes_the_indexer_takes(tmp_path: Path) -> None:
    from pinky.capture.rollup import read_notes

    note(tmp_path, "gotcha/a.md", type="gotcha", title="A", created="2026-11-24T10:00:00Z")
    note(tmp_path, "_template.md", type="gotcha", created="2026-11-24")
    note(tmp_path, ".archive/old.md", type="gotcha", created="2026-11-24")
    note(tmp_path, "diary/2026-11-24.md", type="diary", created="2026-11-24")
    (tmp_path / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    notes = read_notes(tmp_path)
    assert [n.path for n in notes] == ["broken.md", "gotcha/a.md"]
    assert (notes[0].title, notes[0].type, notes[0].created) == ("broken", "", None)  # broken YAML still counts
    assert (notes[1].title, notes[1].created, notes[1].last_verified) == ("A", date(2026, 11, 24), None)


def test_a_rollup_of_a_period_not_over_is_dated_today_not_in_the_future(brain: Path) -> None:
    week = week_period(2026, 48)  # Monday 2026-11-23 .. Sunday 2026-11-29
    _, text = build_rollup(brain, week, today=date(2026, 11, 26))
    assert "\ncreated: 2026-11-26\n" in text and "\nperiod_end: 2026-11-29\n" in text
    assert "# Week 2026-W48 (2026-11-23 to 2026-11-29, so far: to 2026-11-26)\n" in text
    _, closed = build_rollup(brain, week, today=date(2026, 12, 1))  # once it is over: its last day, as ever
    assert "\ncreated: 2026-11-29\n" in closed and "# Week 2026-W48 (2026-11-23 to 2026-11-29)\n" in closed
    assert build_rollup(brain, week, today=date(2026, 11, 29))[1] == closed  # its last day: over by tonight


def test_pinky_rollup_of_the_current_week_is_not_dated_after_today(project: Path) -> None:
    import json
    import subprocess

    from helpers import console_script

    today = date.today()
    diary = project / "documentation/diary" / f"{today.isoformat()}.md"
    diary.parent.mkdir(parents=True)
    diary.write_text(f"---\ntype: diary\n---\n# Diary {today}\n\n- 09:00 [aaaaaaaa] asked: pool shutdown\n")
    done = subprocess.run([*console_script("pinky"), "rollup", "--json"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = Path(json.loads(done.stdout)["path"]).read_text(encoding="utf-8")
    assert f"\ncreated: {today.isoformat()}\n" in text  # not the Sunday ahead
    listed = subprocess.run([*console_script("pinky"), "list", "--type", "diary", "--json"], cwd=project,
                            capture_output=True, text=True, timeout=120)
    assert max(item["created"][:10] for item in json.loads(listed.stdout)["entries"]) <= today.isoformat()
