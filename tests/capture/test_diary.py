"""The diary file format: one line (write and parse), the daily files, appending, reading back."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, time
from pathlib import Path

import pytest
from diary_fixtures import HEADER, SESSION, TAG, WHEN

from pinky.capture.diary import (
    DiaryLine,
    append_diary,
    bullet_time,
    daily_header,
    diary_days,
    diary_file,
    diary_path,
    format_line,
    is_bullet,
    parse_diary_line,
    read_day,
    read_diary,
    session_tags,
    short_session,
    tag_host,
)
from pinky.capture.recorder import format_lines
from pinky.capture.transcript import SessionSummary

# --- parse_diary_line ---------------------------------------------------------------


def test_parse_diary_line_round_trips_format_lines() -> None:
    summary = SessionSummary(
        prompts=("p",), files=("f.py",), tools=(("Bash", 1),), commands=("ls",), commits=("c",)
    )
    parsed = [parse_diary_line(line) for line in format_lines(summary, when=WHEN, session_id=SESSION)]
    assert parsed == [
        DiaryLine(time(14, 3), TAG, "asked", "p"),
        DiaryLine(time(14, 3), TAG, "files", "f.py"),
        DiaryLine(time(14, 3), TAG, "tools", "Bash×1"),
        DiaryLine(time(14, 3), TAG, "commands", "ls"),
        DiaryLine(time(14, 3), TAG, "commits", "c"),
    ]


@pytest.mark.parametrize(
    "line",
    ["", "# Diary 2026-11-25", "---", "- a hand-written note", "- 25:00 [abc] files: x", "- 14:03 files: x"],
)
def test_parse_diary_line_rejects_other_lines(line: str) -> None:
    assert parse_diary_line(line) is None


def test_parse_diary_line_tolerates_a_trailing_newline() -> None:
    assert parse_diary_line("- 09:05 [abc] commits: Fix: it\n") == DiaryLine(
        time(9, 5), "abc", "commits", "Fix: it"
    )


@pytest.mark.parametrize(
    ("line", "kind", "text"),
    [
        ("- 15:00 [cccccccc] ok", "", "ok"),  # hand-written: no kind
        ("- 15:00 [cccccccc] see http://host/x: down", "", "see http://host/x: down"),
        ("- 15:00 [cccccccc] src/a.py:12 broke", "", "src/a.py:12 broke"),
        ("- 15:00 [cccccccc] Fix:it", "", "Fix:it"),
        ("- 15:00 [cccccccc] asked:   ", "asked", ""),
        ("- 15:00 [cccccccc] note:  two spaces", "note", " two spaces"),
    ],
)
def test_parse_diary_line_kind_is_a_word_before_colon_space(line: str, kind: str, text: str) -> None:
    parsed = parse_diary_line(line)
    assert parsed is not None and (parsed.kind, parsed.text) == (kind, text)


@pytest.mark.parametrize(
    "line",
    ["- 09:05 [abc] commits: Fix: it", "- 23:59 [a-_1] ok", "- 00:00 [s] files: a.py, b.py"],
)
def test_render_writes_back_the_parsed_line(line: str) -> None:
    assert parse_diary_line(line).render() == line


@pytest.mark.parametrize(
    "line", ["- 9:05 [abc] x", "- ab:cd [abc] x", "- 12:60 [abc] x", "- 12:00 [a b] x", "- 12:00 [a]b] x",
             "- 12:00 [] x", "- 12:00 [abc]", "* 12:00 [abc] x", "- ١٢:٠٠ [abc] x"],
)
def test_parse_diary_line_rejects_malformed_time_or_tag(line: str) -> None:
    assert parse_diary_line(line) is None


def test_a_session_tag_names_the_host_and_a_hash_of_the_whole_id() -> None:
    assert short_session(SESSION) == TAG
    assert short_session("codex:01a25167-4f8b-7992") != short_session("codex:01a25167-9c21-7d04")  # one minute
    assert short_session("copilot:1a2b3c4d-20261207").startswith("copilot-")
    assert short_session("a]b c\nd-e").startswith("claude-") and short_session("") == "claude-unknown"
    for session in (SESSION, "codex:01a25167", "a]b c\nd-e"):
        tag = short_session(session)
        assert parse_diary_line(f"- 10:00 [{tag}] asked: x").session == tag  # type: ignore[union-attr]
    assert session_tags(SESSION) == (TAG, "a1b2c3d4")  # a Claude Code line an older pinky wrote is still its own
    assert session_tags("codex:01a25167-4f8b") == (short_session("codex:01a25167-4f8b"),)


@pytest.mark.parametrize(("tag", "host"), [("claude-a2998369", "claude"), ("73520480", "claude"),
                                           ("codex-01a25167", "codex"), ("manual", ""), ("other001", "")])
def test_the_host_is_read_from_every_tag_format(tag: str, host: str) -> None:
    assert tag_host(tag) == host


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- 09:30 [a] files: x", time(9, 30)),
        ("* 09:30 from B", time(9, 30)),
        ("- 09:30", time(9, 30)),
        ("- 09:30am breakfast", None),
        ("- 25:00 late", None),
        ("- a note", None),
        ("  - 09:30 nested", None),
    ],
)
def test_bullet_time(line: str, expected: time | None) -> None:
    assert bullet_time(line) == expected


def test_is_bullet() -> None:
    assert [is_bullet(x) for x in ("- a", "* b", "-c", "  - d", "1. e", "")] == [True, True, False, False, False, False]


# --- append_diary ---------------------------------------------------------------------


def test_append_diary_creates_the_file_with_frontmatter(tmp_path: Path) -> None:
    path = append_diary(tmp_path, ["- 14:03 [a1b2c3d4] files: a.py"], WHEN)
    assert path == tmp_path / "diary" / "2026-11-25.md"
    assert path.read_text(encoding="utf-8") == HEADER + "- 14:03 [a1b2c3d4] files: a.py\n"


def test_append_diary_appends_without_a_second_header(tmp_path: Path) -> None:
    append_diary(tmp_path, ["- 14:03 [a] files: a.py"], WHEN)
    path = append_diary(tmp_path, ["- 15:00 [b] files: b.py", "- 15:00 [b] tools: Edit×1"], WHEN)
    text = path.read_text(encoding="utf-8")
    assert text == HEADER + "- 14:03 [a] files: a.py\n- 15:00 [b] files: b.py\n- 15:00 [b] tools: Edit×1\n"
    assert not list(path.parent.glob(".*tmp"))


def test_append_diary_separates_a_hand_edit_without_trailing_newline(tmp_path: Path) -> None:
    path = append_diary(tmp_path, ["- 14:03 [a] files: a.py"], WHEN)
    with path.open("a", encoding="utf-8") as f:
        f.write("- my own note")
    append_diary(tmp_path, ["- 15:00 [b] files: b.py"], WHEN)
    assert path.read_text(encoding="utf-8").endswith("- my own note\n- 15:00 [b] files: b.py\n")


def test_append_diary_uses_one_file_per_day(tmp_path: Path) -> None:
    a = append_diary(tmp_path, ["- 23:59 [a] files: a"], datetime(2026, 11, 25, 23, 59))
    b = append_diary(tmp_path, ["- 00:01 [a] files: b"], datetime(2026, 11, 26, 0, 1))
    assert (a.name, b.name) == ("2026-11-25.md", "2026-11-26.md")
    assert b.read_text(encoding="utf-8").startswith("---\ntitle: Diary 2026-11-26\n")


def test_append_diary_concurrent_first_writers_keep_one_header_and_all_lines(tmp_path: Path) -> None:
    barrier = threading.Barrier(8)

    def writer(i: int) -> None:
        barrier.wait()
        append_diary(tmp_path, [f"- 14:0{i} [w{i}] files: f{i}.py"], WHEN)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = (tmp_path / "diary" / "2026-11-25.md").read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    assert text.count("title: Diary") == 1
    assert sorted(line for line in text.splitlines() if line.startswith("- ")) == [
        f"- 14:0{i} [w{i}] files: f{i}.py" for i in range(8)
    ]


def test_daily_header_is_what_markdown_render_writes() -> None:
    from pinky.text.markdown import render

    day = date(2026, 11, 25)
    meta = {"title": f"Diary {day}", "type": "diary", "created": day, "tags": ["diary"]}
    assert daily_header(day) == render(meta, f"# Diary {day}") + "\n" == HEADER


def test_diary_path_is_the_local_day_of_an_aware_moment(tmp_path: Path) -> None:
    moment = datetime(2026, 11, 25, 23, 30, tzinfo=UTC)
    assert diary_path(tmp_path, moment) == tmp_path / "diary" / f"{moment.astimezone():%Y-%m-%d}.md"
    assert diary_file(tmp_path, date(2026, 1, 2)) == str(tmp_path / "diary" / "2026-01-02.md")


# --- reading --------------------------------------------------------------------------


def write_day(save_dir: Path, name: str, body: str) -> Path:
    path = save_dir / "diary" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + body, encoding="utf-8")
    return path


@pytest.fixture
def diary(tmp_path: Path) -> Path:
    write_day(tmp_path, "2026-11-24.md", "- 23:50 [aaaa] asked: late question\n- a hand-written note\n")
    write_day(tmp_path, "2026-11-25.md", "- 09:00 [bbbb] files: a.py\n  continued\n- 10:30 [bbbb] ok\n"
                                         "- 08:00 [cccc] commits: out of order\n")
    write_day(tmp_path, "2026-11-27.md", "- 12:00 [dddd] tools: Edit×1\n")
    for other in ("notes.md", "2026-W48-1.md", "2026-02-30.md", "2026-11-26.txt", "20261126.md"):
        write_day(tmp_path, other, "- 12:00 [eeee] asked: not a diary day\n")
    write_day(tmp_path, "weekly/2026-11-28.md", "- 12:00 [ffff] asked: a folder, not a day\n")
    return tmp_path


def test_diary_days_are_the_dated_files_oldest_first(diary: Path) -> None:
    assert diary_days(diary) == [date(2026, 11, 24), date(2026, 11, 25), date(2026, 11, 27)]
    assert diary_days(diary / "missing") == []


def test_read_diary_keeps_file_order_and_tags_each_line_with_its_day(diary: Path) -> None:
    lines = read_diary(diary)
    assert [(line.day.day, line.session, line.kind, line.text) for line in lines] == [
        (24, "aaaa", "asked", "late question"),
        (25, "bbbb", "files", "a.py"),
        (25, "bbbb", "", "ok"),
        (25, "cccc", "commits", "out of order"),
        (27, "dddd", "tools", "Edit×1"),
    ]
    assert "not a diary day" not in {line.text for line in lines}


def test_read_diary_of_chosen_days(diary: Path) -> None:
    days = [date(2026, 11, 27), date(2026, 11, 26), date(2026, 11, 24)]
    assert [line.session for line in read_diary(diary, days=days)] == ["dddd", "aaaa"]
    assert read_diary(diary, days=[]) == []


def test_read_diary_since_a_moment_counts_whole_minutes(diary: Path) -> None:
    since = datetime(2026, 11, 25, 9, 0, 59)  # naive: local time, like the lines
    assert [line.text for line in read_diary(diary, since=since)] == ["a.py", "ok", "Edit×1"]
    assert [line.text for line in read_diary(diary, since=since.replace(minute=1))] == ["ok", "Edit×1"]
    aware = since.astimezone(UTC)  # the same moment in another zone selects the same lines
    assert read_diary(diary, since=aware) == read_diary(diary, since=since)
    assert read_diary(diary, since=since.timestamp()) == read_diary(diary, since=since)  # epoch seconds
    assert read_diary(diary, days=[date(2026, 11, 24)], since=since) == []


def test_read_day_missing_or_not_utf8(tmp_path: Path) -> None:
    assert read_day(tmp_path, date(2026, 11, 25)) == []
    path = tmp_path / "diary" / "2026-11-25.md"
    path.parent.mkdir()
    path.write_bytes(b"- 10:00 [abc] asked: caf\xe9 au lait\n\xff\xfe\n")
    assert read_day(tmp_path, date(2026, 11, 25)) == [
        DiaryLine(time(10, 0), "abc", "asked", "caf\ufffd au lait", date(2026, 11, 25))
    ]


def test_appended_lines_read_back(tmp_path: Path) -> None:
    lines = [format_line(time(14, 3), "a1b2c3d4", "files", "a.py"), format_line(time(14, 4), "a1b2c3d4", "", "x")]
    append_diary(tmp_path, lines, WHEN)
    assert [line.render() for line in read_diary(tmp_path)] == lines


def test_diary_module_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pinky.capture.diary, pinky.capture.transcript, pinky.capture.recorder, pinky.base.redact, "
        "pinky.hygiene.evergreen; "
        "bad = {'numpy', 'mcp', 'dulwich', 'frontmatter', 'sqlite3', 'yaml'} & set(sys.modules); "
        "print(sorted(bad))"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": src}
    )
    assert out.stdout.strip() == "[]", out.stderr
