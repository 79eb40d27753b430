"""pinky.store.vectors: the vec0 table, the fingerprint in `meta`, pending chunks and the embedding cache."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import add_entry, migrated_database

from pinky.store import entries
from pinky.store import vectors as store_vectors
from pinky.store.connect import Database

DIMS = 4


def vec(*values: float) -> bytes:
    return array("f", values).tobytes()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = migrated_database(tmp_path / "brain.db")
    yield database
    database.close()


@pytest.fixture
def vdb(db: Database) -> Database:
    if not db.vec_available:
        pytest.skip(f"sqlite-vec unavailable: {db.vec_error}")
    store_vectors.reset_vector_table(db.conn, DIMS, "fp-1", "test-embedder")
    return db


def chunk_ids(conn: Any) -> list[int]:
    return [r[0] for r in conn.execute("SELECT id FROM chunk ORDER BY id")]


# --- meta ------------------------------------------------------------------------------------------------------


def test_meta_is_an_upserting_key_value_store(db: Database) -> None:
    assert store_vectors.get_meta(db.conn, "k") is None
    store_vectors.set_meta(db.conn, "k", "1")
    store_vectors.set_meta(db.conn, "k", "2")
    assert store_vectors.get_meta(db.conn, "k") == "2"
    assert db.conn.execute("SELECT count(*) FROM meta WHERE key = 'k'").fetchone()[0] == 1


def test_vector_generation_counts_up_from_zero(db: Database) -> None:
    assert store_vectors.vector_generation(db.conn) == "0"
    store_vectors.bump_vector_generation(db.conn)
    assert store_vectors.vector_generation(db.conn) == "1"
    store_vectors.bump_vector_generation(db.conn)
    store_vectors.bump_vector_generation(db.conn)
    assert store_vectors.vector_generation(db.conn) == "3"


def test_no_vector_table_before_the_first_reset(db: Database) -> None:
    assert not store_vectors.vector_table_exists(db.conn)


# --- the vec0 table --------------------------------------------------------------------------------------------


def test_reset_creates_the_table_records_the_embedder_and_marks_every_chunk_pending(vdb: Database) -> None:
    conn = vdb.conn
    add_entry(conn, "a", chunks=["one", "two"], has_vec_table=True)
    ids = chunk_ids(conn)
    assert store_vectors.store_vectors(conn, [(ids[0], vec(1, 0, 0, 0)), (ids[1], vec(0, 1, 0, 0))]) == 2
    generation = int(store_vectors.vector_generation(conn))

    store_vectors.reset_vector_table(conn, 8, "fp-2", "bigger")

    assert store_vectors.vector_table_exists(conn)
    assert (store_vectors.get_meta(conn, "fingerprint"), store_vectors.get_meta(conn, "dims"),
            store_vectors.get_meta(conn, "embedder")) == (
        "fp-2", "8", "bigger")
    assert store_vectors.vector_rows(conn) == 0
    assert store_vectors.count_pending(conn) == 2
    assert int(store_vectors.vector_generation(conn)) > generation
    with pytest.raises(Exception, match="[Dd]imension"):
        store_vectors.store_vectors(conn, [(ids[0], vec(1, 0, 0, 0))])  # a 4-float vector no longer fits


def test_pending_chunks_in_id_order_with_their_entry_title(vdb: Database) -> None:
    conn = vdb.conn
    add_entry(conn, "a", title="Title A", chunks=["first", "second"])
    add_entry(conn, "b", title="Title B", chunks=["third"])
    pending = store_vectors.pending_chunks(conn, 10)
    assert [(r[2], r[4]) for r in pending] == [("Title A", "first"), ("Title A", "second"), ("Title B", "third")]
    assert [r[0] for r in pending] == chunk_ids(conn)
    assert len(store_vectors.pending_chunks(conn, 2)) == 2
    assert store_vectors.count_pending(conn) == 3


def test_store_vectors_fills_only_live_pending_chunks(vdb: Database) -> None:
    conn = vdb.conn
    add_entry(conn, "a", chunks=["one", "two"])
    first, second = chunk_ids(conn)
    generation = int(store_vectors.vector_generation(conn))
    assert store_vectors.store_vectors(conn, [(first, vec(1, 0, 0, 0)), (99999, vec(0, 0, 0, 1))]) == 1
    assert int(store_vectors.vector_generation(conn)) == generation + 1
    assert store_vectors.store_vectors(conn, [(first, vec(0, 1, 0, 0))]) == 0  # another process already did it
    assert int(store_vectors.vector_generation(conn)) == generation + 1
    assert store_vectors.store_vectors(conn, []) == 0
    assert [r[0] for r in store_vectors.pending_chunks(conn, 10)] == [second]
    assert [tuple(r) for r in store_vectors.all_vectors(conn)] == [(first, vec(1, 0, 0, 0))]
    assert store_vectors.vector_rows(conn) == 1
    assert entries.counts(conn)["vectors"] == 1


def test_deleting_an_entry_with_the_vector_table_drops_its_vectors(vdb: Database) -> None:
    conn = vdb.conn
    eid = add_entry(conn, "a", chunks=["one"])
    store_vectors.store_vectors(conn, [(chunk_ids(conn)[0], vec(1, 1, 1, 1))])
    entries.delete_entry(conn, eid, has_vec_table=True)
    assert store_vectors.vector_rows(conn) == 0


def test_orphan_vectors_left_by_a_process_without_sqlite_vec_are_dropped(vdb: Database) -> None:
    conn = vdb.conn
    gone = add_entry(conn, "gone", chunks=["one", "two"])
    add_entry(conn, "kept", chunks=["three"])
    ids = chunk_ids(conn)
    store_vectors.store_vectors(conn, [(i, vec(1, 0, 0, 0)) for i in ids])
    entries.delete_entry(conn, gone, has_vec_table=False)  # that process could not touch chunk_vec
    assert store_vectors.vector_rows(conn) == 3
    generation = int(store_vectors.vector_generation(conn))
    assert store_vectors.drop_orphan_vectors(conn) == 2
    assert [r[0] for r in store_vectors.all_vectors(conn)] == [ids[2]]
    assert int(store_vectors.vector_generation(conn)) == generation + 1
    assert store_vectors.drop_orphan_vectors(conn) == 0
    assert int(store_vectors.vector_generation(conn)) == generation + 1


def test_collect_garbage_drops_orphan_vectors_too(vdb: Database) -> None:
    conn = vdb.conn
    gone = add_entry(conn, "gone", chunks=["one"])
    store_vectors.store_vectors(conn, [(chunk_ids(conn)[0], vec(1, 0, 0, 0))])
    entries.delete_entry(conn, gone, has_vec_table=False)
    assert entries.collect_garbage(conn, "fp-1", has_vec_table=True)["orphan_vectors"] == 1
    assert store_vectors.vector_rows(conn) == 0


# --- vectors made before: kept from deleted chunks, or found on live ones ---------------------------------------


def keep(conn: Any, rows: list[tuple[str, bytes]], fingerprint: str) -> None:
    conn.executemany("INSERT OR IGNORE INTO embedding_cache(hash, fingerprint, vector) VALUES (?, ?, ?)",
                     [(h, fingerprint, v) for h, v in rows])


def test_kept_vectors_are_keyed_by_text_hash_and_fingerprint(db: Database) -> None:
    conn = db.conn
    keep(conn, [("h1", vec(1)), ("h2", vec(2))], "fp-1")
    keep(conn, [("h1", vec(5))], "fp-2")
    assert store_vectors.cached_vectors(conn, ["h1", "h2", "h3"], "fp-1") == {"h1": vec(1), "h2": vec(2)}
    assert store_vectors.cached_vectors(conn, iter(["h1", "h1"]), "fp-2") == {"h1": vec(5)}
    assert store_vectors.cached_vectors(conn, [], "fp-1") == {}
    assert store_vectors.cached_vectors(conn, ["h1"], "fp-3") == {}


def test_lookups_of_many_hashes_go_in_batches(db: Database) -> None:
    rows = [(f"h{n}", vec(n)) for n in range(1203)]
    keep(db.conn, rows, "fp")
    found = store_vectors.cached_vectors(db.conn, [h for h, _ in rows] + ["missing"], "fp")
    assert found == dict(rows)


def test_deleting_chunks_keeps_their_vectors_and_trimming_bounds_them(vdb: Database) -> None:
    conn = vdb.conn
    gone = add_entry(conn, "gone", chunks=["one", "two"])
    ids = chunk_ids(conn)
    store_vectors.store_vectors(conn, [(ids[0], vec(1, 0, 0, 0)), (ids[1], vec(0, 1, 0, 0))])
    hashes = [r[0] for r in conn.execute("SELECT hash FROM chunk ORDER BY id")]
    entries.delete_entry(conn, gone, has_vec_table=True)
    assert store_vectors.cached_vectors(conn, hashes, "fp-1") == {hashes[0]: vec(1, 0, 0, 0), hashes[1]: vec(0, 1, 0,
                                                                                                             0)}
    assert store_vectors.cached_vectors(conn, hashes, "fp-other") == {}  # made by another embedder: useless
    assert store_vectors.stash_size(conn) == 2
    add_entry(conn, "back", chunks=["one"])  # the first text is live again
    store_vectors.store_vectors(conn, [(chunk_ids(conn)[-1], vec(1, 0, 0, 0))])
    keep(conn, [("from-another-embedder", vec(3))], "fp-0")
    assert store_vectors.trim_stash(conn) == 2  # the live one and the other embedder's
    assert store_vectors.stash_size(conn) == 1 and store_vectors.cached_vectors(conn, hashes[1:],
                                                                                "fp-1") == {hashes[1]: vec(0, 1, 0, 0)}
    keep(conn, [(f"x{n}", vec(n)) for n in range(5)], "fp-1")
    assert store_vectors.trim_stash(conn, keep=3) == 3 and store_vectors.stash_size(conn) == 3


def test_a_live_chunk_with_the_same_text_lends_its_vector(vdb: Database) -> None:
    conn = vdb.conn
    add_entry(conn, "a", chunks=["shared paragraph"])
    store_vectors.store_vectors(conn, [(chunk_ids(conn)[0], vec(0, 0, 1, 0))])
    (text_hash,) = [r[0] for r in conn.execute("SELECT hash FROM chunk")]
    assert store_vectors.cached_vectors(conn, [text_hash, "other"], "fp-1") == {text_hash: vec(0, 0, 1, 0)}
    assert store_vectors.cached_vectors(conn, [text_hash], "fp-2") == {}  # the table holds fp-1's vectors


def test_an_edited_entry_keeps_the_vectors_of_its_unchanged_chunks(vdb: Database) -> None:
    conn = vdb.conn
    add_entry(conn, "a", chunks=["same", "old"], has_vec_table=True)
    ids = chunk_ids(conn)
    store_vectors.store_vectors(conn, [(ids[0], vec(1, 0, 0, 0)), (ids[1], vec(0, 1, 0, 0))])
    add_entry(conn, "a", chunks=["same", "new"], has_vec_table=True)  # one paragraph edited
    rows = {text: (has, cid) for cid, text, has in conn.execute("SELECT id, text, has_vector FROM chunk")}
    assert rows["same"][0] == 1 and rows["new"][0] == 0  # only the edited paragraph waits for the model
    kept = conn.execute(f"SELECT embedding FROM {store_vectors.VEC_TABLE} WHERE chunk_id = ?",
                        (rows["same"][1],)).fetchone()
    assert kept[0] == vec(1, 0, 0, 0)
    assert store_vectors.stash_size(conn) == 1  # "old" is kept for a revert, "same" needed no stash
