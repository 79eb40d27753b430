"""The lexical side of search on a real index: weighted fields, identifier parts, proximity and feedback passes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.search import hybrid as search
from pinky.search.request import SearchRequest
from pinky.text.lexical import field_weights


@pytest.fixture
def index(project: Path) -> Iterator[Index]:
    docs = project / "documentation"
    write_note(docs, "code/write-boolean.md", "---\ntitle: writeBoolean\n---\n\n```python\ndef writeBoolean(self, n):\n"
                                              "    self.stream.write(TYPE_TRUE if n else TYPE_FALSE)\n```\n")
    write_note(docs, "note/pool.md", "---\ntitle: Pool close\ntags: [postgres]\n---\n\nEvery worker pool connection "
                                     "is closed with a timeout. " + "Filler words here. " * 20 + "\n")
    write_note(docs, "note/scattered.md", "---\ntitle: Scattered\n---\n\nA worker. " + "Some filler. " * 5
               + "A pool. " + "More filler. " * 5 + "A connection.\n")
    idx = Index(load_config())
    indexer.reindex(idx, embed=False)
    yield idx
    idx.close()


def slugs(index: Index, query: str, **fusion: object) -> list[str]:
    index.config = dataclasses.replace(index.config, fusion=dataclasses.replace(index.config.fusion, **fusion))
    return [hit.slug for hit in search.search(index, SearchRequest(query, mode="bm25", include_superseded=True)).hits]


def test_a_camel_case_name_is_found_by_its_words_and_by_itself(index: Index) -> None:
    assert slugs(index, "boolean") == ["code/write-boolean"]  # only its identifier parts hold the word
    assert slugs(index, "writeBoolean") == ["code/write-boolean"]
    assert slugs(index, "how to writeBoolean", split_identifiers=False) == ["code/write-boolean"]
    index.config = dataclasses.replace(index.config, fusion=dataclasses.replace(
        index.config.fusion, field_weights=field_weights({"idents": 0.0})))
    assert [score for _, score, _ in search.lexical_hits(index, "boolean", search.retrieval.Filters())] == [0.0]


def test_a_zero_weight_takes_a_field_out_of_the_score(index: Index) -> None:
    weighted = search.lexical_hits(index, "close", search.retrieval.Filters())
    assert [entry for entry, _, _ in weighted] == [index.conn.execute(
        "SELECT id FROM entry WHERE slug = 'note/pool'").fetchone()[0]] and weighted[0][1] > 0
    index.config = dataclasses.replace(index.config, fusion=dataclasses.replace(
        index.config.fusion, field_weights=field_weights({"title": 0.0, "text": 0.0})))
    assert search.lexical_hits(index, "close", search.retrieval.Filters())[0][1] == 0


def test_proximity_and_feedback_passes_rank_the_same_candidates(index: Index) -> None:
    plain = slugs(index, "worker pool connection")
    assert plain == ["note/scattered", "note/pool"]  # the shorter note, as BM25 sees it
    assert slugs(index, "worker pool connection", proximity=1.0) == ["note/pool", "note/scattered"]
    assert set(slugs(index, "worker pool connection", feedback=0.5)) == set(plain)


def test_negative_second_pass_weights_are_refused() -> None:
    with pytest.raises(InvalidInput, match="must not be negative"):
        dataclasses.replace(load_config().fusion, proximity=-1.0)
    with pytest.raises(InvalidInput, match="field weights must be 5 non-negative numbers"):
        dataclasses.replace(load_config().fusion, field_weights=(1.0, 2.0))
