"""Each host's hook payload in, pinky's Claude-shaped payload out; pinky's answer in, the host's output contract out.

`normalize` turns what a host sends on stdin into the payload pinky's hook operations read (Claude Code's shape:
`session_id`, `transcript_path`, `cwd`, `prompt`, `tool_name`, `tool_input`, `stop_hook_active`), and adds the files
the tool call reads and changes (`paths_read`, `paths_changed`), parsed out of shell commands and patches where the
host has no Read/Write tools. A session id becomes `<host>:<id>`, so state files never mix hosts and every diary line
names its host. Which keys a host sends is its own (`Host.session_keys`, `prompt_keys`, ...); the output contract
is its methods (`Host.context_output`, `deny_output`, ...). Stdlib only, nothing loaded at import: the per-tool
hooks' budget is the interpreter's own start.
"""

from __future__ import annotations

from pinky.hosts.host import Host

PATH_KEYS = ("file_path", "absolute_path", "path", "filePath", "notebook_path")


def _first(payload: dict, *keys: str) -> object:
    for key in keys:
        value = payload.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def _loads(value: object) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        import json  # Copilot CLI sent its arguments as a JSON string (1.0.102 sends an object)

        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def host_event_name(host: Host, event: str, payload: dict) -> str:
    """The host's own name of the event being handled (hookEventName in Claude-shaped output)."""
    named = _first(payload, *host.event_keys)
    if isinstance(named, str):
        return named
    names = host.host_events(event)
    return names[0] if names else event


def normalize(host: Host, event: str, payload: dict) -> dict:
    """The Claude-shaped payload pinky's hook operations read, from `host`'s own."""
    info = payload.get("tool_info")
    tool_info: dict = info if isinstance(info, dict) else {}
    roots = payload.get("workspace_roots")
    cwd = _first(payload, "cwd") or _first(tool_info, "cwd") or (roots[0] if isinstance(roots, list) and roots
                                                                  else None)
    session = _first(payload, *host.session_keys)
    out: dict = {"hook_event_name": host_event_name(host, event, payload)}
    if isinstance(cwd, str):
        out["cwd"] = cwd
    if isinstance(session, str):
        out["session_id"] = f"{host.name}:{session}"
    transcript = _first(payload, *host.transcript_keys)
    if isinstance(transcript, str):
        out["transcript_path"] = transcript
    prompt = _first(payload, *host.prompt_keys) or _first(tool_info, "user_prompt", "prompt")
    if isinstance(prompt, str):  # the shell-line parser is loaded only when a host put its context in front
        if "_context>" in prompt or prompt.lstrip().startswith(("This is the Gemini CLI", "Here is the user's")):
            from pinky.base.shellpaths import without_hook_context

            prompt = without_hook_context(prompt)
        out["prompt"] = prompt.strip()
    out["stop_hook_active"] = payload.get("stop_hook_active") is True or bool(payload.get("loop_count"))
    _tool(host, payload, tool_info, out)
    return out


def _tool(host: Host, payload: dict, tool_info: dict, out: dict) -> None:
    """tool_name, tool_input and the files the call reads and changes."""
    name = _first(payload, *host.tool_name_keys)
    tool_input = _loads(_first(payload, *host.tool_input_keys)) or dict(tool_info)
    if not name and isinstance(payload.get("file_path"), str):  # Cursor's beforeReadFile / afterFileEdit
        tool_input = {"file_path": payload["file_path"]}
        name = "Edit" if "edits" in payload else "Read"
    if not name and tool_info:  # Windsurf: the action names the tool
        action = str(payload.get("agent_action_name") or "")
        name = "Bash" if "command" in action else "Edit" if "write" in action else "Read" if "read" in action else ""
        if "command_line" in tool_info:
            tool_input = {"command": tool_info["command_line"]}
    if not isinstance(name, str) or not name:
        return
    out["tool_name"], out["tool_input"] = name, tool_input
    read, changed = paths_of(name, tool_input, host)
    out["paths_read"], out["paths_changed"] = read, changed


def paths_of(name: str, tool_input: dict, host: Host) -> tuple[list[str], list[str]]:
    """(files read, files changed) by one tool call, as the call names them."""
    command = tool_input.get("command") or tool_input.get("cmd")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if name in host.shell_tools:
        from pinky.base.shellpaths import command_paths  # here: a prompt or a Read needs no shell-line parser

        return command_paths(command) if isinstance(command, str) else ([], [])
    if name == "apply_patch" or name == "patch":
        from pinky.base.shellpaths import patch_paths

        patch = command if isinstance(command, str) else tool_input.get("input") or tool_input.get("patch")
        return [], patch_paths(patch) if isinstance(patch, str) else []
    path = _first(tool_input, *PATH_KEYS)
    paths = [path] if isinstance(path, str) else []
    many = tool_input.get("paths") or tool_input.get("file_paths")
    if isinstance(many, list):
        paths += [p for p in many if isinstance(p, str)]
    lowered = name.lower()
    if name in host.write_tools or any(w in lowered for w in ("write", "edit", "replace", "patch")):
        return [], paths
    return paths, []
