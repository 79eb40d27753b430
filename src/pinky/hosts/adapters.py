"""Each host's hook payload in, pinky's Claude-shaped payload out; pinky's answer in, the host's output contract out.

`normalize` turns what a host sends on stdin into the payload pinky's hook operations read (Claude Code's shape:
`session_id`, `transcript_path`, `cwd`, `prompt`, `tool_name`, `tool_input`, `stop_hook_active`), and adds the files
the tool call reads and changes (`paths_read`, `paths_changed`), parsed out of shell commands and patches where the
host has no Read/Write tools. A session id becomes `<host>:<id>`, so state files never mix hosts and every diary line
names its host. What a host sends is read by its own keys and methods (`Host.session_keys`, `payload_tool`, ...); its
output contract is its methods (`Host.context_output`, ...). Stdlib only, nothing loaded at import: the per-tool
hooks' budget is the interpreter's own start.
"""

from __future__ import annotations

from pinky.hosts.host import Host, first

PATH_KEYS = ("file_path", "absolute_path", "path", "filePath", "notebook_path")


def host_event_name(host: Host, event: str, payload: dict) -> str:
    """The host's own name of the event being handled (hookEventName in Claude-shaped output)."""
    named = first(payload, *host.event_keys)
    if isinstance(named, str):
        return named
    names = host.host_events(event)
    return names[0] if names else event


def normalize(host: Host, event: str, payload: dict) -> dict:
    """The Claude-shaped payload pinky's hook operations read, from `host`'s own (read by its `payload_*`)."""
    cwd = host.payload_cwd(payload)
    session = first(payload, *host.session_keys)
    out: dict = {"hook_event_name": host_event_name(host, event, payload)}
    if isinstance(cwd, str):
        out["cwd"] = cwd
    if isinstance(session, str):
        out["session_id"] = f"{host.name}:{session}"
    transcript = first(payload, *host.transcript_keys)
    if isinstance(transcript, str):
        out["transcript_path"] = transcript
    prompt = host.payload_prompt(payload)
    if isinstance(prompt, str):  # the shell-line parser is loaded only when a host put its context in front
        if "_context>" in prompt or prompt.lstrip().startswith(("This is the Gemini CLI", "Here is the user's")):
            from pinky.base.shellpaths import without_hook_context

            prompt = without_hook_context(prompt)
        out["prompt"] = prompt.strip()
    out["stop_hook_active"] = host.payload_continued(payload)
    name, tool_input = host.payload_tool(payload)
    if isinstance(name, str) and name:  # tool_name, tool_input and the files the call reads and changes
        out["tool_name"], out["tool_input"] = name, tool_input
        out["paths_read"], out["paths_changed"] = paths_of(name, tool_input, host)
    return out


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
    path = first(tool_input, *PATH_KEYS)
    paths = [path] if isinstance(path, str) else []
    many = tool_input.get("paths") or tool_input.get("file_paths")
    if isinstance(many, list):
        paths += [p for p in many if isinstance(p, str)]
    lowered = name.lower()
    if name in host.write_tools or any(w in lowered for w in ("write", "edit", "replace", "patch")):
        return [], paths
    return paths, []
