"""SessionStart: a compact, budgeted digest of the brain, and a background reindex.

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
from pinky.base.shown import plain, shown
from pinky.store import readonly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection

    from pinky.hooks.state import StateFiles

DEFAULT_DIGEST_CHARS = 1500
DEFAULT_REVERIFY_DAYS = 90
REINDEX_DEBOUNCE_S = 60
KEY_TYPES = ("gotcha", "decision")
GLOBAL_SHOWN = 4
REVERIFY_TYPES = ("gotcha", "decision", "pattern", "bug", "guide")
REMINDER = ("Before non-trivial work, brain_search the brain (pinky MCP); when you learn a gotcha, "
            "decision or pattern worth keeping, brain_save it.")


def session_start(payload: dict, loc: Locations, state: StateFiles) -> dict | None:
    offer = install_offer(loc)
    if not loc.in_project:  # not a pinky project: silent, but for the one-time install-cli offer
        return {"systemMessage": offer} if offer else None
    if not os.environ.get(ENV_HOOKS_NO_BACKGROUND):
        spawn_reindex(loc)
    session_id = str(payload.get("session_id") or "")
    since = _remember_session(loc, session_id, state)
    budget = int(env_number(ENV_DIGEST_CHARS, DEFAULT_DIGEST_CHARS, 200, 9000))
    digest = build_digest(loc, since=since, session_id=session_id, budget=budget,
                          reverify_days=int(env_number(ENV_REVERIFY_DAYS, DEFAULT_REVERIFY_DAYS, 1, 36500)))
    out: dict = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": digest}}
    if offer:
        out["systemMessage"] = offer
        out["hookSpecificOutput"]["additionalContext"] += f"\n{offer} (tell the user; it is for their shell)"
    return out


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
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write(f"{time.time():.0f} {launcher}\n")
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
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    spawn_detached(["-c", "import sys; from pinky.cli import main; sys.argv[0] = 'pinky'; main()", "reindex"], loc)
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


# --- "since the last session" --------------------------------------------------------------------


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


def diary_since(save_dir: str, since: float | None, session_id: str, *, limit: int = 6) -> list[str]:
    """The newest diary lines written after `since` by other sessions (asked/commits first)."""
    from pinky.capture.diary import DiaryLine, as_local, diary_days, read_day, short_session

    start = as_local(since) if since else None
    own = short_session(session_id) if session_id else None
    picked: list[tuple[int, DiaryLine]] = []
    for day in reversed(diary_days(save_dir)[-7:]):
        if start and day < start.date():
            break
        for line in reversed(read_day(save_dir, day, start)):
            if line.session != own and line.kind != "skipped":  # a count of unreadable transcript lines
                picked.append(({"asked": 0, "commits": 1, "files": 2}.get(line.kind, 3), line))
        if len(picked) >= limit * 3:
            break
    picked.sort(key=lambda item: item[0])
    return [f"{line.date_text[5:]} {line.render()[2:]}" for _, line in picked[:limit]]


# --- the digest ------------------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters, credentials hidden before the cut (a note's title, a diary line)."""
    text = plain(shown(" ".join(text.split())))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def build_digest(loc: Locations, *, since: float | None, session_id: str, budget: int,
                 reverify_days: int) -> str:
    conn = readonly.connect_ro(loc.read_db)
    sections: list[list[str]] = []
    if conn is None:
        head = "pinky brain: no index yet; `pinky-brain reindex` is building it in the background."
    else:
        try:
            head, sections = _sections(conn, reverify_days, loc.project or "")
        finally:
            conn.close()
    diary = diary_since(loc.save_dir or "", since, session_id)
    if diary:
        sections.append(["Diary since the last session:"] + [f"- {_clip(line, 160)}" for line in diary])
    return _fit(head, sections, REMINDER, budget)


def _sections(conn: Connection, reverify_days: int, project: str) -> tuple[str, list[list[str]]]:
    by_root = readonly.entries_by_root(conn)
    total = sum(by_root.values())
    types = ", ".join(f"{n:,} {t}" for t, n in readonly.commonest_types(conn, 5))
    head = (f"pinky brain: {total:,} entries ({by_root.get('project', 0):,} in this project, "
            f"{by_root.get('global', 0):,} global; {types}).")
    sections: list[list[str]] = []
    key = readonly.key_entries(conn, "project", KEY_TYPES)
    if key:
        sections.append(["Key gotchas and decisions (most important, then most recently changed):"]
                        + [f"- {plain(slug)} [{type_}] {_clip(title, 100)}" for slug, type_, title in key])
    shared = readonly.global_entries_for(conn, project, GLOBAL_SHOWN) if by_root.get("global") else []
    if shared:
        sections.append(["From the global brain (about this project first, then the most used):"]
                        + [f"- {plain(slug)} [{type_}] {_clip(title, 100)}" for slug, type_, title in shared])
    flagged = readonly.flagged_entries(conn, 4)
    if flagged:
        sections.append(["Flagged for review (marked wrong or outdated; fix the note, or `pinky-brain verify` it):"]
                        + [f"- {plain(slug)} ({verdict} on {day})" for slug, verdict, day in flagged])
    cutoff = time.strftime("%Y-%m-%d", time.localtime(time.time() - reverify_days * 86400))
    count, stale = readonly.stale_entries(conn, REVERIFY_TYPES, cutoff, 4)
    if count:
        more = count - len(stale)
        sections.append([f"Needs re-verification ({count:,} not verified in {reverify_days} days; "
                         "check, then bump last_verified):"]
                        + [f"- {plain(slug)} (last {day[:10]})" for slug, day in stale]
                        + ([f"- … and {more:,} more"] if more > 0 else []))
    return head, sections


def _fit(head: str, sections: list[list[str]], reminder: str, budget: int) -> str:
    """Head and reminder always; then whole lines of each section while they fit in `budget`."""
    out = [_clip(head, budget // 2)]
    used = len(out[0]) + len(reminder) + 2
    for section in sections:
        if used + len(section[0]) + len(section[1] if len(section) > 1 else "") + 2 > budget:
            continue  # a title without its first line says nothing
        for index, line in enumerate(section):
            if used + len(line) + 1 > budget:
                break
            out.append(line)
            used += len(line) + 1
            if index == 0:
                continue
    out.append(reminder)
    return "\n".join(out)[:budget]
