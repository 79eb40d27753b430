"""Cursor: command hooks in `hooks.json` (camelCase events, no matchers) whose output cannot reach the model, so
the digest lives in an always-applied rules file; answers are permissions and follow-up messages."""

from __future__ import annotations

from pinky.hosts.host import Hook, Host, Limit, first

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CURSOR_DOCS = "https://cursor.com/docs/agent/hooks"
CURSOR_RULES = "https://cursor.com/docs/context/rules"
PERMISSION_EVENTS = ("beforeReadFile", "preToolUse", "beforeShellExecution", "beforeMCPExecution")


class Cursor(Host):
    name, display, command = "cursor", "Cursor", "cursor-agent"
    sources = (CURSOR_DOCS, CURSOR_RULES)
    hooks = (Hook("sessionStart", "session-start"),
             Hook("beforeSubmitPrompt", "user-prompt"),
             Hook("beforeReadFile", "pre-read"),
             Hook("afterFileEdit", "post-tool"),
             Hook("stop", "stop"),
             Hook("preCompact", "pre-compact"))
    tool_name = "{tool}"  # the agent sees an MCP tool by its own name; Cursor shows the server beside it
    mcp_user, mcp_project = "~/.cursor/mcp.json", ".cursor/mcp.json"
    hooks_user, hooks_project = "~/.cursor/hooks.json", ".cursor/hooks.json"
    hooks_version = 1
    context, rules_file = "rules", ".cursor/rules/pinky-brain.mdc"
    rules_header = ("---\ndescription: pinky-brain's digest of this project's brain (rewritten by its hooks)\n"
                    "globs:\nalwaysApply: true\n---\n")
    # It sends both session_id and conversation_id (and the workspace, a file hook's path and the loop count in
    # keys of its own: the payload_* methods below)
    session_keys = ("session_id", "conversation_id")
    limits = (Limit("beforeSubmitPrompt can only block the prompt (continue/user_message): recall cannot reach the "
                    "model from a hook", CURSOR_DOCS),
              Limit("beforeReadFile answers only a permission: linked notes cannot reach the model from a hook",
                    CURSOR_DOCS),
              Limit("no transcript_path on stop: the diary records only what the hooks saw", CURSOR_DOCS),
              Limit("some versions reject a sessionStart entry (\"Unknown hook type\"): the first prompt writes the "
                    "rules file when it is missing",
                    "https://forum.cursor.com/t/unknown-hook-type-sessionstart/149566"))

    def payload_cwd(self, payload: dict) -> object:
        roots = payload.get("workspace_roots")
        return first(payload, "cwd") or (roots[0] if isinstance(roots, list) and roots else None)

    def payload_tool(self, payload: dict) -> tuple[object, dict]:
        name, tool_input = super().payload_tool(payload)
        if not name and isinstance(payload.get("file_path"), str):  # beforeReadFile, afterFileEdit (with `edits`)
            return ("Edit" if "edits" in payload else "Read"), {"file_path": payload["file_path"]}
        return name, tool_input

    def payload_continued(self, payload: dict) -> bool:
        return super().payload_continued(payload) or bool(payload.get("loop_count"))

    def deny_output(self, host_event: str, reason: str) -> dict:
        return {"permission": "deny", "agent_message": reason, "user_message": reason}

    def continue_output(self, reason: str) -> dict | None:
        return {"followup_message": reason}  # submitted as the next user message, capped by loop_limit

    def acknowledge_output(self, host_event: str) -> dict | None:
        if host_event == "beforeSubmitPrompt":
            return {"continue": True}
        if host_event in PERMISSION_EVENTS:
            return {"permission": "allow"}
        return None

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args}

    def hook_entry(self, hook: Hook, line: str) -> dict[str, Any]:
        return {"command": line}


HOST = Cursor()
