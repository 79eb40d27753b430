"""`pinky-hooks --host <host> <event>` driven by the payloads each host sends: recorded from the real Codex CLI 0.169.0
and Gemini CLI 0.61.0 offline, and as Cursor's, Copilot CLI's, Windsurf's and pinky's OpenCode plugin's docs give them
(tests/fixtures/<host>/README.md names each source)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hook_helpers import HOOKS, base, hook_env, run_hook, tool
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


# --- Codex CLI ---------------------------------------------------------------------------------------


def test_codex_session_start_shows_the_digest_with_names_codex_can_call(root: Path, home: Path) -> None:
    digest = context(run_host("codex", "session-start", payload("codex", "SessionStart", root, home), root),
                     "SessionStart")
    assert "DB retries need jitter" in digest
    assert "mcp__pinky__brain_search" in digest and "mcp__pinky__brain_save" in digest
    assert "mcp__plugin_" not in digest


def test_codex_prompt_recalls_the_note_the_prompt_is_about(root: Path, home: Path) -> None:
    text = context(run_host("codex", "user-prompt", payload("codex", "UserPromptSubmit", root, home), root),
                   "UserPromptSubmit")
    assert "gotcha/db-retries" in text and "mcp__pinky__brain_get" in text


def test_codex_shell_read_brings_the_notes_linked_to_the_file_it_reads(root: Path, home: Path) -> None:
    text = context(run_host("codex", "pre-read", payload("codex", "PreToolUse-shell", root, home), root),
                   "PreToolUse")
    assert "linked to src/db.py" in text and "gotcha/db-retries" in text
    other = payload("codex", "PreToolUse-shell", root, home, tool_input={"command": "cat src/other.py"})
    assert output(run_host("codex", "pre-read", other, root)) == {}


def test_codex_apply_patch_through_the_shell_brings_the_gotchas_before_the_change(root: Path, home: Path) -> None:
    text = context(run_host("codex", "pre-read", payload("codex", "PreToolUse-apply_patch", root, home), root),
                   "PreToolUse")
    assert "before changing src/db.py" in text and "add it before touching the retry loop" in text


def test_codex_patch_adding_stale_facts_to_agents_md_is_denied(root: Path, home: Path) -> None:
    patch = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: AGENTS.md\n@@\n # Agents\n"
             "+The suite has 1,234 tests as of 2026-11-28 (commit 3f9a2c1e).\n*** End Patch\nEOF\n")
    data = payload("codex", "PreToolUse-apply_patch", root, home, tool_input={"command": patch})
    out = output(run_host("codex", "pre-read", data, root))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "AGENTS.md must stay evergreen" in out["permissionDecisionReason"]
    plain = patch.replace("The suite has 1,234 tests as of 2026-11-28 (commit 3f9a2c1e).", "Keep the docs short.")
    assert "permissionDecision" not in json.dumps(output(run_host(
        "codex", "pre-read", {**data, "tool_input": {"command": plain}}, root)))


def test_codex_stop_writes_the_diary_from_the_rollout_naming_codex(root: Path, home: Path) -> None:
    stop = payload("codex", "Stop", root, home)
    transcript("codex", "rollout.jsonl", root, home, stop["transcript_path"])
    assert output(run_host("codex", "stop", stop, root)) == {}  # the session saved: no capture ask
    diary = diary_text(root)
    tag = short_session(f"codex:{stop['session_id']}")
    assert f"[{tag}] asked: fix the retry in src/db.py" in diary and tag.startswith("codex-")
    assert f"[{tag}] files: src/db.py" in diary
    assert "commands: cat src/db.py; apply_patch" in diary
    assert "brain_save×1" in diary and "learned: saved gotcha/retries-need-jitter" in diary
    run_host("codex", "stop", stop, root)
    assert diary_text(root) == diary  # read from the stored offset: nothing twice


def test_codex_stop_asks_once_for_a_save_in_codex_s_own_shape(root: Path, home: Path) -> None:
    stop = payload("codex", "Stop", root, home)
    lines = [{"type": "session_meta", "payload": {"cwd": str(root)}},
             {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "the db tests fail, fix them"}]}}]
    for n, (cmd, code) in enumerate([("pytest tests/test_db.py", 1), ("sed -i s/1/2/ src/db.py", 0),
                                     ("pytest tests/test_db.py", 0)]):
        lines += [{"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                        "arguments": json.dumps({"cmd": cmd}), "call_id": f"c{n}"}},
                  {"type": "response_item", "payload": {
                      "type": "function_call_output", "call_id": f"c{n}",
                      "output": f"Process exited with code {code}\nOutput:\n" + ("E   AssertionError: retry count"
                                                                               if code else "1 passed")}}]
    path = Path(stop["transcript_path"])
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = output(run_host("codex", "stop", stop, root))
    assert out["decision"] == "block" and "mcp__pinky__brain_save" in out["reason"]
    assert output(run_host("codex", "stop", {**stop, "stop_hook_active": True}, root)) == {}


# --- Gemini CLI --------------------------------------------------------------------------------------


def test_gemini_session_start_and_prompt_speak_gemini_s_names(root: Path, home: Path) -> None:
    digest = context(run_host("gemini", "session-start", payload("gemini", "SessionStart", root, home), root),
                     "SessionStart")
    assert "DB retries need jitter" in digest and "mcp_pinky_brain_save" in digest
    # Gemini CLI puts SessionStart's context in front of the first prompt; BeforeAgent sees it as the prompt
    prompt = f"<hook_context>{digest}</hook_context>\n\nfix the retry in src/db.py"
    text = context(run_host("gemini", "user-prompt", payload("gemini", "BeforeAgent", root, home, prompt=prompt),
                            root), "BeforeAgent")
    assert "gotcha/db-retries" in text and "mcp_pinky_brain_get" in text


@pytest.mark.parametrize("name", ["AfterTool-shell", "AfterTool-replace"])
def test_gemini_after_tool_brings_the_notes_of_the_file_it_touched(root: Path, home: Path, name: str) -> None:
    text = context(run_host("gemini", "post-tool", payload("gemini", name, root, home), root), "AfterTool")
    assert "linked to src/db.py" in text and "gotcha/db-retries" in text


def test_gemini_write_adding_stale_facts_to_gemini_md_is_denied(root: Path, home: Path) -> None:
    data = payload("gemini", "BeforeTool-replace", root, home,
                   tool_input={"file_path": str(root / "GEMINI.md"), "old_string": "# Project",
                               "new_string": "# Project\nThe API has 37 endpoints, see line 212 of api.py."})
    out = output(run_host("gemini", "pre-write", data, root))
    assert out["decision"] == "deny" and "GEMINI.md must stay evergreen" in out["reason"]


def test_gemini_stop_writes_the_diary_from_the_chat_recording(root: Path, home: Path) -> None:
    stop = payload("gemini", "AfterAgent", root, home)
    transcript("gemini", "chat.jsonl", root, home, stop["transcript_path"])
    assert output(run_host("gemini", "stop", stop, root)) == {}
    diary = diary_text(root)
    tag = f"[{short_session('gemini:' + stop['session_id'])}]"
    assert f"{tag} asked: fix the retry in src/db.py" in diary
    assert f"{tag} files: src/db.py" in diary and f"{tag} commands: head -2 src/db.py" in diary


def test_gemini_automatic_precompress_before_every_request_writes_nothing(root: Path, home: Path) -> None:
    data = payload("gemini", "PreCompress", root, home)
    transcript("gemini", "chat.jsonl", root, home, data["transcript_path"])
    assert output(run_host("gemini", "pre-compact", data, root)) == {}
    assert diary_text(root) == ""
    output(run_host("gemini", "pre-compact", {**data, "trigger": "manual"}, root))
    assert "asked: fix the retry in src/db.py" in diary_text(root)


# --- hosts whose hooks cannot show the model anything: the rules file ------------------------------------


def test_cursor_session_start_keeps_an_always_applied_rules_file(root: Path, home: Path) -> None:
    result = run_host("cursor", "session-start", payload("cursor", "sessionStart", root, home), root)
    assert output(result) == {}
    rules = root / ".cursor" / "rules" / "pinky-brain.mdc"
    text = rules.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "alwaysApply: true" in text and "DB retries need jitter" in text
    assert "/.cursor/rules/pinky-brain.mdc" in (root / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    before = rules.stat().st_mtime_ns
    run_host("cursor", "session-start", payload("cursor", "sessionStart", root, home), root)
    assert rules.stat().st_mtime_ns == before  # nothing new: not rewritten


def test_cursor_prompt_and_read_hooks_answer_in_cursor_s_contract(root: Path, home: Path) -> None:
    assert output(run_host("cursor", "user-prompt", payload("cursor", "beforeSubmitPrompt", root, home), root)) \
        == {"continue": True}
    assert output(run_host("cursor", "pre-read", payload("cursor", "beforeReadFile", root, home), root)) \
        == {"permission": "allow"}


def test_cursor_stop_writes_the_diary_from_what_its_hooks_saw(root: Path, home: Path) -> None:
    for event, name in (("user-prompt", "beforeSubmitPrompt"), ("post-tool", "afterFileEdit")):
        run_host("cursor", event, payload("cursor", name, root, home), root)
    assert output(run_host("cursor", "stop", payload("cursor", "stop", root, home), root)) == {}
    diary = diary_text(root)
    tag = short_session("cursor:c0ffee00-1111-2222-3333-444455556666")
    assert f"[{tag}] asked: fix the retry in src/db.py" in diary and f"[{tag}] files: src/db.py" in diary


def test_copilot_hooks_show_the_digest_recall_and_notes_at_the_top_level(root: Path, home: Path) -> None:
    """Copilot CLI 1.0.102 reads a top-level additionalContext (measured: hookSpecificOutput's was not shown)."""
    agents = (root / "AGENTS.md").read_bytes()
    started = output(run_host("copilot", "session-start", payload("copilot", "sessionStart", root, home), root))
    assert "DB retries need jitter" in started["additionalContext"] and "hookSpecificOutput" not in started
    assert "pinky-brain_search" in started["additionalContext"]  # named as Copilot's model calls it
    assert (root / "AGENTS.md").read_bytes() == agents  # the digest reaches the model: no rules block
    recalled = output(run_host("copilot", "user-prompt", payload("copilot", "userPromptSubmitted", root, home), root))
    assert "gotcha/db-retries" in recalled["additionalContext"]
    noted = output(run_host("copilot", "post-tool", payload("copilot", "postToolUse", root, home), root))
    assert "linked to src/db.py" in noted["additionalContext"]


def test_copilot_agent_stop_writes_the_diary_from_its_session_events(root: Path, home: Path) -> None:
    stop = payload("copilot", "agentStop", root, home)
    transcript("copilot", "events.jsonl", root, home, stop["transcriptPath"])
    assert output(run_host("copilot", "stop", stop, root)) == {}
    diary = diary_text(root)
    assert "[copilot-" in diary and "asked: fix the retry in src/db.py" in diary
    assert "files: src/db.py" in diary and "commands: sed -i s/1/2/ src/db.py" in diary
    assert "pinky recall" not in diary  # the prompt as typed, not as Copilot passed it on


def test_copilot_agent_stop_waits_for_the_events_copilot_writes_behind(root: Path, home: Path) -> None:
    """Copilot CLI 1.0.102 had written only the first line of events.jsonl when a quick turn's agentStop ran."""
    import threading

    stop = payload("copilot", "agentStop", root, home)
    path = transcript("copilot", "events.jsonl", root, home, stop["transcriptPath"])
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0], encoding="utf-8")

    def write_behind() -> None:
        time.sleep(0.6)
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(lines[1:])

    writer = threading.Thread(target=write_behind)
    writer.start()
    assert output(run_host("copilot", "stop", stop, root)) == {}
    writer.join()
    assert "asked: fix the retry in src/db.py" in diary_text(root)


def test_copilot_pre_tool_denies_stale_facts_in_agents_md(root: Path, home: Path) -> None:
    args = {"path": "AGENTS.md", "old_str": "# Agents",
            "new_str": "# Agents\nThe suite has 1,234 tests as of 2026-11-28."}
    out = output(run_host("copilot", "pre-write", payload("copilot", "preToolUse", root, home,
                                                          toolArgs=json.dumps(args)), root))
    assert out["permissionDecision"] == "deny"
    assert "AGENTS.md must stay evergreen" in out["permissionDecisionReason"]


def test_windsurf_keeps_its_rules_file_and_diary(root: Path, home: Path) -> None:
    assert output(run_host("windsurf", "user-prompt", payload("windsurf", "pre_user_prompt", root, home), root)) == {}
    rules = (root / ".windsurf" / "rules" / "pinky-brain.md").read_text(encoding="utf-8")
    assert "trigger: always_on" in rules and "DB retries need jitter" in rules
    run_host("windsurf", "post-tool", payload("windsurf", "post_write_code", root, home), root)
    run_host("windsurf", "stop", payload("windsurf", "post_cascade_response", root, home), root)
    diary = diary_text(root)
    tag = short_session("windsurf:7a1e5c3d-0000-4444-8888-cccccccccccc")
    assert f"[{tag}] asked: fix the retry in src/db.py" in diary and "files: src/db.py" in diary


def test_opencode_plugin_payloads_get_context_back(root: Path, home: Path) -> None:
    text = context(run_host("opencode", "post-tool", payload("opencode", "tool.execute.after", root, home), root),
                   "tool.execute.after")
    assert "linked to src/db.py" in text and "pinky_brain_get" in text


# --- bad input, and the Claude Code path left alone --------------------------------------------------


def test_an_unknown_host_is_one_clear_line_and_the_action_proceeds(root: Path) -> None:
    result = run_host("vim", "stop", {"cwd": str(root)}, root)
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "unknown host 'vim'; use one of claude, codex" in result.stderr


def test_host_claude_is_the_claude_code_path_byte_for_byte(root: Path) -> None:
    data = tool(root, "Read", {"file_path": str(root / "src" / "db.py")})
    plain = run_hook("pre-read", data, root)
    hosted = run_host("claude", "pre-read", data, root)
    assert plain.returncode == hosted.returncode == 0 and plain.stdout == hosted.stdout and plain.stdout


def test_the_claude_code_hooks_never_import_the_host_layer(root: Path) -> None:
    probe = ("import sys; from pinky.hooks.dispatch import main; main(['pre-read']); "
             "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('pinky.hosts'))))")
    data = json.dumps(tool(root, "Read", {"file_path": str(root / "src" / "db.py")}))
    result = subprocess.run([sys.executable, "-c", probe], input=data, capture_output=True, text=True, cwd=root,
                            env=hook_env(root), timeout=60)
    assert "linked to src/db.py" in result.stdout and result.stderr.endswith("[]")
    assert HOOKS and base(root, "Stop")["cwd"] == str(root)


def test_codex_pre_compact_flushes_the_turn_into_the_diary(root: Path, home: Path) -> None:
    data = payload("codex", "Stop", root, home, hook_event_name="PreCompact", trigger="manual")
    transcript("codex", "rollout.jsonl", root, home, data["transcript_path"])
    assert output(run_host("codex", "pre-compact", data, root)) == {}
    assert "asked: fix the retry in src/db.py" in diary_text(root)


def test_what_a_codex_session_did_is_in_the_next_gemini_session_s_digest(root: Path, home: Path) -> None:
    run_host("gemini", "session-start", payload("gemini", "SessionStart", root, home), root)  # an earlier session
    stop = payload("codex", "Stop", root, home)
    transcript("codex", "rollout.jsonl", root, home, stop["transcript_path"])
    run_host("codex", "stop", stop, root)
    later = payload("gemini", "SessionStart", root, home, session_id="b0b0b0b0-0000-4000-8000-000000000000")
    digest = context(run_host("gemini", "session-start", later, root), "SessionStart")
    assert f"[{short_session('codex:' + stop['session_id'])}] asked: fix the retry in src/db.py" in digest


def test_cursor_without_a_session_start_gets_its_rules_file_from_the_first_prompt(root: Path, home: Path) -> None:
    run_host("cursor", "user-prompt", payload("cursor", "beforeSubmitPrompt", root, home), root)
    assert "alwaysApply: true" in (root / ".cursor" / "rules" / "pinky-brain.mdc").read_text(encoding="utf-8")
