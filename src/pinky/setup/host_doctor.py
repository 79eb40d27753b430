"""`pinky-brain doctor`'s section per agent host that `pinky-brain setup <host>` set up: the MCP entry and whether
its command runs, the hooks registered (and trusted, for Codex), the host's version, and what it cannot do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from typing import Any

from pinky.errors import InvalidInput
from pinky.hosts.catalog import all_hosts
from pinky.hosts.host import SERVER, Host
from pinky.setup import host_entries
from pinky.setup.check import Check
from pinky.setup.core import config_path, read_bytes

VERSION_TIMEOUT = 5


def load(path: str | None, fmt: str) -> dict[str, Any]:
    """A config file's data; {} when it is missing or unreadable (setup reports bad files itself)."""
    if path is None:
        return {}
    try:
        raw = read_bytes(path)  # never a FIFO or a device: those are refused before they are opened for reading
    except InvalidInput:
        return {}
    if not raw:
        return {}
    try:
        data = tomllib.loads(raw.decode("utf-8")) if fmt == "toml" else json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def mcp_command(host: Host, entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    command = entry.get("command")
    if isinstance(command, list):
        command = command[0] if command else None
    return command if isinstance(command, str) else None


def runnable(command: str) -> bool:
    if os.path.isabs(command):
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command) is not None


def our_hooks(host: Host, data: dict[str, Any]) -> list[tuple[str, Any]]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [(event, group) for event, groups in hooks.items() if isinstance(groups, list)
            for group in groups if host_entries.is_ours(group)]


def host_section(host: Host, env: dict[str, str] | None = None) -> list[Check]:
    """The checks of one host; [] when setup did not set it up (at user level)."""
    mcp_path = config_path(host, "mcp", project=None, env=env)
    hooks_path = config_path(host, "hooks", project=None, env=env)
    servers = load(mcp_path, host.mcp_format).get(host.mcp_key)
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    written_whole = host.hooks_format == "plugin"  # a plugin of pinky's, not entries in a hooks file
    hooks_data = load(hooks_path, "json") if hooks_path and not written_whole else {}
    ours = our_hooks(host, hooks_data)
    plugin = bool(hooks_path and written_whole and os.path.isfile(hooks_path))
    if entry is None and not ours and not plugin:
        return []
    name = host.display
    out = [mcp_check(host, entry, mcp_path), hooks_check(host, ours, plugin, hooks_path, hooks_data)]
    out.append(version_check(host))
    if host.limits:
        out.append(Check(f"{name}: limits", "ok", "; ".join(f"{limit.text} ({limit.source})"
                                                           for limit in host.limits)))
    return out


def mcp_check(host: Host, entry: Any, path: str | None) -> Check:
    name = f"{host.display}: MCP server"
    command = mcp_command(host, entry)
    if command is None:
        return Check(name, "warn", f"no `{SERVER}` server in {path}", f"pinky-brain setup {host.name}")
    if not runnable(command):
        return Check(name, "error", f"{path} runs {command}, which is not there or not executable",
                     f"pinky-brain setup {host.name} (it writes the command of this install)")
    from pinky.setup.broken import problem

    soon = problem(command) if os.path.isabs(command) else None
    if soon:  # a plugin runtime's own folder, written by an older pinky-brain: the next update deletes it
        return Check(name, "warn", f"{path} runs {command}, {soon}",
                     f"pinky-brain setup {host.name} (it writes a launcher that survives updates)")
    return Check(name, "ok", f"{command} (in {path})")


def hooks_check(host: Host, ours: list[tuple[str, Any]], plugin: bool, path: str | None,
                data: dict[str, Any]) -> Check:
    name = f"{host.display}: hooks"
    if plugin:
        return Check(name, "ok", f"the relay plugin {path}")
    wanted = len(host.hooks)
    if not ours:
        return Check(name, "warn", f"none of pinky-brain's {wanted} hooks in {path}", f"pinky-brain setup {host.name}")
    detail = f"{len(ours)} of {wanted} in {path}"
    if host.trusts_hooks and path:
        from pinky.setup.codex_trust import our_states

        states = load(config_path(host, "mcp", project=None), "toml").get("hooks", {}).get("state", {})
        untrusted = [key for key, value in our_states(path, data).items()
                     if not isinstance(states.get(key), dict) or states[key].get("trusted_hash") != value]
        if untrusted:
            return Check(name, "warn", f"{detail}; {len(untrusted)} not trusted, so Codex skips them",
                         "pinky-brain setup codex (it records the trust of its hooks)")
        detail += ", all trusted"
    status = "ok" if len(ours) >= wanted else "warn"
    return Check(name, status, detail, None if status == "ok" else f"pinky-brain setup {host.name}")


def version_check(host: Host) -> Check:
    name = f"{host.display}: version"
    command = host.command
    program = shutil.which(command)
    if program is None:
        return Check(name, "warn", f"`{command}` is not on PATH: {host.display} is not installed here")
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(name, "warn", f"{program} --version failed ({exc.__class__.__name__})")
    text = (done.stdout or done.stderr).strip().splitlines()
    return Check(name, "ok" if done.returncode == 0 else "warn", text[0] if text else f"{program} (no version)")


def host_checks(env: dict[str, str] | None = None) -> list[Check]:
    """The section of every host set up, in the registry's order (a host with checks of its own, Claude Code's,
    is left to them)."""
    out: list[Check] = []
    for host in all_hosts():
        if not host.own_doctor:
            out += host_section(host, env)
    return out
