"""The session digest every host is shown at session start (Claude Code's SessionStart hook, the other hosts' own
session events, the always-applied rules file of hosts whose hooks cannot show the model anything).

A compact, budgeted text: the brain's size, the project's most important and most recently changed gotchas and
decisions, notes from the global brain about this project, entries marked wrong or outdated, entries due for
re-verification, what the diary recorded since the previous session, and a reminder to use brain_search/brain_save.
Read through the stdlib read-only connection (`pinky.store.readonly`): it runs on the hooks' path.
"""

from __future__ import annotations

import time

from pinky.base.locations import Locations
from pinky.base.shown import plain, shown
from pinky.store import readonly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from sqlite3 import Connection

DEFAULT_DIGEST_CHARS = 1500
DEFAULT_REVERIFY_DAYS = 90
KEY_TYPES = ("gotcha", "decision")
GLOBAL_SHOWN = 4
REVERIFY_TYPES = ("gotcha", "decision", "pattern", "bug", "guide")
# Hosts that load MCP tools on demand (Claude Code 2.1.337's ToolSearch, Qwen Code's tool_search) show the model
# only the tools' names: the reminder says how to load them, or the model never calls one.
REMINDER = ("Before non-trivial work, brain_search the brain (pinky MCP); when you learn a gotcha, "
            "decision or pattern worth keeping, brain_save it. If those tools are not loaded yet, load them "
            "with your tool search first (ToolSearch query: pinky brain).")


def diary_since(save_dir: str, since: float | None, session_id: str, *, limit: int = 6) -> list[str]:
    """The newest diary lines written after `since` by other sessions (asked/commits first)."""
    from pinky.capture.diary import DiaryLine, as_local, diary_days, read_day, session_tags

    start = as_local(since) if since else None
    own = session_tags(session_id) if session_id else ()
    picked: list[tuple[int, DiaryLine]] = []
    for day in reversed(diary_days(save_dir)[-7:]):
        if start and day < start.date():
            break
        for line in reversed(read_day(save_dir, day, start)):
            if line.session not in own and line.kind != "skipped":  # a count of unreadable transcript lines
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
                 reverify_days: int, refresh: Callable[[Connection], Connection | None] | None = None,
                 diary: bool = True, global_notes: bool = True) -> str:
    """The digest; `diary=False` leaves out the diary's lines (prompts, shell commands) and `global_notes=False` the
    user's global brain, for a file others read (`pinky.hosts.rules`)."""
    conn = readonly.connect_ro(loc.read_db)
    if conn is not None and refresh is not None:  # the hooks': the global brain as it is on disk now
        conn = refresh(conn)
    sections: list[list[str]] = []
    if conn is None:
        head = "pinky brain: no index yet; `pinky-brain reindex` is building it in the background."
    else:
        try:
            head, sections = _sections(conn, reverify_days, loc.project or "", global_notes)
        finally:
            conn.close()
    lines = diary_since(loc.save_dir or "", since, session_id) if diary else []
    if lines:
        sections.append(["Diary since the last session:"] + [f"- {_clip(line, 160)}" for line in lines])
    return _fit(head, sections, REMINDER, budget)


def _sections(conn: Connection, reverify_days: int, project: str,
              global_notes: bool = True) -> tuple[str, list[list[str]]]:
    by_root = readonly.entries_by_root(conn)
    total = sum(by_root.values())
    types = ", ".join(f"{n:,} {t}" for t, n in readonly.commonest_types(conn, 5))
    types = f"; {types}" if types else ""  # an empty brain has no types to name: no dangling "; )"
    head = (f"pinky brain: {total:,} entries ({by_root.get('project', 0):,} in this project, "
            f"{by_root.get('global', 0):,} global{types}).")
    sections: list[list[str]] = []
    key = readonly.key_entries(conn, "project", KEY_TYPES)
    if key:
        sections.append(["Key gotchas and decisions (most important, then most recently changed):"]
                        + [f"- {plain(slug)} [{type_}] {_clip(title, 100)}" for slug, type_, title in key])
    shared = readonly.global_entries_for(conn, project, GLOBAL_SHOWN) if global_notes and by_root.get("global") \
        else []
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
