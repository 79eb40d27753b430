"""Runtime: the shared KnowledgeBase and background upkeep behind pinky-mcp and `pinky watch` (no SDK, no process)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note
from mcp_helpers import hermetic_config, wait_for

from pinky.runtime.process import Runtime


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[Runtime, list[set[Path]]]]:
    """A running Runtime on tmp_path with one note written before start; the batches it indexed."""
    write_note(tmp_path / "documentation", "gotcha/early.md", "# Early\n\nThe walrus adapter leaks sockets.\n")
    indexed: list[set[Path]] = []
    runtime = Runtime(hermetic_config(tmp_path), on_indexed=indexed.append)
    runtime.start()
    try:
        yield runtime, indexed
    finally:
        runtime.stop()


def test_start_catches_up_then_embeds_and_warms_search(started: tuple[Runtime, list[set[Path]]]) -> None:
    runtime, _ = started
    assert runtime.caught_up.wait(30)
    assert runtime.status["catch_up"] == "done", runtime.status
    assert runtime.status["catch_up_report"]["added"] == 1
    assert wait_for(lambda: runtime.call(lambda kb: kb.stats())["pending_vectors"] == 0)
    assert runtime.status["embedder"] == "ready" and runtime.status["last_error"] is None
    hits = runtime.call(lambda kb: kb.search("walrus sockets")).hits
    assert [hit.slug for hit in hits] == ["gotcha/early"]


def test_notes_edited_on_disk_are_indexed_and_reported(tmp_path: Path,
                                                       started: tuple[Runtime, list[set[Path]]]) -> None:
    runtime, indexed = started
    assert runtime.caught_up.wait(30)
    assert runtime.watched == [(tmp_path / "documentation").resolve()]
    note = write_note(tmp_path / "documentation", "pattern/late.md", "# Late\n\nUse the okapi retry wrapper.\n")
    assert wait_for(lambda: any(note.resolve() in batch for batch in indexed))
    assert [h.slug for h in runtime.call(lambda kb: kb.search("okapi retry")).hits] == ["pattern/late"]
    assert wait_for(lambda: runtime.call(lambda kb: kb.stats())["pending_vectors"] == 0)  # the loop embedded it


def test_exclusive_calls_run_while_upkeep_is_alive(started: tuple[Runtime, list[set[Path]]]) -> None:
    runtime, _ = started
    assert runtime.caught_up.wait(30)
    report = runtime.call_exclusive(lambda kb: kb.reindex(full=True))
    assert report.added == 1 and runtime.upkeep_running
    results: list[int] = []
    workers = [threading.Thread(target=lambda: results.append(runtime.call(lambda kb: kb.stats()["entries"])))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert results == [1, 1, 1, 1]


def test_without_embedding_nothing_gets_vectors(tmp_path: Path) -> None:
    write_note(tmp_path / "documentation", "note/a.md", "# A\n\nplain text\n")
    runtime = Runtime(hermetic_config(tmp_path), embed=False, warm_search=False)
    runtime.start()
    try:
        assert runtime.caught_up.wait(30) and runtime.status["catch_up"] == "done"
        runtime.embed_soon()
        stats = runtime.call(lambda kb: kb.stats())
        assert stats["entries"] == 1 and stats["vectors"] == 0 and stats["pending_vectors"] > 0
        assert runtime.status["embedder"] == "cold"
    finally:
        runtime.stop()


def test_a_catch_up_that_keeps_failing_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "brain.db").mkdir()  # an index path SQLite cannot open
    runtime = Runtime(hermetic_config(tmp_path))
    runtime.start()
    try:
        assert runtime.caught_up.wait(30)
        assert runtime.status["catch_up"] == "failed"
        assert "cannot open the index" in runtime.status["last_error"]
        assert runtime.upkeep_running  # upkeep goes on (it watches and retries embedding)
    finally:
        runtime.stop()


def test_stop_ends_upkeep_and_a_runtime_starts_once(tmp_path: Path) -> None:
    runtime = Runtime(hermetic_config(tmp_path))
    runtime.start()
    assert runtime.caught_up.wait(30)
    with pytest.raises(RuntimeError, match="starts once"):
        runtime.start()
    runtime.stop()
    assert not runtime.upkeep_running
    runtime.exit_if_busy()  # nothing runs any more: returns instead of leaving the process


def test_a_runtime_that_never_started_stops_quietly(tmp_path: Path) -> None:
    runtime = Runtime(hermetic_config(tmp_path))
    assert runtime.call(lambda kb: kb.stats())["entries"] == 0  # the foreground works without upkeep
    runtime.stop()
    assert not runtime.upkeep_running and runtime.watched == []


def test_the_runtime_does_not_import_the_sdk_or_the_core_before_start() -> None:
    code = ("import sys, pinky.runtime.process\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types', 'numpy', 'watchdog'}),"
            " 'pinky.kb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] False"
