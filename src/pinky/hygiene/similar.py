"""Pairs of entries close in meaning, from the vectors the indexer stored: what `check` compares for
contradictions and what the review list offers to merge (likely duplicates, pinky.knowledge.duplicates)."""

from __future__ import annotations

from typing import Any

from pinky.indexing.index import Index
from pinky.store import hygiene_queries

MATRIX_BLOCK = 64  # queries a block: 64 x 100,000 chunks of scores is 25 MB


def likely_duplicate_scores(index: Index, targets: list[Any], rows: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(id, id) -> cosine for the pairs the save-time warning would call duplicates, one of them a target:
    close in meaning (CLOSE_SIMILARITY) and sharing their words, or very close (DUPLICATE_SIMILARITY). Each
    note's words are read once, however many pairs it is in (700 notes on one topic make 245,000 pairs)."""
    from pinky.knowledge.duplicates import CLOSE_SIMILARITY, close_words_suffice, content_words, word_overlap

    words: dict[str, frozenset[str]] = {}

    def of(entry: str) -> frozenset[str]:
        if entry not in words:
            words[entry] = content_words(rows[entry]["title"], rows[entry]["body"])
        return words[entry]

    def likely(pair: tuple[str, str], score: float) -> bool:
        return close_words_suffice(score, lambda: word_overlap(of(pair[0]), of(pair[1])))

    close = similar_scores(index, targets, rows, CLOSE_SIMILARITY)
    return {pair: score for pair, score in close.items() if likely(pair, score)}


def similar_scores(index: Index, targets: list[Any], rows: dict[str, Any],
                    threshold: float) -> dict[tuple[str, str], float]:
    """(id, id) -> cosine for near-duplicates (the dedup similarity), one of them a target.

    Each target's first chunk, as the indexer embedded it, against every chunk of the current
    entries, in one matrix product per block: nothing is embedded again, and a brain of 5,000 notes
    is checked in about a second instead of one nearest-neighbour search per entry."""
    import numpy as np

    stored = hygiene_queries.chunk_vectors(index.conn)
    if not stored:
        return {}
    owners = np.array([entry for entry, _, _ in stored])
    matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in stored])
    wanted = {row["id"] for row in targets}
    firsts = [n for n, (entry, order, _) in enumerate(stored) if order == 0 and entry in wanted]
    pairs: dict[tuple[str, str], float] = {}
    for start in range(0, len(firsts), MATRIX_BLOCK):
        block = firsts[start:start + MATRIX_BLOCK]
        scores = matrix[block] @ matrix.T  # vectors are L2-normalised: dot = cosine
        for query, chunk in zip(*np.nonzero(scores >= threshold), strict=True):
            first, other = str(owners[block[query]]), str(owners[chunk])
            if first != other and other in rows:
                key = _ordered(first, other)
                pairs[key] = max(pairs.get(key, 0.0), float(scores[query, chunk]))
    return pairs


def _ordered(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first < second else (second, first)
