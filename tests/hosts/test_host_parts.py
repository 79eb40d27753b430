"""The host layer's parts on their own: file paths out of shell commands and patches, the Codex and Gemini transcript
readers on the recorded transcripts, the rules file, the catalog's naming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from host_fixtures import FIXTURES, filled

from pinky.base.shellpaths import command_paths, patch_paths, without_hook_context
from pinky.capture.transcript import summarize
from pinky.hosts.catalog import HOOK_EVENTS, HOSTS, all_hosts, host, named, names
from pinky.hosts.rules import BEGIN, END, MAX_CHARS, remove_rules, write_rules


@pytest.mark.parametrize(("command", "read", "changed"), [
    ("cat src/db.py", ["src/db.py"], []),
    ("sed -n '1,20p' src/a.py src/b.py | head -5", ["src/a.py", "src/b.py"], []),
    ("FOO=1 head -n 5 README.md && grep -n 'retry loop' src/db.py > out.txt", ["README.md", "src/db.py"], ["out.txt"]),
    ("sed -i s/a/b/ x.py; vim 'my file.py'", [], ["x.py", "my file.py"]),
    ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/db.py\n@@\n-cat secret.txt\n+b\n"
     "*** Add File: docs/new.md\n+hi\n*** End Patch\nEOF\n", [], ["src/db.py", "docs/new.md"]),
    ("ls -la && git status", [], []),
])
def test_files_a_shell_command_reads_and_changes(command: str, read: list[str], changed: list[str]) -> None:
    assert command_paths(command) == (read, changed)


def test_patch_paths_follow_moves() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** Delete File: c.py\n"
    assert patch_paths(patch) == ["a.py", "b.py", "c.py"]


def test_a_hosts_context_wrapped_into_the_prompt_is_not_the_prompt() -> None:
    assert without_hook_context("<hook_context>digest</hook_context>\n\nfix it") == "fix it"
    assert without_hook_context("fix <hook_context>x") == "fix"


def _events(host_name: str, name: str) -> list[dict]:
    read = host(host_name).translator("/p")
    assert read is not None
    text = filled((FIXTURES / host_name / name).read_text(encoding="utf-8"), Path("/p"), Path("/h"))
    return [event for line in text.splitlines() if line.strip() for event in read(json.loads(line))]


def test_the_codex_rollout_reads_as_prompts_files_commands_and_the_save() -> None:
    summary = summarize(_events("codex", "rollout.jsonl"))
    assert summary.prompts == ("fix the retry in src/db.py",)  # not Codex's <environment_context>
    assert summary.files == ("src/db.py",)  # patched through the shell
    assert summary.commands == ("cat src/db.py", "apply_patch <<'EOF'")
    assert ("brain_save", 1) in summary.tools  # by the name a reader knows
    assert summary.learned == ("saved gotcha/retries-need-jitter “Retries need jitter” "
                               "(documentation/gotcha/retries-need-jitter.md)",)


def test_the_gemini_chat_recording_reads_each_tool_call_once() -> None:
    summary = summarize(_events("gemini", "chat.jsonl"))
    assert summary.prompts == ("fix the retry in src/db.py",)  # not the <session_context>
    assert summary.files == ("src/db.py",) and summary.commands == ("head -2 src/db.py",)
    # read_file failed (Gemini's own argument error): a call that did nothing is left out
    assert dict(summary.tools) == {"Bash": 1, "Edit": 1, "brain_save": 1}
    assert summary.learned and summary.learned[0].startswith("saved gotcha/retries-need-jitter")


def test_claude_code_transcripts_need_no_translator() -> None:
    assert host("claude").translator() is None


def test_the_rules_file_is_capped_redacted_and_rewritten_only_when_it_changes(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = write_rules(str(tmp_path), host("cursor"), f"pinky brain: token {token}\n" + "x" * 5000)
    assert path is not None
    text = Path(path).read_text(encoding="utf-8")
    assert token not in text and "[REDACTED" in text
    assert len(text.split("---\n", 2)[2]) <= MAX_CHARS + 1
    assert write_rules(str(tmp_path), host("cursor"), f"pinky brain: token {token}\n" + "x" * 5000) is None


def test_the_agents_md_block_is_replaced_whole_and_removed_cleanly(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Mine\n\nKeep this.\n", encoding="utf-8")
    copilot = host("copilot")
    write_rules(str(tmp_path), copilot, "first digest")
    write_rules(str(tmp_path), copilot, "second digest")
    text = agents.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and "second digest" in text and "first" not in text
    remove_rules(str(tmp_path), copilot)
    assert agents.read_text(encoding="utf-8") == "# Mine\n\nKeep this.\n"


def test_every_host_is_declared_with_sources_and_pinky_events() -> None:
    assert names() == HOSTS and [found.name for found in all_hosts()] == list(HOSTS)
    for found in all_hosts():
        assert found.hooks and all(h.pinky in HOOK_EVENTS for h in found.hooks)
        assert all(limit.source for limit in found.limits)
        assert found.context != "rules" or found.rules_file
    with pytest.raises(ValueError, match="unknown host 'vim'"):
        host("vim")


def test_tool_names_are_spelled_as_each_host_calls_them() -> None:
    text = "brain_search first; brain_save after; brain_get <slug>"
    assert named(text, host("gemini")) == ("mcp_pinky_brain_search first; mcp_pinky_brain_save after; "
                                           "mcp_pinky_brain_get <slug>")
    assert named(text, host("codex")).count("mcp__pinky__") == 3
    assert named(text, host("cursor")) == text


def test_the_capture_ask_a_host_sends_back_as_a_prompt_is_not_an_ask_of_the_user() -> None:
    from pinky.capture.foreign import ASK_OPENING

    read = host("gemini").translator("/p")
    assert read is not None
    events = read({"type": "user", "content": [{"text": "fix the retry"}]})
    events += read({"type": "user", "content": [{"text": f"{ASK_OPENING}: a failing test was fixed. Save it."}]})
    assert summarize(events).prompts == ("fix the retry",)


def test_a_marker_line_left_alone_by_hand_is_never_taken_for_the_block() -> None:
    from pinky.hosts.rules import replace_block, without_block

    for mine in (f"# Mine\n{END}\nkeep\n", f"# Mine\n{BEGIN}\nkeep\n"):
        text = mine
        for n in range(3):
            text = replace_block(text, f"digest {n}\n")
        assert text.startswith(mine) and text.count(f"{BEGIN}\n") == 1 + mine.count(BEGIN)
        assert "digest 2" in text and "digest 1" not in text
        assert without_block(text) == mine
    crlf = "# Mine\r\n\r\nKeep this.\r\n"
    assert replace_block(crlf, "d\n") == crlf + f"\r\n{BEGIN}\r\nd\r\n{END}\r\n"
    assert without_block(replace_block(crlf, "d\n")) == crlf
