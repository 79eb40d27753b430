"""The diary lists only files a session wrote: a Write or Edit that Claude Code refused (`File has not been
read yet`, `String to replace not found`; a user or hook denial) touched nothing. The Stop hook runs as a
process on the transcript a real Claude Code 2.1.197 session wrote (tests/fixtures/claude-code/
rejected-writes.jsonl: Edit and Write of src/app.py before reading it, both refused; an Edit of
src/lib.py refused, then one that worked; a Write of the new src/new.py)."""

from __future__ import annotations

from pathlib import Path

from helpers import write_note
from hook_helpers import base, run_hook
from transcript_fixtures import tool_call, tool_result

from pinky.capture.transcript import summarize

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code" / "rejected-writes.jsonl"
SESSION = "18960e3f-6c59-40b1-bfd5-d8357cb20d50"


def diary_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "documentation/diary").glob("*.md")))


def test_the_stop_hook_leaves_out_files_claude_code_refused_to_write(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    (root / "documentation").mkdir()
    transcript = root / "session.jsonl"
    transcript.write_text(RECORDED.read_text(encoding="utf-8").replace("/CWD", str(root)), encoding="utf-8")
    payload = {**base(root, "Stop", stop_hook_active=False, last_assistant_message="Done."),
               "session_id": SESSION, "transcript_path": str(transcript)}
    result = run_hook("stop", payload, root)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    files = [line.split(" files: ", 1)[1] for line in diary_text(root).splitlines() if " files: " in line]
    assert files == ["src/lib.py, src/new.py"], diary_text(root)
    assert "Edit×1" in diary_text(root)  # the two refused calls did nothing: the tool counts leave them out


def test_a_file_is_listed_when_any_write_to_it_was_not_refused() -> None:
    refused = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    events = [
        tool_call("a1", "Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "y"}),
        tool_result("a1", refused, error=True),
        tool_call("a2", "Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "y"}),
        tool_result("a2", "The file /p/a.py has been updated successfully."),
        tool_call("b1", "Write", {"file_path": "/p/b.py", "content": "z"}),
        tool_result("b1", [{"type": "text", "text": refused}]),  # the refusal's text alone says so too
        tool_call("c1", "Write", {"file_path": "/p/c.py", "content": "z"}),  # no result yet: it may have worked
        tool_call("d1", "NotebookEdit", {"notebook_path": "/p/d.ipynb", "new_source": "z"}),
        tool_result("d1", "The user doesn't want to proceed with this tool use.", error=True),
    ]
    assert summarize(events).files == ("a.py", "c.py")
