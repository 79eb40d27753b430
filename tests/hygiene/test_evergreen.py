"""The evergreen CLAUDE.md rule: volatile facts are flagged, ordinary prose and rules are not."""

from __future__ import annotations

import pytest

from pinky.hygiene.evergreen import ADVICE, Finding, check_claude_md_write, find_volatile


def kinds(text: str) -> list[str]:
    return [f.kind for f in find_volatile(text)]


@pytest.mark.parametrize(
    "text",
    [
        "The parser is 1,234 lines long.",
        "utils.py has 500 LOC.",
        "About 12k lines of code in total.",
        "The module is 800 lines.",
        "roughly 3.5k SLOC",
    ],
)
def test_line_counts(text: str) -> None:
    assert kinds(text) == ["line-count"]


@pytest.mark.parametrize(
    "text",
    [
        "See foo.py:123 for the retry loop.",
        "Error raised at src/app/server.ts:10:5.",
        "The bug is on line 42.",
        "Look at lines 10-20 of the config.",
        "Lines 3 to 7 define the schema.",
        "Jump to L42 in the viewer.",
        "https://github.com/o/r/blob/main/x.py#L10-L20",
    ],
)
def test_line_number_references(text: str) -> None:
    assert kinds(text) == ["line-number"]


@pytest.mark.parametrize(
    "text",
    [
        "We currently use SQLite for storage.",
        "As of today the sync works.",
        "At the time of writing, the API is in beta.",
        "Right now the build is slow.",
        "At the moment only Linux is supported.",
    ],
)
def test_time_relative_phrases(text: str) -> None:
    assert kinds(text) == ["time-relative"]


@pytest.mark.parametrize(
    "text",
    [
        "As of 2026-11-25 the index is rebuilt nightly.",
        "Last updated: 2026-11-25",
        "Updated on 2026-01-02.",
        "as of March 2026, use the v2 API",
        "As of Nov 3, 2026 we pin mcp 2.3.",
    ],
)
def test_dates_in_status_context_are_one_finding(text: str) -> None:
    assert kinds(text) == ["dated-status"]


def test_a_bare_date_is_not_flagged() -> None:
    assert find_volatile("The diary file for 2026-11-25 is diary/2026-11-25.md.") == []


@pytest.mark.parametrize(
    "text",
    [
        "Fixed in 3f78685.",
        "Reverted by commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "see a1b2c3d4e5",
    ],
)
def test_commit_hashes(text: str) -> None:
    assert kinds(text) == ["commit-hash"]


@pytest.mark.parametrize(
    "text",
    [
        "There are 312 tests.",
        "All 45 tests pass.",
        "pytest: 12 passed",
        "1,024 unit tests",
        "3 failing tests remain",
    ],
)
def test_test_counts(text: str) -> None:
    assert kinds(text) == ["test-count"]


@pytest.mark.parametrize(
    "text",
    [
        "Use the current directory as the project root.",
        "Normalise line endings to LF.",
        "Split the input into lines of text.",
        "HTTP 404 means the entry is missing.",
        "Keep functions under 50 lines.",
        "Files should have at most 400 lines.",
        "Write at least 1 test per bug.",
        "Every bug fix gets 1 test per regression.",
        "No function longer than 75 lines.",
        "Read the first line of the file.",
        "Run `pytest -q` before committing; all tests must pass.",
        "Python 3.11 or newer is required.",
        "The dev server listens on example.com:8080 and localhost:3000.",
        "A UUID such as 550e8400-e29b-41d4-a716-446655440000 names a session.",
        "Colours like #ff00aa and constants like 0x7fffffff are fine.",
        "deadbeef and cafebabe are words without digits.",
        "The L2 cache and sha256 digests.",
        "A 2-line summary goes in the commit subject.",
        "Use the `currentUser` helper; `current_time()` is mocked in tests.",
        "Sort the lines before diffing.",
        "",
    ],
)
def test_ordinary_prose_and_rules_are_not_flagged(text: str) -> None:
    assert find_volatile(text) == []


def test_findings_carry_an_excerpt_and_advice() -> None:
    [finding] = find_volatile("Intro.\nThe retry loop lives in src/pinky/sync.py:212 and is tricky.\nOutro.")
    assert finding == Finding(
        kind="line-number",
        excerpt="The retry loop lives in src/pinky/sync.py:212 and is tricky.",
        advice=ADVICE["line-number"],
    )
    assert "function" in finding.advice


def test_long_lines_are_trimmed_around_the_match() -> None:
    text = "word " * 40 + "currently" + " word" * 40
    [finding] = find_volatile(text)
    assert finding.excerpt.startswith("…") and finding.excerpt.endswith("…")
    assert "currently" in finding.excerpt and len(finding.excerpt) < 100


def test_every_advice_says_what_to_do_instead() -> None:
    assert set(ADVICE) == {
        "line-count",
        "line-number",
        "time-relative",
        "dated-status",
        "commit-hash",
        "test-count",
    }
    for advice in ADVICE.values():
        assert len(advice) > 30


def test_a_realistic_stale_claude_md() -> None:
    text = (
        "# Project notes\n\n"
        "- The indexer (src/pinky/indexing/indexer.py, 1,200 lines) currently rebuilds everything.\n"
        "- See indexer.py:88 for the chunker.\n"
        "- As of 2026-11-25 there are 312 tests; fixed flaky sync in 3f78685.\n"
        "- Keep functions under 50 lines and run `pytest -q` before committing.\n"
    )
    assert kinds(text) == [
        "line-count",
        "time-relative",
        "line-number",
        "dated-status",
        "test-count",
        "commit-hash",
    ]


def test_repeated_identical_passage_is_reported_once() -> None:
    assert kinds("Fixed in 3f78685.\nFixed in 3f78685.") == ["commit-hash"]


# --- check_claude_md_write ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/repo/CLAUDE.md", "CLAUDE.md", "/repo/sub/claude.md", "C:\\repo\\Claude.MD"]
)
def test_write_to_claude_md_is_checked(path: str) -> None:
    findings = check_claude_md_write("Write", {"file_path": path, "content": "We currently use X."}, None)
    assert [f.kind for f in findings] == ["time-relative"]


@pytest.mark.parametrize(
    "path", ["/repo/README.md", "/repo/CLAUDE.md.bak", "/repo/NOTCLAUDE.md", "/repo/CLAUDE.md/x.md", "", None]
)
def test_other_files_are_ignored(path: str | None) -> None:
    assert check_claude_md_write("Write", {"file_path": path, "content": "We currently use X."}, None) == []


def test_other_tools_are_ignored() -> None:
    assert check_claude_md_write("Read", {"file_path": "/r/CLAUDE.md"}, "We currently use X.") == []
    notebook = {"notebook_path": "/r/CLAUDE.md", "new_source": "currently"}
    assert check_claude_md_write("NotebookEdit", notebook, None) == []


def test_write_does_not_blame_facts_already_in_the_file() -> None:
    existing = "# Notes\nWe currently use SQLite.\n"
    content = existing + "The parser is 900 lines.\n"
    findings = check_claude_md_write("Write", {"file_path": "/r/CLAUDE.md", "content": content}, existing)
    assert [f.kind for f in findings] == ["line-count"]


def test_edit_only_reports_what_the_edit_adds() -> None:
    tool_input = {
        "file_path": "/r/CLAUDE.md",
        "old_string": "We currently use SQLite (see db.py:10).",
        "new_string": "We currently use SQLite (see db.py:10). There are 312 tests.",
    }
    assert [f.kind for f in check_claude_md_write("Edit", tool_input, None)] == ["test-count"]


def test_edit_that_keeps_an_existing_volatile_line_is_clean() -> None:
    tool_input = {
        "file_path": "/r/CLAUDE.md",
        "old_string": "As of today the sync is slow.",
        "new_string": "As of today the sync is slow and retried.",
    }
    assert check_claude_md_write("Edit", tool_input, None) == []


def test_edit_that_changes_a_line_number_is_reported() -> None:
    tool_input = {"file_path": "/r/CLAUDE.md", "old_string": "see db.py:10", "new_string": "see db.py:12"}
    assert [f.kind for f in check_claude_md_write("Edit", tool_input, None)] == ["line-number"]


def test_multiedit_checks_each_edit_against_its_own_old_string() -> None:
    tool_input = {
        "file_path": "/r/CLAUDE.md",
        "edits": [
            {"old_string": "currently X", "new_string": "currently Y"},
            {"old_string": "intro", "new_string": "intro, right now 45 tests pass"},
            "junk",
            {"old_string": "a", "new_string": None},
        ],
    }
    assert [f.kind for f in check_claude_md_write("MultiEdit", tool_input, None)] == [
        "time-relative",
        "test-count",
    ]


def test_malformed_tool_input_is_lenient() -> None:
    assert check_claude_md_write("Edit", {"file_path": "/r/CLAUDE.md", "new_string": 5}, None) == []
    assert check_claude_md_write("MultiEdit", {"file_path": "/r/CLAUDE.md", "edits": "x"}, None) == []
    assert check_claude_md_write("Write", "not a dict", None) == []  # type: ignore[arg-type]
