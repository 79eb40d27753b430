"""Retrieval-quality figures for `pinky eval`: pure functions over ranked slugs, no database.

Relevance is binary (a hit is one of the query's expected entries or it is not). Every figure is in
[0, 1] and higher is better; a query's figures are averaged into the overall and per-category ones.
A baseline comparison says which figure fell by more than a tolerance, and which queries got worse.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

METRICS = ("r@5", "r@10", "mrr@10", "ndcg@10")


def recall_at(ranked: Sequence[str], expected: Iterable[str], k: int) -> float:
    """Share of the expected entries found in the first `k` results."""
    wanted = set(expected)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at(ranked: Sequence[str], expected: Iterable[str], k: int) -> float:
    """1 / rank of the first expected entry in the first `k` results; 0 when none is there."""
    wanted = set(expected)
    return next((1.0 / rank for rank, slug in enumerate(ranked[:k], 1) if slug in wanted), 0.0)


def ndcg_at(ranked: Sequence[str], expected: Iterable[str], k: int) -> float:
    """Normalised discounted cumulative gain with binary gains: 1 when every expected entry leads the list."""
    wanted = set(expected)
    dcg = sum(1.0 / math.log2(rank + 1) for rank, slug in enumerate(ranked[:k], 1) if slug in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal if ideal else 0.0


def query_scores(ranked: Sequence[str], expected: Iterable[str]) -> dict[str, float]:
    """Every figure of METRICS for one query."""
    wanted = list(expected)
    return {"r@5": recall_at(ranked, wanted, 5), "r@10": recall_at(ranked, wanted, 10),
            "mrr@10": mrr_at(ranked, wanted, 10), "ndcg@10": ndcg_at(ranked, wanted, 10)}


def mean_scores(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of each figure over queries, rounded to 4 places (what reports and baselines keep)."""
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) if rows else 0.0 for name in METRICS}


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0-1) percentile by linear interpolation between the closest ranks; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall and per-category means of per-query results (each with `category` and `scores`)."""
    categories: dict[str, list[dict[str, float]]] = {}
    for item in results:
        categories.setdefault(item.get("category") or "uncategorised", []).append(item["scores"])
    by_category = {name: {"queries": len(rows), **mean_scores(rows)} for name, rows in sorted(categories.items())}
    return {"queries": len(results), "overall": mean_scores([r["scores"] for r in results]), "categories": by_category}


@dataclass(frozen=True)
class Regression:
    """One figure that fell: overall or a category's (`where`), or a query's (then `where` is its text)."""

    where: str
    metric: str
    before: float
    after: float

    @property
    def drop(self) -> float:
        return round(self.before - self.after, 4)

    def line(self) -> str:
        return f"{self.where}: {self.metric} {self.before:.4f} -> {self.after:.4f} (-{self.drop:.4f})"


def regressions(baseline: dict[str, Any], current: dict[str, Any], tolerance: float) -> list[Regression]:
    """Figures (overall and per category present in both) that fell by more than `tolerance`."""
    found: list[Regression] = []
    pairs = [("overall", baseline.get("overall") or {}, current.get("overall") or {})]
    pairs += [(f"category {name}", figures, current.get("categories", {}).get(name) or {})
              for name, figures in sorted((baseline.get("categories") or {}).items())]
    for where, before, after in pairs:
        for name in METRICS:
            if name in before and name in after and before[name] - after[name] > tolerance + 1e-9:
                found.append(Regression(where, name, float(before[name]), float(after[name])))
    return found


def worse_queries(baseline: Sequence[dict[str, Any]], current: Sequence[dict[str, Any]]) -> list[Regression]:
    """Queries (matched by `key`) whose nDCG@10 fell, worst first; each carries before and after."""
    before = {item["key"]: item["scores"] for item in baseline if "key" in item and "scores" in item}
    found = [Regression(item["query"], "ndcg@10", float(before[item["key"]]["ndcg@10"]),
                        float(item["scores"]["ndcg@10"]))
             for item in current if item["key"] in before
             and before[item["key"]]["ndcg@10"] - item["scores"]["ndcg@10"] > 1e-9]
    return sorted(found, key=lambda r: (-r.drop, r.where))
