"""`pinky-hooks <event>`: the Claude Code hooks (session-start, pre-read, pre-write, user-prompt, stop,
pre-compact).

Each hook reads one JSON object on stdin and writes at most one JSON object on stdout.
Why this shape: Claude Code starts a fresh process for every Read/Write/Edit, so the hot
hooks must cost little more than the interpreter's own start. This package therefore
imports only `os` and `sys` at module level, parses JSON with the C scanner from `_json`
(the `json` package drags in `re` and `enum`, ~5 ms), reaches the index through stdlib
`sqlite3` opened read-only, and never touches click, the KnowledgeBase, numpy, dulwich,
the MCP SDK or the embedder. Only the Stop and PreCompact hooks, whose budgets are larger, write.

Hooks fail open: whatever goes wrong, the exit status is 0 and one line goes to stderr,
so a broken brain never blocks the agent.
"""

from __future__ import annotations

import os
import sys

from pinky.base.locations import Locations, locate, start_folder
from pinky.hooks.state import StateFiles, dumps, loads

EVENTS = ("session-start", "pre-read", "pre-write", "user-prompt", "stop", "pre-compact")
MAX_STDIN = 8 * 1024 * 1024


# --- where things are ----------------------------------------------------------------------------


def hook_locations(payload: dict, env: dict[str, str] | os._Environ[str] | None = None) -> Locations:
    """The brain the CLI and the MCP server would use, seen from the session's project folder."""
    env = os.environ if env is None else env
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    return locate(env=env, start=start_folder(env, cwd))


# --- the entry point -------------------------------------------------------------------------------


def _read_payload() -> dict:
    data = sys.stdin.buffer.read(MAX_STDIN) if sys.stdin is not None else b""
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        return {}
    value = loads(text)
    if not isinstance(value, dict):
        raise ValueError("hook input is not a JSON object")
    return value


def run(event: str, payload: dict) -> dict | None:
    """Run one hook; returns the JSON object to print, or None to print nothing."""
    loc = hook_locations(payload)
    if event == "pre-read":
        from pinky.hooks.files import pre_read

        return pre_read(payload, loc)
    if event == "pre-write":
        from pinky.hooks.files import pre_write

        return pre_write(payload, loc)
    if event == "user-prompt":
        from pinky.hooks.prompt import user_prompt

        return user_prompt(payload, loc, StateFiles(loc.state_dir))
    if event == "session-start":
        from pinky.hooks.session import session_start

        return session_start(payload, loc, StateFiles(loc.state_dir))
    if event == "stop":
        from pinky.hooks.stop import stop

        # None, or the capture ask: any output makes Claude continue
        return stop(payload, loc, StateFiles(loc.state_dir))
    if event == "pre-compact":
        from pinky.hooks.compact import pre_compact

        pre_compact(payload, loc, StateFiles(loc.state_dir))
        return None  # compaction proceeds; the diary now holds what it would drop
    if event == "rollup":
        from pinky.hooks.stop import rollup

        rollup(payload, loc, StateFiles(loc.state_dir))
        return None
    raise ValueError(f"unknown event {event!r}; use one of {', '.join(EVENTS)}")


def _shown(result: dict) -> dict:
    """Every string the agent will read, credentials hidden (pinky.base.shown): one last pass over all of it."""
    from pinky.base.shown import shown_all

    return shown_all(result)


def main(argv: list[str] | None = None) -> int:
    """Console script `pinky-hooks <event>`. Always exits 0 (fail open)."""
    rc = _main(sys.argv[1:] if argv is None else argv)
    if argv is None:
        # As a process of its own, skip the interpreter's teardown (freeing every module and
        # object): it measured ~2 ms of a ~12 ms hook. Output is flushed and files are closed.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def _main(args: list[str]) -> int:
    host = ""
    if args and args[0].startswith("--host"):  # another agent host than Claude Code: pinky.hooks.hosted
        host, args = (args[0][7:], args[1:]) if args[0].startswith("--host=") else (
            args[1] if len(args) > 1 else "", args[2:])
        from pinky.hosts.catalog import NATIVE  # stdlib only, nothing loaded

        host = "" if host == NATIVE else host or "?"
    event = args[0] if args else ""
    if event in ("-h", "--help", ""):
        sys.stderr.write("usage: pinky-hooks [--host HOST] {" + ",".join(EVENTS)
                         + "}  (reads the hook JSON on stdin)\n")
        return 0
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # a stray print anywhere below must not corrupt the hook's JSON
    try:
        if host:
            from pinky.hooks.hosted import run_hosted

            result = run_hosted(host, event, _read_payload())
        else:
            result = run(event, _read_payload())
        out = dumps(_shown(result)) if result else ""
    except BaseException as exc:  # fail open, whatever it was (KeyboardInterrupt and SystemExit included)
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        message = " ".join(str(exc).split())[:300]
        where = f"--host {host} {event}" if host else event
        sys.stderr.write(f"pinky-hooks {where}: {type(exc).__name__}: {message} (ignored; the action proceeds)\n")
        return 0
    finally:
        sys.stdout = real_stdout
    if out:
        real_stdout.write(out + "\n")
        real_stdout.flush()
    return 0
