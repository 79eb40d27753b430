"""The full-text side, pure and stdlib only: the weighted fields, identifier parts, the words a query asks for.

FTS5's `unicode61` tokenizer already cuts snake_case and dotted names at `_` and `.` (`os.path.join` is
`os`, `path`, `join`), but keeps camelCase whole: `writeBoolean` is the one token `writeboolean`, which a
question about "write a boolean" never meets. So each chunk also indexes the parts of its camelCase
identifiers (`write boolean`) in a column of their own, and a query that names an identifier asks for its
parts too, beside the identifier itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pinky.errors import InvalidInput
from pinky.text.fts import FTS_COLUMNS, fts_term

# Measured on the retrieval sets (documentation/RANKING.md, "Measurements behind the defaults").
DEFAULT_FIELD_WEIGHTS: dict[str, float] = {
    "title": 2.0, "heading": 1.0, "text": 1.0, "questions": 2.0, "idents": 2.0,
}

MAX_IDENT_PARTS = 2000  # distinct parts kept per chunk: a generated file must not double the index
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
# A lower-case letter or digit followed by a capital, or an acronym followed by a capitalised word.
_CAMEL_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def camel_parts(token: str) -> list[str]:
    """The lower-cased parts of a camelCase or PascalCase name ('parseXMLDoc' -> parse, xml, doc);
    [] for a token with no case break (a plain word, snake_case, ALLCAPS)."""
    parts = [p for piece in token.split("_") for p in _CAMEL_BREAK.split(piece) if p]
    if len(parts) < 2 or not any(_CAMEL_BREAK.search(piece) for piece in token.split("_")):
        return []
    return [p.lower() for p in parts]


def identifier_parts(texts: Iterable[str]) -> str:
    """The distinct parts of every camelCase identifier in the texts, space separated, first seen first:
    what the `idents` column holds. snake_case and dotted names need nothing: the tokenizer cuts them."""
    seen: dict[str, None] = {}
    for text in texts:
        for token in _TOKEN.findall(text):
            if token.islower() or token.isdigit():  # no capital, no case break: most words (a 4 MB note: 3.9 -> 0.4 s)
                continue
            for part in camel_parts(token):
                seen.setdefault(part, None)
                if len(seen) >= MAX_IDENT_PARTS:
                    return " ".join(seen)
    return " ".join(seen)


def query_identifier_parts(text: str) -> list[str]:
    """The parts of the identifiers a query names, camelCase and snake_case alike, lower-cased: asked for
    beside the identifier itself, so `getUserName` also finds `get_user_name` and prose about a user name."""
    parts: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        pieces = camel_parts(token) or ([p.lower() for p in token.split("_") if p] if "_" in token.strip("_") else [])
        for part in pieces:
            parts.setdefault(part, None)
    return list(parts)


def field_weights(overrides: dict[str, float] | None = None) -> tuple[float, ...]:
    """bm25() column weights in `FTS_COLUMNS` order: the defaults, with `overrides` by column name."""
    weights = {**DEFAULT_FIELD_WEIGHTS, **(overrides or {})}
    unknown = set(weights) - set(FTS_COLUMNS)
    if unknown:
        raise InvalidInput(f"unknown full-text field(s): {', '.join(sorted(unknown))}")
    return tuple(float(weights[name]) for name in FTS_COLUMNS)



# --- the words a full-text search asks for --------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 64


def query_terms(text: str) -> list[str]:
    """The distinct lowercased words of a query, as fts_query uses them."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))[:MAX_QUERY_TERMS]


def lexical_terms(query: str, split_identifiers: bool = True) -> list[str]:
    """The words a full-text search asks for: the query's own, then the parts of the identifiers it names."""
    terms = query_terms(query)
    if split_identifiers:
        terms = list(dict.fromkeys(terms + query_identifier_parts(query)))[:MAX_QUERY_TERMS]
    return terms


def fts_query(text: str) -> str | None:
    """Turn any user text into a safe FTS5 MATCH expression: quoted words OR-ed together.

    Quoting makes FTS5 operators (AND, OR, NEAR, *, -, :, parentheses) plain words, so no input
    can raise a syntax error. Returns None when the text has no searchable word.
    """
    return match_expression(query_terms(text))


def match_expression(terms: Sequence[str]) -> str | None:
    if not terms:
        return None
    return " OR ".join(fts_term(t) for t in terms)


PRUNE_FROM_CHUNKS = 1000  # below this, scoring every chunk is cheap: keep exact semantics


def informative_terms(doc_counts: Sequence[tuple[str, int]], total: int) -> list[str]:
    """Drop words found in more than half of the chunks ("the", "de", a project's own name).

    FTS5's BM25 gives such a word an IDF of ~0 (it is clamped at 1e-6), so it cannot change the
    ranking of chunks that match another word; but OR-ing it in makes SQLite score nearly every
    chunk. Dropping it keeps the ranking (up to ties) and measured 4x faster on 20,000 chunks.
    Words found nowhere are dropped too; if no word that matches is left, the rarest one is kept.
    """
    if total < PRUNE_FROM_CHUNKS:
        return [term for term, _ in doc_counts]
    present = [(term, count) for term, count in doc_counts if count > 0]
    kept = [term for term, count in present if count * 2 <= total]
    if kept or not present:
        return kept
    return [min(present, key=lambda tc: tc[1])[0]]


def only_common(doc_counts: Sequence[tuple[str, int]], total: int) -> bool:
    """Whether every word of a query the index holds is in more than half of its chunks (and one is), on an
    index of PRUNE_FROM_CHUNKS chunks or more: what informative_terms keeps none of.

    FTS5's BM25 clamps such a word's IDF (log((N - n + 0.5) / (n + 0.5)) <= 0) to 1e-6, so its scores then
    hold no evidence of what the query is about, and ranking them means scoring nearly every chunk (at
    100,000 chunks, most of a warm search). A query with one word in half the chunks or fewer is not this."""
    if total < PRUNE_FROM_CHUNKS:
        return False
    present = [count for _, count in doc_counts if count > 0]
    return bool(present) and all(count * 2 > total for count in present)


# --- second passes: proximity and pseudo-relevance feedback (measured; see RANKING.md) ---------------------

NEAR_DISTANCE = 6  # tokens between two neighbouring query words for a proximity match
FEEDBACK_DOCS = 5  # top chunks of the first pass read for feedback terms
FEEDBACK_TERMS = 10  # terms added
_FEEDBACK_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def near_expression(terms: list[str], distance: int = NEAR_DISTANCE) -> str | None:
    """An FTS5 expression matching chunks where neighbouring query words occur close together:
    NEAR("a" "b", d) OR NEAR("b" "c", d) ...; None for fewer than two words."""
    if len(terms) < 2:
        return None
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    return " OR ".join(f"NEAR({a} {b}, {distance})" for a, b in zip(quoted, quoted[1:], strict=False))


def feedback_candidates(texts: list[str], exclude: set[str]) -> dict[str, int]:
    """Word -> in how many of the feedback texts it occurs, for words of 3+ letters not in `exclude`."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in {w.lower() for w in _FEEDBACK_WORD.findall(text)} - exclude:
            counts[word] = counts.get(word, 0) + 1
    return counts


def feedback_terms(doc_counts: dict[str, int], corpus_counts: dict[str, int], total: int,
                   limit: int = FEEDBACK_TERMS) -> list[str]:
    """The words the top results share and the corpus does not: occurrences among the feedback texts
    times their IDF in the whole index, the best `limit`. Words in half the chunks or more never qualify."""
    import math

    scored = [(count * math.log(total / corpus_counts[w]), w) for w, count in doc_counts.items()
              if count >= 2 and 0 < corpus_counts.get(w, 0) * 2 < total]
    return [w for _, w in sorted(scored, key=lambda sw: (-sw[0], sw[1]))[:limit]]


def add_scores(first: list[tuple[str, float, int]], second: list[tuple[str, float, int]],
               weight: float) -> list[tuple[str, float, int]]:
    """The first pass's candidates re-scored with `weight` x their score in a second pass, best first.
    Only the first pass's candidates are kept, with their best chunk."""
    extra = {entry: score for entry, score, _ in second}
    rescored = [(entry, score + weight * extra.get(entry, 0.0), chunk) for entry, score, chunk in first]
    return sorted(rescored, key=lambda row: -row[1])
