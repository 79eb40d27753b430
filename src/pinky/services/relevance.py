"""How relevant each hit of a search a person asked for is (the CLI, the page).

Measures of two kinds, any one enough: by words, the prompt hook's own (`pinky.search.recall.judge`: the words of
the query a hit's best chunk holds, weighed, over the hook's floor) or most of the query's words in one chunk
(`HELD_SHARE`); by meaning, the default embedder's cosine (`SIMILAR_FLOOR`) or the best hit standing out from the
others (`STANDOUT`). The prompt hook keeps to words alone, to stay silent unless a prompt is clearly about a note;
a person who asked wants the note in other words, or another language, to count too: a Spanish note is
relevant to an Italian question about the same thing though they share no word.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pinky.kb import KnowledgeBase

# Measured with benchmarks/calibrate_relevance.py on the SciFact and CoSQA tuning sets, the cross-lingual notes and
# the demo's sample notes (the figures are in documentation/CLI.md, "pinky-brain search"). A hit is relevant by:
SIMILAR_FLOOR = 0.33  # its cosine to the query, or
STANDOUT = 0.06  # the best hit's lead in cosine over the median of the others (at least STANDOUT_AMONG of them), or
STANDOUT_AMONG = 2
HELD_SHARE = 0.75  # the share of the query's words one of its chunks holds (stop words too: a short question's
# "how" and "in" are as much a part of it as its nouns)

Band = tuple[float | None, str]


def relevance(kb: KnowledgeBase, query: str, hits: Iterable[Any]) -> dict[str, Band]:
    """slug -> (score, band) of each hit (a `Hit` or its dict, from a search with `explain`): `strong` or
    `relevant` by the words it shares with the query, `similar` by meaning alone, else `weak`."""
    from pinky.search.recall import coverage

    chosen = list(hits)
    slugs = [_get(hit, "slug") for hit in chosen]
    bands = lexical_bands(kb, query, slugs)
    close = similarities(chosen)
    held = coverage(kb.index.conn, query, slugs) if any(band == "weak" for _, band in bands.values()) else {}
    ahead = standing_out(close)
    judged: dict[str, Band] = {}
    for slug, (score, band) in bands.items():
        if band == "weak" and held.get(slug, 0.0) >= HELD_SHARE:
            band = "relevant"
        elif band == "weak" and (close.get(slug, 0.0) >= SIMILAR_FLOOR or slug == ahead):
            band = "similar"
        judged[slug] = (score, band)
    return judged


def standing_out(close: dict[str, float]) -> str | None:
    """The hit whose cosine leads the median of the others' by STANDOUT or more, if one does: a query in other words
    than the brain's (another language) scores every note low, the one it is about less low than the rest."""
    if len(close) <= STANDOUT_AMONG:
        return None
    ranked = sorted(close.items(), key=lambda item: item[1], reverse=True)
    rest = sorted(score for _, score in ranked[1:])
    middle = (rest[(len(rest) - 1) // 2] + rest[len(rest) // 2]) / 2
    return ranked[0][0] if ranked[0][1] - middle >= STANDOUT else None


def lexical_bands(kb: KnowledgeBase, query: str, slugs: list[str]) -> dict[str, Band]:
    """The prompt hook's measure alone: slug -> (score, `strong` | `relevant` | `weak`)."""
    from pinky.search.recall import judge

    return judge(kb.index.conn, query, slugs)


def similarities(hits: Iterable[Any]) -> dict[str, float]:
    """slug -> the default embedder's cosine to the query, for each hit the vector side found (explain's parts)."""
    found: dict[str, float] = {}
    for hit in hits:
        vector = (_get(hit, "parts") or {}).get("vector")
        if vector is not None:
            found[_get(hit, "slug")] = float(vector["score"])
    return found


def _get(hit: Any, name: str) -> Any:
    return hit[name] if isinstance(hit, dict) else getattr(hit, name)
