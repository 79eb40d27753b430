"""Fault suite for the self-healing index and race-free edits (issue 10, items 4-6).

kill -9 at random moments during save, update, reindex and sync; update racing delete and two
PINKY_HOMEs racing on one note, across processes; full rebuilds at the same time; a full rebuild
and a repair while a real pinky-mcp server runs; truncated and garbage-page indexes. Afterwards
the markdown and the index agree, the next command succeeds without manual steps, and nothing
acknowledged is lost.

Each test runs a few rounds in CI; with PINKY_FAULTS_LONG=1 the `faults_long` variants run 20 or
more each. The counts measured are printed ([faults] lines). Nothing here asserts a time.
"""

from __future__ import annotations

import collections
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import console_script, damage, deleted_files_open, notes, report, rounds

from pinky.config import load_config
from pinky.kb import KnowledgeBase

WORKER = Path(__file__).parent / "support" / "fault_worker.py"
CLEAN = {"new": [], "changed": [], "deleted": []}





def worker(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), *args], cwd=project, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})


def settled(project: Path) -> KnowledgeBase:
    """After a fault: a plain reindex (what a server's start or the hooks run) leaves the index
    matching the markdown, sound, with no rebuild pending."""
    kb = KnowledgeBase(load_config())
    kb.reindex()
    assert kb.drift() == CLEAN
    assert kb.verify() is None
    assert not kb.index.rebuild_pending()
    return kb


@pytest.fixture
def remote(tmp_path: Path) -> str:
    from dulwich import porcelain

    path = tmp_path / "remote.git"
    porcelain.init(str(path), bare=True).close()
    return str(path)


# --- kill -9 at random moments ---------------------------------------------------------------------------

MAX_DELAY = {"save": 0.3, "update": 0.3, "reindex": 0.8, "sync": 0.6}


@pytest.mark.parametrize("count", rounds(2, 20))
@pytest.mark.parametrize("operation", ["save", "update", "reindex", "sync"])
def test_kill_9_at_random_moments(project: Path, remote: str, operation: str, count: int,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    notes(project / "documentation", 40 if operation == "reindex" else 5, words=150)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    args = {"update": [f"gotcha/note-{n}" for n in range(5)], "sync": [remote]}.get(operation, [])
    rng = random.Random(f"{operation}-{count}")
    acked: list[str] = []
    midway = drifted = 0
    for round_ in range(count):
        proc = worker(project, operation, *args, env={"FAULT_START": str(round_ * 100_000)})
        assert proc.stdout is not None
        first = proc.stdout.readline()  # in its loop: the kill lands in some operation, not in start-up
        assert first.startswith("ack"), proc.communicate()[1]
        time.sleep(rng.uniform(0, MAX_DELAY[operation]))
        midway += proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        acked += [line.split(" ", 1)[1].strip() for line in [first, *out.splitlines()] if line.startswith("ack")]
        with KnowledgeBase(load_config()) as kb:  # the next command, without any manual step
            kb.search("kiwi mango guava papaya")
            if operation == "sync":
                _sync_after_a_kill(kb, remote)
            drifted += sum(map(len, kb.drift().values()))
        settled(project).close()
        _check_acknowledged(project, operation, acked, remote)
    report(capsys, f"kill -9 during {operation}: {count} kills, {midway} while it was still working, "
                   f"{len(acked)} operations acknowledged and all kept, {drifted} files out of step before "
                   "the next reindex, 0 after it")


def _sync_after_a_kill(kb: KnowledgeBase, remote: str) -> None:
    """The next sync after a kill must work with no manual step: the git locks the killed run left in
    the brain, and those its push left in the local remote, are cleared by pinky.sync.locks."""
    from pinky.services.brain_sync import sync_global

    sync_global(kb)


def _check_acknowledged(project: Path, operation: str, acked: list[str], remote: str) -> None:
    """What the worker was told had happened is on disk and in the index."""
    with KnowledgeBase(load_config()) as kb:
        if operation == "save":
            assert all(kb.get(slug).slug == slug for slug in acked)
        elif operation == "update":  # the last acknowledged update of each note, or the one in flight after it
            last = {line.split()[0]: int(line.split()[1]) for line in acked}
            for slug, n in last.items():
                written = int(kb.get(slug).body.split("mango")[1].split()[0])
                assert written >= n, (slug, n, written)  # numbers only grow: a smaller one is a lost update
        elif operation == "sync":
            from dulwich.repo import Repo

            with Repo(remote) as repo:
                tree = repo[repo[repo.head()].tree]
                names = {entry.path.decode() for entry in repo.object_store.iter_tree_contents(tree.id)}
            rounds_done = {int(line.split()[1]) for line in acked}
            assert all(f"note/fault-sync-{n}.md" in names for n in rounds_done), sorted(names)[:5]


# --- races across processes -------------------------------------------------------------------------------


def _race(project: Path, *commands: tuple[list[str], dict[str, str]]) -> list[list[list[str]]]:
    """Run two workers attempt by attempt in lockstep; each one's output lines, split."""
    shutil.rmtree(project / "race", ignore_errors=True)
    (project / "race").mkdir()
    roles = [{"FAULT_ROLE": "a", "FAULT_PEER": "b"}, {"FAULT_ROLE": "b", "FAULT_PEER": "a"}]
    procs = [worker(project, *args, env={**env, **role}) for (args, env), role in zip(commands, roles, strict=True)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append([line.split() for line in out.splitlines()])
    shutil.rmtree(project / "race")
    return outputs


@pytest.mark.parametrize("count", rounds(8, 40))
def test_update_racing_delete_across_processes(project: Path, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    with KnowledgeBase(load_config()) as kb:
        slugs = [kb.save(f"Race {n}", f"original text {n}").slug for n in range(count)]
    updates, deletes = _race(project, (["updates", *slugs], {}), (["deletes", *slugs], {}))
    outcomes: collections.Counter[str] = collections.Counter()
    documentation = project / "documentation"
    for (u_result, slug, *_), (d_result, _, *__) in zip(updates, deletes, strict=True):
        live, archived = documentation / f"{slug}.md", list((documentation / ".archive").glob(f"{slug}.*.md"))
        assert d_result == "ok", (slug, d_result)  # a delete always finds the note: nothing else removes it
        assert not live.exists(), f"{slug}: the delete was undone"
        assert len(archived) == 1, archived
        if u_result == "ok":  # the update came first; the delete archived the updated text
            assert "update " in archived[0].read_text(), f"{slug}: an acknowledged update was lost"
            outcomes["update, then delete"] += 1
        else:
            assert u_result == "NotFound", (slug, u_result)
            outcomes["delete first, update refused (NotFound)"] += 1
    settled(project).close()
    report(capsys, f"update racing delete, {count} notes across two processes: {dict(outcomes)}; "
                   "0 updates lost, 0 deletes undone")


@pytest.mark.parametrize("count", rounds(30, 100))
def test_two_homes_racing_on_one_note(project: Path, tmp_path: Path, count: int,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with KnowledgeBase(load_config()) as kb:
        slug = kb.save("Contended note", "version 0").slug
    homes = [{"PINKY_HOME": str(tmp_path / f"home-{n}")} for n in range(2)]
    outputs = _race(project, (["contend", slug, str(count)], homes[0]), (["contend", slug, str(count)], homes[1]))
    wins: collections.Counter[str] = collections.Counter()
    results: collections.Counter[str] = collections.Counter()
    for lines in outputs:
        for result, _, version in lines:
            results[result] += 1
            wins[version] += result == "ok"
    assert set(results) <= {"ok", "Conflict"}, results
    assert max(wins.values()) == 1, "two updates of the same version both won"
    contested = sum(1 for version in wins if sum(v == version for lines in outputs for *_, v in lines) > 1)
    settled(project).close()
    report(capsys, f"two homes updating one note, {count} attempts each: {results['ok']} won, "
                   f"{results['Conflict']} got Conflict, {contested} versions contested by both, "
                   "0 versions won twice")


@pytest.mark.parametrize("count", rounds(2, 24))
def test_full_rebuilds_at_the_same_time(project: Path, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    words = notes(project / "documentation", 30, words=150)
    crashed = 0
    for _ in range(count):
        procs = [subprocess.Popen([*console_script("pinky"), "reindex", "--full"], cwd=project, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            crashed += proc.returncode != 0
            assert proc.returncode == 0, err
        with settled(project) as kb:
            assert kb.stats()["entries"] == 30
            assert all(kb.search(w).hits[0].slug == s for w, s in list(words.items())[:3])
    report(capsys, f"two `pinky reindex --full` at once, {count} times: {crashed} crashed")


# --- a running server sees rebuilds and repairs --------------------------------------------------------


@pytest.mark.parametrize("count", rounds(2, 20))
def test_a_running_server_sees_rebuilds_and_repairs(tmp_path: Path, count: int,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_helpers import RawServer, hermetic_config, wait_for

    words = notes(tmp_path / "documentation", 30, words=150)
    seen = 0
    with RawServer(tmp_path) as server:
        server.initialize()
        first = next(iter(words))
        assert wait_for(lambda: server.call("brain_search", query=first)["structuredContent"]["hits"])
        for n in range(count):
            with KnowledgeBase(hermetic_config(tmp_path)) as kb:
                if n % 2:
                    with sqlite3.connect(tmp_path / "brain.db") as conn:  # the pages into the file, to damage them
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    damage(tmp_path / "brain.db", "garbage", seed=n)
                    kb.reindex()  # meets the damage: a fresh file, rebuilt from the markdown
                else:
                    kb.reindex(full=True)
                kb.save(f"After round {n}", f"quokka{n} saved after the {'repair' if n % 2 else 'rebuild'}")
            hits = server.call("brain_search", query=f"quokka{n}")["structuredContent"]["hits"]
            assert hits and hits[0]["slug"] == f"note/after-round-{n}", (n, hits)
            assert deleted_files_open(server.proc.pid) == []
            seen += 1
        assert server.proc.poll() is None
    report(capsys, f"pinky-mcp running through {count} full rebuilds and repairs by another process: "
                   f"saw the new note at its next request {seen} of {count} times, never kept a deleted file")


# --- damaged indexes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", rounds(1, 10))
@pytest.mark.parametrize("how", ["truncate", "garbage"])
def test_damaged_indexes_are_rebuilt(project: Path, how: str, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    words = notes(project / "documentation", 60)
    where: collections.Counter[str] = collections.Counter()
    for n in range(count):
        with KnowledgeBase(load_config()) as kb:
            kb.reindex()
        markdown = {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")}
        damage(project / "brain.db", how, seed=n)
        word, slug = list(words.items())[n % len(words)]
        with KnowledgeBase(load_config()) as kb:
            assert kb.search(word).hits[0].slug == slug  # the next command
            if kb.rebuilt_reason:
                where["by that search"] += 1
            else:
                kb.reindex()
                if kb.rebuilt_reason:
                    where["by the reindex after it"] += 1
                else:
                    assert kb.verify() is not None  # pages nobody read: quick_check finds them
                    where["by quick_check"] += 1
        settled(project).close()
        assert (project / "brain.db.corrupt").exists()
        (project / "brain.db.corrupt").unlink()
        assert {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")} == markdown
    report(capsys, f"{how}d index, {count} times: damage found {dict(where)}; rebuilt from the markdown "
                   f"every time ({count} of {count}), markdown untouched")
