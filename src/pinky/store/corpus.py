"""What a term weight reads of the whole index: how many chunks it holds and how many hold each word. Written
once for the two ways the index is read: the search through the core's driver (`pinky.search.hybrid`, the
second stage, `Index.chunk_total`) and the hooks through `_sqlite3` opened read-only (`pinky.store.readonly`,
for `pinky.search.recall`). Plain DB-API calls and the FTS vocabulary only: importing this costs the hooks nothing.
"""

from __future__ import annotations

from pinky.text.fts import fts_term

TYPE_CHECKING = False  # `typing` would pull in `re` on the hooks' path; annotations here are never evaluated
if TYPE_CHECKING:
    from collections.abc import Iterable
    from sqlite3 import Connection


def chunk_total(conn: Connection) -> int:
    """How many chunks the index holds."""
    return conn.execute("SELECT count(*) FROM chunk").fetchone()[0]


def term_chunk_counts(conn: Connection, terms: Iterable[str]) -> list[tuple[str, int]]:
    """How many chunks contain each word, stemmed like the index (FTS5 counts its own doclist)."""
    return [(term, conn.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                                (fts_term(term),)).fetchone()[0]) for term in terms]
