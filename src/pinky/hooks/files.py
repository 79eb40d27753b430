"""pre-read and pre-write: the brain entries linked to the file the agent is about to read or change.

An entry is linked to a file when (1) the file carries a `Brain: <slug>` breadcrumb in a
comment, (2) the entry's frontmatter `files:` names the file, or (3) the entry's body names the
file's relative path (the lookups are in `pinky.store.readonly`). Nothing linked -> no output.
"""

from __future__ import annotations

import os
from stat import S_ISREG  # loaded with os already

from pinky.base.locations import FILE_INDEX_HEADER, Locations, file_index_path
from pinky.base.shown import plain, shown

CRUMB_BYTES = 256 * 1024
MAX_SHOWN = 8
WRITE_TYPES = ("gotcha", "decision", "pattern", "bug")


def _crumbs_in(data: bytes) -> list[str]:
    """The breadcrumbs in `data`. Most files carry none: the parser module is loaded only when the mark
    is there (one module less on the hot path, ~0.1 ms)."""
    if b"Brain:" not in data:  # = pinky.text.breadcrumbs.MARK
        return []
    from pinky.text.breadcrumbs import breadcrumbs

    return breadcrumbs(data)


def _read_regular(path: str, limit: int = -1) -> bytes:
    """The bytes of a regular file; OSError for anything else, checked before it is opened (a FIFO
    would block the hook, and the agent, for ever; a device never ends). `pinky.base.fileio.open_regular`'s
    check written out: loading that module would cost this hot path ~0.2 ms."""
    if not S_ISREG(os.stat(path).st_mode):
        raise OSError(f"{path} is not a regular file")
    with open(path, "rb") as handle:
        return handle.read(limit)


def _file_crumbs(path: str) -> list[str]:
    try:
        return _crumbs_in(_read_regular(path, CRUMB_BYTES))
    except OSError:
        return []


def _one_line(body: str, limit: int = 110) -> str:
    """The body's first line, credentials hidden before it is cut (a cut key is no longer recognised)."""
    for line in body.splitlines():
        text = line.strip().lstrip("#>*- ").strip()
        if text:
            text = plain(shown(text))
            return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return ""


def _target(payload: dict, loc: Locations) -> tuple[str, str] | None:
    """(path relative to the project or absolute, absolute path) of the tool's file, or None."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(path, str) or not path.strip():
        return None
    base = loc.base_dir
    abs_path = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    for knowledge in (loc.save_dir, loc.global_dir):  # the agent is reading the brain itself
        if knowledge and (abs_path == knowledge or abs_path.startswith(knowledge + os.sep)):
            return None
    if abs_path.startswith(base + os.sep):
        rel = abs_path[len(base) + 1 :]
        return (rel.replace(os.sep, "/") if os.sep != "/" else rel), abs_path
    return abs_path.replace(os.sep, "/"), abs_path


def may_be_linked(db_path: str, rel: str) -> bool:
    """False only when the indexer's list of linked file names proves no entry names this file.

    Most files have no linked knowledge; answering those from a small text file skips loading
    SQLite (~2.5 ms, a third of the hook's own cost). Without the list, ask the index."""
    try:
        names = _read_regular(file_index_path(db_path)).decode("utf-8", errors="replace")
    except OSError:
        return True
    if not names.startswith(FILE_INDEX_HEADER + "\n"):
        return True
    return "\n" + rel.rsplit("/", 1)[-1] + "\n" in names


def _context(payload: dict, loc: Locations, *, types: tuple[str, ...] | None,
             extra_text: str = "") -> tuple[str, list] | None:
    target = _target(payload, loc)
    if target is None:
        return None
    rel, abs_path = target
    crumbs = _file_crumbs(abs_path)
    if extra_text and "Brain:" in extra_text:
        crumbs += [c for c in _crumbs_in(extra_text.encode("utf-8", "replace")) if c not in crumbs]
    if not crumbs and not may_be_linked(loc.read_db, rel):
        return None
    from pinky.store.readonly import connect_ro, linked_entries  # only past the cheap pre-filter

    conn = connect_ro(loc.read_db)
    if conn is None:
        return None
    try:
        rows = linked_entries(conn, rel, abs_path, crumbs, types)
    finally:
        conn.close()
    return rel, rows


def _render(heading: str, rows: list, *, with_line: bool) -> str:
    lines = [heading]
    for slug, type_, title, body, why in rows[:MAX_SHOWN]:
        detail = _one_line(body) if with_line else ""
        title = plain(shown(title))
        lines.append(f"- {plain(slug)} [{type_}, {plain(why)}] {title}"
                     + (f" — {detail}" if detail and detail != title else ""))
    if len(rows) > MAX_SHOWN:
        lines.append(f"- … {len(rows) - MAX_SHOWN} more (brain_search the path to see them)")
    lines.append("Open one with brain_get (MCP) or `pinky-brain get <slug>`.")
    return "\n".join(lines)


def _output(context: str | None = None, **decision: str) -> dict:
    out: dict = {"hookEventName": "PreToolUse"}
    out.update(decision)
    if context:
        out["additionalContext"] = context
    return {"hookSpecificOutput": out}


def pre_read(payload: dict, loc: Locations) -> dict | None:
    """Before Read: the entries linked to the file, one line each; nothing when none are."""
    found = _context(payload, loc, types=None)
    if not found or not found[1]:
        return None
    rel, rows = found
    return _output(_render(f"pinky: {len(rows)} brain entr{'y' if len(rows) == 1 else 'ies'} linked to {rel}:",
                           rows, with_line=False))


def _written_text(tool_input: dict) -> str:
    parts = [tool_input.get(k) for k in ("content", "new_string", "new_source")]
    for edit in tool_input.get("edits") or []:
        if isinstance(edit, dict):
            parts.append(edit.get("new_string"))
    return "\n".join(p for p in parts if isinstance(p, str))


def pre_write(payload: dict, loc: Locations) -> dict | None:
    """Before Write/Edit/NotebookEdit: deny volatile CLAUDE.md facts; else inject linked gotchas/decisions."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    denial = _evergreen(payload.get("tool_name"), tool_input, loc)
    if denial:
        return _output(permissionDecision="deny", permissionDecisionReason=denial)
    found = _context(payload, loc, types=WRITE_TYPES, extra_text=_written_text(tool_input))
    if not found or not found[1]:
        return None
    rel, rows = found
    return _output(_render(f"pinky: before changing {rel}, mind these linked gotchas/decisions/patterns:",
                           rows, with_line=True))


def _evergreen(tool_name: object, tool_input: dict, loc: Locations) -> str | None:
    path = tool_input.get("file_path")
    if not isinstance(path, str) or os.path.basename(path.replace("\\", "/")).lower() != "claude.md":
        return None
    from pinky.hygiene.evergreen import check_claude_md_write

    existing = None
    if tool_name == "Write":  # never through a link out of the repository, never a FIFO
        from pinky.base.repofiles import read_text

        existing = read_text(loc.base_dir, path)
    findings = check_claude_md_write(str(tool_name or ""), tool_input, existing)
    if not findings:
        return None
    lines = [f"pinky: CLAUDE.md must stay evergreen; this {tool_name} adds facts that go stale:"]
    for finding in findings[:6]:
        lines.append(f"- {finding.kind}: \"{finding.excerpt}\" -> {finding.advice}")
    lines.append("Rephrase without those details (describe purpose and where to look, not counts, "
                 "line numbers, hashes or dates) and try again.")
    return "\n".join(lines)
