"""Host entries that no longer run: said in the next session (the session-start hook, the MCP server's stderr),
not only by `pinky-brain doctor` (issue 36 item 1).

A host whose hooks or server command is gone fails without a word from pinky: Codex prints `hook: SessionStart
Failed` and offers no brain tools. Only another pinky process can notice, so every session start reads the
user-level configs `pinky-brain setup` writes and names each pinky command in them that is gone, or that is a
Claude Code plugin runtime's own folder (written by pinky-brain before 0.1.1; the next plugin update deletes it).
Each message says the command that repairs it. Stdlib only and no parsing (a search for the paths in the raw
text): it runs on the session-start hook's path, about a millisecond.
"""

from __future__ import annotations

import os
import re

from pinky.hosts.catalog import all_hosts
from pinky.hosts.host import Host

BREAKS = re.compile(r"[\s\"'\\]+")  # what ends a path in a JSON string, a TOML value or a command line
NAMES = ("/pinky-hooks", "/pinky-mcp")
MAX_BYTES = 8 << 20  # ~/.claude.json grows with every project; bigger than this it is not searched
RUNTIME_READY = "pinky-ready"  # the marker of a Claude Code plugin runtime (plugin/runtime/pinky_runtime_lookup)


def user_config(host: Host, which: str, env: dict[str, str]) -> str | None:
    """The user-level config file of `host` (as pinky.setup.core.config_path, without its imports)."""
    relative = host.mcp_user if which == "mcp" else host.hooks_user
    return None if relative is None else host.user_path(relative, env)


def problem(command: str) -> str | None:
    """Why `command` will not run (or will soon stop running); None when it is fine."""
    if not (os.path.isfile(command) and os.access(command, os.X_OK)):
        return "which is gone"
    if os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(command)), RUNTIME_READY)):
        return "a Claude Code plugin runtime's own folder, which the next plugin update deletes"
    return None


def broken_entries(env: dict[str, str] | None = None) -> list[str]:
    """One line per host config that runs a pinky command that is gone or about to go, with the fix."""
    env = dict(os.environ) if env is None else env
    lines: list[str] = []
    for host in all_hosts():
        paths = dict.fromkeys(p for p in (user_config(host, "mcp", env), user_config(host, "hooks", env)) if p)
        for path in paths:
            for command, why in _commands(path):
                lines.append(f"pinky-brain: {host.display}'s {path} runs {command}, {why}; run `pinky-brain setup "
                             f"{host.name}` (it writes commands that survive updates)")
                break  # one line per file: the same fix repairs them all
    return lines


def _commands(path: str) -> list[tuple[str, str]]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES)
    except OSError:
        return []
    if b"/pinky-" not in data:
        return []
    found: list[tuple[str, str]] = []
    words = BREAKS.split(data.decode("utf-8", "replace"))
    for command in dict.fromkeys(word for word in words if word.startswith("/") and word.endswith(NAMES)):
        why = problem(command)
        if why:
            found.append((command, why))
    return found
