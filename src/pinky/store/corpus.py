"""What a term weight reads of the whole index: how many chunks it holds and how many hold each word. Written
once for the two ways the index is read: the search through the core's driver (`pinky.search.hybrid`, the
second stage, `Index.chunk_total`) and the hooks through `_sqlite3` opened read-only (`pinky.store.readonly`,
for `pinky.search.recall`). A word's count is one row of the counts the writer keeps (`pinky.store.term_counts`),
FTS5's own count only where those cannot answer. Plain DB-API calls and the FTS vocabulary only: importing this
costs the hooks nothing.
"""

from __future__ import annotations

from pinky.text.fts import FTS_COLUMNS, TOKENIZE, fts_term

# A contentless table tokenising a few words or chunks as the index does (its terms are the index's), emptied after use
CHUNK_TOKENS = "temp.pinky_chunk_tokens"
_FIELDS = ", ".join(FTS_COLUMNS)

TYPE_CHECKING = False  # `typing` would pull in `re` on the hooks' path; annotations here are never evaluated
if TYPE_CHECKING:
    from collections.abc import Iterable
    from sqlite3 import Connection


def chunk_total(conn: Connection) -> int:
    """How many chunks the index holds: kept by triggers (`pinky.store.term_counts`); counted on an index
    without them (count(*) walks the whole table: ~0.1 ms per 10,000 chunks)."""
    try:
        return conn.execute("SELECT chunks FROM term_count_state").fetchone()[0]
    except Exception:  # no such table (the driver's OperationalError): an index from before migration m014
        return conn.execute("SELECT count(*) FROM chunk").fetchone()[0]


def term_chunk_counts(conn: Connection, terms: Iterable[str]) -> list[tuple[str, int]]:
    """How many chunks contain each word, stemmed like the index: from the counts the writer keeps
    (`pinky.store.term_counts`) when they match the chunks, else FTS5 counts the word's own doclist."""
    words = list(terms)
    counted = _kept_counts(conn, words)
    return [(word, counted[word] if word in counted else _fts_count(conn, word)) for word in words]


def _fts_count(conn: Connection, word: str) -> int:
    return conn.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?", (fts_term(word),)).fetchone()[0]


def _kept_counts(conn: Connection, words: list[str]) -> dict[str, int]:
    """word -> its count in `term_count`, for each word the index's tokenizer makes one term of; {} when the
    index keeps no counts (an older index) or they lag behind the chunks (a writer that does not count)."""
    if not words:
        return {}
    try:
        if not counts_in_step(conn):
            return {}
    except Exception:  # no such table (the driver's OperationalError): FTS5 counts every word
        return {}
    term_of = _terms_of_words(conn, words)
    wanted = sorted(set(term_of.values()))
    found = dict(conn.execute(f"SELECT term, chunks FROM term_count WHERE term IN ({','.join('?' * len(wanted))})",
                              wanted).fetchall()) if wanted else {}
    return {word: found.get(term, 0) for word, term in term_of.items()}


def counts_in_step(conn: Connection) -> bool:
    """Whether the kept term counts match the chunks as they are (no writer changed a chunk without counting:
    `pinky.store.term_counts`); raises on an index without them."""
    row = conn.execute("SELECT chunk_writes = counted FROM term_count_state").fetchone()
    return bool(row and row[0])


_TERM_OF: dict[str, str | None] = {}  # word -> its index term (None: none, or several); the tokenizer never changes


def _terms_of_words(conn: Connection, words: list[str]) -> dict[str, str]:
    """word -> the one index term it is (FTS5's own tokenizer, in the temporary table: the porter stem,
    folded like the index); a word of no term or of several (a phrase to FTS5) is left out. Remembered
    for the process: a prompt's words are weighed and then looked for in its candidate chunks."""
    new = [word for word in dict.fromkeys(words) if word not in _TERM_OF]
    if new:
        terms: dict[int, list[str]] = {}
        try:
            vocabulary = _tokens(conn, "instance")
            conn.executemany(f"INSERT INTO {CHUNK_TOKENS}(rowid, text) VALUES (?, ?)", enumerate(new))
            for row, term in conn.execute(f"SELECT doc, term FROM {vocabulary}").fetchall():
                terms.setdefault(row, []).append(term)
        finally:
            emptied(conn)
        if len(_TERM_OF) > 100_000:  # a server's lifetime of queries: start again
            _TERM_OF.clear()
        for row, word in enumerate(new):
            found = terms.get(row, [])
            _TERM_OF[word] = found[0] if len(found) == 1 else None
    return {word: term for word in words if (term := _TERM_OF.get(word))}


# --- the terms of a few chunks ---------------------------------------------------------------------------


def _tokens(conn: Connection, vocabulary: str) -> str:
    """CHUNK_TOKENS, created on first use (one table for words and chunks: each costs ~0.3 ms to create, a
    tenth of what the prompt hook may spend), and the name of its fts5vocab table of kind `vocabulary`."""
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {CHUNK_TOKENS} USING fts5({_FIELDS}, content='', "
                 f"tokenize='{TOKENIZE}')")
    table = f"temp.pinky_chunk_terms_{vocabulary}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5vocab(temp, pinky_chunk_tokens, "
                 f"{vocabulary})")
    return table


def tokenised(conn: Connection, chunk_ids: list[int], vocabulary: str) -> str:
    """Fill CHUNK_TOKENS with these chunks' full-text fields (read from the view the index is built from);
    returns the name of its fts5vocab table of kind `vocabulary` ('row' or 'instance'). The caller reads it
    and then calls `emptied`."""
    table = _tokens(conn, vocabulary)
    for start in range(0, len(chunk_ids), 500):
        part = chunk_ids[start : start + 500]
        conn.execute(f"INSERT INTO {CHUNK_TOKENS}(rowid, {_FIELDS}) SELECT id, {_FIELDS} FROM chunk_fts_source "
                     f"WHERE id IN ({','.join('?' * len(part))})", part)
    return table


def emptied(conn: Connection) -> None:
    """CHUNK_TOKENS empty again, for the next words or chunks."""
    conn.execute(f"INSERT INTO {CHUNK_TOKENS}(pinky_chunk_tokens) VALUES ('delete-all')")


def chunks_holding(conn: Connection, words: list[str], chunk_ids: list[int]) -> dict[str, set[int]]:
    """word -> which of these chunks contain it, as a full-text query for the word would find them: the
    chunks tokenised once (FTS5 would walk each word's whole doclist: ~0.5 ms for a common word of
    10,000 chunks), a word of several terms asked of FTS5 as the phrase it is."""
    found: dict[str, set[int]] = {word: set() for word in words}
    if not words or not chunk_ids:
        return found
    term_of = _terms_of_words(conn, words)
    wanted = sorted(set(term_of.values()))
    holders: dict[str, set[int]] = {}
    if wanted:
        try:
            vocabulary = tokenised(conn, chunk_ids, "instance")
            for term, chunk in conn.execute(f"SELECT DISTINCT term, doc FROM {vocabulary} WHERE term IN "
                                            f"({','.join('?' * len(wanted))})", wanted).fetchall():
                holders.setdefault(term, set()).add(chunk)
        finally:
            emptied(conn)
    for word in words:
        if word in term_of:
            found[word] = holders.get(term_of[word], set())
        else:
            found[word] = {r[0] for r in conn.execute(
                f"SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? AND rowid IN ({','.join('?' * len(chunk_ids))})",
                (fts_term(word), *chunk_ids)).fetchall()}
    return found
