"""Run pinky from the Claude Code plugin, preparing its Python runtime the first time.

`run` (POSIX sh, next to this file) execs:  <python> launch.py <data dir> <mode> [args...]

    mcp             the MCP server (pinky-mcp)
    hooks <event>   a Claude Code hook (pinky-hooks); fails open: exit 0 and one line on stderr
    cli [args]      the pinky CLI (the plugin's bin/pinky, on the agent's Bash PATH)
    prepare         prepare the runtime now, in the foreground
    info            where the runtime is and whether it is ready, as JSON on stdout

The launcher is stdlib-only, one concern a module:

    pinky_launcher.py         this: the modes, and running pinky's entry points inside the runtime
    pinky_runtime_lookup.py   which runtime this plugin needs (its key), where it is, whether it is ready
    pinky_runtime_prepare.py  building the runtime (venv + pip under a lock), failure record, prune
    pinky_runtime_previous.py the previous runtime, which serves while an update's runtime is prepared
    pinky_mcp_standin.py      the MCP server that answers while the runtime is prepared, then relays

The hot path (a hook runs on every Read and Edit) loads only this module and pinky_runtime_lookup, from
launch.py's bytecode cache, and imports nothing beyond os, sys and fcntl (the runtime's lease: prune() deletes
no runtime a process runs from). The others are imported, from the same
cache (BytecodeCache), only when the runtime is not ready, or for `prepare` and `info`.
"""

import os
import sys

from pinky_runtime_lookup import (
    KEY_TRUSTED,
    LauncherError,
    entry_script,
    is_ready,
    lease,
    plugin_root,
    remember_python,
    runtime_home,
    runtime_key,
    venv_python,
)


class RuntimeGone(LauncherError):
    """The runtime was pruned between the check that it is ready and the lease on it."""


# mode -> (program name, module whose main() the console script of pyproject.toml [project.scripts] calls)
ENTRY_POINTS = {"cli": ("pinky", "pinky.cli.main"), "mcp": ("pinky-mcp", "pinky.mcp.front"),
                "hooks": ("pinky-hooks", "pinky.hooks.dispatch")}
MODES = (*ENTRY_POINTS, "prepare", "info")


# --- running pinky --------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] not in MODES:
        sys.stderr.write(f"usage: launch.py DATA_DIR {{{','.join(MODES)}}} [args...]\n")
        return 2
    data, mode, args = argv[0], argv[1], argv[2:]
    try:
        if not data:  # `run` always names one; a relative "runtime" folder in the project would be wrong
            raise LauncherError("no plugin data folder given (start pinky through runtime/run)")
        return launch(data, mode, args)
    except BaseException as exc:
        if mode != "hooks" or (isinstance(exc, SystemExit) and not exc.code):
            if isinstance(exc, LauncherError):
                sys.stderr.write(f"pinky-brain: {exc}\n")
                return 1
            raise
        # A hook must never stand in the agent's way.
        sys.stderr.write(f"pinky-brain hook: {type(exc).__name__}: {exc} (ignored; the action proceeds)\n")
        return 0


def launch(data: str, mode: str, args: list[str]) -> int:
    root = plugin_root()
    if mode == "hooks":  # the hot path: the key checked in the last KEY_TRUSTED seconds, when its runtime is ready
        venv = os.path.join(runtime_home(data), runtime_key(data, root, trust_for=KEY_TRUSTED))
        if is_ready(venv):
            return run_in(data, venv, mode, args)
    key = runtime_key(data, root)
    venv = os.path.join(runtime_home(data), key)
    if mode in ENTRY_POINTS and is_ready(venv):
        return run_in(data, venv, mode, args)  # the common case: nothing more to import
    if mode == "info":
        return show_info(data, root, key, venv)
    with BytecodeCache(data):
        from pinky_runtime_prepare import prepare
    if mode in ("hooks", "mcp"):
        return until_ready(data, root, key, venv, mode, args)
    if mode == "prepare":
        prepare(data, root, key, sys.stderr)
        return 0
    sys.stderr.write(f"pinky-brain: preparing its runtime in {venv} (once per install or update of the plugin)\n")
    prepare(data, root, key, sys.stderr)
    return run_in(data, venv, mode, args)


def until_ready(data: str, root: str, key: str, venv: str, mode: str, args: list[str]) -> int:
    """A hook or the MCP server while the runtime this plugin needs is not ready: its preparation is started in
    the background, and the previous runtime serves meanwhile (pinky_runtime_previous says when it may); without
    one, hooks are skipped and the stand-in server offers brain_status until the runtime is ready."""
    import time

    with BytecodeCache(data):
        from pinky_runtime_prepare import failure_text, recent_failure, start_preparing
        from pinky_runtime_previous import previous_runtime
    started = time.time()  # a new session (the server's start) tries a failed preparation again
    state = start_preparing(data, key, since=started if mode == "mcp" else None)
    previous, why_not = previous_runtime(data, root, venv)
    if previous is not None:
        if mode == "mcp":
            sys.stderr.write(f"pinky-mcp: {state}; until then the previous runtime serves ({previous})\n")
        failed = recent_failure(data, key, max_age=None) if args == ["session-start"] else None
        notice = f"{failure_text(data, key, failed)}. Until then the previous version serves." if failed else None
        try:
            return run_in(data, previous, mode, args, notice)
        except RuntimeGone:  # pruned meanwhile: the new runtime is ready by now, or the stand-in serves
            return launch(data, mode, args)
    if mode == "hooks":
        sys.stderr.write(f"pinky-brain hook {args[0] if args else ''}: skipped, {state}\n")
        return 0
    sys.stderr.write(f"pinky-mcp: {state}; serving brain_status until then ({why_not})\n")
    with BytecodeCache(data):
        from pinky_mcp_standin import PreparingServer
    return PreparingServer(data, venv, started, why_not).serve()


def run_in(data: str, venv: str, mode: str, args: list[str], notice: str | None = None) -> int:
    """Run the entry point inside the runtime: in this process when it is the runtime's interpreter (one
    interpreter start per hook), else by exec'ing that interpreter on this file. `notice`: a line for the user
    in the systemMessage of Claude Code's SessionStart hook (with_notice)."""
    if sys.prefix != venv and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        remember_python(data, venv, replace=False)
        python = venv_python(venv)
        os.execv(python, [python, entry_script(), data, mode, *args])
    if not lease(venv):
        raise RuntimeGone(f"the runtime {venv} was removed while starting; start again")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    program, module = ENTRY_POINTS[mode]
    if mode == "cli":  # the plugin's own launcher, which `pinky-brain install-cli` points a stable one at
        program = os.path.join(plugin_root(), "bin", "pinky-brain")
    sys.argv = [program, *args]
    __import__(module)
    if notice:
        return with_notice(sys.modules[module].main, notice)
    return sys.modules[module].main() or 0


def with_notice(main, notice: str) -> int:  # noqa: ANN001 - a hook's main()
    """Run a Claude Code hook and add `notice` to the systemMessage of the JSON it prints (Claude Code shows it
    to the user); its output is left alone when it is not a JSON object."""
    import io
    import json

    real, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        code = main(sys.argv[1:]) or 0  # given its arguments, it returns (else it ends the process at once)
    finally:
        captured, sys.stdout = sys.stdout, real
    captured.flush()
    out = captured.buffer.getvalue().decode("utf-8", "replace")
    try:
        answer = json.loads(out) if out.strip() else {}
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        shown = answer.get("systemMessage")
        answer["systemMessage"] = f"{shown}\n{notice}" if isinstance(shown, str) and shown else notice
        out = json.dumps(answer) + "\n"
    sys.stdout.write(out)
    sys.stdout.flush()
    return code


def show_info(data: str, root: str, key: str, venv: str) -> int:
    import json

    with BytecodeCache(data):
        from pinky_runtime_prepare import log_path, recent_failure
        from pinky_runtime_previous import previous_runtime
    ready = is_ready(venv)
    previous, why_not = (None, "") if ready else previous_runtime(data, root, venv)
    info = {"plugin_root": root, "data": data, "key": key, "runtime": venv, "ready": ready,
            "python": sys.executable, "log": log_path(data), "failure": recent_failure(data, key, max_age=None),
            "meanwhile": previous, "meanwhile_not": why_not or None}
    sys.stdout.write(json.dumps(info, indent=2) + "\n")
    return 0


class BytecodeCache:
    """`with BytecodeCache(data): import ...` loads the launcher's other modules the way launch.py loads this
    one: compiled once into the data folder's bytecode cache (launch.py says why), not from source on every
    start, nor into a __pycache__ in the plugin folder. Only the launcher's own modules are imported inside:
    a stdlib module would be compiled into the cache too."""

    def __init__(self, data: str) -> None:
        self.prefix = os.path.join(runtime_home(data), "pycache")  # the folder launch.py names
        self.saved: tuple[str | None, bool] = (None, False)

    def __enter__(self) -> None:
        self.saved = sys.pycache_prefix, sys.dont_write_bytecode
        sys.pycache_prefix, sys.dont_write_bytecode = self.prefix, False

    def __exit__(self, *exc_info: object) -> None:
        sys.pycache_prefix, sys.dont_write_bytecode = self.saved


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
