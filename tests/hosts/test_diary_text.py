"""What reaches the diary from a host is text a person typed: no control characters, no U+FFFD, no host context.

Driven through real `pinky-hooks` processes fed each host's payloads (tests/fixtures/<host>/): a NUL in a diary
line makes git take the whole day's file for binary (`git diff` shows `-` for its lines), and Gemini CLI puts its
session context ("Workspace Directories", the folder tree) in front of the first prompt.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hook_helpers import base, run_hook
from host_fixtures import diary_text, make_brain, output, payload, run_host

DIRTY = "fix the\x00 retry \ufffd in\x1b[31m src/db.py\u202e"
CLEAN = "fix the retry in [31m src/db.py"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_brain(tmp_path / "proj")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def diary_files(root: Path) -> list[Path]:
    return sorted((root / "documentation" / "diary").glob("*.md"))


def assert_text_to_git(root: Path) -> None:
    """Every diary file is text: no NUL, no U+FFFD, no other control character, and git counts its lines."""
    assert diary_files(root)
    for path in diary_files(root):
        data = path.read_bytes()
        text = data.decode("utf-8")
        assert "\ufffd" not in text and not [c for c in text if ord(c) < 0x20 and c != "\n"], repr(text)
        numstat = subprocess.run(["git", "diff", "--no-index", "--numstat", "/dev/null", str(path)],
                                 capture_output=True, text=True).stdout
        assert not numstat.startswith("-\t-"), numstat  # git: a binary file


def test_cursor_prompt_and_command_with_control_bytes_leave_a_text_diary(root: Path, home: Path) -> None:
    output(run_host("cursor", "user-prompt", payload("cursor", "beforeSubmitPrompt", root, home, prompt=DIRTY), root))
    run = payload("windsurf", "post_run_command", root, home)
    run["tool_info"]["command_line"] = "printf '\x00\x07' > out.bin && cat src/db.py\ufffd"
    output(run_host("windsurf", "post-tool", run, root))
    output(run_host("windsurf", "stop", payload("windsurf", "post_cascade_response", root, home), root))
    output(run_host("cursor", "stop", payload("cursor", "stop", root, home), root))
    assert_text_to_git(root)
    diary = diary_text(root)
    assert f"asked: {CLEAN}" in diary and "commands: printf ' ' > out.bin && cat src/db.py" in diary


def test_a_lone_surrogate_in_a_prompt_costs_the_prompt_nothing(root: Path, home: Path) -> None:
    """JSON can carry `\\ud800`, which is no character: the journal keeps the prompt, the diary records it."""
    data = json.dumps(payload("cursor", "beforeSubmitPrompt", root, home)).replace(
        "fix the retry", "fix the \\ud800 retry")
    output(run_host("cursor", "user-prompt", data, root))
    output(run_host("cursor", "stop", payload("cursor", "stop", root, home), root))
    diary = diary_text(root)
    assert "asked: fix the ? retry in src/db.py" in diary and "skipped" not in diary


def test_claude_transcript_with_control_bytes_leaves_a_text_diary(root: Path) -> None:
    transcript = root / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": DIRTY}},
             {"type": "assistant", "cwd": str(root), "message": {"role": "assistant", "content": [
                 {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "grep -c \x00 src/db.py"}}]}}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = run_hook("stop", base(root, "Stop", stop_hook_active=False), root)
    assert result.returncode == 0, result.stderr
    assert_text_to_git(root)
    assert f"asked: {CLEAN}" in diary_text(root)


SESSION_CONTEXT = ("<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
                   "Today's date is Saturday, November 28, 2026 (formatted according to the user's locale).\n"
                   "My operating system is: linux\n- **Workspace Directories:**\n  - {root}\n"
                   "- **Directory Structure:**\n\n{root}/\n└───src/\n    └───db.py\n</session_context>")


@pytest.mark.parametrize("first", [
    SESSION_CONTEXT + "\n\nfix the retry in src/db.py",  # prepended to the first prompt, in one text
    SESSION_CONTEXT.replace("<session_context>\n", "").replace("</session_context>", ""),  # untagged, alone
])
def test_gemini_session_context_is_never_recorded_as_asked(root: Path, home: Path, first: str) -> None:
    stop = payload("gemini", "AfterAgent", root, home)
    chat = [{"sessionId": "a7b8e3ee", "projectHash": "p", "startTime": "2026-11-28T05:41:18.130Z", "kind": "main"},
            {"id": "u0", "type": "user", "content": [{"text": first.format(root=root)}]},
            {"id": "u1", "type": "user", "content": [{"text": "then run the tests"}]},
            {"id": "g1", "type": "gemini", "content": "", "toolCalls": [
                {"id": "c1", "name": "run_shell_command", "args": {"command": "head -2 src/db.py"},
                 "status": "success", "resultDisplay": "import os"}]}]
    path = Path(stop["transcript_path"])
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in chat), encoding="utf-8")
    output(run_host("gemini", "stop", stop, root))
    diary = diary_text(root)
    assert "Workspace Directories" not in diary and "This is the Gemini CLI" not in diary
    assert "then run the tests" in diary and "commands: head -2 src/db.py" in diary
    if "\n\nfix the retry" in first:
        assert "asked: fix the retry in src/db.py; then: then run the tests" in diary


def test_gemini_before_agent_prompt_loses_the_session_context(root: Path, home: Path) -> None:
    """The prompt BeforeAgent sees, with the session context in front, recalls what the user's own words ask."""
    prompt = SESSION_CONTEXT.format(root=root) + "\n\nfix the retry in src/db.py"
    data = payload("gemini", "BeforeAgent", root, home, prompt=prompt)
    out = output(run_host("gemini", "user-prompt", data, root))
    assert "gotcha/db-retries" in out["hookSpecificOutput"]["additionalContext"]
