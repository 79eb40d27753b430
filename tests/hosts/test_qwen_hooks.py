"""`pinky-hooks --host qwen <event>` driven by the payloads the real Qwen Code 0.24.4 sent offline
(tests/fixtures/qwen/README.md): the digest and the recall in Claude-shaped output naming the tools as Qwen's
model reaches them, nothing for the empty prompt it sends after every tool batch, the file's notes after
read_file and edit, the guard on QWEN.md, the diary from its chat file, the capture ask, the checkpoint."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from host_fixtures import diary_text, make_brain, output, payload, run_host, transcript

from pinky.capture.diary import short_session


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_brain(tmp_path / "proj")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def context(result: subprocess.CompletedProcess[str], event: str) -> str:
    out = output(result)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return out["hookSpecificOutput"]["additionalContext"]


def test_session_start_shows_the_digest_with_names_qwen_can_call(root: Path, home: Path) -> None:
    digest = context(run_host("qwen", "session-start", payload("qwen", "SessionStart", root, home), root),
                     "SessionStart")
    assert "DB retries need jitter" in digest and "mcp__pinky__brain_search" in digest
    assert "mcp__plugin_" not in digest


def test_a_prompt_gets_its_recall_and_the_empty_prompt_after_a_tool_batch_nothing(root: Path, home: Path) -> None:
    text = context(run_host("qwen", "user-prompt", payload("qwen", "UserPromptSubmit", root, home), root),
                   "UserPromptSubmit")
    assert "gotcha/db-retries" in text and "mcp__pinky__brain_get" in text
    again = payload("qwen", "UserPromptSubmit-after-tools", root, home)
    assert again["prompt"] == ""
    assert output(run_host("qwen", "user-prompt", again, root)) == {}


@pytest.mark.parametrize("name", ["PostToolUse-read_file", "PostToolUse-edit"])
def test_after_read_file_and_edit_the_notes_of_the_file_follow_the_result(root: Path, home: Path, name: str) -> None:
    text = context(run_host("qwen", "post-tool", payload("qwen", name, root, home), root), "PostToolUse")
    assert "src/db.py" in text and "gotcha/db-retries" in text
    other = payload("qwen", name, root, home)
    other["tool_input"] = {**other["tool_input"], "file_path": str(root / "src" / "other.py")}
    assert output(run_host("qwen", "post-tool", other, root)) == {}


def test_a_brain_tool_call_brings_no_file_notes(root: Path, home: Path) -> None:
    assert output(run_host("qwen", "post-tool", payload("qwen", "PostToolUse-mcp", root, home), root)) == {}


def test_an_edit_adding_stale_facts_to_qwen_md_is_denied(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_text("# Project\n", encoding="utf-8")
    data = payload("qwen", "PreToolUse-edit", root, home,
                   tool_input={"file_path": str(root / "QWEN.md"), "old_string": "# Project",
                               "new_string": "# Project\nThe API has 37 endpoints, see line 212 of api.py."})
    out = output(run_host("qwen", "pre-write", data, root))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and out["hookEventName"] == "PreToolUse"
    assert "QWEN.md must stay evergreen" in out["permissionDecisionReason"]
    plain = {**data, "tool_input": {**data["tool_input"], "new_string": "# Project\nKeep the docs short."}}
    assert "permissionDecision" not in json.dumps(output(run_host("qwen", "pre-write", plain, root)))


def test_stop_writes_the_diary_from_the_chat_file_naming_qwen(root: Path, home: Path) -> None:
    stop = payload("qwen", "Stop", root, home)
    transcript("qwen", "chat.jsonl", root, home, stop["transcript_path"])
    assert output(run_host("qwen", "stop", stop, root)) == {}  # the session saved: no capture ask
    diary = diary_text(root)
    tag = short_session(f"qwen:{stop['session_id']}")
    assert tag.startswith("qwen-") and f"[{tag}] asked: Why does the db client retry without jitter?" in diary
    assert f"[{tag}] files: src/db.py" in diary and "Read×1, Edit×1, brain_save×1" in diary, diary
    assert "learned: saved gotcha/db-retries-need-jitter" in diary
    run_host("qwen", "stop", stop, root)
    assert diary_text(root) == diary  # read from the stored offset: nothing twice


def chat_line(kind: str, parts: list[dict], cwd: Path, **more: object) -> dict:
    role = {"user": "user", "assistant": "model", "tool_result": "user"}[kind]
    return {"sessionId": "s", "timestamp": "2026-12-07T21:27:10.402Z", "type": kind, "cwd": str(cwd),
            "message": {"role": role, "parts": parts}, **more}


def test_stop_asks_once_for_a_save_in_claude_s_shape(root: Path, home: Path) -> None:
    stop = payload("qwen", "Stop", root, home)
    lines = [chat_line("user", [{"text": "the db tests fail, fix them"}], root)]
    for n, (command, failed) in enumerate([("pytest tests/test_db.py", True), ("sed -i s/1/2/ src/db.py", False),
                                           ("pytest tests/test_db.py", False)]):
        said = "E   AssertionError: retry count\nExit Code: 1" if failed else "1 passed"
        lines += [chat_line("assistant", [{"functionCall": {"id": f"c{n}", "name": "run_shell_command",
                                                             "args": {"command": command}}}], root),
                  chat_line("tool_result", [{"functionResponse": {"id": f"c{n}", "name": "run_shell_command",
                                                                  "response": {"output": said}}}], root,
                            toolCallResult={"callId": f"c{n}", "status": "error" if failed else "success"})]
    path = Path(stop["transcript_path"])
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = output(run_host("qwen", "stop", stop, root))
    assert out["decision"] == "block" and "mcp__pinky__brain_save" in out["reason"], out
    assert output(run_host("qwen", "stop", {**stop, "stop_hook_active": True}, root)) == {}


def test_compress_flushes_the_turn_into_the_diary(root: Path, home: Path) -> None:
    data = payload("qwen", "PreCompact", root, home)
    assert data["trigger"] == "manual"
    transcript("qwen", "chat.jsonl", root, home, data["transcript_path"])
    output(run_host("qwen", "pre-compact", data, root))
    assert "asked: Why does the db client retry without jitter?" in diary_text(root)
