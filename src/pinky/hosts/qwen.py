"""Qwen Code: hooks and MCP servers in `settings.json` on Claude Code's model, and a chat file for a transcript.

Measured with Qwen Code 0.24.4 offline (`qwen -p`, tests/hosts/test_qwen_e2e.py; payloads in tests/fixtures/qwen/).
Its hooks send Claude Code's keys (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `prompt`, `tool_name`,
`tool_input`, `stop_hook_active`) and read Claude Code's output: `hookSpecificOutput.additionalContext` of
SessionStart (into the system prompt), UserPromptSubmit (into the user turn) and PostToolUse (after the tool's
result) reaches the model, PreToolUse's does not; PreToolUse's `permissionDecision: "deny"` refuses the call with
the reason as the tool's error; Stop's `{"decision": "block", "reason": ...}` continues with the reason as the next
prompt. UserPromptSubmit fires again after every tool batch with an empty prompt (pinky answers nothing then).

MCP tools are deferred: the first request names them (`mcp__pinky__brain_save`) for its `tool_search` tool, and
the model calls one through `tool_call` once it has read the schema. Headless, an MCP call is declined unless the
server is trusted (`"trust": true`, which setup writes for pinky's own server).

The chat file is `~/.qwen/projects/<cwd, every character but a letter or digit as ->/chats/<session id>.jsonl`
(`QWEN_RUNTIME_DIR` or `QWEN_HOME` move the `~/.qwen` part): one record per line, each with `sessionId`, `cwd` and
`type` user (`message.parts`: the prompt as typed, then hook context in `<qwen:...-context>` tags;
`systemPayload.displayText`: the prompt alone), assistant (`message.parts[].functionCall`: `id`, `name`, `args`; an
MCP call is `tool_call` with `args.name` and `args.arguments`), tool_result (`functionResponse` and
`toolCallResult.status`) or system.
"""

from __future__ import annotations

import os

from pinky.hosts.host import Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from pinky.hosts.host import Translate

QWEN_MEASURED = "observed with Qwen Code 0.24.4 offline (tests/hosts/test_qwen_e2e.py)"
QWEN_BUNDLE = "read in Qwen Code 0.24.4's bundle (@qwen-code/qwen-code on npm: its settings schema and hook runner)"
QWEN_MEMORY_DOCS = "https://qwenlm.github.io/qwen-code-docs/en/users/features/memory/"
QWEN_HOOKS_DOCS = "https://qwenlm.github.io/qwen-code-docs/en/users/features/hooks/"
READS = ("read_file", "read_many_files")
WRITES = ("write_file", "edit")
BRIDGE = ("tool_search", "tool_call")  # its loader and caller of deferred tools: not steps of their own


class Qwen(Host):
    name, display, command = "qwen", "Qwen Code", "qwen"
    sources = (QWEN_MEASURED, QWEN_BUNDLE, QWEN_HOOKS_DOCS, QWEN_MEMORY_DOCS)
    hooks = (Hook("SessionStart", "session-start", "startup|resume|clear|compact"),
             Hook("UserPromptSubmit", "user-prompt"),
             Hook("PreToolUse", "pre-write", "write_file|edit"),
             Hook("PostToolUse", "post-tool", "read_file|read_many_files|write_file|edit|run_shell_command"),
             Hook("Stop", "stop"),
             Hook("PreCompact", "pre-compact"))
    mcp_user, mcp_project = "~/.qwen/settings.json", ".qwen/settings.json"
    hooks_user, hooks_project = "~/.qwen/settings.json", ".qwen/settings.json"
    home_env = ("QWEN_HOME", "~/.qwen/")
    instructions = "QWEN.md"
    read_tools, write_tools, shell_tools = READS, WRITES, ("run_shell_command",)
    transcript = "~/.qwen/projects/<cwd with non-alphanumerics as ->/chats/<session_id>.jsonl"
    limits = (
        Limit("PreToolUse's additionalContext does not reach the model (its deny does): a file's notes, and the "
              "gotchas linked to a file being changed, arrive with PostToolUse, after the tool ran", QWEN_MEASURED),
        Limit("MCP tools are deferred (named for its tool_search, called through tool_call), and a headless session "
              "declines a call to an untrusted server: setup writes `\"trust\": true` on pinky's entry, which also "
              "lets the interactive CLI run brain_delete without asking", QWEN_MEASURED),
        Limit("SessionEnd did not fire in a headless (-p) session: the diary is written at Stop", QWEN_MEASURED),
        Limit("compaction (PreCompact) is seen only where it runs: `/compress`, or automatically near the context "
              "limit; its additionalContext becomes extra instructions for the summary", QWEN_BUNDLE),
        Limit("project settings (.qwen/settings.json) and their hooks ran in a folder it had never seen, with no "
              "trust step; its security.folderTrust.enabled setting (off by default) adds one (not measured)",
              QWEN_MEASURED),
        Limit("its own memory stays its own: QWEN.md (and AGENTS.md, which it also reads) hold instructions that "
              "pinky's guard keeps evergreen; auto-memory (~/.qwen/projects/<project>/memory/) and the opt-in team "
              "memory (`.qwen/team-memory/`, memory.enableTeamMemory, git-tracked) are notes Qwen Code writes "
              "itself from the conversation, which pinky neither reads nor writes: pinky's notes live in "
              "documentation/ and reach Qwen Code through the digest, the recall and brain_search",
              QWEN_MEMORY_DOCS),
        Limit("a session kept elsewhere by the advanced.runtimeOutputDir setting is not found by import-sessions "
              "(QWEN_RUNTIME_DIR and QWEN_HOME are)", QWEN_BUNDLE),
    )

    def handles(self, event: str, payload: dict) -> bool:
        # UserPromptSubmit comes again after every tool batch, its prompt empty: no recall for that
        return event != "user-prompt" or bool(str(payload.get("prompt") or "").strip())

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args, "trust": True}

    def translator(self, cwd: str | None = None) -> Translate | None:
        return ChatFile(cwd)

    def session_files(self, home: str) -> list[Path]:
        from pathlib import Path

        base = os.environ.get("QWEN_RUNTIME_DIR") or os.environ.get("QWEN_HOME") or os.path.join(home, ".qwen")
        return sorted((Path(base) / "projects").glob("*/chats/*.jsonl"))

    def head_done(self, event: dict) -> bool:
        return isinstance(event.get("cwd"), str) and isinstance(event.get("sessionId"), str)

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        for event in events:
            if isinstance(event.get("cwd"), str) and isinstance(event.get("sessionId"), str):
                return PastSession(self.name, path, f"qwen:{event['sessionId']}", event["cwd"], size,
                                   display=self.display, source=self)
        return None


class ChatFile:
    """Qwen Code's chat records as Claude-shaped events."""

    def __init__(self, cwd: str | None) -> None:
        from pinky.capture import foreign  # json and the shell-line parser: never on a hook's fast path

        self.f, self.cwd = foreign, cwd

    def __call__(self, line: dict) -> list[dict]:
        if isinstance(line.get("cwd"), str):
            self.cwd = line["cwd"]
        message = line.get("message")
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(parts, list):
            return []
        kind = line.get("type")
        if kind == "user":
            return self._prompt(line, parts)
        if kind == "assistant":
            calls = [p["functionCall"] for p in parts if isinstance(p, dict) and isinstance(p.get("functionCall"),
                                                                                             dict)]
            return [event for call in calls for event in self._call(call)]
        if kind == "tool_result":
            return self._results(line, parts)
        return []

    def _prompt(self, line: dict, parts: list) -> list[dict]:
        shown = line.get("systemPayload")
        typed = shown.get("displayText") if isinstance(shown, dict) else None
        texts = [typed] if isinstance(typed, str) else [p.get("text") for p in parts if isinstance(p, dict)]
        prompts = [t for t in (self.f.typed(text) for text in texts) if t]
        return [self.f.user_event(" ".join(prompts))] if prompts else []

    def _call(self, call: dict) -> list[dict]:
        f = self.f
        name, args, call_id = str(call.get("name") or ""), f.arguments(call.get("args")), call.get("id")
        if name == BRIDGE[1] and isinstance(args.get("name"), str):  # tool_call: the deferred tool it calls
            name, args = args["name"], f.arguments(args.get("arguments"))
        if not name or name == BRIDGE[0]:
            return []
        if name == "run_shell_command" and isinstance(args.get("command"), str):
            return f.shell_events(self.cwd, call_id, args["command"])
        path = args.get("file_path")
        if name in WRITES and isinstance(path, str):
            return [f.tool_event(self.cwd, call_id, "Edit", {"file_path": f.absolute(path, self.cwd)})]
        if name == READS[0] and isinstance(path, str):
            return [f.tool_event(self.cwd, call_id, "Read", {"file_path": f.absolute(path, self.cwd)})]
        return [f.tool_event(self.cwd, call_id, name, args)]

    def _results(self, line: dict, parts: list) -> list[dict]:
        status = line.get("toolCallResult")
        failed = isinstance(status, dict) and status.get("status") == "error"
        events = []
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and response.get("name") != BRIDGE[0]:
                body = response.get("response")
                text = str((body.get("output", body.get("error")) if isinstance(body, dict) else body) or "")
                if response.get("name") == BRIDGE[1]:
                    text = _answer(text)
                events.append(self.f.result_event(response.get("id"), text, failed))
        return events


def _answer(text: str) -> str:
    """An MCP tool's result as Qwen Code records it, its content parts joined by lines: pinky-mcp's structured
    JSON first, then its sentence (`Saved gotcha/x → documentation/gotcha/x.md, …`), which the diary reads."""
    if not text.startswith("{"):
        return text
    import json

    try:
        end = json.JSONDecoder().raw_decode(text)[1]
    except ValueError:
        return text
    return text[end:].strip() or text


HOST = Qwen()
