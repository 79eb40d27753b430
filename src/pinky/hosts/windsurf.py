"""Windsurf (Cascade): command hooks in `hooks.json` that cannot add context (pre-hooks only block, post-hooks
observe), so the digest lives in an always-on rule; every payload is `agent_action_name`, `trajectory_id` and a
`tool_info` object (https://docs.windsurf.com/windsurf/cascade/hooks)."""

from __future__ import annotations

from pinky.hosts.host import Hook, Host, Limit, first

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WINDSURF_DOCS = "https://docs.windsurf.com/windsurf/cascade/hooks"
WINDSURF_MCP = "https://docs.windsurf.com/windsurf/cascade/mcp"
WINDSURF_RULES = "https://docs.windsurf.com/windsurf/cascade/memories#rules"


class Windsurf(Host):
    name, display, command = "windsurf", "Windsurf (Cascade)", "windsurf"
    sources = (WINDSURF_DOCS, WINDSURF_MCP, WINDSURF_RULES)
    hooks = (Hook("pre_user_prompt", "user-prompt"),
             Hook("pre_read_code", "pre-read"),
             Hook("post_read_code", "post-tool"),
             Hook("post_write_code", "post-tool"),
             Hook("post_run_command", "post-tool"),
             Hook("post_cascade_response", "stop"))
    tool_name = "{tool}"
    mcp_user, mcp_project = "~/.codeium/windsurf/mcp_config.json", None
    hooks_user, hooks_project = "~/.codeium/windsurf/hooks.json", ".windsurf/hooks.json"
    context, rules_file = "rules", ".windsurf/rules/pinky-brain.md"
    rules_header = ("---\ntrigger: always_on\ndescription: pinky-brain's digest of this project's brain (rewritten by "
                    "its hooks)\n---\n")
    event_keys = ("hook_event_name", "agent_action_name")
    session_keys = ("session_id", "trajectory_id")
    # the folder, the prompt (`user_prompt`), the file and the command line come inside `tool_info`
    limits = (Limit("hooks cannot add context: pre-hooks only block (exit 2), post-hooks are observers; the digest "
                    "lives in an always-on rule instead, recall and file notes cannot reach the model", WINDSURF_DOCS),
              Limit("no session-start hook: the rules file is refreshed by the hooks that do run", WINDSURF_DOCS),
              Limit("no compaction hook and no way to continue Cascade after a response: no checkpoint, no capture "
                    "ask", WINDSURF_DOCS))

    def payload_cwd(self, payload: dict) -> object:
        return first(payload, "cwd") or first(tool_info(payload), "cwd")

    def payload_prompt(self, payload: dict) -> object:
        return first(payload, *self.prompt_keys) or first(tool_info(payload), "user_prompt", "prompt")

    def payload_tool(self, payload: dict) -> tuple[object, dict]:
        name, tool_input = super().payload_tool(payload)
        info = tool_info(payload)
        tool_input = tool_input or dict(info)
        if not name and info:  # the action names the tool
            action = str(payload.get("agent_action_name") or "")
            name = "Bash" if "command" in action else "Edit" if "write" in action else \
                "Read" if "read" in action else ""
            if "command_line" in info:
                tool_input = {"command": info["command_line"]}
        return name, tool_input

    def continue_output(self, reason: str) -> dict | None:
        return None

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args}

    def hook_entry(self, hook: Hook, line: str) -> dict[str, Any]:
        return {"command": line, "show_output": False}


def tool_info(payload: dict) -> dict:
    info = payload.get("tool_info")
    return info if isinstance(info, dict) else {}


HOST = Windsurf()
