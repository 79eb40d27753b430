"""An undo from `pinky-brain view` (unmerge, unsupersede, unarchive) is all or nothing while another
process writes the same notes (issue 29, item 4): a real `pinky-mcp` loops brain_get + brain_update on
the kept note while merges and supersessions are made and undone here, through the facade the page
calls; every undo either completes or changes nothing and says why."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_helpers import RawServer

from pinky.config import load_config
from pinky.errors import Conflict
from pinky.kb import KnowledgeBase

ROUNDS = 40


@pytest.fixture
def shared(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KnowledgeBase]:
    """The page's KnowledgeBase on the index the MCP server uses too (server_env: <root>/brain.db)."""
    monkeypatch.setenv("PINKY_DB", str(project / "brain.db"))
    kb = KnowledgeBase(load_config())
    yield kb
    kb.close()


class Writer:
    """A client of the real pinky-mcp that keeps reading a note and writing it back with a line more."""

    def __init__(self, root: Path, slug: str) -> None:
        self.server = RawServer(root, PINKY_TIER="write")
        self.server.initialize()
        self.slug, self.writes, self.stop = slug, 0, threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            got = self.server.call("brain_get", slug=self.slug)
            if got["isError"]:
                continue
            entry = got["structuredContent"]
            done = self.server.call("brain_update", slug=self.slug, expected_version=entry["version"],
                                    body=entry["body"].rstrip() + f"\n\nwriter line {self.writes}\n")
            self.writes += 0 if done["isError"] else 1

    def __enter__(self) -> Writer:
        self.thread.start()
        deadline = time.monotonic() + 60  # writing before the rounds start: on a quiet machine 40 rounds could end
        while self.writes == 0 and time.monotonic() < deadline:  # before the writer's first write (0 writes, a flake)
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(60)
        self.server.close()


def _retry(work):  # type: ignore[no-untyped-def]
    """A merge or supersede, tried again while the writer keeps changing the note under it."""
    for _ in range(200):
        try:
            return work()
        except Conflict:
            continue
    raise AssertionError("the writer never let the change through")


def test_unmerge_under_a_concurrent_writer_is_whole_or_nothing(project: Path, shared: KnowledgeBase) -> None:
    kb = shared
    keep = kb.save("Pool hangs on exit", "Call pool.close() before exit.")
    outcomes = {"undone": 0, "refused": 0}
    with Writer(project, keep.slug) as writer:
        for n in range(ROUNDS):
            other = kb.save(f"Duplicate {n} of the pool hang", f"The pool blocks shutdown, case {n}.")
            other_path, other_text = kb.file_of(other.slug), kb.file_of(other.slug).read_bytes()
            done = _retry(lambda o=other: kb.hygiene.merge(keep.slug, o.slug))
            try:
                kb.hygiene.unmerge(done)
            except Conflict as refused:
                assert "nothing was undone" in str(refused)
                assert not other_path.exists(), f"round {n}: refused, yet the archived note is back"
                assert f"case {n}." in kb.file_of(keep.slug).read_text(), f"round {n}: refused, yet the text went"
                outcomes["refused"] += 1
            else:
                assert other_path.read_bytes() == other_text, f"round {n}: undone without its note"
                assert f"case {n}." not in kb.file_of(keep.slug).read_text(), f"round {n}: half undone"
                outcomes["undone"] += 1
    assert writer.writes > 0 and outcomes["undone"] > 0, (writer.writes, outcomes)


def test_unsupersede_and_unarchive_under_a_concurrent_writer_are_whole_or_nothing(
        project: Path, shared: KnowledgeBase) -> None:
    kb = shared
    new = kb.save("CI runs Node 20", "The CI pipeline uses node 20.")
    outcomes = {"undone": 0, "refused": 0}
    with Writer(project, new.slug) as writer:
        for n in range(ROUNDS):
            old = kb.save(f"CI runs Node {n}", f"The CI pipeline used node {n}.")
            old_path, old_text = kb.file_of(old.slug), kb.file_of(old.slug).read_bytes()
            done = _retry(lambda o=old: kb.hygiene.supersede(o.slug, new.slug))
            try:
                kb.hygiene.unsupersede(done)
            except Conflict as refused:
                assert "nothing was undone" in str(refused)
                assert kb.get(old.slug).meta.get("superseded_by") == new.slug, f"round {n}: half undone"
                assert kb.file_of(new.slug).read_text().count("supersedes:") == 1
                outcomes["refused"] += 1
                _retry(lambda: kb.update(new.slug, kb.get(new.slug).version, fields={"supersedes": None}))
                kb.delete(old.slug, "next round")  # by hand, as the page's user would
            else:
                assert old_path.read_bytes() == old_text, f"round {n}: the old note kept its mark"
                assert "supersedes:" not in kb.file_of(new.slug).read_text(), f"round {n}: half undone"
                outcomes["undone"] += 1
                archived = kb.delete(old.slug, "archived from the page").name
                restored = kb.restore(old.slug, archived)  # the page's undo of an archive
                assert restored.slug == old.slug and old_path.read_bytes() == old_text
                kb.delete(old.slug, "next round")
    assert writer.writes > 0 and outcomes["undone"] > 0, (writer.writes, outcomes)
