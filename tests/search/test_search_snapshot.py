"""A search reads the index in one snapshot. Re-storing a note gives its chunks new ids; a search that ran its
full-text query, then read the hits' rows in a later statement, lost a note another connection re-stored in
between (CI saw `brain_search` miss a note saved a moment earlier while the start-up catch-up reindex stored
it a second time)."""

from __future__ import annotations

import threading
from pathlib import Path

from helpers import write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.store import retrieval


def test_a_note_restored_by_another_connection_mid_search_is_still_found(tmp_path: Path,
                                                                         monkeypatch: object) -> None:
    write_note(tmp_path, "pinky.toml", "")
    note = tmp_path / "documentation" / "gotcha" / "pool.md"
    write_note(tmp_path, "documentation/gotcha/pool.md", "# Pool hangs\n\nClose it with a timeout.\n")
    config = load_config(home=tmp_path / "home", db=tmp_path / "brain.db", save_dir=tmp_path / "documentation")
    reader, writer = KnowledgeBase(config), KnowledgeBase(config)
    reader.reindex()
    restored = threading.Event()
    versions = ["# Pool hangs\n\nClose it with a timeout, always.\n", "# Pool hangs\n\nClose it with a timeout.\n"]
    fts_hits = retrieval.fts_hits

    def fts_then_restore(*args: object, **kwargs: object) -> object:
        """The full-text query, then another connection re-stores the note before the hits' rows are read."""
        found = fts_hits(*args, **kwargs)  # type: ignore[arg-type]
        if not restored.is_set():
            restored.set()
            note.write_text(versions[0], encoding="utf-8")
            thread = threading.Thread(target=writer.index_file, args=(note,), kwargs={"embed": False})
            thread.start()
            thread.join(10)
        return found

    monkeypatch.setattr(retrieval, "fts_hits", fts_then_restore)  # type: ignore[attr-defined]
    try:
        hits = reader.search("pool timeout", mode="bm25").hits
    finally:
        reader.close()
        writer.close()
    assert restored.is_set()
    assert [hit.title for hit in hits] == ["Pool hangs"]


def test_a_reindex_leaves_alone_a_note_a_save_stored_while_it_ran(tmp_path: Path, monkeypatch: object) -> None:
    """The start-up catch-up reindex lists what the index held, then a save stores a new note, then the scan
    finds its file: the note is new to the reindex, but already stored with these bytes; its chunks keep their ids."""
    from pinky.indexing import indexer

    write_note(tmp_path, "pinky.toml", "")
    write_note(tmp_path, "documentation/pattern/retries.md", "# Retries\n\nBack off.\n")
    config = load_config(home=tmp_path / "home", db=tmp_path / "brain.db", save_dir=tmp_path / "documentation")
    reindexing, saving = KnowledgeBase(config), KnowledgeBase(config)
    real_scan, saved, started = indexer.scan, [], []

    def scan_after_a_save(*args: object, **kwargs: object) -> object:
        if not started:  # once (the save catches the index up first, which scans too)
            started.append(True)
            saved.append(saving.save("Pool hangs", "Close it with a timeout.", type="gotcha"))
        yield from real_scan(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "scan", scan_after_a_save)  # type: ignore[attr-defined]
    chunks = lambda: reindexing.index.conn.execute(  # noqa: E731
        "SELECT c.id FROM chunk c JOIN entry e ON e.id = c.entry_id WHERE e.slug = ?", (saved[0].slug,)).fetchall()
    try:
        report = reindexing.reindex(embed=False)
        before = chunks()
        assert before and saved
        assert (report.added, report.unchanged) == (1, 1)  # retries.md added; the saved note left as stored
        assert chunks() == before == saving.index.conn.execute(
            "SELECT c.id FROM chunk c JOIN entry e ON e.id = c.entry_id WHERE e.slug = ?", (saved[0].slug,)).fetchall()
    finally:
        reindexing.close()
        saving.close()
