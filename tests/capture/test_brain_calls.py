"""Issue 31 item 14: the diary says what a session taught the brain (the notes saved, updated or archived,
by title and path), names tools as a reader knows them, and leaves out calls that failed."""

from __future__ import annotations

from pathlib import Path

from diary_fixtures import assistant, entry, prompt, tool, write_jsonl

from pinky.capture.brain_calls import short_tool
from pinky.capture.recorder import record_stop
from pinky.capture.transcript import summarize

SAVE = "mcp__plugin_pinky_pinky__brain_save"


def mcp_result(tool_use: dict, text: str, is_error: bool = False) -> dict:
    """An MCP tool's result as Claude Code writes it into the transcript: a list of text blocks."""
    block = {"type": "tool_result", "tool_use_id": tool_use["id"], "content": [{"type": "text", "text": text}],
             "is_error": is_error}
    return entry("user", [block])


def session() -> list[dict]:
    saved = tool(SAVE, title="Postgres pool hangs on shutdown", body="Call pool.close(timeout=5).", type="gotcha")
    refused = tool(SAVE, title="AWS key", body="AKIA…")
    updated = tool("mcp__plugin_pinky_pinky__brain_update", slug="decision/wal", expected_version="ab12", body="x")
    archived = tool("mcp__plugin_pinky_pinky__brain_delete", slug="gotcha/old-pool", reason="merged")
    read = tool("Read", file_path="/home/me/proj/src/db.py")
    return [
        prompt("why does the app hang at shutdown? save what we learn"),
        assistant(read), entry("user", [{"type": "tool_result", "tool_use_id": read["id"], "content": "ok"}]),
        assistant(saved),
        mcp_result(saved, "Saved gotcha/postgres-pool-hangs-on-shutdown → documentation/gotcha/postgres-pool-hangs-"
                          "on-shutdown.md, in project proj; version 3fa9.\nChange it with brain_update(...)."),
        assistant(refused), mcp_result(refused, "Error executing tool brain_save: refused", is_error=True),
        assistant(updated),
        mcp_result(updated, "Updated decision/wal → documentation/decision/wal.md; new version 9c."),
        assistant(archived),
        mcp_result(archived, "Archived gotcha/old-pool → /home/me/proj/documentation/.archive/old-pool.md. Undo with: "
                             "pinky-brain restore gotcha/old-pool"),
    ]


def test_the_notes_a_session_wrote_are_named_and_a_failed_call_is_left_out() -> None:
    summary = summarize(session())
    assert summary.learned == (
        "saved gotcha/postgres-pool-hangs-on-shutdown “Postgres pool hangs on shutdown” "
        "(documentation/gotcha/postgres-pool-hangs-on-shutdown.md)",
        "updated decision/wal (documentation/decision/wal.md)",
        "archived gotcha/old-pool",
    )
    assert summary.tools == (("Read", 1), ("brain_save", 1), ("brain_update", 1), ("brain_delete", 1))


def test_the_stop_hooks_diary_line_says_what_was_learned(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "t.jsonl", session())
    path = record_stop(transcript, "f7d3a9c2-0000", tmp_path / "brain", tmp_path / "offsets.json")
    assert path is not None
    text = path.read_text(encoding="utf-8")
    learned = next(line for line in text.splitlines() if " learned: " in line)
    assert "saved gotcha/postgres-pool-hangs-on-shutdown “Postgres pool hangs on shutdown”" in learned
    assert "AWS key" not in text
    assert "tools: Read×1, brain_save×1, brain_update×1, brain_delete×1" in text
    assert "mcp__plugin" not in text


def test_short_tool_names() -> None:
    assert short_tool("mcp__plugin_pinky_pinky__brain_save") == "brain_save"
    assert short_tool("mcp_pinky_brain_update") == "brain_update"
    assert short_tool("mcp__github__create_issue") == "create_issue"
    assert short_tool("Bash") == "Bash"


def test_a_result_recorded_as_structured_output_names_the_note_too() -> None:
    """Codex records an MCP tool's structured result, after a line of its own, instead of its text."""
    saved = tool("mcp__pinky__brain_save", title="Retries need jitter", body="Add jitter.")
    output = 'Wall time: 0.2984 seconds\nOutput:\n{"slug":"gotcha/retries-need-jitter","path":"documentation/' \
             'gotcha/retries-need-jitter.md","title":"Retries need jitter","version":"3f"}'
    summary = summarize([prompt("add jitter"), assistant(saved), mcp_result(saved, output)])
    assert summary.learned == ("saved gotcha/retries-need-jitter “Retries need jitter” "
                               "(documentation/gotcha/retries-need-jitter.md)",)
