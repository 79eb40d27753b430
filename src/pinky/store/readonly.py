"""The hooks' read path: the index opened read-only through the C module `_sqlite3`.

Claude Code starts a fresh hook process for every Read/Write/Edit, so this module imports nothing
beyond `os` and the C driver: no `sqlite3` package (its datetime adapters pull in more), no
`typing`, `re` or `dataclasses`, and never sqlite-vec. Every lookup here is indexed (slug,
entry_file.path, an FTS5 phrase) except one LIKE over the small entry_file table, so the cost
stays flat as the brain grows.
"""

from __future__ import annotations

import os

from pinky.store import corpus
from pinky.text.fts import fts_term

TYPE_CHECKING = False  # `typing` would pull in `re` (~5 ms); annotations here are never evaluated
if TYPE_CHECKING:
    from sqlite3 import Connection
    from types import ModuleType

BUSY_TIMEOUT_S = 2.0
BODY_PREVIEW = 400
_COLUMNS = f"e.id, e.slug, e.type, e.title, substr(e.body, 1, {BODY_PREVIEW})"
_WHY_ORDER = {"breadcrumb": 0, "files": 1}
TYPE_ORDER = {"gotcha": 0, "decision": 1, "bug": 2, "pattern": 3}


def sqlite_module() -> ModuleType:
    """The C module alone (~1.2 ms, loaded only when a hook needs the index)."""
    import sys

    if "_sqlite3" not in sys.modules and "functools" not in sys.modules:
        return _without_functools(sys.modules)
    try:
        import _sqlite3

        return _sqlite3
    except ImportError:  # pragma: no cover - every CPython builds it
        import sqlite3

        return sqlite3


class _CacheInfo(tuple):
    """What `cache_info()` of an lru_cache returns (functools' is a namedtuple; SQLite never asks)."""

    def __new__(cls, hits: int, misses: int, maxsize: int | None, currsize: int) -> _CacheInfo:
        return tuple.__new__(cls, (hits, misses, maxsize, currsize))


def _lru_cache(maxsize: int | None = 128, typed: bool = False) -> object:
    """functools.lru_cache as functools builds it, on the C wrapper of `_functools`."""
    from _functools import _lru_cache_wrapper  # type: ignore[import-not-found]

    return lambda function: _lru_cache_wrapper(function, maxsize, typed, _CacheInfo)


def _without_functools(modules: dict) -> ModuleType:
    """`_sqlite3`, loaded without the `functools` package. The C module takes `functools.lru_cache` for its
    statement cache when it is loaded, and `functools` brings `collections`, `operator`, `keyword`, `reprlib`
    and `types` with it: 3.5 ms, a quarter of the interpreter's own start, paid by every prompt and every
    Read or Edit of a linked file. For the import alone, `functools` is a module holding the same cache
    built on the same C wrapper; the real package is what anyone importing it later gets."""
    stand_in = type(modules["sys"])("functools")
    stand_in.lru_cache = _lru_cache
    modules["functools"] = stand_in
    try:
        import _sqlite3

        return _sqlite3
    except Exception:  # a Python whose driver wants more of functools: the usual import
        modules.pop("_sqlite3", None)
        modules.pop("functools", None)
        import _sqlite3

        return _sqlite3
    finally:
        if modules.get("functools") is stand_in:
            del modules["functools"]


def readonly_uri(db_path: str, *, immutable: bool = False) -> str:
    """SQLite's URI for opening `db_path` read-only (the characters a URI reserves escaped). `immutable`:
    a file nobody changes (a read-only folder, where SQLite cannot make the WAL's `-shm` file)."""
    uri = "file:" + db_path.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def connect_ro(db_path: str) -> Connection | None:
    """The index, read-only; None when it does not exist yet."""
    if not os.path.isfile(db_path):
        return None
    sqlite = sqlite_module()
    connect, OperationalError = sqlite.connect, sqlite.OperationalError  # noqa: N806
    try:
        conn = connect(readonly_uri(db_path), uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        conn.execute("SELECT 1 FROM entry LIMIT 1")
    except OperationalError:
        # A WAL database whose -shm is missing cannot be opened with mode=ro; read it normally, or, in a
        # folder we may not write (where no -shm can be made), as the immutable file it is there.
        try:
            conn = connect(db_path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            conn.execute("SELECT 1 FROM entry LIMIT 1")
        except OperationalError:
            if os.path.getsize(db_path + "-wal") if os.path.exists(db_path + "-wal") else 0:
                raise
            conn = connect(readonly_uri(db_path, immutable=True), uri=True, check_same_thread=False)
            conn.execute("SELECT 1 FROM entry LIMIT 1")
    conn.execute("PRAGMA temp_store = MEMORY")  # the word lookup's temporary table (pinky.store.corpus): no file
    return conn


def rows(conn: Connection, sql: str, args: tuple = ()) -> list[tuple]:
    """fetchall, or [] when the index lacks a table (written by an older or newer pinky)."""
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite_module().OperationalError:
        return []


def meta_values(conn: Connection, *keys: str) -> list[str | None]:
    """Values of the index's `meta` table, None for a key it lacks (pinky.base.global_signature: what it holds of
    the global brain)."""
    found = dict(rows(conn, f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(keys))})", keys))
    return [found.get(key) for key in keys]


# --- entries linked to a file (pre-read, pre-write) ---------------------------------------------


def _suffixes(rel: str) -> list[str]:
    parts = rel.split("/")
    out = ["/".join(parts[i:]) for i in range(len(parts))]
    return out + ["./" + s for s in out[:1]]


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def linked_entries(conn: Connection, rel: str, abs_path: str, crumbs: list[str],
                   types: tuple[str, ...] | None = None) -> list[tuple[str, str, str, str, str]]:
    """(slug, type, title, body preview, why) for every entry linked to the file, breadcrumbs first.

    Linked means: the file carries a `Brain: <slug>` breadcrumb, an entry's `files:` names the
    file (relative to the project root, or any '/'-bounded suffix of it), or an entry's body
    names the file's relative path."""
    seen: dict[str, tuple[str, str, str, str, str]] = {}

    def add(found: list[tuple], why: str) -> None:
        for eid, slug, type_, title, body in found:
            if eid not in seen and (types is None or type_ in types):
                seen[eid] = (slug, type_, title, body or "", why)

    if crumbs:
        add(_crumb_entries(conn, crumbs), "breadcrumb")
    names = _suffixes(rel) + ([abs_path] if abs_path != rel else [])
    marks = ",".join("?" * len(names))
    add(rows(conn, f"SELECT {_COLUMNS} FROM entry_file f JOIN entry e ON e.id = f.entry_id "
                   f"WHERE f.path IN ({marks}) LIMIT 50", tuple(names)), "files")
    if "/" in rel:  # a stored path longer than ours, e.g. `repo/src/db/pool.py`
        add(rows(conn, f"SELECT {_COLUMNS} FROM entry_file f JOIN entry e ON e.id = f.entry_id "
                       "WHERE f.path LIKE ? ESCAPE '\\' LIMIT 50", ("%/" + _like_escape(rel),)), "files")
    if len(rel) >= 4 and not rel.startswith("/"):
        add(_mentions(conn, rel), "mentions")
    return sorted(seen.values(), key=lambda r: (_WHY_ORDER.get(r[4], 2), TYPE_ORDER.get(r[1], 9)))


def _crumb_entries(conn: Connection, crumbs: list[str]) -> list[tuple]:
    """Entries the crumbs name, in crumb order; each candidate spelling is a lookup on the slug index."""
    from pinky.base.layout import slug_candidates  # here: the prompt hook never needs it
    candidates: list[str] = []
    for crumb in crumbs:
        candidates += [c for c in slug_candidates(crumb) if c not in candidates]
    marks = ",".join("?" * len(candidates))
    found = rows(conn, f"SELECT {_COLUMNS} FROM entry e WHERE e.slug IN ({marks})", tuple(candidates))
    rank = {c: i for i, c in enumerate(candidates)}
    return sorted(found, key=lambda r: rank.get(r[1], len(rank)))


def _mentions(conn: Connection, rel: str) -> list[tuple]:
    """Entries whose body contains `rel`: an FTS5 phrase query narrows, instr() confirms."""
    phrase = '"' + rel.replace('"', " ") + '"'
    return rows(conn, f"SELECT DISTINCT {_COLUMNS} FROM chunk_fts JOIN chunk c ON c.id = chunk_fts.rowid "
                      "JOIN entry e ON e.id = c.entry_id WHERE chunk_fts MATCH ? AND instr(e.body, ?) > 0 "
                      "AND e.type != 'diary' LIMIT 20", ("text : " + phrase, rel))


# --- the session-start digest ---------------------------------------------------------------------


def entries_by_root(conn: Connection) -> dict[str, int]:
    return dict(rows(conn, "SELECT root, count(*) FROM entry GROUP BY root"))


def commonest_types(conn: Connection, limit: int) -> list[tuple[str, int]]:
    return rows(conn, "SELECT type, count(*) FROM entry WHERE type != 'diary' GROUP BY type "
                      "ORDER BY count(*) DESC LIMIT ?", (limit,))


def key_entries(conn: Connection, root: str, types: tuple[str, ...], *, important: int = 4, recent: int = 8,
                limit: int = 6) -> list[tuple[str, str, str]]:
    """(slug, type, title): the most important entries of these types under `root` (frontmatter
    importance, then how often searches returned them), then the most recently changed."""
    from pinky.store.global_picks import IMPORTANCE  # here: the prompt hook never needs it

    marks = ",".join("?" * len(types))
    where = f"FROM entry e WHERE root = ? AND type IN ({marks})"
    ranked = rows(conn, f"SELECT slug, type, title {where} ORDER BY {IMPORTANCE}, "
                        "(SELECT count(*) FROM usage u WHERE u.entry_id = e.id) DESC, mtime_ns DESC LIMIT ?",
                  (root, *types, important))
    latest = rows(conn, f"SELECT slug, type, title {where} ORDER BY mtime_ns DESC LIMIT ?", (root, *types, recent))
    shown: dict[str, tuple[str, str, str]] = {}
    for slug, type_, title in ranked + latest:
        shown.setdefault(slug, (slug, type_, title))
    return list(shown.values())[:limit]


def global_entries_for(conn: Connection, project: str, limit: int) -> list[tuple[str, str, str]]:
    """(slug, type, title) of global entries worth showing in this project: those that name it
    (`project:` or a tag), then the most important and most retrieved, then the newest. Through the candidates
    of `global_picks` (a few index lookups); on an index from before them, by ranking every global entry."""
    from pinky.store import global_picks  # here: the prompt hook never needs it

    try:  # no project: every entry without one names it, and the candidates would be all of them
        return conn.execute(global_picks.PICKS if project else global_picks.SCAN, (project, limit)).fetchall()
    except sqlite_module().OperationalError:  # no entry_tag yet: migration m017 has not run on this index
        return rows(conn, global_picks.SCAN, (project, limit))


def stale_entries(conn: Connection, types: tuple[str, ...], cutoff_day: str,
                  limit: int) -> tuple[int, list[tuple[str, str]]]:
    """How many project entries were last verified (or created) before `cutoff_day`, and the oldest few."""
    marks = ",".join("?" * len(types))
    where = (f"FROM entry WHERE root = 'project' AND type IN ({marks}) "
             "AND coalesce(last_verified, created) IS NOT NULL AND coalesce(last_verified, created) < ?")
    count = rows(conn, f"SELECT count(*) {where}", (*types, cutoff_day))
    if not count or not count[0][0]:
        return 0, []
    oldest = rows(conn, f"SELECT slug, coalesce(last_verified, created) {where} "
                        "ORDER BY coalesce(last_verified, created) LIMIT ?", (*types, cutoff_day, limit))
    return count[0][0], [(slug, str(day)) for slug, day in oldest]


# --- recall on every prompt (UserPromptSubmit), and how relevant search hits are ------------------------------
# What `pinky.search.recall` asks of the index, each answered in one call: the figures the words' weights need,
# the best chunks for some words (each with the words it holds), the same of some entries' chunks, the entries to
# show. The ranking's rules stay in recall; the reads stay here.


def word_figures(conn: Connection, terms: list[str]) -> tuple[int, dict[str, int]]:
    """(how many chunks the index holds, word -> how many chunks hold it): what each word's weight needs (the
    counts the writer keeps, `pinky.store.corpus`). (0, {}) without chunks or words, or on an index without the
    tables (written by an older or newer pinky)."""
    try:
        total = corpus.chunk_total(conn)
        return (total, dict(corpus.term_chunk_counts(conn, terms))) if total and terms else (0, {})
    except sqlite_module().OperationalError:
        return 0, {}


def best_chunks(conn: Connection, match: list[str], words: list[str], entries: int) -> list[tuple[int, str, set[str]]]:
    """(chunk id, entry id, which of `words` it holds) of the best BM25 chunk of each of the best `entries`
    entries (among the 2 x `entries` best chunks) for the words of `match` OR-ed, best first. Diary entries are
    left out (a diary line is what happened, not knowledge to bring back), and superseded ones (a newer one
    with the same key or subject replaced them; LIKE, not json_extract: the hooks' SQLite may lack JSON)."""
    if not match:
        return []
    query = " OR ".join(fts_term(t) for t in match)
    best: dict[str, int] = {}
    for chunk_id, entry_id in rows(conn, "SELECT c.id, c.entry_id FROM (SELECT rowid, bm25(chunk_fts) AS s FROM "
                                         "chunk_fts WHERE chunk_fts MATCH ? ORDER BY s LIMIT ?) f JOIN chunk c ON "
                                         "c.id = f.rowid JOIN entry e ON e.id = c.entry_id WHERE e.type != 'diary' "
                                         "AND e.meta NOT LIKE '%\"superseded_by\"%' ORDER BY f.s",
                                   (query, entries * 2)):
        best.setdefault(entry_id, chunk_id)
        if len(best) == entries:
            break
    held = _held(conn, words, list(best.values()))
    return [(chunk_id, entry_id, held[chunk_id]) for entry_id, chunk_id in best.items()]


def chunks_of(conn: Connection, slugs: list[str], words: list[str]) -> list[tuple[int, str, set[str]]]:
    """(chunk id, entry slug, which of `words` it holds) of every chunk of these entries."""
    marks = ",".join("?" * len(slugs))
    found = rows(conn, f"SELECT c.id, e.slug FROM chunk c JOIN entry e ON e.id = c.entry_id WHERE e.slug IN ({marks})",
                 tuple(slugs)) if slugs else []
    held = _held(conn, words, [chunk_id for chunk_id, _ in found])
    return [(chunk_id, slug, held[chunk_id]) for chunk_id, slug in found]


def _held(conn: Connection, words: list[str], chunk_ids: list[int]) -> dict[int, set[str]]:
    """chunk id -> which of `words` it holds (`corpus.chunks_holding`); none on an index without the tables."""
    held: dict[int, set[str]] = {chunk_id: set() for chunk_id in chunk_ids}
    try:
        holding = corpus.chunks_holding(conn, words, chunk_ids)
    except sqlite_module().OperationalError:
        return held
    for word, holders in holding.items():
        for chunk_id in holders:
            held[chunk_id].add(word)
    return held


def recall_entries(conn: Connection, entry_ids: list[str]) -> dict[str, tuple]:
    """id -> (slug, type, title, body preview, created, last_verified) for the entries to show."""
    marks = ",".join("?" * len(entry_ids))
    found = rows(conn, f"SELECT id, slug, type, title, substr(body, 1, {BODY_PREVIEW}), created, last_verified "
                       f"FROM entry WHERE id IN ({marks})", tuple(entry_ids))
    return {r[0]: r[1:] for r in found}


def flagged_entries(conn: Connection, limit: int) -> list[tuple[str, str, str]]:
    """(slug, verdict, day) of entries marked wrong or outdated since their note last changed, newest first:
    for the session-start digest (`pinky feedback`, documentation/HYGIENE.md). None before migration m009."""
    return [(slug, verdict, str(at)[:10]) for slug, verdict, at in rows(
        conn, "SELECT e.slug, f.verdict, max(f.at) FROM feedback f CROSS JOIN entry e ON e.id = f.entry_id "
              "WHERE f.verdict IN ('wrong', 'outdated') AND f.at_ns > e.mtime_ns "
              "GROUP BY f.entry_id ORDER BY max(f.at) DESC LIMIT ?", (limit,))]  # from the few flags, not every entry
