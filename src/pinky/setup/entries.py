"""What `pinky-brain setup <host>` writes into a host's config: the `pinky` MCP server entry and the hooks, both
running commands from a stable launcher folder, so the entries keep working across updates of pinky-brain.

The launcher folder is the one holding the console scripts of the running pinky-brain (`pinky-mcp`, `pinky-hooks`
next to `sys.executable`: a pip, pipx, uv or venv install keeps them there across upgrades), or, for the Claude Code
plugin's CLI, the folder where `pinky-brain install-cli` wrote its launchers.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from pinky.errors import InvalidInput
from pinky.hosts.catalog import Host

HOOKS_COMMAND = "pinky-hooks"
MCP_COMMAND = "pinky-mcp"
# The program each host is started by (`shutil.which` of it: installed or not; `<it> --version` in doctor)
COMMANDS = {"claude": "claude", "codex": "codex", "gemini": "gemini", "cursor": "cursor-agent",
            "copilot": "copilot", "opencode": "opencode", "windsurf": "windsurf"}
GEMINI_TIMEOUT_MS = 30_000  # Gemini CLI counts a hook's timeout in milliseconds
TIMEOUT_S = 30


def launcher_dir(executable: str | None = None) -> str:
    """The folder whose `pinky-hooks` and `pinky-mcp` the written entries run."""
    folder = os.path.dirname(os.path.abspath(executable or sys.executable))
    if os.path.isfile(os.path.join(folder, HOOKS_COMMAND)) and os.path.isfile(os.path.join(folder, MCP_COMMAND)):
        return folder
    from pinky.base.command import plugin_root_of

    program = sys.argv[0] if sys.argv else ""
    if plugin_root_of(program):
        local = os.path.expanduser("~/.local/bin")
        if os.path.isfile(os.path.join(local, HOOKS_COMMAND)):
            return local
        raise InvalidInput("run `pinky-brain install-cli` first: it writes the pinky-mcp and pinky-hooks launchers "
                           "that the host's config will run")
    raise InvalidInput(f"found no {HOOKS_COMMAND} and {MCP_COMMAND} next to {executable or sys.executable}; "
                       "reinstall pinky-brain (pipx install pinky-brain)")


def command(folder: str, name: str) -> str:
    return shlex.quote(os.path.join(folder, name))


def mcp_entry(host: Host, folder: str) -> dict[str, Any]:
    """The `pinky` server entry in `host`'s own shape."""
    mcp = os.path.join(folder, MCP_COMMAND)
    if host.name == "opencode":
        return {"type": "local", "command": [mcp], "enabled": True}
    if host.name == "claude":
        return {"type": "stdio", "command": mcp, "args": []}
    if host.name == "codex":
        return {"command": mcp}
    return {"command": mcp, "args": []}


def hook_command(host: Host, folder: str, event: str) -> str:
    return f"{command(folder, HOOKS_COMMAND)} --host {host.name} {event}"


def hook_entries(host: Host, folder: str) -> dict[str, list[dict[str, Any]]]:
    """The hooks of `host` (catalog.Host.hooks) in its config's shape: host event -> list of entries."""
    out: dict[str, list[dict[str, Any]]] = {}
    for hook in host.hooks:
        line = hook_command(host, folder, hook.pinky)
        if host.name == "cursor":
            entry: dict[str, Any] = {"command": line}
        elif host.name == "windsurf":
            entry = {"command": line, "show_output": False}
        elif host.name == "copilot":
            entry = {"type": "command", "bash": line, "timeoutSec": TIMEOUT_S}
        else:
            one: dict[str, Any] = {"type": "command", "command": line}
            if host.name == "gemini":
                one["timeout"] = GEMINI_TIMEOUT_MS
            # Gemini CLI 0.61 ran no SessionStart hook under the catalog's "startup|resume|clear" matcher (the
            # real-CLI test tests/hosts/test_gemini_e2e.py saw no digest); without a matcher it runs at every start.
            matcher = None if host.name == "gemini" and hook.event == "SessionStart" else hook.matcher
            entry = {"matcher": matcher, "hooks": [one]} if matcher else {"hooks": [one]}
        out.setdefault(hook.event, []).append(entry)
    return out


def is_ours(entry: Any) -> bool:
    """Whether a hook entry (or a group of them) runs pinky-hooks: what setup wrote and --remove takes out."""
    if isinstance(entry, dict):
        if isinstance(entry.get("hooks"), list):
            return bool(entry["hooks"]) and all(is_ours(one) for one in entry["hooks"])
        line = entry.get("command", entry.get("bash"))
        if isinstance(line, str):
            try:
                first = shlex.split(line)[:1]
            except ValueError:
                return False
            return bool(first) and os.path.basename(first[0]) == HOOKS_COMMAND
    return False


