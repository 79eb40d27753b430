"""Rank fusion: combining the full-text and vector rankings into one (pure functions, no database).

RRF, min-max and z-score fusion, the coverage gate, and the blend of two vector models' scores that
the second-stage retriever (pinky.search.second_stage) needs. Measured in documentation/RANKING.md.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pinky.search.context_rank import Boost

Candidate = tuple[str, float, int]  # (entry id, score where higher is better, best chunk id), as search.hybrid's

__all__ = ["Ranked", "Standardised", "blend_vector_sides", "fuse_standardised", "gated_weight",
           "mix_standardised", "rrf", "score_fusion", "zscore_fusion", "zscores"]

Ranked = Sequence[tuple[str, float]]  # (key, raw score), best first


def rrf(lists: Sequence[Ranked], weights: Sequence[float], k: int = 60) -> list[tuple[str, float]]:
    """Reciprocal Rank Fusion: sum of weight / (k + rank) over the lists (ranks start at 1)."""
    scores: dict[str, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        for rank, (key, _) in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _minmax(ranked: Ranked) -> dict[str, float]:
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    low, high = min(values), max(values)
    if high == low:
        return {key: 1.0 for key, _ in ranked}
    return {key: (s - low) / (high - low) for key, s in ranked}


def score_fusion(lists: Sequence[Ranked], weights: Sequence[float]) -> list[tuple[str, float]]:
    """Weighted sum of min-max normalised scores (higher raw score = better in every list).

    A key missing from a list gets 0 from it. Unlike RRF this keeps how far apart scores are,
    which lets a strong lexical match outrank a merely similar vector hit.
    """
    fused: dict[str, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        for key, value in _minmax(ranked).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def zscores(ranked: Ranked, pad_to: int) -> tuple[dict[str, float], float]:
    """z-scores of a list, and the z a key missing from it gets.

    A list shorter than the candidate depth holds every match there is, so the rest of the
    corpus scored 0: standardise as if it were padded with zeros, and give missing keys the z of
    0. Without that, a lone exact match (a rare identifier, an error code) would get z = 0 and
    lose to vector noise. A full list says nothing about what lies below it: a missing key gets
    the lowest z of the list.
    """
    values = [s for _, s in ranked]
    padding = max(0, pad_to - len(values))
    count = len(values) + padding
    mean = sum(values) / count
    spread = ((sum((v - mean) ** 2 for v in values) + padding * mean * mean) / count) ** 0.5
    if spread == 0:
        return {key: 0.0 for key, _ in ranked}, 0.0
    scores = {key: (s - mean) / spread for key, s in ranked}
    missing = -mean / spread if padding else min(scores.values())
    return scores, missing


def zscore_fusion(lists: Sequence[Ranked], weights: Sequence[float], depth: int = 100) -> list[tuple[str, float]]:
    """Weighted sum of z-scores, each list standardised over its own candidates.

    Measured best on both eval sets (see documentation/RANKING.md).
    """
    used = [(zscores(ranked, depth), w) for ranked, w in zip(lists, weights, strict=True) if ranked]
    return fuse_standardised([s for s, _ in used], [w for _, w in used])


Standardised = tuple[dict[str, float], float]  # z-scores by key, and the z a missing key gets


def fuse_standardised(sides: Sequence[Standardised], weights: Sequence[float]) -> list[tuple[str, float]]:
    """Weighted sum of already standardised sides; a key missing from a side gets that side's missing z."""
    keys = dict.fromkeys(key for scores, _ in sides for key in scores)
    fused = {key: sum(w * scores.get(key, missing) for (scores, missing), w in zip(sides, weights, strict=True))
             for key in keys}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def blend_vector_sides(refined: Ranked, base: Ranked, lacking: Collection[str], depth: int = 100) -> Standardised:
    """The vector side as z-scores when two models rank it (pinky.search.second_stage): an entry's second-stage z once
    every chunk of it has a second-stage vector, its default-embedder z while some still lack one
    (`lacking`). Both are standardised over their own candidates, so the two scales meet; a key in neither
    list gets the second stage's missing z.

    The second stage's list is never padded: it scores every chunk, so a list shorter than `depth` means a
    small brain, not zeros below it, and e5 gives unrelated text ~0.8, far from 0."""
    scores, missing = zscores(refined, 0) if refined else ({}, 0.0)
    if base and lacking:
        first, _ = zscores(base, depth)
        scores.update({key: z for key, z in first.items() if key in lacking})
    return scores, missing


def gated_weight(bm25_weight: float, coverage: float, gate: float) -> float:
    """Shrink the full-text weight when the best lexical match covers few query words.

    A query in another language shares only function words ("de", "la", "en") with the notes,
    so BM25 returns confident junk; scaling its weight by coverage/gate lets the multilingual
    vectors decide. Queries that really match lexically (coverage >= gate) are untouched.
    """
    if gate <= 0:
        return bm25_weight
    return bm25_weight * min(1.0, max(0.0, coverage) / gate)


def mix_standardised(sides: Sequence[Standardised], weights: Sequence[float]) -> Standardised:
    """One standardised side from several: the weighted sum of their z-scores (a key missing from a side
    gets that side's missing z), and the weighted sum of their missing z-scores."""
    keys = dict.fromkeys(key for scores, _ in sides for key in scores)
    mixed = {key: sum(w * scores.get(key, missing) for (scores, missing), w in zip(sides, weights, strict=True))
             for key in keys}
    return mixed, sum(w * missing for (_, missing), w in zip(sides, weights, strict=True))


def explain_parts(lexical: list[Candidate], vector: list[Candidate], refined: list[Candidate] | None,
                  boosts: dict[str, Boost]) -> dict[str, dict[str, Any]]:
    """Entry -> why it ranked: its score and rank on each side that found it (`full_text`: BM25 over the
    weighted fields; `vector`: the default embedder's cosine; `second_stage`: e5's cosine) and the
    context file's lift, if any. The fused score is their standardised, weighted sum (below)."""
    out: dict[str, dict[str, Any]] = {}
    for side, candidates in (("full_text", lexical), ("vector", vector), ("second_stage", refined or [])):
        for rank, (entry, score, _) in enumerate(candidates, 1):
            out.setdefault(entry, {}).setdefault(side, {"score": round(float(score), 4), "rank": rank})
    for entry, boost in boosts.items():
        if entry in out:
            out[entry]["context"] = boost.why
    return out
