"""Other hosts' transcripts, read as Claude Code events so the one summariser, checkpoint and capture read them all.

Codex CLI writes a session "rollout" JSONL under `$CODEX_HOME/sessions/YYYY/MM/DD/`: `session_meta` and
`turn_context` lines carry the cwd; `response_item` lines carry the conversation: a `message` (role user: the
prompt, or context Codex adds itself, wrapped in `<tags>`), a `function_call` (`exec_command` with `cmd`, `shell`
with a `command` list, an MCP tool with its `namespace`), a `custom_tool_call` (`apply_patch` with the patch as
`input`) and their outputs. Gemini CLI writes a chat recording JSONL under `~/.gemini/tmp/<project>/chats/`: a
header line, then one message per line (`type` user or gemini; a gemini message lists its `toolCalls` with `name`,
`args` and `status`). Copilot CLI writes session events (see _Copilot). These formats are internal to their
host, so reading is as lenient as for Claude Code's.

`translator(host)` returns a function from one parsed line to the Claude-shaped events it stands for: a user
prompt `{"type": "user", "message": {"content": text}}`, tool calls `{"type": "assistant", "cwd": ..., "message":
{"content": [{"type": "tool_use", "id", "name", "input"}]}}` with the names the summariser knows (`Bash` with
`command`, `Edit` with `file_path`, `mcp__<server>__<tool>`), and tool results. Stdlib only.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pinky.base.shellpaths import command_paths, patch_paths, without_hook_context

Translate = Callable[[dict], list[dict]]
# How pinky's capture ask (pinky.hooks.learned) opens: hosts that continue the agent with it as a new user message
# (Gemini CLI, Cursor, OpenCode) record it as a prompt, which the diary must not list as something the user asked.
ASK_OPENING = "pinky: this turn looks like it taught something worth keeping"
SHELL_CALLS = ("exec_command", "shell", "local_shell", "container.exec", "unified_exec", "run_shell_command")


def user_event(text: str) -> dict:
    return {"type": "user", "message": {"content": text}}


def tool_event(cwd: str | None, call_id: object, name: str, tool_input: dict) -> dict:
    return {"type": "assistant", "cwd": cwd,
            "message": {"content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]}}


def result_event(call_id: object, text: str, failed: bool) -> dict:
    return {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": call_id,
                                                     "content": text, "is_error": failed}]}}


def _typed(text: object) -> str | None:
    """A prompt the user typed; None for the context a host wraps in tags (`<environment_context>`) or files."""
    if not isinstance(text, str) or not text.strip():
        return None
    stripped = without_hook_context(text)
    if not stripped or stripped.startswith(ASK_OPENING) or "<hook_prompt" in stripped[:20]:
        return None
    if stripped.startswith("<") and stripped.endswith(">") or stripped.startswith("# AGENTS.md instructions"):
        return None
    return stripped


def shell_events(cwd: str | None, call_id: object, command: str) -> list[dict]:
    """A shell command as Bash, and each file it changes (apply_patch, sed -i, `>`) as an Edit of that file."""
    events = [tool_event(cwd, call_id, "Bash", {"command": command})]
    for index, path in enumerate(command_paths(command)[1]):
        events.append(tool_event(cwd, f"{call_id}:{index}", "Edit", {"file_path": _absolute(path, cwd)}))
    return events


def _absolute(path: str, cwd: str | None) -> str:
    if cwd and not path.startswith(("/", "~")) and not path[1:3] == ":\\\\":
        return cwd.rstrip("/") + "/" + path
    return path


def _arguments(value: object) -> dict:
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def mcp_name(server: str, tool: str) -> str:
    """One spelling of an MCP tool for every host: Claude Code's `mcp__<server>__<tool>`."""
    return f"mcp__{server}__{tool}"


# --- Codex CLI ----------------------------------------------------------------------------------


class _Codex:
    def __init__(self) -> None:
        self.cwd: str | None = None

    def __call__(self, line: dict) -> list[dict]:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            return []
        if kind in ("session_meta", "turn_context") and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
            return []
        if kind != "response_item":
            return []
        return self._item(payload)

    def _item(self, item: dict) -> list[dict]:
        kind, call_id = item.get("type"), item.get("call_id")
        if kind == "message" and item.get("role") == "user":
            texts = [c.get("text") for c in item.get("content") or [] if isinstance(c, dict)]
            prompts = [t for t in (_typed(text) for text in texts) if t]
            return [user_event(" ".join(prompts))] if prompts else []
        if kind == "function_call":
            return self._call(item, call_id)
        if kind == "custom_tool_call" and item.get("name") == "apply_patch":
            patch = str(item.get("input") or "")
            return [tool_event(self.cwd, f"{call_id}:{n}", "Edit", {"file_path": _absolute(p, self.cwd)})
                    for n, p in enumerate(patch_paths(patch))]
        if kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            failed = "Process exited with code " in text and "Process exited with code 0" not in text
            return [result_event(call_id, text, failed)]
        return []

    def _call(self, item: dict, call_id: object) -> list[dict]:
        name, args = str(item.get("name") or ""), _arguments(item.get("arguments"))
        namespace = item.get("namespace")
        if isinstance(namespace, str) and namespace.startswith("mcp__"):
            return [tool_event(self.cwd, call_id, mcp_name(namespace[5:].rstrip("_"), name), args)]
        if name in SHELL_CALLS:
            command = args.get("cmd", args.get("command"))
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            return shell_events(self.cwd, call_id, command) if isinstance(command, str) and command.strip() else []
        if name == "apply_patch":
            patch = str(args.get("input") or args.get("patch") or "")
            return [tool_event(self.cwd, f"{call_id}:{n}", "Edit", {"file_path": _absolute(p, self.cwd)})
                    for n, p in enumerate(patch_paths(patch))]
        return [tool_event(self.cwd, call_id, name, args)] if name else []


# --- Gemini CLI ---------------------------------------------------------------------------------

GEMINI_WRITES = {"write_file": "file_path", "replace": "file_path", "edit": "file_path"}


class _Gemini:
    def __init__(self) -> None:
        self.cwd: str | None = None
        self.calls: set[str] = set()  # a message is written again as its tool calls complete: each call once

    def __call__(self, line: dict) -> list[dict]:
        if "$set" in line or "sessionId" in line and "type" not in line:
            return []
        kind = line.get("type")
        if kind == "user":
            texts = [c.get("text") for c in line.get("content") or [] if isinstance(c, dict)] \
                if isinstance(line.get("content"), list) else [line.get("content")]
            if self.cwd is None:
                self.cwd = _workspace(texts)
            prompts = [t for t in (_typed(text) for text in texts) if t]
            return [user_event(" ".join(prompts))] if prompts else []
        if kind != "gemini":
            return []
        events: list[dict] = []
        for call in line.get("toolCalls") or []:
            if isinstance(call, dict) and isinstance(call.get("name"), str) and call.get("id") not in self.calls:
                self.calls.add(str(call.get("id")))
                events += self._call(call)
        return events

    def _call(self, call: dict) -> list[dict]:
        name, args, call_id = call["name"], _arguments(call.get("args")), call.get("id")
        failed = call.get("status") == "error"
        if name == "run_shell_command" and isinstance(args.get("command"), str):
            events = shell_events(self.cwd, call_id, args["command"])
        elif name in GEMINI_WRITES and isinstance(args.get(GEMINI_WRITES[name]), str):
            events = [tool_event(self.cwd, call_id, "Edit", {"file_path": args[GEMINI_WRITES[name]]})]
        elif name.startswith("mcp_") and "_" in name[4:]:
            server, tool = name[4:].split("_", 1)
            events = [tool_event(self.cwd, call_id, mcp_name(server, tool), args)]
        else:
            events = [tool_event(self.cwd, call_id, name, args)]
        return events + [result_event(e["message"]["content"][0]["id"], str(call.get("resultDisplay") or ""), failed)
                         for e in events]


def _workspace(texts: list) -> str | None:
    """The first workspace directory Gemini CLI lists in the context it sends first (its chat has no cwd field)."""
    for text in texts:
        if isinstance(text, str) and "Workspace Directories:" in text:
            for line in text.split("Workspace Directories:", 1)[1].splitlines()[1:4]:
                line = line.strip()
                if line.startswith("- /"):
                    return line[2:].strip()
    return None


# --- Copilot CLI --------------------------------------------------------------------------------

COPILOT_FILES = {"view": "Read", "create": "Edit", "edit": "Edit"}


class _Copilot:
    """Copilot CLI's session events, `~/.copilot/session-state/<id>/events.jsonl` (1.0.102): `session.start` (its
    `context.cwd`), `user.message` (`content`: what was typed; `transformedContent` adds hook context),
    `assistant.message` (`toolRequests`: `toolCallId`, `name`, `arguments`, and `mcpServerName`/`mcpToolName` for an
    MCP tool) and `tool.execution_complete` (`toolCallId`, `success`, `result.content`)."""

    def __init__(self) -> None:
        self.cwd: str | None = None

    def __call__(self, line: dict) -> list[dict]:
        kind, data = line.get("type"), line.get("data")
        if not isinstance(data, dict):
            return []
        if kind == "session.start":
            context = data.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str):
                self.cwd = context["cwd"]
            return []
        if kind == "user.message":
            prompt = _typed(data.get("content"))
            return [user_event(prompt)] if prompt else []
        if kind == "assistant.message":
            return [e for call in data.get("toolRequests") or [] if isinstance(call, dict) for e in self._call(call)]
        if kind == "tool.execution_complete":
            result = data.get("result")
            text = result.get("content") if isinstance(result, dict) else result
            return [result_event(data.get("toolCallId"), str(text or ""), data.get("success") is False)]
        return []

    def _call(self, call: dict) -> list[dict]:
        name, args, call_id = str(call.get("name") or ""), _arguments(call.get("arguments")), call.get("toolCallId")
        server, tool = call.get("mcpServerName"), call.get("mcpToolName")
        if isinstance(server, str) and isinstance(tool, str):
            return [tool_event(self.cwd, call_id, mcp_name(server, tool), args)]
        if name == "bash" and isinstance(args.get("command"), str):
            return shell_events(self.cwd, call_id, args["command"])
        if name in COPILOT_FILES and isinstance(args.get("path"), str):
            path = _absolute(args["path"], self.cwd)
            return [tool_event(self.cwd, call_id, COPILOT_FILES[name], {"file_path": path})]
        return [tool_event(self.cwd, call_id, name, args)] if name else []


def translator(host: str, cwd: str | None = None) -> Translate | None:
    """A fresh line -> Claude-shaped events reader for `host`'s transcript; None for Claude Code's own."""
    readers: dict[str, type[_Codex | _Gemini | _Copilot]] = {"codex": _Codex, "gemini": _Gemini, "copilot": _Copilot}
    reader = readers[host]() if host in readers else None
    if reader is not None:
        reader.cwd = cwd
    return reader
