"""A full reindex records the global brain's state from its own scan (`global_signature.Tally`), not from a walk
of its own first: what it records must be exactly what `global_signature.walk` gives, which every hook, one-shot
command and server compares with, on a brain with everything a scan treats apart (skipped names, links in and
out, a link to a folder, a FIFO, other files), else each of those would take the whole brain in again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pinky.base import global_signature as signal
from pinky.config import load_config
from pinky.indexing import healing
from pinky.indexing.index import Index
from pinky.indexing.sources import scan
from pinky.store import vectors as store_vectors


def _note(path: Path, text: str = "About the pool.") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntype: note\n---\n# {path.stem}\n\n{text}\n", encoding="utf-8")


@pytest.fixture
def brain(project: Path, tmp_path: Path) -> Path:
    root = Path(os.environ["PINKY_HOME"]) / "brain"
    for rel in ("a/one.md", "a/b/two.md", "a/b/c/three.MD", "d/four.md", "five.md", "_templates/t.md",
                ".git/x.md", "d/.hidden.md", "d/_draft.md"):
        _note(root / rel)
    (root / "d" / "notes.txt").write_text("not a note", encoding="utf-8")
    (root / "empty").mkdir()
    outside = tmp_path / "outside"
    _note(outside / "secret.md", "outside the brain")
    (root / "d" / "link-in.md").symlink_to(root / "a" / "one.md")
    (root / "d" / "link-out.md").symlink_to(outside / "secret.md")
    (root / "d" / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "d" / "folder-link").symlink_to(root / "a", target_is_directory=True)
    (root / "d" / "folder-link.md").symlink_to(root / "a" / "b", target_is_directory=True)
    os.mkfifo(root / "d" / "pipe.md")
    return root


def test_the_scan_tells_the_tally_what_a_walk_sees(brain: Path) -> None:
    tally = signal.Tally(os.fspath(brain))
    found = {source.rel for source in scan({"global": brain}, {"global": tally})}
    assert {"a/one.md", "d/link-in.md", "d/pipe.md", "d/link-out.md"} <= found
    assert tally.state() == signal.walk(os.fspath(brain))
    assert tally.state()[0].startswith("10:")  # five notes, four links named .md, the FIFO; nothing skipped


def test_a_root_the_scan_never_lists_is_walked(tmp_path: Path) -> None:
    tally = signal.Tally(os.fspath(tmp_path / "none"))
    assert list(scan({"global": tmp_path / "none"}, {"global": tally})) == []
    assert tally.state() == signal.walk(os.fspath(tmp_path / "none"))


def test_a_full_reindex_records_the_walks_state_and_the_next_check_finds_nothing_changed(brain: Path) -> None:
    index = Index(load_config())
    try:
        healing.reindex(index)
        recorded = [store_vectors.get_meta(index.conn, key) for key in (signal.SIGNATURE_KEY, signal.FOLDERS_KEY)]
        assert tuple(recorded) == signal.walk(os.fspath(brain))
        assert not signal.changed(*recorded, os.fspath(brain))
        _note(brain / "a" / "b" / "two.md", "Edited in place, same folder.")
        assert signal.changed(*recorded, os.fspath(brain))
    finally:
        index.close()
