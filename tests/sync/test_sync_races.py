"""Syncs racing writers and each other (issue 29, items 8 and 10): two brains (two PINKY_HOMEs' global brains)
edit the same ordinary note and the same append-only note and sync through one bare repository at the same
moment, while a writer process keeps appending lines to both. Afterwards every acknowledged line is in a file
or in the remote's history, every conflict copy was listed by some sync's report, and every failure was one
SyncError line (never a traceback from the git library).

A short variant runs always; with PINKY_FAULTS_LONG=1 a longer one runs too. Nothing here asserts a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from helpers import report, rounds

from pinky.base.layout import is_note
from pinky.errors import SyncError
from pinky.sync.merge import list_conflicts
from pinky.sync.run import sync

WORKER = Path(__file__).with_name("sync_race_worker.py")
JOURNAL = "log/journal.md"
JOURNAL_HEAD = "---\ntitle: Journal\ntype: note\nappend_only: true\n---\n\n# Journal\n\n"





def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), *args], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def two_brains(tmp_path: Path) -> tuple[Path, Path, str]:
    remote = str(tmp_path / "remote.git")
    porcelain.init(remote, bare=True).close()
    a, b = tmp_path / "home-a" / "brain", tmp_path / "home-b" / "brain"
    (a / "log").mkdir(parents=True)
    (a / JOURNAL).write_text(JOURNAL_HEAD, encoding="utf-8")
    (a / "note").mkdir()
    (a / "note" / "shared.md").write_text("---\ntitle: Shared\n---\n\nfirst\n", encoding="utf-8")
    sync(a, remote)
    sync(b, remote)
    return a, b, remote


def settle(brains: list[Path], remote: str, lines: list[str]) -> None:
    """Sync each brain in turn until a whole pass changes nothing: what the runs left is brought together."""
    for _ in range(6):
        moved = False
        for brain in brains:
            try:
                result = sync(brain, remote)
            except SyncError:
                moved = True
                continue
            lines.append("ok " + json.dumps({"conflicts": result.conflicts, "pulled": result.pulled_paths}))
            moved = moved or result.pushed or bool(result.pulled_paths)
        if not moved:
            return


def history_texts(remote: str, path: str) -> tuple[str, set[str]]:
    """Every version of `path` in the remote's history, joined, and every path of any commit's tree."""
    texts, paths = [], set()
    with Repo(remote) as bare:
        heads = [sha for ref, sha in bare.get_refs().items() if ref.startswith(b"refs/heads/")]
        for entry in bare.get_walker(include=heads):
            commit = entry.commit
            assert isinstance(commit, Commit)
            for item in bare.object_store.iter_tree_contents(commit.tree):
                name = item.path.decode()
                paths.add(name)
                if name == path:
                    blob = bare[item.sha]
                    assert isinstance(blob, Blob)
                    texts.append(blob.data.decode())
    return "\n".join(texts), paths


def run_race(tmp_path: Path, count: int) -> dict[str, Any]:
    a, b, remote = two_brains(tmp_path)
    stop = tmp_path / "stop"
    writer = start("write", str(stop), str(a), str(b))
    syncers = [start("sync", str(a), remote, "a", str(count)), start("sync", str(b), remote, "b", str(count))]
    outputs = [p.communicate(timeout=600) for p in syncers]
    stop.touch()
    written, writer_err = writer.communicate(timeout=60)
    assert writer.returncode == 0, writer_err
    for process, (_, err) in zip(syncers, outputs, strict=True):
        assert process.returncode == 0, err
    lines = [line for out, _ in outputs for line in out.splitlines()]
    settle([a, b], remote, lines)
    acked = [line[4:] for line in [*written.splitlines(), *lines] if line.startswith("ack ")]
    history, paths = history_texts(remote, JOURNAL)
    on_disk = (a / JOURNAL).read_text() + (b / JOURNAL).read_text()
    lost = [line for line in acked if line not in on_disk and line not in history]
    reported = {copy for line in lines if line.startswith("ok ") for copy in json.loads(line[3:])["conflicts"]}
    made = {p for p in paths if ".conflict-" in p}
    made |= {p.relative_to(brain).as_posix() for brain in (a, b) for p in list_conflicts(brain)}
    return {"acked": len(acked), "lost": lost, "crashes": [line for line in lines if line.startswith("crash ")],
            "errors": [line for line in lines if line.startswith("err ")], "made": made,
            "unreported": sorted(made - reported)}


@pytest.mark.parametrize("count", rounds(12, 40))
def test_no_line_appended_during_syncs_is_lost(tmp_path: Path, count: int,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Item 8: a line appended while a sync checks out the merge is never replaced by the merged file."""
    result = run_race(tmp_path, count)
    report(capsys, f"sync race, {count} rounds: {result['acked']} lines acknowledged, {len(result['lost'])} lost, "
                   f"{len(result['errors'])} failed syncs, {len(result['made'])} conflict copies")
    assert result["lost"] == []


@pytest.mark.parametrize("count", rounds(12, 40))
def test_concurrent_syncs_report_every_conflict_copy_and_fail_in_one_line(
        tmp_path: Path, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: a conflict copy made by a merge whose push then failed is listed by the next sync; a sync that
    fails says so in one SyncError line, never a KeyError traceback from dulwich."""
    result = run_race(tmp_path, count)
    report(capsys, f"sync race, {count} rounds: {len(result['made'])} conflict copies, "
                   f"{len(result['unreported'])} never listed, {len(result['crashes'])} tracebacks")
    assert result["made"], "the race made no conflict copy: the test proves nothing"
    assert result["unreported"] == []
    assert result["crashes"] == []


# --- item 9: a sync killed during its checkout ---------------------------------------------------------------

KILLED_SYNC = ("import sys; from pathlib import Path; from pinky.sync.run import sync; "
               "sync(Path(sys.argv[1]), sys.argv[2])")


def temp_files(root: Path) -> list[str]:
    """pinky's temporary files (`.<name>.<pid>.<thread>.<n>.tmp`) under `root`, outside .git."""
    return [p.relative_to(root).as_posix() for p in root.rglob(".*.tmp") if ".git" not in p.relative_to(root).parts]


def kill_during_checkout(brain: Path, remote: str) -> list[str]:
    """Start a sync of `brain` and kill -9 it the moment a temporary file of its checkout shows; what it left."""
    process = subprocess.Popen([sys.executable, "-c", KILLED_SYNC, str(brain), remote])
    try:
        while process.poll() is None:
            try:
                names = os.listdir(brain / "guide")
            except FileNotFoundError:
                continue
            if any(name.endswith(".tmp") for name in names):
                process.kill()
                break
    finally:
        process.wait()
    return temp_files(brain)


@pytest.mark.parametrize("count", rounds(6, 20))
def test_a_sync_killed_during_checkout_leaves_no_temporary_file_to_commit(tmp_path: Path, count: int) -> None:
    """Item 9: the temporary files a sync killed mid-checkout leaves are removed by the next sync, and no
    sync ever commits (so pushes) one."""
    a, b, remote = two_brains(tmp_path)
    left: list[str] = []
    for n in range(count):
        for i in range(300):
            (a / "guide").mkdir(exist_ok=True)
            (a / "guide" / f"g-{i:03d}.md").write_text(f"# Guide {i}\n\nround {n}\n", encoding="utf-8")
        sync(a, remote)
        left += kill_during_checkout(b, remote)
        sync(b, remote)
        with Repo(str(b)) as repo:
            committed = [item.path.decode() for item in repo.object_store.iter_tree_contents(repo[repo.head()].tree)]
        assert [p for p in committed if p.endswith(".tmp")] == []
        assert temp_files(b) == []
        if len(left) >= 2:
            break
    assert left, "no kill landed between a temporary file's write and its rename: the test proves nothing"
    assert not any(is_note(path) for path in left)  # and the indexer never takes one for a note
    sync(a, remote)
    _, paths = history_texts(remote, JOURNAL)
    assert [p for p in paths if ".tmp" in p] == []
    assert temp_files(a) == []
