"""When two notes say the same thing: the rule a save's warning, the review list and `check` share.

Meaning alone (the embedder's cosine) misses reworded copies: "PG pool hangs on shutdown" (Call
pool.close(timeout=5) before exiting) and "Postgres pool hangs on shutdown" (Call POOL.close(timeout=5)
in close_pool ...) are 0.75 apart with the default embedder, under the 0.80 that alone says "duplicate",
while "Postgres pool hangs on shutdown" and "Redis client hangs on shutdown", two different facts, are
0.69. What tells them apart is the words: a reworded copy keeps most of its content words (pool, close,
timeout, shutdown, hangs), a different fact on the same subject does not. So a pair is a likely
duplicate when its cosine reaches DUPLICATE_SIMILARITY, or when it reaches CLOSE_SIMILARITY and the
two notes share at least WORD_OVERLAP of their content words (Jaccard, title and body together).

Measured on a labelled set (benchmarks/eval_duplicates.py, figures in documentation/HYGIENE.md).
Stdlib only, pure: the callers bring the cosine.
"""

from __future__ import annotations

from collections.abc import Callable

from pinky.search.recall import prompt_terms

DUPLICATE_SIMILARITY = 0.8  # this close in meaning is a duplicate whatever the words
# This close, and sharing WORD_OVERLAP of their words, too. At 0.60 two short notes on different pools
# ("PG pool hangs on shutdown" / "Redis client hangs on shutdown", 0.61) shared enough words to pass.
CLOSE_SIMILARITY = 0.65
# Between the most a different fact on the same subject shared (0.19) and the least a reworded copy
# did (0.25) in the labelled set, among pairs at CLOSE_SIMILARITY or more.
WORD_OVERLAP = 0.22
MAX_WORDS = 400  # a long note's first words are enough to tell


def content_words(title: str, body: str) -> frozenset[str]:
    """A note's distinct content words (lowercased; function words and chatter left out)."""
    return frozenset(prompt_terms(f"{title}\n{body[:8000]}", MAX_WORDS))


def word_overlap(first: frozenset[str], second: frozenset[str]) -> float:
    """The share of their content words two notes have in common (Jaccard); 0 when either has none."""
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def likely_duplicate(cosine: float, first: tuple[str, str], second: tuple[str, str]) -> bool:
    """Whether two notes, (title, body) each, at `cosine` apart in meaning, say the same thing."""
    return close_words_suffice(cosine, lambda: word_overlap(content_words(*first), content_words(*second)))


def close_words_suffice(cosine: float, overlap: Callable[[], float]) -> bool:
    """`likely_duplicate` with the notes' word overlap computed only when the cosine leaves it to the words
    (a caller judging many pairs passes the overlap of word sets it computed once per note)."""
    if cosine >= DUPLICATE_SIMILARITY:
        return True
    if cosine < CLOSE_SIMILARITY:
        return False
    return overlap() >= WORD_OVERLAP
