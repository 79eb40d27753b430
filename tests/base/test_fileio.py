"""pinky.base.fileio: whole-or-nothing writes, never-overwriting creates, appends and locks between processes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pinky.base.fileio import append, atomic_write, create_new, file_lock, write_numbered


def leftovers(folder: Path) -> list[str]:
    """Temporary files a write left behind (they are hidden: `.<name>.<pid>...tmp`)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.startswith("."))


# --- atomic_write --------------------------------------------------------------------------------------------


def test_atomic_write_replaces_the_whole_file_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    atomic_write(target, "a long first version\n" * 100)
    atomic_write(target, "short")
    assert target.read_text(encoding="utf-8") == "short"
    atomic_write(target, b"\x00bytes\xff")
    assert target.read_bytes() == b"\x00bytes\xff"
    atomic_write(str(target), "ünïcode", durable=False)
    assert target.read_bytes() == "ünïcode".encode()
    assert leftovers(tmp_path) == []


def test_atomic_write_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.md"
    atomic_write(target, "x")
    assert target.read_text(encoding="utf-8") == "x"


def test_atomic_write_into_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    atomic_write("bare.txt", "x")
    assert (tmp_path / "bare.txt").read_text(encoding="utf-8") == "x"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_atomic_write_honours_mode_on_create_and_on_replace(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    atomic_write(target, "{}", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    atomic_write(target, "{}")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_replace_leaves_the_target_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside.md").write_text("keep", encoding="utf-8")
    with pytest.raises(OSError):
        atomic_write(target, "x")
    assert (target / "inside.md").read_text(encoding="utf-8") == "keep"
    assert leftovers(tmp_path) == []


# --- create_new ----------------------------------------------------------------------------------------------


def test_create_new_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "n.md"
    assert create_new(target, "first") is True
    assert create_new(target, "second") is False
    assert target.read_text(encoding="utf-8") == "first"
    assert leftovers(target.parent) == []


def test_create_new_does_not_replace_a_file_written_by_other_means(tmp_path: Path) -> None:
    target = tmp_path / "n.md"
    target.write_text("hand-written", encoding="utf-8")
    assert create_new(target, b"mine") is False
    assert target.read_text(encoding="utf-8") == "hand-written"


def test_exactly_one_of_many_threads_creates_the_file(tmp_path: Path) -> None:
    target = tmp_path / "race.md"
    writers = 16
    barrier = threading.Barrier(writers)
    results: dict[int, bool] = {}

    def write(n: int) -> None:
        barrier.wait()
        results[n] = create_new(target, f"writer {n}\n" * 1000)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [n for n, won in results.items() if won]
    assert len(results) == writers
    assert len(winners) == 1
    assert target.read_text(encoding="utf-8") == f"writer {winners[0]}\n" * 1000
    assert leftovers(tmp_path) == []


def test_exactly_one_of_many_processes_creates_the_file(tmp_path: Path) -> None:
    target = tmp_path / "race.md"
    go = tmp_path / "go"
    script = textwrap.dedent(f"""
        import os, sys, time
        from pinky.base.fileio import create_new
        while not os.path.exists({str(go)!r}):
            time.sleep(0.001)
        won = create_new({str(target)!r}, ("writer " + sys.argv[1] + "\\n") * 1000)
        print("won" if won else "lost")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)], stdout=subprocess.PIPE, text=True)
             for n in range(4)]
    time.sleep(0.3)  # let them all start and wait on the go file
    go.write_text("")
    outcomes = [proc.communicate(timeout=30)[0].strip() for proc in procs]
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]
    winner = outcomes.index("won")
    assert target.read_text(encoding="utf-8") == f"writer {winner}\n" * 1000
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# --- write_numbered ------------------------------------------------------------------------------------------


def test_write_numbered_takes_the_next_free_number(tmp_path: Path) -> None:
    first = write_numbered(tmp_path / "gotcha", "pool", "1")
    second = write_numbered(tmp_path / "gotcha", "pool", "2")
    (tmp_path / "gotcha" / "pool-3.md").write_text("by hand", encoding="utf-8")
    fourth = write_numbered(tmp_path / "gotcha", "pool", "4")
    assert [Path(p).name for p in (first, second, fourth)] == ["pool.md", "pool-2.md", "pool-4.md"]
    assert Path(fourth).read_text(encoding="utf-8") == "4"
    assert (tmp_path / "gotcha" / "pool-3.md").read_text(encoding="utf-8") == "by hand"
    assert Path(write_numbered(tmp_path, "log", "x", suffix=".txt")).name == "log.txt"


def test_write_numbered_gives_up_with_a_clear_error(tmp_path: Path) -> None:
    for name in ("a.md", "a-2.md", "a-3.md"):
        (tmp_path / name).write_text("", encoding="utf-8")
    with pytest.raises(FileExistsError, match="3 files named 'a' already exist in"):
        write_numbered(tmp_path, "a", "x", attempts=3)
    assert write_numbered(tmp_path, "a", "x", attempts=4).endswith("a-4.md")


# --- append --------------------------------------------------------------------------------------------------


def test_append_adds_to_the_end(tmp_path: Path) -> None:
    target = tmp_path / "diary.md"
    target.write_text("# day\n", encoding="utf-8")
    append(target, "- one\n")
    append(str(target), b"- two\n")
    assert target.read_text(encoding="utf-8") == "# day\n- one\n- two\n"


def test_append_never_creates_a_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        append(tmp_path / "missing.md", "x")
    assert not (tmp_path / "missing.md").exists()


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    target = tmp_path / "log.md"
    target.write_text("", encoding="utf-8")
    lines = [f"{n:03d} " + "x" * 2000 + "\n" for n in range(40)]
    threads = [threading.Thread(target=append, args=(target, line)) for line in lines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(target.read_text(encoding="utf-8").splitlines(keepends=True)) == lines


def test_append_lands_in_the_file_that_replaced_the_one_it_opened(tmp_path: Path) -> None:
    """Sync replaces a merged file holding an flock on the old one: an append that opened the old file meanwhile
    waits, then writes into the new file at the path, never into the replaced one where no one would read it."""
    import fcntl

    target = tmp_path / "log.md"
    target.write_text("- old\n", encoding="utf-8")
    with open(target, "rb") as old:
        fcntl.flock(old.fileno(), fcntl.LOCK_EX)
        writer = threading.Thread(target=append, args=(target, "- appended meanwhile\n"))
        writer.start()
        writer.join(0.3)  # an append that takes no lock has written into the old file by now
        atomic_write(target, "- merged\n")
        fcntl.flock(old.fileno(), fcntl.LOCK_UN)
        writer.join()
    assert target.read_text(encoding="utf-8") == "- merged\n- appended meanwhile\n"


# --- file_lock -----------------------------------------------------------------------------------------------


def test_file_lock_creates_its_folder_and_is_reentrant_after_release(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "a.lock"
    with file_lock(path) as lock:
        assert path.exists()
        assert lock.path == str(path)
    with file_lock(path, blocking=False):
        pass


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_file_lock_is_exclusive_between_two_holders(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    with file_lock(path):
        attempt = file_lock(path, blocking=False)
        with pytest.raises(BlockingIOError):
            attempt.__enter__()
        assert attempt._fd is None  # the failed attempt closed its descriptor
    with file_lock(path, blocking=False):
        pass


HOLDER = """
import sys
from pinky.base.fileio import file_lock
with file_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_file_lock_is_exclusive_across_processes_and_a_killed_holder_releases_it(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(BlockingIOError), file_lock(path, blocking=False):
            pass
        holder.kill()
        holder.wait(timeout=10)
        with file_lock(path, blocking=False):
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_blocking_lock_waits_for_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        threading.Timer(0.3, holder.stdin.close).start()  # type: ignore[union-attr]
        started = time.monotonic()
        with file_lock(path):
            waited = time.monotonic() - started
        assert waited >= 0.2
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=10)
