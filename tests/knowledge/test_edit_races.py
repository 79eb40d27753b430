"""Edits do not race (issue 10, item 6): update, delete and restore take a lock beside the note,
shared by every process and every PINKY_HOME, and look at the file again under it, so of two racing
writers exactly one wins and the other gets a clear Conflict or NotFound; a save into an index that
cannot be written says where the note went, in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from helpers import console_script, notes

from pinky.config import load_config
from pinky.errors import Conflict, NotFound
from pinky.kb import KnowledgeBase


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True,
                          capture_output=True, timeout=120)


def _race(*jobs: object) -> list[object]:
    """Run the callables at the same moment; each one's result or exception."""
    results: list[object] = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def run(n: int, job: object) -> None:
        start.wait()
        try:
            results[n] = job()  # type: ignore[operator]
        except Exception as exc:
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n, job)) for n, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_update_racing_delete_loses_no_update_and_undoes_no_delete(project: Path) -> None:
    a, b = KnowledgeBase(load_config()), KnowledgeBase(load_config())
    for n in range(15):
        entry = a.save(f"Race {n}", "the original text")
        live = project / "documentation" / "note" / f"race-{n}.md"
        updated, deleted = _race(lambda e=entry: a.update(e.slug, e.version, body=f"the update {e.slug}"),
                                 lambda e=entry: b.delete(e.slug, "racing"))
        assert isinstance(deleted, Path) or isinstance(deleted, NotFound), deleted
        assert not live.exists() or not isinstance(deleted, Path), "a delete was undone"
        if isinstance(updated, Exception):
            assert isinstance(updated, NotFound), updated  # the delete came first
            assert isinstance(deleted, Path)
        elif isinstance(deleted, Path):  # the update came first, then the delete archived it
            assert f"the update {entry.slug}" in deleted.read_text()
        else:
            assert f"the update {entry.slug}" in live.read_text()
    assert a.drift() == {"new": [], "changed": [], "deleted": []}
    a.close()
    b.close()


def test_two_homes_updating_one_note_exactly_one_wins(project: Path, tmp_path: Path) -> None:
    """The edit lock lives beside the note, not in $PINKY_HOME: two homes on one project share it."""
    a = KnowledgeBase(load_config(home=tmp_path / "home-a"))
    b = KnowledgeBase(load_config(home=tmp_path / "home-b"))
    entry = a.save("Shared note", "version 0")
    for n in range(20):
        version = a.get(entry.slug).version
        results = _race(lambda v=version, n=n: a.update(entry.slug, v, body=f"from a, round {n}"),
                        lambda v=version, n=n: b.update(entry.slug, v, body=f"from b, round {n}"))
        assert sum(not isinstance(r, Exception) for r in results) == 1, results
        assert all(isinstance(r, Conflict) for r in results if isinstance(r, Exception)), results
    assert (project / "documentation" / ".pinky" / "locks").is_dir()
    assert not (tmp_path / "home-a" / "state" / "locks").exists()
    if shutil.which("git"):  # ignored by git without a line in the project's .gitignore
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        lock = next((project / "documentation" / ".pinky" / "locks").iterdir())
        assert subprocess.run(["git", "check-ignore", "-q", str(lock)], cwd=project).returncode == 0
    a.close()
    b.close()


def test_restore_racing_restore_restores_once(project: Path) -> None:
    a, b = KnowledgeBase(load_config()), KnowledgeBase(load_config())
    for n in range(5):
        entry = a.save(f"Restored {n}", "text")
        a.delete(entry.slug, "to restore")
        results = _race(lambda e=entry: a.restore(e.slug), lambda e=entry: b.restore(e.slug))
        assert sum(not isinstance(r, Exception) for r in results) == 1, results
        assert all(isinstance(r, NotFound | Conflict) for r in results if isinstance(r, Exception)), results
    a.close()
    b.close()


def _read_only(path: Path) -> None:
    """Make `path` unwritable even for root (chattr +i); skip where that cannot be done."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.skip("running as root without chattr +i: a file cannot be made read-only")


def test_a_save_into_a_read_only_index_says_where_the_note_went(project: Path) -> None:
    notes(project / "documentation", 3)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    db = project / "brain.db"
    for suffix in ("-wal", "-shm"):
        (project / f"brain.db{suffix}").unlink(missing_ok=True)
    _read_only(db)
    try:  # named with --db: used where it is (a project's own read-only index moves: test_readonly_project.py)
        saved = pinky("--db", str(db), "save", "-t", "Read only index", cwd=project, stdin="the body")
    finally:
        subprocess.run(["chattr", "-i", str(db)], capture_output=True)
        db.chmod(0o644)
    note = project / "documentation" / "note" / "read-only-index.md"
    assert note.exists()
    assert saved.returncode == 1
    assert "Traceback" not in saved.stderr
    message = saved.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert str(note) in message and "could not be updated" in message and "pinky-brain reindex" in message
    assert "readonly" in message and "make it writable" in message


def test_a_reindex_of_a_read_only_index_is_one_line(project: Path) -> None:
    notes(project / "documentation", 3)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    (project / "documentation" / "extra.md").write_text("# Extra\n\nnew text to index\n")
    db = project / "brain.db"
    for suffix in ("-wal", "-shm"):
        (project / f"brain.db{suffix}").unlink(missing_ok=True)
    _read_only(db)
    try:
        reindexed = pinky("--db", str(db), "reindex", cwd=project)
    finally:
        subprocess.run(["chattr", "-i", str(db)], capture_output=True)
        db.chmod(0o644)
    assert reindexed.returncode == 1
    assert "Traceback" not in reindexed.stderr
    assert len(reindexed.stderr.strip().splitlines()) == 1, reindexed.stderr
    assert "cannot be written" in reindexed.stderr and "make it writable" in reindexed.stderr
