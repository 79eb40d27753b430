"""pinky.indexing.indexer: markdown roots -> the index; only what changed is parsed, only new text is embedded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note

from pinky.base.locations import FILE_INDEX_HEADER
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.store import entries

POOL = "---\ntitle: Pool hangs\ntype: gotcha\nfiles: [src/db/pool.py]\n---\nThe pool hangs; see lib/retry.js.\n"


@pytest.fixture
def index(project: Path) -> Iterator[Index]:
    idx = Index(load_config())
    yield idx
    idx.close()


@pytest.fixture
def docs(project: Path) -> Path:
    return project / "documentation"


def bump_mtime(path: Path, seconds: int = 10) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 1_000_000_000))


def slugs(index: Index) -> list[str]:
    return sorted(r[0] for r in index.conn.execute("SELECT slug FROM entry"))


def file_index_lines(index: Index) -> list[str]:
    return Path(str(index.config.db_path) + "-files").read_text(encoding="utf-8").splitlines()


# --- scan ------------------------------------------------------------------------------------------------------


def test_scan_takes_markdown_notes_only(docs: Path, isolated_env: Path) -> None:
    for rel in ("gotcha/pool.md", "top.md", "guide/deep/setup.MD", ".archive/gotcha/old.md", "_templates/note.md",
                "gotcha/_draft.md", "gotcha/.#pool.md", ".git/x.md", "gotcha/pool.txt", "gotcha/pool.md~"):
        write_note(docs, rel, "# x\n")
    write_note(isolated_env / "brain", "pattern/retry.md", "# retry\n")
    found = [(s.root, s.rel) for s in indexer.scan({"project": docs, "global": isolated_env / "brain",
                                                    "missing": docs / "absent"})]
    assert found == [("project", "top.md"), ("project", "gotcha/pool.md"), ("project", "guide/deep/setup.MD"),
                     ("global", "pattern/retry.md")]
    source = next(indexer.scan({"project": docs}))
    assert source.path == docs / source.rel
    assert (source.mtime_ns, source.size) == (source.path.stat().st_mtime_ns, source.path.stat().st_size)


# --- reindex ---------------------------------------------------------------------------------------------------


def test_reindex_reports_added_updated_removed_unchanged(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", POOL)
    write_note(docs, "decision/wal.md", "# WAL\nWe use WAL.\n")
    write_note(docs, "note/gone.md", "# Gone\nsoon deleted\n")
    first = indexer.reindex(index)
    assert (first.added, first.updated, first.removed, first.unchanged) == (3, 0, 0, 0)
    assert first.chunks_embedded == 3
    assert first.errors == []
    assert first.vectors == "ok"

    write_note(docs, "decision/wal.md", "# WAL\nWe use WAL, and checkpoint often.\n")
    bump_mtime(docs / "decision/wal.md")
    (docs / "note/gone.md").unlink()
    write_note(docs, "bug/new.md", "# New bug\ntext\n")
    second = indexer.reindex(index)
    assert (second.added, second.updated, second.removed, second.unchanged) == (1, 1, 1, 1)
    assert slugs(index) == ["bug/new", "decision/wal", "gotcha/pool"]
    assert set(second.as_dict()) == {"added", "updated", "removed", "unchanged", "chunks_embedded", "seconds",
                                     "errors", "warnings", "vectors"}

    third = indexer.reindex(index)
    assert (third.added, third.updated, third.removed, third.unchanged, third.chunks_embedded) == (0, 0, 0, 3, 0)


def test_unchanged_text_is_never_re_embedded(index: Index, docs: Path) -> None:
    if not index.db.vec_available:
        pytest.skip(f"sqlite-vec unavailable: {index.db.vec_error}")
    note = write_note(docs, "gotcha/pool.md", POOL)
    assert indexer.reindex(index).chunks_embedded == 1

    bump_mtime(note)  # touched, same bytes
    touched = indexer.reindex(index)
    assert (touched.unchanged, touched.updated, touched.chunks_embedded) == (1, 0, 0)

    note.write_text(POOL + "\n## More\nA second section about timeouts.\n", encoding="utf-8")
    bump_mtime(note, 20)
    edited = indexer.reindex(index)
    assert edited.updated == 1
    embedded_for_edit = edited.chunks_embedded
    assert embedded_for_edit >= 1

    note.write_text(POOL, encoding="utf-8")  # back to text the cache has seen
    bump_mtime(note, 30)
    reverted = indexer.reindex(index)
    assert (reverted.updated, reverted.chunks_embedded) == (1, 0)
    assert entries.counts(index.conn)["pending_vectors"] == 0


def test_full_reindex_rebuilds_from_scratch(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", POOL)
    indexer.reindex(index)
    full = indexer.reindex(index, full=True)
    assert (full.added, full.unchanged, full.removed) == (1, 0, 0)
    assert slugs(index) == ["gotcha/pool"]


def test_reindex_without_embedding_leaves_chunks_pending(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", POOL)
    report = indexer.reindex(index, embed=False)
    assert report.chunks_embedded == 0
    assert entries.counts(index.conn)["pending_vectors"] == 1
    if index.db.vec_available:
        assert indexer.embed_pending(index) == 1
        assert entries.counts(index.conn)["pending_vectors"] == 0


def test_reindex_reports_progress(index: Index, docs: Path) -> None:
    for n in range(3):
        write_note(docs, f"note/n{n}.md", f"# Note {n}\nbody {n}\n")
    seen: list[tuple[str, int, int]] = []
    indexer.reindex(index, progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert ("parse", 3, 3) in seen
    if index.db.vec_available:
        assert seen[-1] == ("embed", 3, 3)


def test_two_files_claiming_the_same_slug_both_stay_findable(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", "# lower\n")
    write_note(docs, "gotcha/pool.MD", "# upper\n")
    indexer.reindex(index)
    found = slugs(index)
    assert len(found) == 2
    assert "gotcha/pool" in found
    other = next(s for s in found if s != "gotcha/pool")
    assert other.startswith("gotcha/pool-")


# --- index_file ------------------------------------------------------------------------------------------------


def test_index_file_adds_updates_and_drops(index: Index, docs: Path) -> None:
    note = write_note(docs, "gotcha/pool.md", POOL)
    assert indexer.index_file(index, note) == "gotcha/pool"
    assert entries.entry_by(index.conn, "slug", "gotcha/pool")["title"] == "Pool hangs"

    note.write_text(POOL.replace("Pool hangs", "Pool stalls"), encoding="utf-8")
    assert indexer.index_file(index, note) == "gotcha/pool"
    assert entries.entry_by(index.conn, "slug", "gotcha/pool")["title"] == "Pool stalls"

    note.unlink()
    assert indexer.index_file(index, note) is None
    assert entries.entry_count(index.conn) == 0
    assert index.conn.execute("SELECT count(*) FROM chunk").fetchone()[0] == 0
    assert indexer.index_file(index, note) is None  # twice is fine


def test_index_file_of_an_already_indexed_text_keeps_its_chunks(index: Index, docs: Path) -> None:
    note = write_note(docs, "gotcha/pool.md", POOL)
    indexer.index_file(index, note)
    before = index.conn.execute("SELECT id FROM chunk").fetchall()
    bump_mtime(note)
    indexer.index_file(index, note)
    assert index.conn.execute("SELECT id FROM chunk").fetchall() == before
    assert entries.entry_by(index.conn, "slug", "gotcha/pool")["mtime_ns"] == note.stat().st_mtime_ns


def test_index_file_of_a_global_note(index: Index, isolated_env: Path) -> None:
    note = write_note(isolated_env / "brain", "pattern/retry.md", "# Retry\nwith backoff\n")
    assert indexer.index_file(index, note) == "global/pattern/retry"
    assert entries.entry_by(index.conn, "slug", "global/pattern/retry")["scope"] == "global"


def test_index_file_outside_the_roots_is_refused(index: Index, tmp_path: Path) -> None:
    stray = write_note(tmp_path, "elsewhere/x.md", "# x\n")
    with pytest.raises(InvalidInput, match="is not inside"):
        indexer.index_file(index, stray)


# --- drift -----------------------------------------------------------------------------------------------------


def test_drift_lists_new_changed_and_deleted_files(index: Index, docs: Path) -> None:
    kept = write_note(docs, "gotcha/pool.md", POOL)
    touched = write_note(docs, "decision/wal.md", "# WAL\n")
    edited = write_note(docs, "note/edit.md", "# Edit\n")
    removed = write_note(docs, "note/gone.md", "# Gone\n")
    indexer.reindex(index)
    assert indexer.drift(index) == {"new": [], "changed": [], "deleted": []}

    bump_mtime(touched)  # same content: not drift
    edited.write_text("# Edit\nmore\n", encoding="utf-8")
    removed.unlink()
    write_note(docs, "bug/new.md", "# New\n")
    assert indexer.drift(index) == {"new": ["documentation/bug/new.md"], "changed": ["documentation/note/edit.md"],
                                    "deleted": ["documentation/note/gone.md"]}
    assert kept.exists()


# --- the `<db>-files` list --------------------------------------------------------------------------------------


def test_the_file_list_names_linked_files_and_leaves_diaries_out(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", POOL)
    write_note(docs, "diary/2026-11-25.md", "---\ntype: diary\n---\n- edited src/app/secret_module.py\n")
    indexer.reindex(index)
    lines = file_index_lines(index)
    assert lines[0] == FILE_INDEX_HEADER
    assert lines[1:] == sorted(lines[1:])
    assert "pool.py" in lines  # from files:
    assert "retry.js" in lines  # mentioned in the body
    assert "secret_module.py" not in lines


def test_the_file_list_follows_index_file(index: Index, docs: Path) -> None:
    note = write_note(docs, "gotcha/pool.md", POOL)
    indexer.index_file(index, note)
    assert "pool.py" in file_index_lines(index)
    note.write_text("---\ntitle: Pool\nfiles: [src/db/conn.py]\n---\nno paths here\n", encoding="utf-8")
    indexer.index_file(index, note)
    assert file_index_lines(index)[1:] == ["conn.py"]
    note.unlink()
    indexer.index_file(index, note)
    assert file_index_lines(index) == [FILE_INDEX_HEADER]


def test_refresh_file_index_rewrites_only_on_change(index: Index, docs: Path) -> None:
    write_note(docs, "gotcha/pool.md", POOL)
    indexer.reindex(index)
    path = Path(str(index.config.db_path) + "-files")
    os.utime(path, ns=(0, 0))
    indexer.refresh_file_index(index)
    assert path.stat().st_mtime_ns == 0
    path.write_text("stale\n", encoding="utf-8")
    indexer.refresh_file_index(index)
    assert file_index_lines(index)[0] == FILE_INDEX_HEADER
    path.unlink()
    indexer.reindex(index)  # nothing changed, but the list is missing: it is written again
    assert path.exists()
