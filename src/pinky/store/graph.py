"""Links between entries and code: `files:` lists, names mentioned in bodies, `[[links]]`,
and the `Brain: <slug>` breadcrumbs found in the project's code."""

from __future__ import annotations

from typing import Any


def linked_file_names(conn: Any, entry_id: str | None = None) -> set[str]:
    """Base names of every file some entry (or this one) lists in `files:` or names in its text."""
    where, args = ("WHERE entry_id = ?", (entry_id,)) if entry_id else ("", ())
    names = {r[0] for r in conn.execute(f"SELECT DISTINCT name FROM entry_mention {where}", args)}
    names |= {r[0].rstrip("/").rsplit("/", 1)[-1] for r in conn.execute(
        f"SELECT DISTINCT path FROM entry_file {where}", args)}
    return names


# --- knowledge -> knowledge and knowledge -> code ------------------------------------------------


def outgoing_links(conn: Any, entry_id: str) -> list[str]:
    """Targets of an entry's `[[links]]` and `.md` links, as written, in order."""
    return [r[0] for r in conn.execute("SELECT target FROM entry_link WHERE entry_id = ? ORDER BY rowid", (entry_id,))]


def listed_files(conn: Any, entry_id: str) -> list[str]:
    """The code files an entry's frontmatter `files:` names, in order."""
    return [r[0] for r in conn.execute("SELECT path FROM entry_file WHERE entry_id = ? ORDER BY rowid", (entry_id,))]


def link_candidates(conn: Any, entry_id: str, stem: str, title: str) -> list[Any]:
    """Other entries with a link that may point at this one (its file stem in the target, or its title)."""
    escaped = stem.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return conn.execute(
        "SELECT DISTINCT e.slug, e.root, e.path, e.title, l.target FROM entry_link l "
        "JOIN entry e ON e.id = l.entry_id WHERE e.id != ? AND (l.target LIKE ? ESCAPE '\\' "
        "OR lower(l.target) = lower(?)) ORDER BY e.slug",
        (entry_id, f"%{escaped}%", title),
    ).fetchall()


# --- code -> knowledge: `Brain: <slug>` breadcrumbs ------------------------------------------------


def scanned_code_files(conn: Any) -> dict[str, tuple[int, int]]:
    """Project files the code scan has read, by path: (mtime_ns, size) when it read them."""
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, mtime_ns, size FROM code_file")}


def store_breadcrumbs(conn: Any, path: str, mtime_ns: int, size: int, crumbs: list[tuple[int, str]]) -> None:
    """Replace what one code file says (caller holds the write transaction)."""
    conn.execute("DELETE FROM breadcrumb WHERE file_path = ?", (path,))
    conn.execute("INSERT INTO code_file(path, mtime_ns, size) VALUES (?, ?, ?) ON CONFLICT(path) DO "
                 "UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size", (path, mtime_ns, size))
    conn.executemany("INSERT INTO breadcrumb(file_path, line, slug) VALUES (?, ?, ?)",
                     [(path, line, slug) for line, slug in crumbs])


def forget_code_file(conn: Any, path: str) -> None:
    conn.execute("DELETE FROM code_file WHERE path = ?", (path,))


def breadcrumb_count(conn: Any) -> int:
    return conn.execute("SELECT count(*) FROM breadcrumb").fetchone()[0]


def all_breadcrumbs(conn: Any) -> list[tuple[str, str, int]]:
    """(slug as written, file, line) of every breadcrumb, by file and line."""
    return [tuple(r) for r in conn.execute("SELECT slug, file_path, line FROM breadcrumb ORDER BY file_path, line")]


def breadcrumbs_naming(conn: Any, names: list[str]) -> list[tuple[str, int]]:
    """(file, line) of the breadcrumbs that name an entry by any of `names`."""
    if not names:
        return []
    marks = ",".join("?" * len(names))
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT file_path, line FROM breadcrumb WHERE slug IN ({marks}) ORDER BY file_path, line", names)]
