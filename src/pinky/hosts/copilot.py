"""GitHub Copilot CLI: command hooks in `~/.copilot/hooks/*.json` (no matchers), a top-level additionalContext, its
own payload keys (`sessionId`, `toolName`, `toolArgs`, `transcriptPath`), and session events for a transcript.

Measured with Copilot CLI 1.0.102 offline (`copilot -p`, tests/hosts/test_copilot_e2e.py): the hooks of
~/.copilot/hooks/*.json run; a top-level {"additionalContext": ...} from sessionStart reaches the model as a user
message, from userPromptSubmitted inside <system_reminder> with the prompt, from postToolUse after the tool's result;
agentStop's {"decision": "block", "reason": ...} continues with the reason as the next prompt (stop_hook_active is
then true) and carries transcriptPath (the session's events.jsonl). preToolUse runs for every tool.
"""

from __future__ import annotations

import os

from pinky.hosts.host import Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from pinky.hosts.host import Translate

COPILOT_DOCS = "https://docs.github.com/en/copilot/reference/hooks-configuration"
COPILOT_CLI_DOCS = "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference"
COPILOT_MEASURED = "observed with Copilot CLI 1.0.102 offline (tests/hosts/test_copilot_e2e.py)"
TIMEOUT_S = 30
FILES = {"view": "Read", "create": "Edit", "edit": "Edit"}


class Copilot(Host):
    name, display, command = "copilot", "GitHub Copilot CLI", "copilot"
    sources = (COPILOT_MEASURED, COPILOT_DOCS, COPILOT_CLI_DOCS)
    # Measured with 1.0.102: preToolUse's {"permissionDecision": "deny", ...} keeps the tool from running and the
    # reason is the tool's result (the guard); `copilot --resume <id> -p /compact` runs preCompact with the
    # session's transcriptPath (the checkpoint).
    hooks = (Hook("sessionStart", "session-start"),
             Hook("userPromptSubmitted", "user-prompt"),
             Hook("preToolUse", "pre-write"),
             Hook("postToolUse", "post-tool"),
             Hook("agentStop", "stop"),
             Hook("preCompact", "pre-compact"))
    tool_name = "{server}-{tool}"  # measured: pinky-brain_save
    mcp_user, mcp_project = "~/.copilot/mcp-config.json", None
    hooks_user, hooks_project = "~/.copilot/hooks/pinky-brain.json", ".github/hooks/pinky-brain.json"
    hooks_version = 1
    context, rules_file = "additionalContext", "AGENTS.md"  # the rules file: only --remove of older blocks
    read_tools, write_tools, shell_tools = ("view",), ("create", "edit"), ("bash",)
    transcript = "~/.copilot/session-state/<sessionId>/events.jsonl (COPILOT_HOME defaults to ~/.copilot)"
    session_keys = ("session_id", "sessionId")  # none at all from some events: one session per folder and day
    transcript_keys = ("transcript_path", "transcriptPath")
    prompt_keys = ("prompt", "initialPrompt")
    tool_name_keys = ("tool_name", "toolName")
    tool_input_keys = ("tool_input", "toolArgs")  # an object in 1.0.102, a JSON string before
    # Measured with Copilot CLI 1.0.102: .github/hooks/*.json ran only once the folder was in trusted_folders
    project_note = ("Copilot CLI runs a repository's hooks only in a folder you trust: start `copilot` in the "
                    "repository once and trust it (a headless `copilot -p` does not ask, and runs none)")
    limits = (Limit("a repository's .github/hooks/*.json runs only in a trusted folder (`trusted_folders` in "
                    "~/.copilot/config.json; a headless `copilot -p` asks nothing and runs none): `pinky-brain setup "
                    "copilot` writes the user-level ~/.copilot/hooks/pinky-brain.json; after --project, trust the "
                    "repository once in `copilot`", COPILOT_MEASURED),
              Limit("no project-level MCP config: the server is set up per user", COPILOT_CLI_DOCS))

    def deny_output(self, host_event: str, reason: str) -> dict:
        return {"permissionDecision": "deny", "permissionDecisionReason": reason}

    def before_transcript(self, path: str) -> None:
        settled_transcript(path)

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args}

    def hook_entry(self, hook: Hook, line: str) -> dict[str, Any]:
        return {"type": "command", "bash": line, "timeoutSec": TIMEOUT_S}

    def translator(self, cwd: str | None = None) -> Translate | None:
        return SessionEvents(cwd)

    def session_files(self, home: str) -> list[Path]:
        """`$COPILOT_HOME/session-state/<session id>/events.jsonl` (COPILOT_HOME: ~/.copilot); a resumed session
        goes on in the same file (measured with 1.0.102: tests/fixtures/copilot/past-sessions)."""
        from pathlib import Path

        folder = Path(os.environ.get("COPILOT_HOME") or os.path.join(home, ".copilot")) / "session-state"
        return sorted(folder.glob("*/events.jsonl"))

    def head_done(self, event: dict) -> bool:
        return event.get("type") == "session.start"

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        data = next((e["data"] for e in events if e.get("type") == "session.start" and isinstance(e.get("data"),
                                                                                                  dict)), None)
        if data is None or not isinstance(data.get("sessionId"), str):
            return None
        context = data.get("context") if isinstance(data.get("context"), dict) else {}
        cwd = context.get("cwd") if isinstance(context.get("cwd"), str) else None
        return PastSession(self.name, path, f"{self.name}:{data['sessionId']}", cwd, size, display=self.display,
                           source=self)


def settled_transcript(path: str, limit: float = 3.0) -> bool:
    """Whether the turn that just stopped has ended in Copilot CLI's events.jsonl, waiting at most `limit` s for it:
    1.0.102 writes that file behind, and at agentStop it held only its first line after a quick turn (seen in
    tests/hosts/test_copilot_e2e.py; the diary then missed the prompt). Copilot waits for the hook meanwhile."""
    import time

    deadline = time.monotonic() + limit
    while True:
        try:
            with open(os.path.expanduser(path), "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - (1 << 16)))
                tail = handle.read()
        except OSError:
            tail = b""
        if tail.rfind(b'"assistant.turn_end"') > tail.rfind(b'"user.message"'):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


class SessionEvents:
    """Copilot CLI's session events, `~/.copilot/session-state/<id>/events.jsonl` (1.0.102): `session.start` (its
    `context.cwd`), `user.message` (`content`: what was typed; `transformedContent` adds hook context),
    `assistant.message` (`toolRequests`: `toolCallId`, `name`, `arguments`, and `mcpServerName`/`mcpToolName` for an
    MCP tool) and `tool.execution_complete` (`toolCallId`, `success`, `result.content`; a shell command's
    `shellExecution.exitCode`)."""

    def __init__(self, cwd: str | None) -> None:
        from pinky.capture import foreign  # json and the shell-line parser: never on a hook's fast path

        self.f, self.cwd = foreign, cwd

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
            prompt = self.f.typed(data.get("content"))
            return [self.f.user_event(prompt)] if prompt else []
        if kind == "assistant.message":
            return [e for call in data.get("toolRequests") or [] if isinstance(call, dict) for e in self._call(call)]
        if kind == "tool.execution_complete":
            result = data.get("result")
            text = result.get("content") if isinstance(result, dict) else result
            shell = data.get("shellExecution")  # 1.0.102: a command that exits non-zero is "success": true
            code = shell.get("exitCode") if isinstance(shell, dict) else None
            failed = data.get("success") is False or (isinstance(code, int) and code != 0)
            return [self.f.result_event(data.get("toolCallId"), str(text or ""), failed)]
        return []

    def _call(self, call: dict) -> list[dict]:
        f = self.f
        name, args, call_id = str(call.get("name") or ""), f.arguments(call.get("arguments")), call.get("toolCallId")
        server, tool = call.get("mcpServerName"), call.get("mcpToolName")
        if isinstance(server, str) and isinstance(tool, str):
            return [f.tool_event(self.cwd, call_id, f.mcp_name(server, tool), args)]
        if name == "bash" and isinstance(args.get("command"), str):
            return f.shell_events(self.cwd, call_id, args["command"])
        if name in FILES and isinstance(args.get("path"), str):
            path = f.absolute(args["path"], self.cwd)
            return [f.tool_event(self.cwd, call_id, FILES[name], {"file_path": path})]
        return [f.tool_event(self.cwd, call_id, name, args)] if name else []


HOST = Copilot()
