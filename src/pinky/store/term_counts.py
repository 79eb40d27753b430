"""How many chunks hold each full-text term, kept beside the FTS index (table `term_count`, migration m014).

Why: a term weight needs each word's chunk count, and FTS5 gets it by walking the word's whole doclist
(`count(*) ... MATCH`: ~1 ms for a word most of 10,000 chunks hold, once per word of every prompt the hook
judges). The counts change only when chunks do, so the writer keeps them: every store of an entry's chunks
adds the terms of the new chunks and takes away those of the old ones (tokenised by FTS5 itself, in a
temporary contentless table with the index's own tokenizer, so a term here is the index's term).

Trust: triggers on `chunk` count every insert, update and delete, by any writer (an older pinky too), in
`term_count_state.chunk_writes`, and keep `chunks` (how many there are, which a term weight reads too); this
module sets `counted` to `chunk_writes` once the counts match the chunks. A reader that finds the two apart
counts with FTS5 instead (`pinky.store.corpus`), and the next store recounts the whole index from FTS5's
vocabulary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from pinky.store import corpus
from pinky.store.connect import write_transaction

_DEFERRED: set[int] = set()  # connections writing a large reindex: counted once, at its end
_SQLITE_READONLY = 8


def create(conn: Any) -> None:
    """The tables and triggers (migration m014), filled from the index as it is."""
    conn.execute("CREATE TABLE term_count(term TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID")
    conn.execute("CREATE TABLE term_count_state(id INTEGER PRIMARY KEY CHECK (id = 1), "
                 "chunk_writes INTEGER NOT NULL, counted INTEGER NOT NULL, chunks INTEGER NOT NULL)")
    conn.execute("INSERT INTO term_count_state(id, chunk_writes, counted, chunks) "
                 "SELECT 1, 0, -1, count(*) FROM chunk")
    bump = "UPDATE term_count_state SET chunk_writes = chunk_writes + 1"
    conn.execute(f"CREATE TRIGGER chunk_inserted_count AFTER INSERT ON chunk BEGIN {bump}, chunks = chunks + 1; END")
    conn.execute(f"CREATE TRIGGER chunk_deleted_count AFTER DELETE ON chunk BEGIN {bump}, chunks = chunks - 1; END")
    conn.execute(f"CREATE TRIGGER chunk_changed_count AFTER UPDATE OF heading, text, idents, entry_id ON chunk "
                 f"BEGIN {bump}; END")
    recount(conn)


def in_step(conn: Any) -> bool:
    """Whether the counts match the chunks as they are (no writer changed a chunk without counting)."""
    return corpus.counts_in_step(conn)


@contextmanager
def deferred(conn: Any) -> Iterator[None]:
    """Within: stores on `conn` leave the counts alone (the triggers mark them out of step, so readers count
    with FTS5 meanwhile), and one recount follows. For a large reindex: counting each note's terms as it is
    stored made a rebuild of 10,000 notes 60 % slower (13.0 -> 20.8 s); the recount takes ~0.1-0.2 s."""
    _DEFERRED.add(id(conn))
    try:
        yield
    finally:
        _DEFERRED.discard(id(conn))
    with write_transaction(conn):
        recount(conn)


def chunks_going(conn: Any, chunk_ids: list[int]) -> None:
    """Before these chunks are deleted: take their terms away."""
    if id(conn) not in _DEFERRED:
        apply(conn, Counter(), terms_of(conn, chunk_ids))


def chunks_added(conn: Any, chunk_ids: list[int]) -> None:
    """Once these chunks are stored (and their full-text rows): add their terms."""
    if id(conn) not in _DEFERRED:
        apply(conn, terms_of(conn, chunk_ids), Counter())


def settle(conn: Any, was_in_step: bool) -> None:
    """After a store that kept the counts: they match the chunks now, if they did before it; else recount."""
    if id(conn) in _DEFERRED:
        return
    if not was_in_step:
        recount(conn)
        return
    conn.execute("UPDATE term_count_state SET counted = chunk_writes")


def catch_up(conn: Any) -> None:
    """Recount when the counts lag behind the chunks (a writer that does not count, a rebuild killed before its
    recount); an index this process may only read is left as it is (its readers count with FTS5)."""
    if in_step(conn):
        return
    try:
        with write_transaction(conn):
            recount(conn)
    except Exception as exc:
        code = getattr(exc, "sqlite_errorcode", None)
        if not (isinstance(code, int) and code & 0xFF == _SQLITE_READONLY):
            raise


def recount(conn: Any) -> None:
    """Every term's count again, from FTS5's vocabulary of the whole index (~0.1-0.2 s for 10,000 chunks)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.pinky_index_terms USING fts5vocab(main, chunk_fts, row)")
    conn.execute("DELETE FROM term_count")
    conn.execute("INSERT INTO term_count(term, chunks) SELECT term, doc FROM temp.pinky_index_terms")
    conn.execute("UPDATE term_count_state SET counted = chunk_writes")


def terms_of(conn: Any, chunk_ids: Iterable[int]) -> Counter[str]:
    """term -> how many of these chunks hold it, tokenised as the index does (the FTS source's columns)."""
    ids = list(chunk_ids)
    if not ids:
        return Counter()
    try:
        vocabulary = corpus.tokenised(conn, ids, "row")
        return Counter(dict(conn.execute(f"SELECT term, doc FROM {vocabulary}").fetchall()))
    finally:
        corpus.emptied(conn)


def apply(conn: Any, added: Counter[str], removed: Counter[str]) -> None:
    """Add the terms of new chunks and take away those of removed ones (a term at 0 goes)."""
    change = Counter(added)
    change.subtract(removed)
    moved = [(term, n) for term, n in change.items() if n]
    if not moved:
        return
    conn.executemany("INSERT INTO term_count(term, chunks) VALUES (?, ?) "
                     "ON CONFLICT(term) DO UPDATE SET chunks = chunks + excluded.chunks", moved)
    conn.executemany("DELETE FROM term_count WHERE term = ? AND chunks <= 0", [(t,) for t, n in moved if n < 0])
