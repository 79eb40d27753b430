"""Syncs racing writers that take no lock (issue 35, item 10): an editor or a shell's `>>` appends to a note
without pinky's flock, while two brains sync through one bare repository and replace that note with merged
versions. Two kinds of writer: one that opens the note by its name for every line (and may be slow between
the open and the write), and one that opened it once and keeps writing to what it opened (a logger,
`exec 3>>note.md`). Afterwards every line a writer wrote is in some file of either brain or in some version
in the remote's history.

A short variant runs always; with PINKY_FAULTS_LONG=1 a longer one runs too. Nothing here asserts a time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from helpers import report, rounds

from pinky.errors import SyncError
from pinky.sync.run import sync

WORKER = Path(__file__).with_name("sync_race_worker.py")
JOURNAL_HEAD = "---\ntitle: Journal\ntype: note\nappend_only: true\n---\n\n# Journal\n\n"


def start(*args: str, out: Path | None = None) -> subprocess.Popen[str]:
    """A worker process; its output goes to `out` when given (a pipe nobody reads until the end would stop a
    writer once 64 KiB of acknowledgements filled it)."""
    stdout = out.open("w", encoding="utf-8") if out else subprocess.PIPE
    try:
        return subprocess.Popen([sys.executable, str(WORKER), *args], text=True, stdout=stdout,
                                stderr=subprocess.PIPE)
    finally:
        if out:
            stdout.close()  # type: ignore[union-attr]


def two_brains(tmp_path: Path) -> tuple[Path, Path, str]:
    """Two clones of one global brain: an append-only journal, an ordinary note both sides edit, and an
    ordinary note only the scribblers append to."""
    remote = str(tmp_path / "remote.git")
    porcelain.init(remote, bare=True).close()
    a, b = tmp_path / "home-a" / "brain", tmp_path / "home-b" / "brain"
    for folder in ("log", "note"):
        (a / folder).mkdir(parents=True)
    (a / "log" / "journal.md").write_text(JOURNAL_HEAD, encoding="utf-8")
    (a / "note" / "shared.md").write_text("---\ntitle: Shared\n---\n\nfirst\n", encoding="utf-8")
    (a / "note" / "scratch.md").write_text("---\ntitle: Scratch\n---\n\n# Scratch\n\n", encoding="utf-8")
    sync(a, remote)
    sync(b, remote)
    return a, b, remote


def settle(brains: list[Path], remote: str) -> None:
    """Sync each brain in turn until a whole pass moves nothing."""
    for _ in range(6):
        moved = False
        for brain in brains:
            try:
                result = sync(brain, remote)
            except SyncError:
                moved = True
                continue
            moved = moved or result.pushed or bool(result.pulled_paths)
        if not moved:
            return


def every_line(repos: list[str], brains: list[Path]) -> set[str]:
    """Each line of each file on disk in the brains, and of each version of each file the repositories'
    histories hold."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for brain in brains for p in brain.rglob("*.md")
             if ".git" not in p.relative_to(brain).parts]
    for path in repos:
        with Repo(path) as repo:
            heads = [sha for ref, sha in repo.get_refs().items() if ref.startswith((b"refs/heads/", b"HEAD"))]
            seen: set[bytes] = set()
            for entry in repo.get_walker(include=heads):
                commit = entry.commit
                assert isinstance(commit, Commit)
                for item in repo.object_store.iter_tree_contents(commit.tree):
                    if item.sha in seen:
                        continue
                    seen.add(item.sha)
                    blob = repo[item.sha]
                    assert isinstance(blob, Blob)
                    texts.append(blob.data.decode("utf-8", "replace"))
    return {line for text in texts for line in text.splitlines()}


def run_race(tmp_path: Path, kind: str, count: int) -> dict[str, Any]:
    a, b, remote = two_brains(tmp_path)
    stop = tmp_path / "stop"
    acks = tmp_path / "written.txt"
    writer = start("scribble", kind, str(stop), str(a), str(b), out=acks)
    syncers = [start("sync", str(a), remote, "a", str(count)), start("sync", str(b), remote, "b", str(count))]
    outputs = [p.communicate(timeout=900) for p in syncers]
    stop.touch()
    _, writer_err = writer.communicate(timeout=60)
    written = acks.read_text(encoding="utf-8")
    assert writer.returncode == 0, writer_err
    for process, (_, err) in zip(syncers, outputs, strict=True):
        assert process.returncode == 0, err
    lines = [line for out, _ in outputs for line in out.splitlines()]
    settle([a, b], remote)
    acked = [line[4:] for line in written.splitlines() if line.startswith("ack ")]
    found = every_line([remote, str(a), str(b)], [a, b])
    return {"acked": len(acked), "lost": [line for line in acked if line not in found],
            "crashes": [line for line in lines if line.startswith("crash ")]}


@pytest.mark.parametrize("kind", ["path", "fd"])
@pytest.mark.parametrize("count", rounds(10, 40))
def test_no_line_an_unlocked_writer_appends_during_syncs_is_lost(
        tmp_path: Path, kind: str, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: a line appended by a writer that takes no lock, while a sync replaces the file, is kept: in the
    file sync wrote (or, for a file such a writer holds open, the file is not replaced at all)."""
    result = run_race(tmp_path, kind, count)
    report(capsys, f"unlocked {kind} writer, {count} rounds: {result['acked']} lines written, "
                   f"{len(result['lost'])} lost")
    assert result["acked"], "the writer wrote nothing: the test proves nothing"
    assert result["crashes"] == []
    assert result["lost"] == [], result["lost"][:5]
