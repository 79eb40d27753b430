"""pinky.knowledge.archive: soft delete and restore. Every archived copy survives, restore never guesses between
them, and the note restored is byte for byte the note deleted. Real files, a real index, real CLI runs."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import console_script, write_note

from pinky.config import load_config
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.knowledge import archive, entries
from pinky.knowledge.archive import SeveralVersions
from pinky.knowledge.entries import SaveRequest
from pinky.text.markdown import split_frontmatter


@pytest.fixture
def index(project: Path) -> Iterator[Index]:
    idx = Index(load_config())
    yield idx
    idx.close()


@pytest.fixture
def docs(project: Path) -> Path:
    return project / "documentation"


def front(path: Path) -> dict:
    return split_frontmatter(path.read_text(encoding="utf-8"))[0]


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env=dict(os.environ), timeout=120)


# --- delete and restore -------------------------------------------------------------------------------------


def test_delete_archives_with_the_reason_and_restore_brings_it_back(index: Index, docs: Path) -> None:
    saved = entries.save(index, SaveRequest("Pool", "the body", type="gotcha"), embed=False)
    archived = archive.delete(index, "gotcha/pool", "  superseded\n by   wal  ")
    assert archived.parent == docs / ".archive/gotcha" and archived.name.startswith("pool.20")
    assert not (docs / "gotcha/pool.md").exists()
    meta = front(archived)
    assert meta["archive_reason"] == "superseded by wal"
    assert "archived_at" in meta
    with pytest.raises(NotFound):
        entries.get(index, "gotcha/pool")

    restored = archive.restore(index, "pool")
    assert restored.slug == "gotcha/pool"
    assert restored.body == saved.body
    assert "archive_reason" not in restored.meta and "archived_at" not in restored.meta
    assert not archived.exists()
    assert (docs / "gotcha/pool.md").is_file()


def test_delete_needs_a_reason(index: Index, docs: Path) -> None:
    entries.save(index, SaveRequest("Pool", "x"), embed=False)
    with pytest.raises(InvalidInput, match="reason must not be empty"):
        archive.delete(index, "note/pool", "  ")
    assert (docs / "note/pool.md").exists()


def test_restore_finds_archived_notes_by_any_of_their_names(index: Index, isolated_env: Path) -> None:
    entries.save(index, SaveRequest("Retry", "x", type="pattern", scope="global"), embed=False)
    archive.delete(index, "global/pattern/retry", "test")
    assert archive.restore(index, "pattern/retry.md").slug == "global/pattern/retry"
    archive.delete(index, "global/pattern/retry", "test")
    assert archive.restore(index, "global/pattern/retry").slug == "global/pattern/retry"


def test_restore_errors(index: Index, docs: Path) -> None:
    with pytest.raises(NotFound, match="no archived entry 'ghost'"):
        archive.restore(index, "ghost")
    entries.save(index, SaveRequest("Pool", "first"), embed=False)
    archived = archive.delete(index, "note/pool", "replaced")
    write_note(docs, "note/pool.md", "# Pool\nA new note took the name.\n")
    with pytest.raises(Conflict, match="exists again; move or rename it before restoring"):
        archive.restore(index, "note/pool")
    assert archived.exists()


# --- every archived version survives ------------------------------------------------------------------------


def test_deleting_a_note_twice_keeps_both_copies_and_each_can_be_restored(project: Path) -> None:
    """The issue's repro, as a user types it: ONE and TWO both survive, restore lists them, each comes back."""
    assert pinky("save", "-t", "Twice", "--type", "note", cwd=project, stdin="ONE\n").returncode == 0
    one = (project / "documentation/note/twice.md").read_bytes()
    assert pinky("delete", "note/twice", "--reason", "a", cwd=project).returncode == 0
    assert pinky("save", "-t", "Twice", "--type", "note", cwd=project, stdin="TWO\n").returncode == 0
    two = (project / "documentation/note/twice.md").read_bytes()
    second = pinky("delete", "note/twice", "--reason", "b", cwd=project)

    # by time: the stamp, then the n-th copy of that second (`-2`), which a plain name sort puts first
    copies = sorted((project / "documentation/.archive/note").iterdir(), key=lambda c: (len(c.name), c.name))
    assert [front(c)["archive_reason"] for c in copies] == ["a", "b"]
    assert "(undo: pinky-brain restore note/twice --version 2)" in second.stdout
    assert "ONE" in copies[0].read_text() and "TWO" in copies[1].read_text()
    listed = json.loads(pinky("list", "--archived", "--json", cwd=project).stdout)["entries"]
    assert [(e["slug"], e["version"], e["reason"], e["restore"]) for e in listed] == [
        ("note/twice", 2, "b", "pinky-brain restore note/twice --version 2"),
        ("note/twice", 1, "a", "pinky-brain restore note/twice --version 1")]

    unsure = pinky("restore", "note/twice", cwd=project)  # several versions: it lists them, restores none
    assert unsure.returncode == 1 and "choose one: pinky-brain restore note/twice --version N" in unsure.stderr
    assert "version 1 of 2" in unsure.stdout and "reason: a" in unsure.stdout and "reason: b" in unsure.stdout
    assert not (project / "documentation/note/twice.md").exists() and len(copies) == 2

    assert pinky("restore", "note/twice", "--version", "1", cwd=project).returncode == 0
    assert (project / "documentation/note/twice.md").read_bytes() == one  # exactly what was deleted
    assert copies[1].exists() and not copies[0].exists()  # the other one stays archived
    assert pinky("delete", "note/twice", "--reason", "c", cwd=project).returncode == 0
    label = copies[1].name.removeprefix("twice.").removesuffix(".md")
    assert pinky("restore", "note/twice", "--version", label, cwd=project).returncode == 0
    assert (project / "documentation/note/twice.md").read_bytes() == two
    hits = json.loads(pinky("search", "TWO", "--json", cwd=project).stdout)["hits"]
    assert [h["slug"] for h in hits] == ["note/twice"]


def test_n_deletes_leave_n_copies_numbered_oldest_first(index: Index, docs: Path) -> None:
    texts = []
    for n in range(5):  # several within one second: the names never collide
        entries.save(index, SaveRequest("Flaky", f"version {n}"), embed=False)
        texts.append((docs / "note/flaky.md").read_bytes())
        archive.delete(index, "note/flaky", f"round {n}")
    copies = archive.versions(index, "flaky")
    assert [(c.version, c.versions, c.reason) for c in copies] == [(n + 1, 5, f"round {n}") for n in range(5)]
    assert len({c.file for c in copies}) == 5 and all(c.file.exists() for c in copies)
    with pytest.raises(SeveralVersions, match=r"note/flaky has 5 archived versions \(1: archived .*round 0"):
        archive.restore(index, "note/flaky")
    with pytest.raises(NotFound, match="has no archived version '9'"):
        archive.restore(index, "note/flaky", 9)
    picks = [("note/flaky", 3, 2), (copies[4].name.removesuffix(".md"), None, 4), ("flaky", copies[0].label, 0)]
    for slug, version, n in picks:  # by number, by the copy's own name, by its label
        restored = archive.restore(index, slug, version)
        assert (docs / "note/flaky.md").read_bytes() == texts[n] and restored.body.strip() == f"version {n}"
        (docs / "note/flaky.md").unlink()
        indexer.index_file(index, docs / "note/flaky.md")
    assert [(c.version, c.reason) for c in archive.versions(index, "flaky")] == [(1, "round 1"), (2, "round 3")]


def test_a_copy_archived_before_the_timestamped_names_is_one_more_version(index: Index, docs: Path) -> None:
    write_note(docs, ".archive/note/pool.md", "---\ntitle: Pool\narchived_at: '2025-01-01T00:00:00+00:00'\n"
                                              "archive_reason: old style\n---\nthe old copy\n")
    entries.save(index, SaveRequest("Pool", "the new one"), embed=False)
    archive.delete(index, "note/pool", "new style")
    assert [(c.version, c.reason, c.label == "") for c in archive.versions(index, "pool")] == [
        (1, "old style", True), (2, "new style", False)]
    assert archive.restore(index, "note/pool", 1).body == "the old copy\n"
    assert not (docs / ".archive/note/pool.md").exists()
    assert (docs / "note/pool.md").read_text() == "---\ntitle: Pool\n---\nthe old copy\n"


def test_restore_does_not_guess_between_two_entries(index: Index, docs: Path) -> None:
    entries.save(index, SaveRequest("Pool", "a gotcha", type="gotcha"), embed=False)
    entries.save(index, SaveRequest("Pool", "a note"), embed=False)
    archive.delete(index, "gotcha/pool", "x")
    archive.delete(index, "note/pool", "y")
    with pytest.raises(InvalidInput, match="names archived copies of 2 entries"):
        archive.restore(index, "pool")
    assert archive.restore(index, "note/pool").body.strip() == "a note"


@pytest.mark.parametrize("text", [
    "---\r\n# kept by hand\r\ntitle:   \"Pool\"   # quoted\r\ntags:\r\n    - Postgres\r\n---\r\n\r\nCRLF body  \r\n",
    "\ufeff---\ntitle: 'BOM'\nlast_verified: 2026-01-02\n---\nbody\n\n\n",
    "# No frontmatter at all\n\njust text\n",
    "\n# Starts with a blank line\n",
])
def test_delete_then_restore_gives_back_the_exact_bytes(index: Index, docs: Path, text: str) -> None:
    path = docs / "note/kept.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    copy = archive.delete(index, str(indexer.index_file(index, path, embed=False)), "reason: a colon # and a hash")
    assert front(copy)["archive_reason"] == "reason: a colon # and a hash"
    added = [line for line in copy.read_bytes().split(b"\n") if line.startswith((b"archived_at:", b"archive_reason:"))]
    assert len(added) == 2 and all(line.endswith(b"\r") == (b"\r\n" in text.encode()) for line in added)
    archive.restore(index, "note/kept")
    assert path.read_bytes() == text.encode("utf-8")


def test_an_archive_folder_linked_out_of_the_root_gets_nothing(index: Index, docs: Path, tmp_path: Path) -> None:
    entries.save(index, SaveRequest("Pool", "x"), embed=False)
    (tmp_path / "outside").mkdir()
    (docs / ".archive").symlink_to(tmp_path / "outside")
    with pytest.raises(InvalidInput, match="nothing was written"):
        archive.delete(index, "note/pool", "x")
    assert (docs / "note/pool.md").exists() and not any((tmp_path / "outside").rglob("*"))
