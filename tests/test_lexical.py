"""pinky.lexical and the query side of search: identifier parts and field weights, pure (no database)."""

from __future__ import annotations

import pytest

from pinky.errors import InvalidInput
from pinky.lexical import (
    FTS_COLUMNS,
    MAX_IDENT_PARTS,
    camel_parts,
    field_weights,
    identifier_parts,
    query_identifier_parts,
)
from pinky.search import lexical_terms


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
