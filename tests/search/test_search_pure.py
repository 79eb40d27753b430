"""Query escaping and rank fusion as pure functions."""

from __future__ import annotations

import sqlite3

import pytest

from pinky.search.fusion import rrf, score_fusion
from pinky.search.hybrid import snippet
from pinky.text.lexical import fts_query


@pytest.mark.parametrize("text", [
    'he said "hi"', "(a OR b) AND NOT c", "NEAR(x y)", "pre* -neg col:value", "🙂 emoji 🚀 rocket",
    "x" * 2000, "' ; DROP TABLE entry; --", "^start", "a AND", "\"unbalanced", "{braces} [brackets]",
])
def test_escaped_queries_are_valid_fts5(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    except sqlite3.OperationalError:
        import sqlean as sqlite3_alt  # type: ignore[import-untyped]

        conn = sqlite3_alt.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('he said hi about col value and emoji rocket')")
    match = fts_query(text)
    if match is not None:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_operators_become_plain_words() -> None:
    assert fts_query("a AND b") == '"a" OR "and" OR "b"'
    assert fts_query("!!! ...") is None
    assert fts_query("Über café") == '"über" OR "café"'


def test_query_terms_are_capped_and_deduplicated() -> None:
    match = fts_query(" ".join(f"w{i}" for i in range(500)) + " w1 w1")
    assert match is not None and match.count(" OR ") == 63


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = rrf([[("a", 9.0), ("b", 8.0)], [("b", 0.9), ("c", 0.8)]], [1.0, 1.0], k=60)
    assert [key for key, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)


def test_rrf_weights_change_the_winner() -> None:
    lists = [[("a", 1.0)], [("c", 1.0)]]
    assert rrf(lists, [2.0, 1.0], k=10)[0][0] == "a"
    assert rrf(lists, [1.0, 2.0], k=10)[0][0] == "c"


def test_score_fusion_keeps_score_gaps() -> None:
    lexical = [("a", 10.0), ("b", 1.0), ("c", 0.9)]
    vector = [("c", 0.8), ("b", 0.79), ("a", 0.1)]
    fused = dict(score_fusion([lexical, vector], [0.75, 0.25]))
    assert fused["a"] == pytest.approx(0.75)
    assert fused["c"] == pytest.approx(0.25)
    assert max(fused, key=fused.__getitem__) == "a"


def test_score_fusion_of_single_item_lists() -> None:
    assert score_fusion([[("x", 3.0)], []], [0.5, 0.5]) == [("x", 0.5)]


def test_snippet_centres_on_the_query_word() -> None:
    text = "lorem " * 100 + "the pool timeout appears here " + "ipsum " * 100
    cut = snippet(text, "timeout", width=80)
    assert "timeout" in cut and cut.startswith("…") and cut.endswith("…")
    assert snippet("short text", "x") == "short text"


def test_zscore_fusion_standardises_each_list() -> None:
    from pinky.search.fusion import zscore_fusion

    lexical = [("a", 30.0), ("b", 10.0), ("c", 5.0)]
    vector = [("c", 0.9), ("d", 0.5)]
    fused = dict(zscore_fusion([lexical, vector], [0.5, 0.5], depth=3))
    # The vector list holds 2 of depth 3, so it is standardised as if padded with one 0 score;
    # d is missing from the full lexical list, so it gets that list's lowest z (c's).
    assert fused["d"] == pytest.approx(0.5 * fused_z(lexical)["c"] + 0.5 * fused_z(vector + [("pad", 0.0)])["d"])
    assert max(fused, key=fused.__getitem__) in {"a", "c"}


def test_a_lone_exact_match_beats_vector_noise() -> None:
    from pinky.search.fusion import zscore_fusion

    lexical = [("exact", 7.5)]  # the only note containing a rare identifier
    vector = [(f"noise{i}", 0.45 - i * 0.002) for i in range(100)]
    assert zscore_fusion([lexical, vector], [0.65, 0.35], depth=100)[0][0] == "exact"


def fused_z(ranked):  # type: ignore[no-untyped-def]
    values = [s for _, s in ranked]
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {k: (s - mean) / sd for k, s in ranked}


def test_coverage_gate_shrinks_bm25_only_for_poor_lexical_matches() -> None:
    from pinky.search.fusion import gated_weight

    assert gated_weight(0.65, 1.0, 0.4) == pytest.approx(0.65)
    assert gated_weight(0.65, 0.4, 0.4) == pytest.approx(0.65)
    assert gated_weight(0.65, 0.1, 0.4) == pytest.approx(0.1625)
    assert gated_weight(0.65, 0.0, 0.4) == 0.0
    assert gated_weight(0.65, 0.0, 0.0) == pytest.approx(0.65)  # gate disabled


def test_words_in_most_chunks_are_dropped_but_never_all() -> None:
    from pinky.text.lexical import informative_terms

    counts = [("the", 900), ("pool", 40), ("timeout", 12), ("de", 600)]
    assert informative_terms(counts, 1000) == ["pool", "timeout"]
    assert informative_terms([("the", 900), ("a", 950)], 1000) == ["the"]
    assert informative_terms([("the", 900), ("zzz", 0)], 1000) == ["the"]  # a word found nowhere is no help
    assert informative_terms([("half", 500)], 1000) == ["half"]
    assert informative_terms([], 1000) == []
    # A small brain keeps every word: scoring all chunks is cheap, and a word in the only note matters.
    assert informative_terms([("zebracorn", 1), ("migration", 0)], 1) == ["zebracorn", "migration"]


def test_a_query_is_only_common_when_no_word_it_holds_is_in_half_the_chunks_or_fewer() -> None:
    from pinky.text.lexical import only_common

    assert only_common([("the", 900), ("a", 950)], 1000)  # FTS5 clamps both IDFs: BM25 has no evidence
    assert only_common([("the", 900), ("zzz", 0)], 1000)  # a word found nowhere scores nothing either
    assert not only_common([("the", 900), ("pool", 40)], 1000)  # one selective word: ranked as ever
    assert not only_common([("half", 500)], 1000)  # exactly half: kept by informative_terms
    assert not only_common([("zzz", 0)], 1000) and not only_common([], 1000)
    assert not only_common([("the", 900)], 999)  # a small brain: every chunk is scored, cheaply


def test_match_expression_quotes_and_escapes() -> None:
    from pinky.text.lexical import match_expression

    assert match_expression(['a"b', "c"]) == '"a""b" OR "c"'
    assert match_expression([]) is None
