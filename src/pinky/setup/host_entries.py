"""What `pinky-brain setup <host>` writes into a host's config: the `pinky` MCP server entry and the hooks, both
running commands that keep working across updates of pinky-brain (issue 36).

User level, the commands are absolute paths to stable launchers, never to a folder an update replaces:
- a pip, pipx, uv or venv install: its console scripts `pinky-mcp` and `pinky-hooks` (next to `sys.executable`,
  or in the scheme's scripts folder); an upgrade keeps them where they are;
- the Claude Code plugin: the launchers in ~/.local/bin that `pinky-brain install-cli` (or setup itself) writes,
  which find the plugin's current folder, and through it its current runtime, at every start. The runtime's own
  bin/ (`<plugin data>/runtime/<key>/bin`) is never named: a plugin update or a commit in the clone the
  marketplace was added from makes a new runtime, and the old one is deleted in time.

With --project (files a team commits, read on every clone and machine) the commands are bare names found on
PATH, or in ~/.local/bin, through a one-line `sh -c`; where neither has them, a hook says so on stderr in one
line and exits 0 (fails open), and the server says what to install.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from pinky.errors import InvalidInput
from pinky.hosts.host import Host

HOOKS_COMMAND = "pinky-hooks"
MCP_COMMAND = "pinky-mcp"
LOCAL_BIN = "~/.local/bin"  # where install-cli writes the plugin's launchers (pipx and uv put commands there too)
RUNTIME_READY = "pinky-ready"  # the file that marks a plugin runtime (plugin/runtime/pinky_runtime_lookup.READY)
MISSING = ("pinky-brain: {name} not found (PATH, ~/.local/bin): install pinky-brain (pipx install <its clone or git "
           "URL>, or with its Claude Code plugin: pinky-brain install-cli); {what}")
# $0 is the command's name, "$@" its arguments: `sh -c FIND pinky-hooks --host codex session-start`
FIND = ('for p in {name} "$HOME/.local/bin/{name}"; do command -v "$p" >/dev/null 2>&1 && exec "$p" "$@"; done; '
        'echo "{missing}" >&2; exit {code}')


def find_script(name: str) -> str:
    """The `sh -c` script that runs `name` from PATH or ~/.local/bin, or says in one line what to install. A hook
    exits 0 then (the agent's action proceeds); the server exits 1 (the host reports it could not start)."""
    hooks = name == HOOKS_COMMAND
    missing = MISSING.format(name=name, what="hook skipped" if hooks else "no brain_* tools")
    return FIND.format(name=name, missing=missing, code=0 if hooks else 1)


def plugin_runtime_bin(folder: str) -> bool:
    """Whether `folder` is the bin/ of a Claude Code plugin runtime (a venv the plugin prepared): replaced by the
    next plugin update or commit in a clone, so never named in a host's config."""
    return os.path.isfile(os.path.join(os.path.dirname(folder), RUNTIME_READY))


def script_folders(executable: str) -> list[str]:
    """Where this install's console scripts may be: next to the interpreter (venv, pipx, uv), or the install
    scheme's scripts folder (pip install --user puts them in ~/.local/bin)."""
    import sysconfig

    folders = [os.path.dirname(os.path.abspath(executable))]
    for scheme in (None, f"{os.name}_user"):
        try:
            folder = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if folder and folder not in folders:
            folders.append(folder)
    return folders


def launcher_dir(executable: str | None = None, program: str | None = None) -> str:
    """The folder whose `pinky-hooks` and `pinky-mcp` the written entries run (nothing is written here; see
    `plugin_launchers` for the plugin, whose launchers setup writes when they are missing)."""
    from pinky.base.command import plugin_root_of

    executable = executable or sys.executable
    program = (sys.argv[0] if sys.argv else "") if program is None else program
    here = os.path.dirname(os.path.abspath(executable))
    if not (program and plugin_root_of(program)) and not plugin_runtime_bin(here):
        for folder in script_folders(executable):
            if all(os.path.isfile(os.path.join(folder, name)) for name in (HOOKS_COMMAND, MCP_COMMAND)):
                return folder
        raise InvalidInput(f"found no {HOOKS_COMMAND} and {MCP_COMMAND} next to {executable}; "
                           "reinstall pinky-brain (pipx install <its clone or git URL>)")
    from pinky.setup.cli_install import runs_pinky

    local = os.path.expanduser(LOCAL_BIN)
    if all(runs_pinky(os.path.join(local, name)) for name in (HOOKS_COMMAND, MCP_COMMAND)):
        return local
    if program and plugin_root_of(program):
        return local  # plugin_launchers writes them there before anything names them
    raise InvalidInput("run setup through the plugin's bin/pinky-brain, or `pinky-brain install-cli` first: it "
                       f"writes the {MCP_COMMAND} and {HOOKS_COMMAND} launchers the host's config will run "
                       "(this runtime's own folder is replaced by the next plugin update)")


def plugin_launchers(program: str | None = None) -> list[str]:
    """For the Claude Code plugin: write the ~/.local/bin launchers the entries name (install-cli's, found again
    after every plugin update), unless they are there and run pinky; one line per file written."""
    from pinky.base.command import plugin_root_of

    program = (sys.argv[0] if sys.argv else "") if program is None else program
    root = plugin_root_of(program) if program else None
    if root is None:
        return []
    from pathlib import Path

    from pinky.setup.cli_install import install_companions

    return install_companions(Path(os.path.expanduser(LOCAL_BIN)), "plugin", root, force=False, keep_pinky=True)


def command(folder: str, name: str) -> str:
    return shlex.quote(os.path.join(folder, name))


def mcp_entry(host: Host, folder: str) -> dict[str, Any]:
    """The `pinky` server entry in `host`'s own shape (`Host.mcp_entry`). `folder` "" (--project, the Gemini
    extension): found at run time by `find_script`, so the entry holds no path of this machine."""
    program, args = (os.path.join(folder, MCP_COMMAND), []) if folder else \
        ("sh", ["-c", find_script(MCP_COMMAND), MCP_COMMAND])
    return host.mcp_entry(program, args)


def hook_command(host: Host, folder: str, event: str) -> str:
    if not folder:
        return shlex.join(["sh", "-c", find_script(HOOKS_COMMAND), HOOKS_COMMAND, "--host", host.name, event])
    return f"{command(folder, HOOKS_COMMAND)} --host {host.name} {event}"


def hook_entries(host: Host, folder: str) -> dict[str, list[dict[str, Any]]]:
    """The hooks of `host` (Host.hooks) in its config's shape (`Host.hook_entry`): host event -> list of entries."""
    out: dict[str, list[dict[str, Any]]] = {}
    for hook in host.hooks:
        out.setdefault(hook.event, []).append(host.hook_entry(hook, hook_command(host, folder, hook.pinky)))
    return out


def is_ours(entry: Any) -> bool:
    """Whether a hook entry (or a group of them) runs pinky-hooks: what setup wrote and --remove takes out."""
    if isinstance(entry, dict):
        if isinstance(entry.get("hooks"), list):
            return bool(entry["hooks"]) and all(is_ours(one) for one in entry["hooks"])
        line = entry.get("command", entry.get("bash"))
        if isinstance(line, str):
            try:
                words = shlex.split(line)
            except ValueError:
                return False
            if words[:2] == ["sh", "-c"] and len(words) > 3:  # the portable form: sh -c FIND pinky-hooks ...
                return words[3] == HOOKS_COMMAND
            return bool(words) and os.path.basename(words[0]) == HOOKS_COMMAND
    return False


