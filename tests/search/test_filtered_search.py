"""A filtered search ranks first and filters the top rows (store.retrieval.OVERFETCH), falling back to
filtering every match when too few pass: the hits must be exactly those of filtering everything."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.indexing import vectors
from pinky.kb import KnowledgeBase
from pinky.store import retrieval

WORDS = "pool timeout retry cache worker queue deploy docker token session index vector chunk lock".split()
TYPES = ["gotcha", "gotcha", "pattern", "guide", "note", "note", "note", "note", "bug", "bug"]
RARE = {7, 150, 299}  # the only decisions: the top rows of an unfiltered ranking rarely hold all of them


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    rng = random.Random(3)
    write_note(tmp_path, "pinky.toml", "")
    for i in range(300):
        kind = "decision" if i in RARE else TYPES[i % len(TYPES)]
        tags = ", ".join(rng.sample(["db", "ops", "auth", "perf"], 2))
        body = " ".join(rng.choices(WORDS, k=40))
        write_note(tmp_path, f"documentation/{kind}/n{i}.md", f"---\ntitle: Note {i} {rng.choice(WORDS)}\n"
                   f"type: {kind}\ntags: [{tags}]\n---\n{body}\n")
    return tmp_path


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_filtered_hits_are_those_of_filtering_every_match(brain: Path, mode: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    queries = ["pool timeout", "docker deploy token", "vector index chunk lock", "retry"]
    filters = [{"type": "gotcha"}, {"type": "decision"}, {"tags": ["auth"]}, {"type": "bug", "tags": ["db"]}]

    monkeypatch.setattr(vectors, "WHOLE_BELOW", 0)  # the in-memory side takes the head path on this small brain too

    def results(overfetch: int) -> list[list[tuple[str, float]]]:
        monkeypatch.setattr(retrieval, "OVERFETCH", overfetch)
        with KnowledgeBase(load_config(cwd=brain), cache_vectors=True) as kb:
            kb.reindex()
            return [[(h.slug, round(h.score, 6)) for h in kb.search(q, limit=5, mode=mode, **f).hits]
                    for q in queries for f in filters]

    monkeypatch.setattr(retrieval, "OVERFETCH", 1)
    with KnowledgeBase(load_config(cwd=brain)) as kb:  # the brain is larger than one head of rows
        kb.reindex()
        assert kb.stats()["chunks"] > 2 * kb.index.config.fusion.depth
    exhaustive = results(10_000)  # the top rows always hold every match: the same as filtering everything
    assert any(exhaustive) and all(hit for row in exhaustive for hit in row)
    assert results(1) == exhaustive  # most filters fall back to filtering every match
    assert results(retrieval.OVERFETCH) == exhaustive
