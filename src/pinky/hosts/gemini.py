"""Gemini CLI: hooks and MCP servers in `settings.json`, Claude-shaped output with its own event names, a deny for
the capture ask, and a chat recording for a transcript.

The chat recording is a JSONL under `~/.gemini/tmp/<project>/chats/`: a header line (the session id and the sha256
of the project folder), then one message per line (`type` user or gemini; a gemini message lists its `toolCalls`
with `name`, `args` and `status`; a message is written again as its tool calls complete, or updated by a `$set`).
"""

from __future__ import annotations

from pinky.hosts.host import OBSERVED, Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from pinky.hosts.host import Translate

GEMINI_DOCS = "https://geminicli.com/docs/hooks/reference"
TIMEOUT_MS = 30_000  # Gemini CLI counts a hook's timeout in milliseconds
WRITES = {"write_file": "file_path", "replace": "file_path", "edit": "file_path"}


class Gemini(Host):
    name, display, command = "gemini", "Gemini CLI", "gemini"
    sources = (OBSERVED, GEMINI_DOCS)
    hooks = (Hook("SessionStart", "session-start", "startup|resume|clear"),
             Hook("BeforeAgent", "user-prompt"),
             Hook("BeforeTool", "pre-write", "write_file|replace"),
             Hook("AfterTool", "post-tool", "read_file|read_many_files|write_file|replace|run_shell_command"),
             Hook("AfterAgent", "stop"),
             Hook("PreCompress", "pre-compact"))
    tool_name = "mcp_{server}_{tool}"
    mcp_user, mcp_project = "~/.gemini/settings.json", ".gemini/settings.json"
    hooks_user, hooks_project = "~/.gemini/settings.json", ".gemini/settings.json"
    instructions = "GEMINI.md"
    read_tools, write_tools = ("read_file", "read_many_files"), ("write_file", "replace")
    shell_tools = ("run_shell_command",)
    transcript = "~/.gemini/tmp/<project>/chats/session-*.jsonl"
    limits = (Limit("BeforeTool output cannot carry context to the model (it can only block or rewrite the call): "
                    "file notes arrive with AfterTool, after the file was read", GEMINI_DOCS),)

    def deny_output(self, host_event: str, reason: str) -> dict:
        return {"decision": "deny", "reason": reason}

    def continue_output(self, reason: str) -> dict | None:
        return {"decision": "deny", "reason": reason}  # AfterAgent: deny = retry with the reason as the prompt

    def handles(self, event: str, payload: dict) -> bool:
        # Gemini CLI sends PreCompress "auto" before every model request, compressing or not
        return event != "pre-compact" or payload.get("trigger") == "manual"

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args}

    def hook_entry(self, hook: Hook, line: str) -> dict[str, Any]:
        one: dict[str, Any] = {"type": "command", "command": line, "timeout": TIMEOUT_MS}
        # Gemini CLI 0.61 ran no SessionStart hook under the "startup|resume|clear" matcher (the real-CLI test
        # tests/hosts/test_gemini_e2e.py saw no digest); without a matcher it runs at every start.
        matcher = None if hook.event == "SessionStart" else hook.matcher
        return {"matcher": matcher, "hooks": [one]} if matcher else {"hooks": [one]}

    def translator(self, cwd: str | None = None) -> Translate | None:
        return ChatRecording(cwd)

    def session_files(self, home: str) -> list[Path]:
        from pathlib import Path

        return sorted((Path(home) / ".gemini" / "tmp").glob("*/chats/*.jsonl"))

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        header = next((e for e in events if isinstance(e.get("sessionId"), str) and "type" not in e), None)
        if header is None:
            return None
        texts: list[object] = []
        for event in events:  # the context listing the workspace comes as a message, or inside a `$set` of them
            update = event.get("$set")
            listed = update.get("messages") if isinstance(update, dict) else None
            messages: list = listed if isinstance(listed, list) else [event]
            for message in messages:
                content = message.get("content") if isinstance(message, dict) and message.get("type") == "user" \
                    else None
                texts += [c.get("text") for c in content if isinstance(c, dict)] if isinstance(content, list) \
                    else [content]
        digest = header.get("projectHash") if isinstance(header.get("projectHash"), str) else None
        return PastSession(self.name, path, f"gemini:{header['sessionId']}", workspace(texts), size,
                           project_hash=digest, display=self.display, source=self)


def workspace(texts: list) -> str | None:
    """The first workspace directory Gemini CLI lists in the context it sends first (its chat has no cwd field)."""
    for text in texts:
        if isinstance(text, str) and "Workspace Directories:" in text:
            for line in text.split("Workspace Directories:", 1)[1].splitlines()[1:4]:
                line = line.strip()
                if line.startswith("- /"):
                    return line[2:].strip()
    return None


class ChatRecording:
    """Gemini CLI's chat recording lines as Claude-shaped events."""

    def __init__(self, cwd: str | None) -> None:
        from pinky.capture import foreign  # json and the shell-line parser: never on a hook's fast path

        self.f, self.cwd = foreign, cwd
        self.calls: set[str] = set()  # a message is written again as its tool calls complete: each call once

    def __call__(self, line: dict) -> list[dict]:
        if "$set" in line or "sessionId" in line and "type" not in line:
            return []
        kind = line.get("type")
        if kind == "user":
            texts = [c.get("text") for c in line.get("content") or [] if isinstance(c, dict)] \
                if isinstance(line.get("content"), list) else [line.get("content")]
            if self.cwd is None:
                self.cwd = workspace(texts)
            prompts = [t for t in (self.f.typed(text) for text in texts) if t]
            return [self.f.user_event(" ".join(prompts))] if prompts else []
        if kind != "gemini":
            return []
        events: list[dict] = []
        for call in line.get("toolCalls") or []:
            if isinstance(call, dict) and isinstance(call.get("name"), str) and call.get("id") not in self.calls:
                self.calls.add(str(call.get("id")))
                events += self._call(call)
        return events

    def _call(self, call: dict) -> list[dict]:
        f = self.f
        name, args, call_id = call["name"], f.arguments(call.get("args")), call.get("id")
        failed = call.get("status") == "error"
        if name == "run_shell_command" and isinstance(args.get("command"), str):
            events = f.shell_events(self.cwd, call_id, args["command"])
        elif name in WRITES and isinstance(args.get(WRITES[name]), str):
            events = [f.tool_event(self.cwd, call_id, "Edit", {"file_path": args[WRITES[name]]})]
        elif name.startswith("mcp_") and "_" in name[4:]:
            server, tool = name[4:].split("_", 1)
            events = [f.tool_event(self.cwd, call_id, f.mcp_name(server, tool), args)]
        else:
            events = [f.tool_event(self.cwd, call_id, name, args)]
        return events + [f.result_event(e["message"]["content"][0]["id"], str(call.get("resultDisplay") or ""),
                                        failed) for e in events]


HOST = Gemini()
