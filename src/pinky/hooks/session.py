"""SessionStart: a compact, budgeted digest of the brain (`pinky.hosts.digest`, which every host shares), and a
background reindex.

The digest (default at most 1,500 characters, PINKY_DIGEST_CHARS) carries the brain's size,
the project's most important and most recently changed gotchas and decisions, entries someone
marked wrong or outdated (`pinky feedback`, brain_feedback), entries due for re-verification
(last_verified older than PINKY_REVERIFY_DAYS, default 90), what the diary recorded since the
previous session, and a reminder to use brain_search/brain_save.

Markdown may have changed on disk (a `git pull`), so the hook starts `pinky reindex` as a
detached process with all three standard streams on /dev/null: Claude Code waits for the
hook's stdout to close, and a child holding it open would stall every session start.
"""

from __future__ import annotations

import os
import sys
import time

from pinky.base.locations import ENV_DIGEST_CHARS, ENV_HOOKS_NO_BACKGROUND, ENV_REVERIFY_DAYS, Locations, env_number
from pinky.hosts.digest import DEFAULT_DIGEST_CHARS, DEFAULT_REVERIFY_DAYS, build_digest, diary_since

__all__ = ["DEFAULT_DIGEST_CHARS", "DEFAULT_REVERIFY_DAYS", "build_digest", "diary_since", "install_offer",
           "session_start", "spawn_detached", "spawn_reindex"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pinky.hooks.state import StateFiles

REINDEX_DEBOUNCE_S = 60


def session_start(payload: dict, loc: Locations, state: StateFiles, notices: bool = True) -> dict | None:
    """notices=False: a digest that goes into a rules file the repository commits (Cursor, Copilot, Windsurf)
    carries no notice about this machine's configs; they still go to stderr."""
    broken = broken_hosts()
    offer = ("\n".join(filter(None, [install_offer(loc), *broken])) or None) if notices else None
    if not loc.in_project:  # not a pinky project: silent, but for the install-cli offer and broken host entries
        return {"systemMessage": offer} if offer else None
    if not os.environ.get(ENV_HOOKS_NO_BACKGROUND):
        spawn_reindex(loc)
    session_id = str(payload.get("session_id") or "")
    since = _remember_session(loc, session_id, state)
    budget = int(env_number(ENV_DIGEST_CHARS, DEFAULT_DIGEST_CHARS, 200, 9000))
    from pinky.base.global_signature import ONE_SHOT_WALK_LIMIT
    from pinky.hooks.hook_index import fresh_connection

    digest = build_digest(loc, since=since, session_id=session_id, budget=budget,
                          reverify_days=int(env_number(ENV_REVERIFY_DAYS, DEFAULT_REVERIFY_DAYS, 1, 36500)),
                          refresh=lambda conn: fresh_connection(loc, conn, walk_limit=ONE_SHOT_WALK_LIMIT))
    out: dict = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": digest}}
    if offer:
        out["systemMessage"] = offer
        out["hookSpecificOutput"]["additionalContext"] += f"\n{offer} (tell the user; it is for their shell)"
    return out


def broken_hosts() -> list[str]:
    """The hosts whose config runs a pinky command that is gone (pinky.setup.broken), also on stderr: a host that
    shows no systemMessage still shows a hook's stderr."""
    from pinky.setup.broken import broken_entries

    lines = broken_entries()
    for line in lines:
        sys.stderr.write(line + "\n")
    return lines


# --- the command in the user's own shell ---------------------------------------------------------


def install_offer(loc: Locations) -> str | None:
    """Once per machine, when the plugin runs and the user's shell cannot find `pinky-brain` (the plugin's bin/
    is only on the agent's PATH): the command that installs it. A marker in the state folder remembers the offer."""
    from pinky.base.command import NAME, installed

    root = os.environ.get("CLAUDE_PLUGIN_ROOT") or ""
    launcher = os.path.join(root, "bin", NAME)
    marker = os.path.join(loc.state_dir, "hooks", "install-cli-offered")
    if not root or not os.path.isfile(launcher) or os.path.exists(marker) or installed():
        return None
    from pinky.base.private import write_private

    try:
        write_private(marker, f"{time.time():.0f} {launcher}\n", loc.state_dir)
    except OSError:
        return None  # an offer that cannot be remembered would be repeated every session
    return (f"pinky: `{NAME}` is not on your shell's PATH (the plugin puts it on the agent's only). To use it in "
            f"a terminal, run once: {launcher} install-cli")


# --- background reindex --------------------------------------------------------------------------


def _marker(loc: Locations, name: str) -> str:
    import hashlib

    key = hashlib.sha1(loc.db.encode("utf-8", "replace")).hexdigest()[:12]
    return os.path.join(loc.state_dir, "hooks", f"{name}-{key}")


def spawn_reindex(loc: Locations, *, debounce_s: float = REINDEX_DEBOUNCE_S) -> bool:
    """Start `pinky reindex` detached, unless one was started in the last minute for this index."""
    marker = _marker(loc, "reindex")
    try:
        if time.time() - os.stat(marker).st_mtime < debounce_s:
            return False
    except OSError:
        pass
    from pinky.base.private import write_private

    write_private(marker, str(os.getpid()), loc.state_dir)
    spawn_detached(["-c", "import sys; from pinky.cli.main import main; sys.argv[0] = 'pinky'; main()", "reindex"], loc)
    return True


def spawn_detached(args: list[str], loc: Locations) -> None:
    """Run `python <args>` in its own session, streams on /dev/null, with this hook's brain locations."""
    import subprocess

    env = dict(os.environ, PINKY_HOME=loc.home)
    kwargs: dict = {"start_new_session": True}
    if sys.platform == "win32":  # pragma: no cover
        kwargs = {"creationflags": 0x00000008 | 0x00000200}  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
    subprocess.Popen([sys.executable, *args], cwd=loc.base_dir, env=env, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, **kwargs)


# --- "since the last session" ---------------------------------------------------------------------


def _remember_session(loc: Locations, session_id: str, state: StateFiles) -> float | None:
    """Record this session's start; return when the previous (different) session started."""
    path = os.path.join(loc.state_dir, "hooks", "sessions.json")
    data = state.read(path)
    stored = data.get(loc.db)
    entry: dict = stored if isinstance(stored, dict) else {}
    now = time.time()
    if entry.get("session") == session_id and session_id:  # resume / clear / compact of the same session
        since = entry.get("previous")
    else:
        since = entry.get("at")
        data[loc.db] = {"session": session_id, "at": now, "previous": since}
        state.write(path, data)
    return since if isinstance(since, int | float) else None
