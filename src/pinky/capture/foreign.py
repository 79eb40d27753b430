"""Other hosts' transcripts, read as Claude Code events so the one summariser, checkpoint and capture read them all:
the parts every host's transcript translator (`Host.translator`, in its module under pinky.hosts) builds with.

A translator is a function from one parsed line of the host's transcript to the Claude-shaped events it stands
for: a user prompt `{"type": "user", "message": {"content": text}}`, tool calls `{"type": "assistant", "cwd": ...,
"message": {"content": [{"type": "tool_use", "id", "name", "input"}]}}` with the names the summariser knows (`Bash`
with `command`, `Edit` with `file_path`, `mcp__<server>__<tool>`), and tool results. These formats are internal to
their host, so reading is as lenient as for Claude Code's. Stdlib only; json and the shell-line parser load here,
so a host module imports this inside its translator, never at its top (a hook imports the host module).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pinky.base.shellpaths import command_paths, patch_paths, without_hook_context

__all__ = ["ASK_OPENING", "Translate", "absolute", "arguments", "command_paths", "json", "mcp_name", "patch_paths",
           "redacted", "relayed_events", "result_event", "shell_events", "tool_event", "typed", "user_event"]

Translate = Callable[[dict], list[dict]]
# How pinky's capture ask (pinky.hooks.learned) opens: hosts that continue the agent with it as a new user message
# (Gemini CLI, Cursor, OpenCode) record it as a prompt, which the diary must not list as something the user asked.
ASK_OPENING = "pinky: this turn looks like it taught something worth keeping"


def user_event(text: str) -> dict:
    return {"type": "user", "message": {"content": text}}


def tool_event(cwd: str | None, call_id: object, name: str, tool_input: dict) -> dict:
    return {"type": "assistant", "cwd": cwd,
            "message": {"content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]}}


def result_event(call_id: object, text: str, failed: bool) -> dict:
    return {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": call_id,
                                                     "content": text, "is_error": failed}]}}


def typed(text: object) -> str | None:
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
        events.append(tool_event(cwd, f"{call_id}:{index}", "Edit", {"file_path": absolute(path, cwd)}))
    return events


def absolute(path: str, cwd: str | None) -> str:
    if cwd and not path.startswith(("/", "~")) and not path[1:3] == ":\\\\":
        return cwd.rstrip("/") + "/" + path
    return path


def arguments(value: object) -> dict:
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


# --- the journal of a host without a transcript (pinky.hooks.journal) ----------------------------------------------
# What pinky's hooks journal for Cursor, OpenCode and Windsurf: each prompt and tool call they relayed, as the events
# above (a prompt; a call's shell command as Bash, and an Edit of each file it changes; anything else, a read or an MCP
# tool, not at all), redacted as the diary is. `pinky-brain import-sessions` builds the same from a host's own store
# of past sessions (pinky.hosts.opencode), so an imported session's diary is the one the Stop hook wrote.


def redacted(text: str) -> str:
    """`text` as the diary would keep it: every credential replaced by a `[REDACTED:<kind>]` marker, and a lone
    surrogate (a payload's `\\ud800`, no character of any text) a `?`: written as it is, it would make the whole
    line one the diary skips as unreadable."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    from pinky.base.secret_words import may_hold_unlabelled_secret

    if not may_hold_unlabelled_secret(text):
        return text
    from pinky.base.redact import redact

    return redact(text, unlabelled=True)


def relayed_events(payload: dict, event: str) -> list[dict] | None:
    """The journal's events for one hook `event` given the Claude-shaped `payload` (`pinky.hosts.adapters.normalize`):
    a prompt's, or a tool call's (perhaps none: a read); None for what the journal does not take."""
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    if event == "user-prompt" and isinstance(payload.get("prompt"), str):
        return [user_event(redacted(payload["prompt"]))]
    if event == "post-tool" and payload.get("tool_name"):
        command = (payload.get("tool_input") or {}).get("command")
        if isinstance(command, str):
            return shell_events(cwd, None, redacted(command))
        return [tool_event(cwd, None, "Edit", {"file_path": p}) for p in payload.get("paths_changed") or []]
    return None
