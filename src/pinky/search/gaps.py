"""Knowledge gaps: searches whose best hit was weak, counted, and closed by a later save that answers them.

A search is weak when its best lexical match covers less than `WEAK_COVERAGE` of the query's words AND
no chunk is semantically closer than `WEAK_SIMILARITY` (both measured on the retrieval sets, SciFact and CoSQA, with
benchmarks/calibrate_gaps.py; the figures are in documentation/HYGIENE.md). Only a hash of the query is
kept, and hashes of its words, unless PINKY_LOG_QUERIES=1; a save whose title and body hold at least
`CLOSE_SHARE` of a gap's words closes it (without ever needing the text).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from pinky.base.dates import iso_utc, now_utc
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.store import hygiene_queries
from pinky.store.connect import write_transaction

log = logging.getLogger("pinky.search.gaps")

# Measured with benchmarks/calibrate_gaps.py (USE multilingual, the default embedder): see HYGIENE.md.
WEAK_COVERAGE = 0.6
WEAK_SIMILARITY = 0.3
CLOSE_SHARE = 0.75
_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "the and for how what why when where which who with does did from that this into are was were can could "
    "not but have has had you your use using get set its our their there then than also just about".split())


def normalised_query(query: str) -> str:
    return " ".join(query.lower().split())


def query_hash(query: str) -> str:
    return hashlib.sha256(normalised_query(query).encode("utf-8")).hexdigest()[:16]


def _stem(word: str) -> str:
    """A crude stem, so 'retries' and 'retry', 'timeouts' and 'timeout' meet."""
    for suffix, keep in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def word_hashes(text: str) -> set[str]:
    """Hashes of the informative words of a text (no stop words, none shorter than 3 characters)."""
    words = {_stem(w) for w in (m.lower() for m in _WORD.findall(text)) if len(w) >= 3 and w not in STOPWORDS}
    return {hashlib.sha256(w.encode("utf-8")).hexdigest()[:10] for w in words}


def is_weak(coverage: float, similarity: float) -> bool:
    """Whether the best a search found is too weak to answer it (see the module docstring)."""
    return coverage < WEAK_COVERAGE and similarity < WEAK_SIMILARITY


def answers(gap_terms: Iterable[str], text_terms: set[str]) -> bool:
    """Whether a note holding `text_terms` answers a gap made of `gap_terms` (most of its words)."""
    wanted = set(gap_terms)
    return bool(wanted) and len(wanted & text_terms) >= CLOSE_SHARE * len(wanted)


def record(index: Index, query: str, best: float) -> None:
    """Count a weak search as a gap (telemetry: never fails the search)."""
    terms = sorted(word_hashes(query))
    if not terms or not index.config.telemetry:
        return
    try:
        with write_transaction(index.conn):
            hygiene_queries.record_gap(index.conn, query_hash(query),
                                       normalised_query(query) if index.config.log_queries else None,
                                       json.dumps(terms), round(best, 4), iso_utc(now_utc()))
    except Exception as exc:  # telemetry must never break a search
        log.warning("could not record a knowledge gap: %s", exc)


def close_answered(index: Index, slug: str, text: str) -> list[str]:
    """Close every open gap the note `slug` (its title and body in `text`) answers; their hashes.
    Telemetry: a failure is logged, never raised (the note is written already)."""
    try:
        have = word_hashes(text)
        closed = [row["query_hash"] for row in hygiene_queries.open_gaps(index.conn)
                  if answers(json.loads(row["terms"]), have)]
        if closed:
            with write_transaction(index.conn):
                hygiene_queries.close_gaps(index.conn, closed, slug, iso_utc(now_utc()))
        return closed
    except Exception as exc:
        log.warning("could not close knowledge gaps: %s", exc)
        return []


def list_gaps(index: Index, *, include_closed: bool = False, limit: int = 50) -> list[dict[str, Any]]:
    """Gaps, most frequent first: the query (when logged), its hash, how often, when, and what closed it."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInput(f"limit must be a whole number from 1 to 1000, got {limit!r}")
    return [{"query": r["query"], "query_hash": r["query_hash"], "count": r["count"], "best_score": r["best_score"],
             "first_seen": r["first_seen"], "last_seen": r["last_seen"], "closed_by": r["closed_by"],
             "closed_at": r["closed_at"]} for r in hygiene_queries.gaps(index.conn, include_closed, limit)]
