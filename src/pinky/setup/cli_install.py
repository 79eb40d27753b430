"""`pinky-brain install-cli`: put a `pinky-brain` that keeps working into a folder on the user's PATH.

Two kinds of installation reach this:

- The Claude Code plugin. Its CLI is `<plugin>/bin/pinky-brain`, a sh script that finds the plugin's runtime
  from its own location, so a symlink to it would not work, and Claude Code keeps the plugin in a folder named
  after its version (~/.claude/plugins/cache/<marketplace>/pinky/<version>), which an update replaces. So a
  small launcher is written instead: it runs the plugin's own bin/pinky-brain, looking the plugin's current
  folder up in Claude Code's installed_plugins.json on every start. It never names the hashed runtime folder.
- pip, pipx or uv. The console script `pinky-brain` sits next to the interpreter; it is linked, unless the
  shell already finds it.

Only a launcher this command wrote and nobody edited since (its text is exactly what this command writes), or a link
that leads nowhere, is replaced without --force.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pinky.base.command import LAUNCHER_MARK, NAME, installed, is_ours, on_path, plugin_root_of
from pinky.base.fileio import atomic_write
from pinky.errors import Conflict, InvalidInput

DEFAULT_DIR = "~/.local/bin"  # where pipx, uv and pip --user put commands; on PATH in most shells' profiles

LAUNCHER = """#!/bin/sh
{mark}
# Runs the pinky Claude Code plugin's own bin/pinky-brain (or, for pinky-mcp and pinky-hooks, its runtime/run).
# The plugin Claude Code has installed comes first, looked up in its installed_plugins.json at every start:
# Claude Code copies a plugin (even from a marketplace added by path) into a folder named after its version and
# replaces it on update, and running the copy Claude Code runs means one runtime for both. The folder below is
# the fallback (the plugin this file was written from). Rerun `pinky-brain install-cli` to point it elsewhere.
plugin={root}
config=${{CLAUDE_CONFIG_DIR:-$HOME/.claude}}
case $plugin in */plugins/cache/*/*/*) config=${{plugin%%/plugins/cache/*}} ;; esac
current=$(sed -n 's|.*"installPath"[[:space:]]*:[[:space:]]*"\\([^"]*/plugins/cache/[^"]*/pinky/[^"]*\\)".*|\\1|p' \\
    "$config/plugins/installed_plugins.json" 2>/dev/null |
    while IFS= read -r path; do
        [ -f "$path/bin/pinky-brain" ] && echo "$path" && break
    done)
plugin=${{current:-$plugin}}
if [ ! -f "$plugin/bin/pinky-brain" ]; then
    echo "pinky-brain: the pinky plugin is no longer in $plugin; reinstall it (claude plugin install" \\
        "pinky@pinky-market), or remove this launcher ($0)" >&2
    exit {missing}
fi
exec sh "$plugin/{target}"{mode} "$@"
"""
# The commands a host's config runs (pinky-brain setup <host>), written beside pinky-brain (issue 31 item 8):
# for the plugin through its runtime launcher, for pip/pipx/uv as links to the console scripts.
COMPANIONS = {"pinky-mcp": "mcp", "pinky-hooks": "hooks"}  # name -> the plugin's runtime/run mode


@dataclass
class Installed:
    """What install-cli did: `done` lines to print, and whether the folder is on PATH (`path_line` if not)."""

    target: str
    source: str
    kind: str  # "plugin launcher" | "link"
    changed: bool
    on_path: bool
    path_line: str | None = None
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        if self.kind == "plugin launcher":
            what = f"{'wrote' if self.changed else 'already there:'} {self.target}, a launcher for the plugin's " \
                f"{self.source}"
        elif self.target == self.source:
            return [f"nothing to do: the shell already finds `{NAME}` at {self.target}"]
        else:
            what = f"{'linked' if self.changed else 'already linked:'} {self.target} -> {self.source}"
        out = [what, *self.notes]
        if self.on_path:
            out.append(f"{Path(self.target).parent} is on PATH: `{NAME}` works in new shells (run `hash -r` in "
                       "this one if it looked for the command before)")
        else:
            out.append(f"{Path(self.target).parent} is not on PATH; add it with this line, then open a new shell:")
            out.append(f"    {self.path_line}")
        return out

    def as_dict(self) -> dict:
        return {"target": self.target, "source": self.source, "kind": self.kind, "changed": self.changed,
                "on_path": self.on_path, "path_line": self.path_line, "notes": self.notes}


def this_cli(program: str | None = None, executable: str | None = None) -> tuple[str, str]:
    """("plugin", plugin root) when the running CLI is the Claude Code plugin's (its launcher sets argv[0] to
    <plugin>/bin/pinky-brain), else ("script", the console script `pinky-brain` of this interpreter)."""
    program = sys.argv[0] if program is None else program
    root = plugin_root_of(program) if program else None
    if root:
        return "plugin", root
    script = Path(executable or sys.executable).with_name(NAME)
    if not script.is_file() and os.path.basename(program or "") == NAME and os.path.isfile(program):
        script = Path(program)
    if not script.is_file():
        raise InvalidInput(f"found no `{NAME}` console script next to {executable or sys.executable}; reinstall "
                           "pinky-brain (pipx install …), or run install-cli from the plugin's bin/pinky-brain")
    return "script", str(script.absolute())


def launcher_text(root: str, mode: str | None = None) -> str:
    """The launcher of the plugin's bin/pinky-brain, or with `mode` (mcp, hooks) of its runtime in that mode."""
    return LAUNCHER.format(mark=LAUNCHER_MARK, root="'" + root.replace("'", "'\\''") + "'",
                           target="runtime/run" if mode else f"bin/{NAME}", mode=f" {mode}" if mode else "",
                           missing=0 if mode == "hooks" else 1)  # a hook fails open


def install_cli(directory: str | None = None, *, force: bool = False, program: str | None = None,
                executable: str | None = None) -> Installed:
    kind, source = this_cli(program, executable)
    folder = Path(os.path.expanduser(directory or DEFAULT_DIR)).absolute()
    target = folder / NAME
    if kind == "script" and directory is None:
        found = installed()
        if found and os.path.realpath(found) == os.path.realpath(source):
            return Installed(source, source, "link", False, True)
    check_pathable(str(folder))
    _check_folder(folder)
    if kind == "plugin":
        changed = _write_launcher(target, launcher_text(source), force)
        result = Installed(str(target), os.path.join(source, "bin", NAME), "plugin launcher", changed, False)
    else:
        changed = _link(target, source, force)
        result = Installed(str(target), source, "link", changed, False)
    result.notes.extend(install_companions(folder, kind, source, force))
    result.on_path, result.path_line = path_status(folder)
    first = on_path(NAME)
    if result.on_path and first and os.path.realpath(first) != os.path.realpath(target):
        result.notes.append(f"but {first} comes first on PATH, so `{NAME}` runs that one")
    return result


def install_companions(folder: Path, kind: str, source: str, force: bool, keep_pinky: bool = False) -> list[str]:
    """pinky-mcp and pinky-hooks beside pinky-brain, so a host's config (pinky-brain setup) runs commands that
    survive updates; one line per command written. keep_pinky (setup): a command already there that runs
    another pinky install (a link to pipx's console script) is left as it is, not refused."""
    done = []
    if keep_pinky:
        _check_folder(folder)
    for name, mode in COMPANIONS.items():
        target = folder / name
        if keep_pinky and _existing(target) and runs_pinky(str(target)):
            continue
        if kind == "plugin":
            if _write_launcher(target, launcher_text(source, mode), force):
                done.append(f"wrote {target}, a launcher for the plugin's `{mode}` runtime")
            continue
        script = str(Path(source).with_name(name))
        if os.path.isfile(script) and _link(target, script, force):
            done.append(f"linked {target} -> {script}")
    return done


def runs_pinky(path: str) -> bool:
    """An executable file that runs pinky: a console script (it imports `pinky.`), or a launcher of the plugin."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False
    return os.access(path, os.X_OK) and (b"pinky." in head or b"pinky-brain" in head)


def _check_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder; name another with --dir")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create {folder} ({exc.strerror}); name another folder with --dir") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(f"cannot write into {folder}; name another folder with --dir")


def _existing(target: Path) -> str | None:
    """None when target is free or install-cli's own (replaceable); else why it is kept."""
    if not os.path.lexists(target):
        return None
    if target.is_symlink():
        if not target.exists():
            return None  # a link into a removed install
        where = os.readlink(target)
        return (f"{target} links to another pinky-brain ({where})" if is_ours(str(target))
                else f"{target} links to {where}, which is not pinky-brain")
    if target.is_file():
        try:
            head = target.read_bytes()[:4096]
        except OSError:
            head = b""
        if LAUNCHER_MARK.encode() in head:
            return None if as_written(head) else f"{target} is a pinky-brain launcher that was edited since " \
                "install-cli wrote it"
        return f"{target} is another pinky-brain install" if is_ours(str(target)) else \
            f"{target} is another program, not pinky-brain's CLI"
    return f"{target} exists and is not a file"


def as_written(head: bytes) -> bool:
    """Whether a launcher's text is exactly one install-cli writes (for the plugin folder it names): only such a
    file is replaced without --force, never one the user edited."""
    try:
        text = head.decode("utf-8")
        line = next(line for line in text.splitlines() if line.startswith("plugin="))
        root = shlex.split(line[len("plugin="):])
    except (UnicodeDecodeError, StopIteration, ValueError):
        return False
    # Launchers of earlier releases render the same text (the template only gained the mcp/hooks modes): when
    # LAUNCHER changes, keep recognising the old text here, or an upgrade would refuse its own launcher.
    return len(root) == 1 and text in {launcher_text(root[0], mode) for mode in (None, *COMPANIONS.values())}


def _refuse_unless(force: bool, target: Path) -> None:
    why = _existing(target)
    if why and not force:
        raise Conflict(f"{why}; left as it is (--force replaces it, or --dir names another folder)")
    if why and target.is_dir() and not target.is_symlink():
        raise Conflict(f"{target} is a folder; remove it or name another folder with --dir")


def _write_launcher(target: Path, text: str, force: bool) -> bool:
    try:
        if not target.is_symlink() and target.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    _refuse_unless(force, target)
    if target.is_symlink():
        target.unlink()
    atomic_write(target, text, mode=0o755)
    return True


def _link(target: Path, source: str, force: bool) -> bool:
    if target.is_symlink() and os.readlink(target) == source:
        return False
    _refuse_unless(force, target)
    temp = target.with_name(f".{NAME}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    os.symlink(source, temp)
    os.replace(temp, target)
    return True


_PLAIN = re.compile(r"[A-Za-z0-9_./@%+,=-]*")  # needs no quoting in sh, inside double quotes or out


def path_status(folder: Path) -> tuple[bool, str | None]:
    """Whether `folder` is on PATH, and if not the line that puts it there for the user's shell."""
    real = os.path.realpath(folder)
    if any(entry and os.path.realpath(entry) == real for entry in os.environ.get("PATH", "").split(os.pathsep)):
        return True, None
    return False, path_line(str(folder), os.path.expanduser("~"), os.path.basename(os.environ.get("SHELL", "")))


def path_line(folder: str, home: str, shell: str) -> str:
    """The line to paste that puts `folder` on PATH: what it writes into the profile names the folder as literal
    text, so a name holding `$(...)`, a quote or a backslash is neither run nor broken, at paste or at login."""
    check_pathable(folder)
    rest = folder[len(home):] if folder.startswith(home + os.sep) else None
    if shell == "fish":  # fish_add_path keeps the folder itself: no profile line to quote twice
        return "fish_add_path " + (fish_quote(folder) if rest is None else "~/" + fish_quote(rest[1:]))
    profile = "~/.zshrc" if shell == "zsh" else "~/.bashrc"
    shown = folder if rest is None else "$HOME" + rest
    if _PLAIN.fullmatch(folder if rest is None else rest):
        return f"echo 'export PATH=\"{shown}:$PATH\"' >> {profile}"
    named = shlex.quote(folder) if rest is None else '"$HOME"' + shlex.quote(rest)
    export = "export PATH=" + named + ':"$PATH"'
    return f"printf '%s\\n' {shlex.quote(export)} >> {profile}"


def check_pathable(folder: str) -> None:
    """A folder whose name holds the PATH separator or a control character cannot be put on PATH by any line."""
    if os.pathsep in folder or any(ord(c) < 32 or ord(c) == 127 for c in folder):
        raise InvalidInput(f"{folder!r} cannot go on PATH (its name holds {os.pathsep!r} or a control character); "
                           "name another folder with --dir")


def fish_quote(text: str) -> str:
    """`text` as one fish word: fish's single quotes take \\' and \\\\ as escapes, nothing else."""
    if _PLAIN.fullmatch(text):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
