"""The FTS5 vocabulary, shared by the SQL that searches (`pinky.store`) and the text side that builds queries
(`pinky.text.lexical`): the columns of `chunk_fts` and how one word is quoted. Stdlib free, so the hooks' read
path can use it without loading `re`.
"""

from __future__ import annotations

# The columns of `chunk_fts`, in order (migration m011); bm25() takes one weight per column.
FTS_COLUMNS = ("title", "heading", "text", "questions", "idents")
# Its tokenizer (migration m011): a temporary table that tokenises with it makes the index's own terms.
TOKENIZE = "porter unicode61"


def fts_term(term: str) -> str:
    """One word as an FTS5 string: quoted, so operators and punctuation in it are plain text."""
    return '"' + term.replace('"', '""') + '"'
