"""The figures `pinky eval` reports, as pure functions: no database."""

from __future__ import annotations

import math

import pytest

from pinky.evaluation import metrics


def test_recall_counts_the_expected_found_within_the_cut_off() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert metrics.recall_at(ranked, ["a", "f"], 5) == 0.5
    assert metrics.recall_at(ranked, ["a", "f"], 10) == 1.0
    assert metrics.recall_at([], ["a"], 10) == 0.0


def test_mrr_is_the_inverse_rank_of_the_first_expected_hit() -> None:
    assert metrics.mrr_at(["x", "y", "a"], ["a"], 10) == pytest.approx(1 / 3)
    assert metrics.mrr_at(["x", "a", "b"], ["b", "a"], 10) == 0.5
    assert metrics.mrr_at(["x"] * 10 + ["a"], ["a"], 10) == 0.0


def test_ndcg_is_one_only_when_every_expected_entry_leads() -> None:
    assert metrics.ndcg_at(["a", "b", "c"], ["b", "a"], 10) == 1.0
    second = metrics.ndcg_at(["x", "a"], ["a"], 10)
    assert second == pytest.approx(1 / math.log2(3))
    assert metrics.ndcg_at(["a", "x", "b"], ["a", "b"], 10) == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert metrics.ndcg_at(["x"], ["a"], 10) == 0.0


def test_percentile_interpolates_between_ranks() -> None:
    assert metrics.percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert metrics.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)
    assert metrics.percentile([], 0.5) == 0.0


def test_summary_averages_overall_and_by_category() -> None:
    results = [{"category": "en", "scores": metrics.query_scores(["a"], ["a"])},
               {"category": "es", "scores": metrics.query_scores(["x", "b"], ["b"])},
               {"category": None, "scores": metrics.query_scores(["x"], ["c"])}]
    summary = metrics.summarise(results)
    assert summary["queries"] == 3
    assert summary["overall"]["mrr@10"] == pytest.approx(0.5)
    assert summary["categories"]["es"] == {"queries": 1, "r@5": 1.0, "r@10": 1.0, "mrr@10": 0.5,
                                           "ndcg@10": round(1 / math.log2(3), 4)}
    assert summary["categories"]["uncategorised"]["r@10"] == 0.0


def _report(ndcg: float, category_ndcg: float) -> dict[str, object]:
    figures = {"r@5": 1.0, "r@10": 1.0, "mrr@10": 1.0}
    return {"overall": {**figures, "ndcg@10": ndcg}, "categories": {"es": {**figures, "ndcg@10": category_ndcg}}}


def test_a_fall_within_the_tolerance_passes_and_one_beyond_it_is_named() -> None:
    assert metrics.regressions(_report(0.90, 0.90), _report(0.89, 0.90), 0.01) == []
    fallen = metrics.regressions(_report(0.90, 0.90), _report(0.90, 0.70), 0.01)
    assert [(r.where, r.metric, r.drop) for r in fallen] == [("category es", "ndcg@10", 0.2)]
    assert fallen[0].line() == "category es: ndcg@10 0.9000 -> 0.7000 (-0.2000)"
    assert metrics.regressions(_report(0.5, 0.5), _report(0.9, 0.9), 0.0) == []  # better is never a regression


def test_worse_queries_are_matched_by_key_and_sorted_by_drop() -> None:
    def item(key: str, ndcg: float) -> dict[str, object]:
        return {"key": key, "query": key, "scores": {"ndcg@10": ndcg}}

    before = [item("q1", 1.0), item("q2", 1.0), item("q3", 0.5), item("gone", 1.0)]
    after = [item("q1", 0.63), item("q2", 0.0), item("q3", 0.9), item("new", 0.0)]
    worse = metrics.worse_queries(before, after)
    assert [(r.where, r.before, r.after, r.drop) for r in worse] == [("q2", 1.0, 0.0, 1.0), ("q1", 1.0, 0.63, 0.37)]
