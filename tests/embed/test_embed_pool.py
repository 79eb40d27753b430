"""Embedding on several processes: the same vectors as one process, and a search that says what is pending."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.embed.embed_pool import EmbedPool, auto_workers
from pinky.errors import InvalidInput
from pinky.indexing import vector_fill
from pinky.kb import KnowledgeBase
from pinky.store import vectors as store_vectors


def test_workers_embed_exactly_what_this_process_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    config = load_config(cwd=tmp_path)
    texts = [[f"note {i} about pools and retries {i * 7}" for i in range(j, j + 5)] for j in (0, 5, 10)]
    with KnowledgeBase(config) as kb:
        here = [np.asarray(kb.index.embedder.embed(batch), dtype=np.float32) for batch in texts]
    with EmbedPool(config, 2) as pool:
        there = pool.embed_batches(texts, here[0].shape[1])
    assert all(np.array_equal(a, b) for a, b in zip(here, there, strict=True))


def test_a_large_reindex_uses_the_pool_and_stores_every_vector(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    monkeypatch.setenv("PINKY_EMBED_WORKERS", "2")
    write_note(tmp_path, "pinky.toml", "")
    for i in range(40):
        write_note(tmp_path, f"documentation/note/n{i}.md", f"---\ntitle: Note {i}\n---\nText {i} about pool {i}.\n")
    used: list[int] = []
    monkeypatch.setattr(vector_fill, "_workers_for", lambda index, pending: used.append(pending) or 2)
    with KnowledgeBase(load_config(cwd=tmp_path)) as kb:
        report = kb.reindex()
        assert used == [40] and report.chunks_embedded == 40
        assert store_vectors.count_pending(kb.index.conn) == 0
        assert kb.search("pool 7", mode="vector").hits


def test_a_search_says_when_chunks_still_wait_for_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    write_note(tmp_path, "pinky.toml", "")
    write_note(tmp_path, "documentation/note/a.md", "---\ntitle: A\n---\nThe pool hangs.\n")
    with KnowledgeBase(load_config(cwd=tmp_path)) as kb:
        kb.reindex(embed=False)
        kb.index.prepare_vectors()
        pending = kb.search("pool hangs")
        assert pending.notice and pending.notice.startswith("1 chunk has no vector yet")
        assert "found by full text only" in pending.notice
        kb.embed_pending()
        assert kb.search("pool hangs").notice is None


def test_the_worker_count_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("-1", "lots", "65"):
        monkeypatch.setenv("PINKY_EMBED_WORKERS", bad)
        with pytest.raises(InvalidInput, match="PINKY_EMBED_WORKERS must be auto or a number"):
            load_config(cwd=tmp_path)
    monkeypatch.setenv("PINKY_EMBED_WORKERS", "auto")
    assert load_config(cwd=tmp_path).embed_workers is None
    assert 0 <= auto_workers() <= 4


def test_when_the_workers_cannot_start_this_process_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    write_note(tmp_path, "pinky.toml", "")
    for i in range(5):
        write_note(tmp_path, f"documentation/note/n{i}.md", f"---\ntitle: Note {i}\n---\nText {i}.\n")
    monkeypatch.setattr(vector_fill, "_workers_for", lambda index, pending: 2)
    from multiprocessing import resource_tracker, spawn

    resource_tracker.ensure_running()  # started with the real interpreter: only the workers fail
    monkeypatch.setattr(spawn, "_python_exe", os.fsencode(tmp_path / "no-such-python"))  # spawning fails for real
    with KnowledgeBase(load_config(cwd=tmp_path)) as kb:
        assert kb.reindex().chunks_embedded == 5
        assert store_vectors.count_pending(kb.index.conn) == 0
    assert "embedding workers failed" in caplog.text
