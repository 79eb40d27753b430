"""Links between entries and code: `files:` lists, names mentioned in bodies, `[[links]]`,
and the `Brain: <slug>` breadcrumbs found in the project's code."""

from __future__ import annotations

from typing import Any

from pinky.text.linkrefs import target_key


def linked_file_names(conn: Any, entry_id: str | None = None) -> set[str]:
    """Base names of every file some entry (or this one) lists in `files:` or names in its text."""
    where, args = ("WHERE entry_id = ?", (entry_id,)) if entry_id else ("", ())
    names = {r[0] for r in conn.execute(f"SELECT DISTINCT name FROM entry_mention {where}", args)}
    names |= {r[0].rstrip("/").rsplit("/", 1)[-1] for r in conn.execute(
        f"SELECT DISTINCT path FROM entry_file {where}", args)}
    return names


# --- the link table: one row per link, resolved when written ---------------------------------------

LINK_COLUMNS = ("l.id, l.source_id, l.source_file, l.kind, l.rel, l.target, l.target_id, l.target_file, l.line, "
                "l.since, l.until")
_VALID_ON = "(l.since IS NULL OR l.since <= ?) AND (l.until IS NULL OR l.until > ?)"


def valid_on(day: str | None) -> tuple[str, tuple[str, ...]]:
    """A WHERE clause (and its arguments) keeping links that hold on `day`; every link when None."""
    return (_VALID_ON, (day, day)) if day else ("1", ())


NoteLink = tuple[str, str, str, str, str | None, int, str | None, str | None, str | None]


def replace_note_links(conn: Any, entry_id: str, rows: list[NoteLink]) -> None:
    """Replace the links a note writes: (kind, rel, target, target_key, target_file, line, since,
    until, target_id)."""
    conn.execute("DELETE FROM link WHERE source_id = ?", (entry_id,))
    conn.executemany("INSERT INTO link(source_id, kind, rel, target, target_key, target_file, line, since, until, "
                     "target_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(entry_id, *row) for row in rows])


def replace_links_of(conn: Any, rows_by_note: dict[str, list[NoteLink]]) -> None:
    """replace_note_links for many notes at once: a few deletes and one insert, not two statements a note."""
    ids = list(rows_by_note)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        conn.execute(f"DELETE FROM link WHERE source_id IN ({','.join('?' * len(part))})", part)
    conn.executemany("INSERT INTO link(source_id, kind, rel, target, target_key, target_file, line, since, until, "
                     "target_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [(eid, *row) for eid, rows in rows_by_note.items() for row in rows])


def entry_keys_rows(conn: Any, entry_ids: list[str]) -> list[Any]:
    """(slug, path, title) of the entries with these ids (to know which links may name them)."""
    found: list[Any] = []
    for start in range(0, len(entry_ids), 500):
        part = entry_ids[start : start + 500]
        found += conn.execute(f"SELECT slug, path, title FROM entry WHERE id IN ({','.join('?' * len(part))})",
                              part).fetchall()
    return found


def links_to_resolve(conn: Any, sources: list[str], files: list[str], keys: list[str],
                     code_only: bool = False) -> list[Any]:
    """Links written by these notes or code files, or whose target_key is one of `keys`, with where
    they are written (root and path of the note; NULL for code): the rows whose target may change.
    Past 2,000 names, every link (resolving one again changes nothing); `code_only`: only breadcrumbs."""
    if len(sources) + len(files) + len(keys) > 2000:  # a big reindex: resolving every link beats many IN lists
        where = "l.source_file IS NOT NULL" if code_only else "l.kind != 'files'"
        return conn.execute("SELECT l.id, l.kind, l.target, l.target_id, e.root, e.path, l.source_id FROM link l "
                            f"LEFT JOIN entry e ON e.id = l.source_id WHERE {where}").fetchall()
    found: dict[int, Any] = {}
    for column, values in (("l.source_id", sources), ("l.source_file", files), ("l.target_key", keys)):
        for start in range(0, len(values), 500):
            part = values[start : start + 500]
            for row in conn.execute(
                    "SELECT l.id, l.kind, l.target, l.target_id, e.root, e.path, l.source_id FROM link l "
                    f"LEFT JOIN entry e ON e.id = l.source_id WHERE {column} IN ({','.join('?' * len(part))}) "
                    "AND l.kind != 'files'", part):
                found[row[0]] = row
    return list(found.values())


def entry_names(conn: Any) -> list[Any]:
    """(id, root, path, slug, title) of every entry: the names links resolve by."""
    return conn.execute("SELECT id, root, path, slug, title FROM entry").fetchall()


def set_link_targets(conn: Any, updates: list[tuple[str | None, int]]) -> None:
    conn.executemany("UPDATE link SET target_id = ? WHERE id = ?", updates)


def links_from(conn: Any, entry_ids: list[str], day: str | None, limit: int) -> list[Any]:
    """Links the notes write (to notes, to code, unresolved), at most `limit` per query, in file order."""
    clause, args = valid_on(day)
    marks = ",".join("?" * len(entry_ids))
    return conn.execute(f"SELECT {LINK_COLUMNS} FROM link l WHERE l.source_id IN ({marks}) AND {clause} "
                        "ORDER BY l.source_id, l.line, l.id LIMIT ?", (*entry_ids, *args, limit)).fetchall()


def links_to(conn: Any, entry_ids: list[str], day: str | None, limit: int) -> list[Any]:
    """Links that resolve to these notes: from other notes and from code (breadcrumbs)."""
    clause, args = valid_on(day)
    marks = ",".join("?" * len(entry_ids))
    return conn.execute(f"SELECT {LINK_COLUMNS} FROM link l WHERE l.target_id IN ({marks}) AND {clause} "
                        "ORDER BY l.target_id, l.source_file, l.id LIMIT ?", (*entry_ids, *args, limit)).fetchall()


def links_of_files(conn: Any, files: list[str], limit: int) -> list[Any]:
    """Links that touch these code files: notes listing them in `files:`, and their breadcrumbs."""
    marks = ",".join("?" * len(files))
    return conn.execute(f"SELECT {LINK_COLUMNS} FROM link l WHERE l.target_file IN ({marks}) "
                        f"OR (l.source_file IN ({marks}) AND l.target_id IS NOT NULL) ORDER BY l.id LIMIT ?",
                        (*files, *files, limit)).fetchall()


def entry_nodes(conn: Any, entry_ids: list[str]) -> dict[str, Any]:
    """id -> (id, slug, title, type, root, path) for the entries in a neighbourhood."""
    marks = ",".join("?" * len(entry_ids))
    rows = conn.execute(f"SELECT id, slug, title, type, root, path FROM entry WHERE id IN ({marks})", entry_ids)
    return {row[0]: row for row in rows}


def current_entry_nodes(conn: Any) -> list[Any]:
    """(id, slug, title, type, scope) of every entry not superseded, diaries aside, in slug order."""
    return conn.execute("SELECT id, slug, title, type, scope FROM entry WHERE type != 'diary' "
                        "AND json_extract(meta, '$.superseded_by') IS NULL ORDER BY slug").fetchall()


def entry_edges(conn: Any, day: str | None) -> list[tuple[str, str, str, str]]:
    """(source id, target id, kind, rel) of every link from a note to a note that holds on `day`."""
    clause, args = valid_on(day)
    return [(r[0], r[1], r[2], r[3]) for r in conn.execute(
        f"SELECT l.source_id, l.target_id, l.kind, l.rel FROM link l WHERE l.source_id IS NOT NULL "
        f"AND l.target_id IS NOT NULL AND {clause}", args)]


def entry_file_edges(conn: Any) -> list[tuple[str, str, str, str, bool]]:
    """(entry id, code file, kind, rel, drawn from the file) of every link between a note and a code file: a
    note's `files:` (note to file) and a breadcrumb in the code (file to note)."""
    return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in conn.execute(
        "SELECT COALESCE(l.source_id, l.target_id), COALESCE(l.target_file, l.source_file), l.kind, l.rel, "
        "l.source_file IS NOT NULL FROM link l WHERE (l.source_id IS NOT NULL AND l.target_file IS NOT NULL) "
        "OR (l.source_file IS NOT NULL AND l.target_id IS NOT NULL)")]


def unresolved_links(conn: Any) -> list[Any]:
    """Links that name no entry: (root, path, line, target) of a note's, or (NULL, file, line, target) of code."""
    return conn.execute(
        "SELECT e.root, COALESCE(e.path, l.source_file), l.line, l.target, l.kind FROM link l "
        "LEFT JOIN entry e ON e.id = l.source_id WHERE l.target_id IS NULL AND l.kind != 'files' "
        "ORDER BY l.source_file IS NOT NULL, e.root, 2, l.line").fetchall()


def link_count(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM link").fetchone()[0]


def entries_linked_to_file(conn: Any, paths: list[str]) -> list[tuple[str, str]]:
    """(entry id, how) of the notes tied to a code file: `files:` lists it or it carries their breadcrumb."""
    marks = ",".join("?" * len(paths))
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT source_id, 'files' FROM link WHERE kind = 'files' AND target_file IN ({marks}) UNION "
        f"SELECT target_id, 'breadcrumb' FROM link WHERE kind = 'breadcrumb' AND source_file IN ({marks}) "
        "AND target_id IS NOT NULL", (*paths, *paths))]


def diary_lines_naming(conn: Any, names: list[str], limit: int = 200) -> list[Any]:
    """(path, created, body) of diary entries whose text names any of `names` (instr: no LIKE escaping)."""
    if not names:
        return []
    where = " OR ".join("instr(body, ?) > 0" for _ in names)
    return conn.execute(f"SELECT path, created, body FROM entry WHERE type = 'diary' AND ({where}) "
                        "ORDER BY path LIMIT ?", (*names, limit)).fetchall()


# --- code -> knowledge: `Brain: <slug>` breadcrumbs ------------------------------------------------


def scanned_code_files(conn: Any) -> dict[str, tuple[int, int, int, int]]:
    """Project files the code scan has read, by path: (mtime_ns, size, ctime_ns, inode) when it read them."""
    return {r[0]: (r[1], r[2], r[3], r[4])
            for r in conn.execute("SELECT path, mtime_ns, size, ctime_ns, inode FROM code_file")}


def store_breadcrumbs(conn: Any, path: str, stamp: tuple[int, int, int, int], crumbs: list[tuple[int, str]]) -> None:
    """Replace what one code file says (caller holds the write transaction); the caller resolves them.
    `stamp`: the file's (mtime_ns, size, ctime_ns, inode) when it was read."""
    conn.execute("DELETE FROM link WHERE source_file = ?", (path,))
    conn.execute("INSERT INTO code_file(path, mtime_ns, size, ctime_ns, inode) VALUES (?, ?, ?, ?, ?) "
                 "ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size, "
                 "ctime_ns = excluded.ctime_ns, inode = excluded.inode", (path, *stamp))
    conn.executemany("INSERT INTO link(source_file, kind, target, target_key, line) VALUES (?, 'breadcrumb', ?, ?, ?)",
                     [(path, slug, target_key(slug), line) for line, slug in crumbs])


def forget_code_file(conn: Any, path: str) -> None:
    conn.execute("DELETE FROM code_file WHERE path = ?", (path,))


def breadcrumb_count(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM link WHERE kind = 'breadcrumb'").fetchone()[0]
