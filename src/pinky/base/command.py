"""The name pinky's command line goes by, and where a shell finds it.

Every message, fix hint and example names the CLI `pinky-brain`: pip, pipx, uv and the Claude Code plugin all
install it under that name, and no other program uses it. The short `pinky` exists too, but Debian and Ubuntu
ship an unrelated /usr/bin/pinky (a `finger` clone) that comes first on most PATHs, so advice that says
`pinky reindex` would run the wrong program.

Stdlib only (the SessionStart hook asks whether the CLI is on PATH): os, no shutil.
"""

from __future__ import annotations

import os

NAME = "pinky-brain"
LAUNCHER_MARK = "# pinky-brain launcher, written by `pinky-brain install-cli`"  # the second line of one


def on_path(name: str = NAME, path: str | None = None) -> str | None:
    """The first executable file called `name` in PATH (or `path`), like shutil.which without its imports."""
    for folder in (os.environ.get("PATH", "") if path is None else path).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def is_ours(path: str) -> bool:
    """Whether the program at `path` is pinky's CLI: a pip/pipx/uv console script (it names pinky.cli), the
    plugin's bin/ wrappers, or a launcher `install-cli` wrote."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    return b"pinky.cli" in head or b"pinky-brain" in head


def plugin_root_of(program: str) -> str | None:
    """The Claude Code plugin folder when `program` is one of its bin/ launchers (bin/../runtime/run)."""
    folder = os.path.dirname(os.path.abspath(program))
    root = os.path.dirname(folder)
    if os.path.basename(folder) == "bin" and os.path.isfile(os.path.join(root, "runtime", "run")):
        return root
    return None


def agent_only(program: str) -> bool:
    """A plugin's bin/ inside Claude Code's plugin cache: Claude Code puts it on the agent's Bash PATH only,
    and a plugin update replaces the folder, so it does not count as the CLI being installed for the user."""
    root = plugin_root_of(program)
    return root is not None and f"{os.sep}plugins{os.sep}cache{os.sep}" in root


def installed(path: str | None = None) -> str | None:
    """Where the user's own shell finds `pinky-brain` (not the copy on the agent's PATH), if it does."""
    search = os.environ.get("PATH", "") if path is None else path
    folders = [f for f in search.split(os.pathsep) if not agent_only(os.path.join(f or ".", NAME))]
    return on_path(NAME, os.pathsep.join(folders)) if folders else None
