"""The change feed (pinky.indexing.change_feed) on real folders and a real inotify descriptor: every write that
returned before a drain is in that drain, and whatever makes the events incomplete says so."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from pinky.indexing.change_feed import ChangeFeed, FeedUnavailable

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _feed(**roots: Path) -> ChangeFeed:
    feed = ChangeFeed(roots)
    feed.start()
    first = feed.drain()
    assert first.lost == "the watch just started" and not first.rearm  # what came before it is unknown
    assert feed.drain().quiet
    return feed


def test_a_write_that_returned_is_in_the_next_drain(tmp_path: Path) -> None:
    """No thread between the kernel and the drain: 500 writes in place, each drained at once, none missed."""
    (tmp_path / "gotcha").mkdir()
    note = tmp_path / "gotcha" / "a.md"
    note.write_text("# A\nbody one\n", encoding="utf-8")
    feed = _feed(global_=tmp_path)
    missed = 0
    for n in range(500):
        with open(note, "r+", encoding="utf-8") as handle:
            handle.write(f"# {n % 10}")
        drained = feed.drain()
        missed += note not in drained.notes.get("global_", set())
    assert missed == 0
    feed.close()


def test_rename_delete_and_a_new_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    first, second = tmp_path / "a" / "one.md", tmp_path / "a" / "two.md"
    first.write_text("one", encoding="utf-8")
    feed = _feed(g=tmp_path)
    os.rename(first, second)
    assert feed.drain().notes == {"g": {first, second}}
    second.unlink()
    assert feed.drain().notes == {"g": {second}}
    (tmp_path / "b" / "c").mkdir(parents=True)  # notes may be written before its watch is added: the root is scanned
    (tmp_path / "b" / "c" / "three.md").write_text("three", encoding="utf-8")
    assert feed.drain().rescan == {"g"}
    (tmp_path / "b" / "c" / "three.md").write_text("three again", encoding="utf-8")  # watched from now on
    assert feed.drain().notes == {"g": {tmp_path / "b" / "c" / "three.md"}}
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("not a note", encoding="utf-8")
    (tmp_path / "a" / "notes.txt").write_text("not a note", encoding="utf-8")
    assert feed.drain().quiet
    feed.close()


def test_an_overflowed_queue_is_a_loss(tmp_path: Path) -> None:
    """More events than the kernel keeps (fs.inotify.max_queued_events): the feed says it lost track."""
    feed = _feed(g=tmp_path)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    files = [os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT) for name in ("x.txt", "y.txt")]
    for n in range(limit + 100):  # two files in turn: identical events in a row would be merged into one
        os.write(files[n % 2], b"x")
    for fd in files:
        os.close(fd)
    drained = feed.drain()
    assert drained.lost == "the kernel's event queue overflowed" and drained.rearm
    feed.close()


def test_a_removed_or_recreated_root_is_a_loss(tmp_path: Path) -> None:
    root = tmp_path / "brain"
    (root / "gotcha").mkdir(parents=True)
    feed = _feed(g=root)
    shutil.rmtree(root)
    drained = feed.drain()
    assert drained.lost is not None and "removed" in drained.lost and drained.rearm
    feed.start()  # as the caller does: a root that is not there is awaited in its parent
    assert feed.drain().lost == "the watch just started"
    (root / "gotcha").mkdir(parents=True)
    drained = feed.drain()
    assert drained.lost == "brain/ was created" and drained.rearm


def test_no_feed_where_it_cannot_watch(tmp_path: Path) -> None:
    with pytest.raises(FeedUnavailable, match="cannot watch"):
        ChangeFeed({"g": tmp_path / "missing" / "brain"}).start()


def test_events_not_taken_in_ask_for_a_check_of_everything(tmp_path: Path) -> None:
    """A request that drained events and then failed to index them (a locked index, say) leaves the next one
    unsure: it checks everything instead of taking the quiet queue for granted."""
    feed = _feed(g=tmp_path)
    (tmp_path / "a.md").write_text("a", encoding="utf-8")
    assert feed.drain().notes == {"g": {tmp_path / "a.md"}}
    feed.unsure("taking the last changes in failed (OperationalError)")
    drained = feed.drain()
    assert drained.lost == "taking the last changes in failed (OperationalError)" and not drained.rearm
    assert feed.drain().quiet
    feed.close()
