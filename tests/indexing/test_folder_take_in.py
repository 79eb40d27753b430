"""A global brain past the walk limit is taken in folders first, then only the files of the folders that changed
(pinky.indexing.refresh, issue 37): a one-shot command or hook beside 100,000 notes neither walks nor reads
the rest, and misses nothing a folder shows (a note created, deleted, renamed or replaced; a folder made, removed,
renamed or replaced)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pinky.base import global_signature as signal
from pinky.config import load_config
from pinky.indexing import healing, refresh
from pinky.indexing.index import Index
from pinky.store import vectors as store_vectors


def _note(path: Path, word: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntype: note\n---\n# {path.stem}\n\nAbout the {word}.\n", encoding="utf-8")


@pytest.fixture
def brain(project: Path) -> Path:
    root = Path(os.environ["PINKY_HOME"]) / "brain"
    for folder in ("a", "b", "c/d", "e"):
        for n in range(3):
            _note(root / folder / f"n{n}.md", f"{folder.replace('/', '')}word")
    return root


@pytest.fixture
def index(brain: Path) -> Iterator[Index]:
    idx = Index(load_config())
    healing.reindex(idx)  # records the global brain's state
    yield idx
    idx.close()


def _global(index: Index) -> list[str]:
    return sorted(r[0] for r in index.conn.execute("SELECT path FROM entry WHERE root = 'global'"))


def _take_in(index: Index) -> bool:
    return refresh.refresh_global(index, walk_limit=0)  # past the limit whatever the size: folders first


def test_folders_first_then_only_their_files(index: Index, brain: Path) -> None:
    before = _global(index)
    assert not _take_in(index)  # nothing moved: no walk, no read
    _note(brain / "a" / "new.md", "fresh")  # created
    (brain / "b" / "n0.md").unlink()  # deleted
    os.rename(brain / "c" / "d", brain / "c" / "moved")  # a folder renamed
    shutil.rmtree(brain / "e")  # a folder replaced by another of the same name
    _note(brain / "e" / "other.md", "replaced")
    _note(brain / "f" / "g" / "deep.md", "new folders")  # folders made
    os.rename(brain / "a" / "n1.md", brain / "a" / ".n1.tmp")  # replaced as editors and pinky write
    _note(brain / "a" / "n1.md", "rewritten")
    os.unlink(brain / "a" / ".n1.tmp")
    assert _take_in(index)
    expected = sorted({*before, "a/new.md", "c/moved/n0.md", "c/moved/n1.md", "c/moved/n2.md", "e/other.md",
                       "f/g/deep.md"} - {"b/n0.md", "c/d/n0.md", "c/d/n1.md", "c/d/n2.md", "e/n0.md", "e/n1.md",
                                         "e/n2.md"})
    assert _global(index) == expected
    body = index.conn.execute("SELECT body FROM entry WHERE root = 'global' AND path = 'a/n1.md'").fetchone()[0]
    assert "rewritten" in body
    assert not _take_in(index)  # the folders recorded are the ones on disk now
    recorded = store_vectors.get_meta(index.conn, signal.SIGNATURE_KEY)
    assert recorded is not None and recorded.split(":")[0] == str(len(expected))


def test_a_walk_after_it_takes_the_whole_state_in(index: Index, brain: Path) -> None:
    """The folders-first record keeps the count alone: a process that walks records the whole signature."""
    _note(brain / "a" / "new.md", "fresh")
    assert _take_in(index)
    assert refresh.refresh_global(index, walk_limit=None)
    assert store_vectors.get_meta(index.conn, signal.SIGNATURE_KEY) == signal.walk(str(brain))[0]
    assert not refresh.refresh_global(index, walk_limit=None)


def test_an_untouched_folder_is_not_read(index: Index, brain: Path) -> None:
    """Only the folder that changed is listed: a note edited in place in another one stays as indexed (the walk,
    the server's feed and reindex see that; a folder does not)."""
    text = (brain / "b" / "n1.md").read_text(encoding="utf-8")
    with open(brain / "b" / "n1.md", "r+", encoding="utf-8") as handle:
        handle.write(text.replace("bword", "xword"))
    _note(brain / "a" / "new.md", "fresh")
    assert _take_in(index)
    body = index.conn.execute("SELECT body FROM entry WHERE root = 'global' AND path = 'b/n1.md'").fetchone()[0]
    assert "bword" in body
