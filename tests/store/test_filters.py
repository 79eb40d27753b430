"""A filter is declared once and cannot be half-added: every field of `retrieval.Filters` has its clause in
`sql()` and takes a search off its fast path (`active`) unless it says `fast_path`; every field of the
declared `Selection` reaches the Filters through `search.request.filters_for`. Each failure names the step
that was left out."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pinky.base.operations import Selection
from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search.request import filters_for
from pinky.store import retrieval

FILTER_FIELDS = dataclasses.fields(retrieval.Filters)


def sample(annotation: str) -> Any:
    """A set value of a Filters field's type (its annotation is a string: the module defers annotations)."""
    if annotation.startswith("tuple[str, ...]"):
        return ("postgres",)
    if annotation.startswith("tuple[str, int]"):
        return ("2026-01-01", 1)
    assert annotation.startswith("str"), f"Filters has a field of a type this test cannot fill: {annotation}"
    return "2026-01-01"


@pytest.mark.parametrize("field", FILTER_FIELDS, ids=[f.name for f in FILTER_FIELDS])
def test_every_filter_has_its_sql_clause(field: dataclasses.Field[Any]) -> None:
    unset = retrieval.Filters().sql()
    assert retrieval.Filters(**{field.name: sample(str(field.type))}).sql() != unset, (
        f"Filters.{field.name} is set but Filters.sql() adds no clause for it: add one in store/retrieval.py")


@pytest.mark.parametrize("field", FILTER_FIELDS, ids=[f.name for f in FILTER_FIELDS])
def test_every_narrowing_filter_leaves_the_fast_path(field: dataclasses.Field[Any]) -> None:
    filters = retrieval.Filters(**{field.name: sample(str(field.type))})
    assert filters.active is not field.metadata.get("fast_path", False), (
        f"Filters.{field.name}: a set filter must make `active` true (the unfiltered fast path skips it), "
        f"unless its metadata says fast_path because the fast path applies it itself")
    assert not retrieval.Filters().active


SELECTION_SAMPLES = {"scope": "global", "project": "other", "type": "gotcha", "tags": ["postgres"],
                     "since": "30d", "at": "2026-01-01", "include_superseded": True}


def test_every_selection_field_reaches_the_filters(tmp_path: Path) -> None:
    (tmp_path / "pinky.toml").write_text("")
    declared = [f.name for f in dataclasses.fields(Selection)]
    missing = sorted(set(declared) - set(SELECTION_SAMPLES))
    assert not missing, f"give the new Selection field(s) {missing} a sample value in this test"
    with KnowledgeBase(load_config(cwd=tmp_path)) as kb:
        unset = filters_for(kb.index, Selection())
        for name in declared:
            chosen = filters_for(kb.index, Selection(**{name: SELECTION_SAMPLES[name]}))
            assert chosen != unset, (f"Selection.{name} is declared but search.request.filters_for does not "
                                     f"pass it to the store's Filters")
