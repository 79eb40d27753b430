"""A running `pinky-mcp` finds what another process changed with its very next search, without walking the
global brain before each request (issue 37): its change feed reads what the OS reported, and a feed that lost
track (its queue overflowed, a folder removed and made again) checks everything instead of missing a change.

Every writer is another process or a plain file operation, every search the first one after it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from mcp_helpers import RawServer
from test_global_fresh import cli

OLD, NEW = "zebrafish", "swordfish"  # an edit of the same size


def _note(folder: Path, name: str, word: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"---\ntype: gotcha\n---\n# Nightly dates\n\nSet TZ=UTC in the {word} pipeline.\n",
                    encoding="utf-8")
    return path


def _edit_in_place(path: Path, old: str = OLD, new: str = NEW) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text and len(old) == len(new)
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = Path(os.environ["PINKY_HOME"])
        self.brain = self.home / "brain"
        self.project = tmp_path / "proj"
        self.docs = self.project / "documentation"
        self.docs.mkdir(parents=True)
        (self.project / "pinky.toml").write_text("", encoding="utf-8")
        _note(self.docs / "note", "local.md", "walrus")
        _note(self.brain / "gotcha", "dates.md", OLD)

    def server(self) -> RawServer:
        server = RawServer(self.project, PINKY_HOME=str(self.home), PINKY_DB=str(self.project / "brain.db"),
                           PINKY_SAVE_DIR=str(self.docs), PINKY_LOG="info")
        server.__enter__()
        server.initialize()
        deadline = time.monotonic() + 30
        while "following the notes' changes" not in server.stderr():  # its feed runs: the requests read it
            assert time.monotonic() < deadline, server.stderr()
            time.sleep(0.05)
        assert self.names(server, "walrus") == ["local.md"]  # up and warm, the feed's first look taken
        return server

    @staticmethod
    def names(server: RawServer, word: str) -> list[str]:
        found = server.call("brain_search", query=word)
        assert not found["isError"], found
        return [Path(hit["path"]).name for hit in found["structuredContent"]["hits"]]


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = World(tmp_path)
    cli("reindex", cwd=world.project, home=world.home)
    return world


@pytest.mark.parametrize("where", ["project", "global"])
def test_an_edit_in_place_of_the_same_size(world: World, where: str) -> None:
    note = _note(world.docs / "gotcha", "mine.md", OLD) if where == "project" else world.brain / "gotcha" / "dates.md"
    if where == "project":
        cli("reindex", cwd=world.project, home=world.home)
    server = world.server()
    try:
        _edit_in_place(note)
        assert note.name in world.names(server, NEW), server.stderr()[-2000:]
    finally:
        server.__exit__(None, None, None)


def test_a_rename_and_a_delete(world: World) -> None:
    server = world.server()
    try:
        moved = world.brain / "later" / "times.md"
        moved.parent.mkdir()
        os.rename(world.brain / "gotcha" / "dates.md", moved)
        assert world.names(server, OLD) == ["times.md"]
        moved.unlink()
        assert world.names(server, OLD) == []
        project_note = world.docs / "note" / "local.md"
        os.rename(project_note, project_note.with_name("renamed.md"))
        assert world.names(server, "walrus") == ["renamed.md"]
    finally:
        server.__exit__(None, None, None)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.test", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True)


def test_a_git_pull_of_the_global_brain(world: World) -> None:
    _git("init", cwd=world.brain)
    _git("add", "-A", cwd=world.brain)
    _git("commit", "-m", "notes", cwd=world.brain)
    other = world.tmp / "other-clone"
    _git("clone", str(world.brain), str(other), cwd=world.tmp)
    _edit_in_place(other / "gotcha" / "dates.md")
    _note(other / "pulled", "new.md", "narwhal")
    _git("commit", "-am", "edit", cwd=other)
    _git("add", "-A", cwd=other)
    _git("commit", "-m", "new", cwd=other)
    server = world.server()
    try:
        _git("pull", str(other), "main", cwd=world.brain)
        assert world.names(server, NEW) == ["dates.md"]
        assert world.names(server, "narwhal") == ["new.md"]
    finally:
        server.__exit__(None, None, None)


def test_a_save_from_another_process(world: World) -> None:
    server = world.server()
    try:
        cli("save", "-t", "Beluga pods", "--type", "gotcha", cwd=world.project, home=world.home,
            stdin="The beluga pod answers on port 7.\n")
        assert "beluga-pods.md" in world.names(server, "beluga")
        cli("save", "-t", "Orca pods", "--type", "gotcha", "--scope", "global", cwd=world.tmp, home=world.home,
            stdin="The orca pod answers on port 8.\n")
        assert "orca-pods.md" in world.names(server, "orca")
    finally:
        server.__exit__(None, None, None)


def test_an_overflowed_feed_checks_everything(world: World) -> None:
    """More events than the kernel queues while the server is idle: the edit after them is not among the events,
    and the next search finds it anyway (the log says why it looked)."""
    server = world.server()
    try:
        world.names(server, OLD)  # a first request: the feed is armed (a flood before it is no overflow of it)
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        files = [os.open(world.brain / name, os.O_WRONLY | os.O_CREAT) for name in ("x.txt", "y.txt")]
        for n in range(limit + 100):  # two files in turn: identical events in a row are merged into one
            os.write(files[n % 2], b"x")
        for fd in files:
            os.close(fd)
        _edit_in_place(world.brain / "gotcha" / "dates.md")
        assert world.names(server, NEW) == ["dates.md"], server.stderr()
        # Most runs overflow the queue (the log says so); the server's own background work may drain it during
        # the flood, and then the edit arrives as an event: found either way. The overflow itself is tested on the
        # feed alone (tests/indexing/test_change_feed.py), where nothing else reads it.
    finally:
        server.__exit__(None, None, None)


def test_a_removed_and_recreated_folder(world: World) -> None:
    server = world.server()
    try:
        shutil.rmtree(world.brain)
        assert world.names(server, OLD) == []
        note = _note(world.brain / "gotcha", "again.md", OLD)
        assert world.names(server, OLD) == ["again.md"]
        _edit_in_place(note)  # in the folder made again: watched again
        assert world.names(server, NEW) == ["again.md"]
    finally:
        server.__exit__(None, None, None)


def test_the_state_the_server_took_in_is_recorded_for_the_others(world: World) -> None:
    """The server's feed takes a change in by its path; the global brain's state is then recorded in the index
    in the background (the watcher's own indexing checks the global brain as any process without a feed does),
    so the CLI and the hooks, which compare with it, do not take the change in again."""
    from pinky.base.global_signature import SIGNATURE_KEY, walk
    from pinky.store.readonly import connect_ro, meta_values

    server = world.server()
    try:
        _note(world.brain / "gotcha", "added.md", "narwhal")
        assert world.names(server, "narwhal") == ["added.md"]
        now = walk(str(world.brain))[0]
        deadline = time.monotonic() + 20
        while True:
            conn = connect_ro(str(world.project / "brain.db"))
            recorded = meta_values(conn, SIGNATURE_KEY)[0]
            conn.close()
            if recorded == now or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert recorded == now
    finally:
        server.__exit__(None, None, None)
