"""pinky.text.lexical and the query side of search: identifier parts and field weights, pure (no database)."""

from __future__ import annotations

import pytest

from pinky.errors import InvalidInput
from pinky.text.lexical import (
    FTS_COLUMNS,
    MAX_IDENT_PARTS,
    add_scores,
    camel_parts,
    feedback_candidates,
    feedback_terms,
    field_weights,
    identifier_parts,
    lexical_terms,
    near_expression,
    query_identifier_parts,
)


@pytest.mark.parametrize(("token", "parts"), [
    ("writeBoolean", ["write", "boolean"]),
    ("HTTPServer", ["http", "server"]),
    ("parseXMLDoc", ["parse", "xml", "doc"]),
    ("getUser2FA", ["get", "user2", "fa"]),
    ("toJSON", ["to", "json"]),
    ("_privateCamel", ["private", "camel"]),
    ("mixed_snakeAndCamel", ["mixed", "snake", "and", "camel"]),
])
def test_camel_case_names_split_into_lower_case_parts(token: str, parts: list[str]) -> None:
    assert camel_parts(token) == parts


@pytest.mark.parametrize("token", ["plain", "snake_case_name", "ALLCAPS", "Capitalised", "x", "", "_", "abc123"])
def test_names_without_a_case_break_have_no_parts(token: str) -> None:
    assert camel_parts(token) == []


def test_a_chunk_indexes_the_distinct_parts_of_its_camel_case_names_only() -> None:
    text = "def writeBoolean(self, n):\n    self.stream.write(t)  # writeBoolean again, os.path.join, snake_case"
    assert identifier_parts(["writeBoolean", "", text]) == "write boolean"
    assert identifier_parts(["plain prose with no identifiers", "Setup > Database"]) == ""


def test_a_chunk_keeps_a_bounded_number_of_parts() -> None:
    names = " ".join(f"get{chr(65 + i % 26)}{i}x{chr(65 + (i // 26) % 26)}name" for i in range(3 * MAX_IDENT_PARTS))
    assert len(identifier_parts([names]).split()) == MAX_IDENT_PARTS


def test_a_query_asks_for_the_parts_of_camel_and_snake_case_names() -> None:
    assert query_identifier_parts("how does getUserName call parse_json_file?") == [
        "get", "user", "name", "parse", "json", "file"]
    assert query_identifier_parts("python check if a variable is iterable") == []
    assert query_identifier_parts("__init__ and _private") == []


def test_lexical_terms_keep_the_words_and_add_the_parts_once() -> None:
    assert lexical_terms("writeBoolean write a boolean") == ["writeboolean", "write", "a", "boolean"]
    assert lexical_terms("read_file readFile") == ["read_file", "readfile", "read", "file"]
    assert lexical_terms("read_file readFile", split_identifiers=False) == ["read_file", "readfile"]
    assert lexical_terms("") == []


def test_field_weights_are_in_column_order_with_overrides_by_name() -> None:
    weights = field_weights({"title": 3.0, "idents": 0.0})
    assert len(weights) == len(FTS_COLUMNS)
    assert weights[FTS_COLUMNS.index("title")] == 3.0
    assert weights[FTS_COLUMNS.index("idents")] == 0.0
    with pytest.raises(InvalidInput, match="unknown full-text field"):
        field_weights({"body": 1.0})


def test_near_expression_pairs_neighbouring_words_quoted() -> None:
    assert near_expression(["pool", 'say "hi"', "close"], 4) == (
        'NEAR("pool" "say ""hi""", 4) OR NEAR("say ""hi""" "close", 4)')
    assert near_expression(["pool"]) is None
    assert near_expression([]) is None


def test_feedback_terms_are_shared_by_the_top_texts_and_rare_in_the_index() -> None:
    texts = ["Prion protein PrP in tonsils", "PrP positivity in the UK tonsils", "the appendix and PrP samples"]
    counts = feedback_candidates(texts, exclude={"prion"})
    assert counts == {"protein": 1, "prp": 3, "tonsils": 2, "positivity": 1, "the": 2, "appendix": 1, "and": 1,
                      "samples": 1}
    corpus = {"prp": 10, "tonsils": 40, "the": 900}
    assert feedback_terms(counts, corpus, total=1000) == ["prp", "tonsils"]  # "the": in most chunks
    assert feedback_terms(counts, corpus, total=1000, limit=1) == ["prp"]
    assert feedback_terms(counts, {}, total=1000) == []


def test_a_second_pass_adds_to_the_first_candidates_only() -> None:
    first = [("a", 3.0, 1), ("b", 2.0, 2), ("c", 1.0, 3)]
    second = [("c", 4.0, 9), ("z", 9.0, 8)]
    assert add_scores(first, second, 0.5) == [("a", 3.0, 1), ("c", 3.0, 3), ("b", 2.0, 2)]
    assert add_scores(first, second, 0.0) == first
