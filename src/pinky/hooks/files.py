"""pre-read and pre-write: the brain entries linked to the file the agent is about to read or change.

An entry is linked to a file when (1) the file carries a `Brain: <slug>` breadcrumb in a
comment, (2) the entry's frontmatter `files:` names the file (relative to the project root,
or any '/'-bounded suffix of it), or (3) the entry's body names the file's relative path.
All lookups are indexed (slug, entry_file.path, FTS5 phrase) except one LIKE over the small
entry_file table, so the cost stays flat as the brain grows. Nothing linked -> no output.
"""

from __future__ import annotations

import os

from pinky.hooks import Locations

TYPE_CHECKING = False  # `typing` would pull in `re` (~5 ms); annotations here are never evaluated
if TYPE_CHECKING:
    from sqlite3 import Connection

CRUMB_BYTES = 256 * 1024
MAX_CRUMBS = 20
MAX_SHOWN = 8
SLUG_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")
WRITE_TYPES = ("gotcha", "decision", "pattern", "bug")
TYPE_ORDER = {"gotcha": 0, "decision": 1, "bug": 2, "pattern": 3}
BUSY_TIMEOUT_S = 2.0
SLUG_FOLDERS = ("gotcha", "decision", "pattern", "bug", "guide", "note", "diary")  # config.ENTRY_TYPES


def sqlite_module():  # type: ignore[no-untyped-def]
    """Loaded only when a hook needs the index (~2.5 ms: it pulls in functools and collections).
    The C module alone: the `sqlite3` package adds datetime adapters we never use."""
    try:
        import _sqlite3 as module
    except ImportError:  # pragma: no cover
        import sqlite3 as module
    return module


def connect_ro(db_path: str) -> Connection | None:
    """The index, read-only; None when it does not exist yet."""
    if not os.path.isfile(db_path):
        return None
    sqlite = sqlite_module()
    connect, OperationalError = sqlite.connect, sqlite.OperationalError  # noqa: N806
    uri = "file:" + db_path.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    try:
        conn = connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        conn.execute("SELECT 1 FROM entry LIMIT 1")
    except OperationalError:
        # A WAL database whose -shm is missing cannot be opened with mode=ro; read it normally.
        conn = connect(db_path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        conn.execute("SELECT 1 FROM entry LIMIT 1")
    return conn


def breadcrumbs(data: bytes) -> list[str]:
    """Slugs named by `Brain: <slug>` (or `Brain: a, b`) anywhere in `data`."""
    found: list[str] = []
    at = data.find(b"Brain:")
    while at >= 0 and len(found) < MAX_CRUMBS:
        before = data[at - 1 : at]
        end = data.find(b"\n", at)
        line = data[at + 6 : end if end >= 0 else len(data)]
        if not (before.isalnum() or before == b"_"):
            for token in line.replace(b",", b" ").split():
                token = token.rstrip(b".;:)")
                if not token or not all(c in SLUG_CHARS for c in token) or token.startswith(b"/"):
                    break
                slug = token.decode("ascii")
                if slug not in found:
                    found.append(slug)
        at = data.find(b"Brain:", at + 6)
    return found[:MAX_CRUMBS]


def _file_crumbs(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            return breadcrumbs(handle.read(CRUMB_BYTES))
    except OSError:
        return []


def _suffixes(rel: str) -> list[str]:
    parts = rel.split("/")
    out = ["/".join(parts[i:]) for i in range(len(parts))]
    return out + ["./" + s for s in out[:1]]


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def linked_entries(conn: Connection, rel: str, abs_path: str, crumbs: list[str],
                   types: tuple[str, ...] | None = None) -> list[tuple[str, str, str, str, str]]:
    """(slug, type, title, body, why) for every entry linked to the file, breadcrumbs first."""
    cols = "e.id, e.slug, e.type, e.title, substr(e.body, 1, 400)"
    seen: dict[str, tuple[str, str, str, str, str]] = {}

    def add(rows: list[tuple], why: str) -> None:
        for eid, slug, type_, title, body in rows:
            if eid not in seen and (types is None or type_ in types):
                seen[eid] = (slug, type_, title, body or "", why)

    if crumbs:
        # A crumb may be the full slug, or leave out `global/` and the type folder. Spell out those
        # candidates so every lookup uses the slug's unique index (a LIKE would scan every entry).
        candidates: list[str] = []
        for slug in crumbs:
            for prefix in ("", *(f"{t}/" for t in SLUG_FOLDERS)):
                candidates += [prefix + slug, "global/" + prefix + slug]
        marks = ",".join("?" * len(candidates))
        rows = conn.execute(f"SELECT {cols} FROM entry e WHERE e.slug IN ({marks})", candidates).fetchall()
        rank = {c: i for i, c in enumerate(candidates)}
        add(sorted(rows, key=lambda r: rank.get(r[1], len(rank))), "breadcrumb")
    names = _suffixes(rel) + ([abs_path] if abs_path != rel else [])
    marks = ",".join("?" * len(names))
    add(conn.execute(f"SELECT {cols} FROM entry_file f JOIN entry e ON e.id = f.entry_id "
                     f"WHERE f.path IN ({marks}) LIMIT 50", names).fetchall(), "files")
    if "/" in rel:  # a stored path longer than ours, e.g. `repo/src/db/pool.py`
        add(conn.execute(f"SELECT {cols} FROM entry_file f JOIN entry e ON e.id = f.entry_id "
                         "WHERE f.path LIKE ? ESCAPE '\\' LIMIT 50", ("%/" + _like_escape(rel),)).fetchall(),
            "files")
    if len(rel) >= 4 and not rel.startswith("/"):
        add(_mentions(conn, cols, rel), "mentions")
    ordered = sorted(seen.values(), key=lambda r: ({"breadcrumb": 0, "files": 1}.get(r[4], 2),
                                                   TYPE_ORDER.get(r[1], 9)))
    return ordered


def _mentions(conn: Connection, cols: str, rel: str) -> list[tuple]:
    """Entries whose body contains `rel`: an FTS5 phrase query narrows, instr() confirms."""
    phrase = '"' + rel.replace('"', " ") + '"'
    try:
        return conn.execute(
            f"SELECT DISTINCT {cols} FROM chunk_fts JOIN chunk c ON c.id = chunk_fts.rowid "
            "JOIN entry e ON e.id = c.entry_id WHERE chunk_fts MATCH ? AND instr(e.body, ?) > 0 "
            "AND e.type != 'diary' LIMIT 20",
            ("text : " + phrase, rel),
        ).fetchall()
    except sqlite_module().OperationalError:  # this SQLite has no FTS5: skip rather than scan every body
        return []


def _one_line(body: str, limit: int = 110) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#>*- ").strip()
        if text:
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
    abs_path = os.path.normpath(os.path.join(loc.project_dir, os.path.expanduser(path)))
    for knowledge in (loc.save_dir, loc.global_dir):  # the agent is reading the brain itself
        if abs_path == knowledge or abs_path.startswith(knowledge + os.sep):
            return None
    if abs_path.startswith(loc.project_dir + os.sep):
        rel = abs_path[len(loc.project_dir) + 1 :]
        return (rel.replace(os.sep, "/") if os.sep != "/" else rel), abs_path
    return abs_path.replace(os.sep, "/"), abs_path


FILE_INDEX_HEADER = "pinky: names of files linked to brain entries, v1"  # = pinky.kb.FILE_INDEX_HEADER


def may_be_linked(db_path: str, rel: str) -> bool:
    """False only when the indexer's list of linked file names proves no entry names this file.

    Most files have no linked knowledge; answering those from a small text file skips loading
    SQLite (~2.5 ms, a third of the hook's own cost). Without the list, ask the index."""
    try:
        with open(db_path + "-files", encoding="utf-8") as handle:
            names = handle.read()
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
        crumbs += [c for c in breadcrumbs(extra_text.encode("utf-8", "replace")) if c not in crumbs]
    if not crumbs and not may_be_linked(loc.db, rel):
        return None
    conn = connect_ro(loc.db)
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
        lines.append(f"- {slug} [{type_}, {why}] {title}" + (f" — {detail}" if detail and detail != title else ""))
    if len(rows) > MAX_SHOWN:
        lines.append(f"- … {len(rows) - MAX_SHOWN} more (brain_search the path to see them)")
    lines.append("Open one with brain_get (MCP) or `pinky get <slug>`.")
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
    from pinky.evergreen import check_claude_md_write

    existing = None
    if tool_name == "Write":
        try:
            with open(os.path.join(loc.project_dir, path), encoding="utf-8", errors="replace") as handle:
                existing = handle.read()
        except OSError:
            existing = None
    findings = check_claude_md_write(str(tool_name or ""), tool_input, existing)
    if not findings:
        return None
    lines = [f"pinky: CLAUDE.md must stay evergreen; this {tool_name} adds facts that go stale:"]
    for finding in findings[:6]:
        lines.append(f"- {finding.kind}: \"{finding.excerpt}\" -> {finding.advice}")
    lines.append("Rephrase without those details (describe purpose and where to look, not counts, "
                 "line numbers, hashes or dates) and try again.")
    return "\n".join(lines)
