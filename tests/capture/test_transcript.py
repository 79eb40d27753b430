"""Reading a Claude Code transcript: incremental JSONL reading, summarising, commit subjects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from diary_fixtures import CWD, assistant, entry, prompt, realistic_events, result, tool, write_jsonl

from pinky.capture import transcript as transcript_module
from pinky.capture.transcript import (
    LONE_SURROGATE,
    NOT_JSON,
    NOT_OBJECT,
    NOT_UTF8,
    TOO_DEEP,
    TOO_LONG,
    Transcript,
    commit_subject,
    summarize,
)
from pinky.errors import InvalidInput, NotFound

# --- reading -----------------------------------------------------------------------


def read_new_events(path: Path, offset: int) -> tuple[list[dict], int]:
    """The events of the complete lines after `offset`, and where the next read starts."""
    with Transcript(path) as transcript:
        events = [item for _, _, item in transcript.lines(transcript.resume(offset)) if isinstance(item, dict)]
        return events, transcript.end


def test_read_new_events_reads_complete_lines_and_returns_the_end_offset(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [prompt("one"), prompt("two")])
    events, offset = read_new_events(path, 0)
    assert [e["message"]["content"] for e in events] == ["one", "two"]
    assert offset == path.stat().st_size


def test_read_new_events_leaves_a_partial_last_line_for_later(tmp_path: Path) -> None:
    complete = json.dumps(prompt("one")) + "\n"
    partial = json.dumps(prompt("two"))[:25]
    path = tmp_path / "t.jsonl"
    path.write_text(complete + partial, encoding="utf-8")
    events, offset = read_new_events(path, 0)
    assert len(events) == 1
    assert offset == len(complete.encode())

    path.write_text(
        complete + json.dumps(prompt("two")) + "\n", encoding="utf-8"
    )  # the writer finished the line
    events, offset2 = read_new_events(path, offset)
    assert [e["message"]["content"] for e in events] == ["two"]
    assert offset2 == path.stat().st_size


def test_read_new_events_resumes_from_an_offset_without_rereading(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [prompt("one")])
    _, offset = read_new_events(path, 0)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(prompt("two")) + "\n")
    events, _ = read_new_events(path, offset)
    assert [e["message"]["content"] for e in events] == ["two"]


def test_unreadable_lines_are_skipped_with_the_reason_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        b'{"type":"user","message":{"content":"ok1"}}',
        b"not json at all",
        b"[1, 2, 3]",
        b"",
        b'{"broken": ',
        b"\xff\xfe garbage",
        b'{"type":"user","message":{"content":"cut \\ud83d here"}}',
        b'{"type":"user","message":{"content":"a pair \\ud83d\\ude00 is fine"}}',
        b'{"type":"user","message":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"type":"user","message":{"content":"300 deep is read"},"x":' + b"[" * 300 + b"]" * 300 + b"}",
        b'{"type":"user","message":{"content":"ok2"}}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n\n")
    with Transcript(path) as transcript:
        items = [item for _, _, item in transcript.lines(0)]
        assert transcript.end == path.stat().st_size  # past the trailing blank line too
    assert [i if isinstance(i, str) else i["message"]["content"] for i in items] == [
        "ok1", NOT_JSON, NOT_OBJECT, NOT_JSON, NOT_UTF8, LONE_SURROGATE, "a pair \U0001f600 is fine", TOO_DEEP,
        "300 deep is read", "ok2"]


def test_a_line_longer_than_the_limit_is_skipped_without_being_held(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(transcript_module, "MAX_LINE", 1000)
    long, after, unfinished = (json.dumps(prompt(text)) for text in ("x" * 5000, "after", "y" * 5000))
    path = tmp_path / "t.jsonl"
    path.write_text(f"{long}\n{after}\n{unfinished}", encoding="utf-8")
    with Transcript(path) as transcript:
        items = [(start, item) for start, _, item in transcript.lines(0)]
        end = transcript.end
    assert [item if isinstance(item, str) else item["message"]["content"] for _, item in items] == [TOO_LONG, "after"]
    assert items[1][0] == len(long) + 1
    assert end == len(long) + len(after) + 2  # the unfinished one waits for its newline


def test_read_new_events_restarts_when_the_file_shrank(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [prompt("new file")])
    events, offset = read_new_events(path, 10_000)
    assert [e["message"]["content"] for e in events] == ["new file"]
    assert offset == path.stat().st_size


def test_read_new_events_at_end_returns_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [prompt("one")])
    size = path.stat().st_size
    assert read_new_events(path, size) == ([], size)


def test_read_new_events_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        read_new_events(tmp_path / "missing.jsonl", 0)
    with pytest.raises(InvalidInput):
        read_new_events(write_jsonl(tmp_path / "t.jsonl", []), -1)


# --- summarize -------------------------------------------------------------------


def test_summarize_a_realistic_transcript() -> None:
    summary = summarize(realistic_events())
    assert len(summary.prompts) == 3
    assert summary.prompts[0].startswith("fix the   login bug")
    assert summary.prompts[1].startswith("add a test")
    assert summary.prompts[2].startswith("deploy with")
    assert summary.files == ("src/auth.py", "tests/test_auth.py", "/etc/hosts")
    assert summary.tools == (("Read", 1), ("Write", 1), ("Edit", 2), ("Bash", 3))  # the rejected commit: left out
    assert summary.commands[:3] == (
        "pytest -q tests/test_auth.py",
        'git add src/auth.py && git commit -m "Fix login race',
        "git commit -m 'Rejected by hook'",
    )
    assert summary.commits == ("Fix login race",)


def test_summarize_skips_synthetic_user_entries() -> None:
    events = [
        prompt("meta", isMeta=True),
        prompt("summary", isCompactSummary=True),
        prompt("<local-command-stdout>out</local-command-stdout>"),
        prompt("<command-name>/model</command-name>"),
        prompt("<system-reminder>x</system-reminder>"),
        prompt("subagent task", isSidechain=True),
        prompt("   "),
        result(tool("Bash", command="ls")),
        {"type": "user", "message": "not a dict"},
        {"type": "user"},
    ]
    assert summarize(events).prompts == ()


def test_summarize_reads_text_blocks_of_a_prompt_with_an_image() -> None:
    event = prompt([{"type": "text", "text": "what is in this screenshot?"}, {"type": "image", "source": {}}])
    assert summarize([event]).prompts == ("what is in this screenshot?",)


def test_summarize_dedupes_in_first_seen_order() -> None:
    events = [
        prompt("b"),
        prompt("a"),
        prompt("b"),
        assistant(tool("Edit", file_path=f"{CWD}/y.py"), tool("Edit", file_path=f"{CWD}/x.py")),
        assistant(
            tool("Edit", file_path=f"{CWD}/y.py"), tool("Bash", command="ls"), tool("Bash", command="ls")
        ),
    ]
    summary = summarize(events)
    assert summary.prompts == ("b", "a")
    assert summary.files == ("y.py", "x.py")
    assert summary.tools == (("Edit", 3), ("Bash", 2))
    assert summary.commands == ("ls",)


def test_summarize_notebook_and_multiedit_paths() -> None:
    events = [
        assistant(
            tool("NotebookEdit", notebook_path=f"{CWD}/nb/a.ipynb", new_source="x"),
            tool("MultiEdit", file_path=f"{CWD}/m.py", edits=[]),
        )
    ]
    assert summarize(events).files == ("nb/a.ipynb", "m.py")


def test_summarize_ignores_malformed_tool_blocks() -> None:
    events = [
        entry(
            "assistant", [{"type": "tool_use", "name": "Write"}, {"type": "tool_use", "input": {}}, "junk"]
        ),
        entry("assistant", "plain text"),
        {"type": "assistant", "message": None},
    ]
    assert summarize(events).is_empty()


@pytest.mark.parametrize(
    ("command", "subject"),
    [
        ('git commit -m "Fix login race"', "Fix login race"),
        ("git add -A && git commit -am 'Add test' && git push", "Add test"),
        (
            "git commit -m \"$(cat <<'EOF'\nFix login race\n\nBody text\n\nCo-Authored-By: x\nEOF\n)\"",
            "Fix login race",
        ),
        ('git -C repo commit --message="Tidy up"', "Tidy up"),
        ('git commit -m "say \\"hi\\""', 'say "hi"'),
        ("git status", None),
        ("echo git commit", None),
        ("git commit --amend --no-edit", None),
    ],
)
def test_commit_subject(command: str, subject: str | None) -> None:
    assert commit_subject(command) == subject
