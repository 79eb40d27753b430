"""Notes edited on disk are indexed while a watcher runs: `pinky watch` and inside pinky-mcp."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, wait_for

from pinky.indexing.watch import is_note


def test_only_indexable_notes_count(tmp_path: Path) -> None:
    roots = [tmp_path / "documentation"]
    assert is_note(tmp_path / "documentation/gotcha/a.md", roots)
    assert not is_note(tmp_path / "documentation/gotcha/_template.md", roots)
    assert not is_note(tmp_path / "documentation/.archive/a.md", roots)
    assert not is_note(tmp_path / "documentation/gotcha/.pinky-123.tmp", roots)
    assert not is_note(tmp_path / "elsewhere/a.md", roots)


def _search(project: Path, query: str) -> list[str]:
    out = subprocess.run([*console_script("pinky"), "search", query, "--json", "--mode", "bm25"], cwd=project,
                         capture_output=True, text=True, timeout=60)
    return [h["slug"] for h in json.loads(out.stdout)["hits"]] if out.returncode == 0 else []


def test_pinky_watch_indexes_new_changed_and_deleted_notes(project: Path) -> None:
    import threading

    write_note(project / "documentation", "note/first.md", "# First\n\nAbout walruses.\n")
    proc = subprocess.Popen([*console_script("pinky"), "watch", "--no-embed"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    said: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        # Writing before it watches would test its catch-up, not its watching (a slow start under load)
        assert wait_for(lambda: any(line.startswith("caught up") for line in said), 60)
        assert _search(project, "walruses") == ["note/first"]
        write_note(project / "documentation", "gotcha/new.md", "# New\n\nNarwhals bite.\n")
        assert wait_for(lambda: _search(project, "narwhals") == ["gotcha/new"])
        (project / "documentation/note/first.md").unlink()
        assert wait_for(lambda: _search(project, "walruses") == [])
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        reader.join(5)
    err = "".join(said)
    assert "indexed" in err and "gotcha/new.md" in err and "removed" in err and "Traceback" not in err


def test_a_root_created_later_is_watched_after_refresh(tmp_path: Path) -> None:
    from pinky.indexing.watch import NoteWatcher

    seen: list[set[Path]] = []
    watcher = NoteWatcher([tmp_path / "documentation"], seen.append, debounce=0.1)
    assert watcher.start() == []
    try:
        (tmp_path / "documentation").mkdir()
        assert watcher.refresh() == [(tmp_path / "documentation").resolve()]
        write_note(tmp_path / "documentation", "note/late.md", "late")
        assert wait_for(lambda: any(p.name == "late.md" for batch in seen for p in batch), 5)
    finally:
        watcher.stop()


def test_the_mcp_server_sees_notes_the_agent_edits_by_hand(tmp_path: Path) -> None:
    (tmp_path / "documentation").mkdir()
    with RawServer(tmp_path) as server:
        server.initialize()
        assert wait_for(lambda: server.call("brain_stats")["structuredContent"]["background"].get("watching"))
        write_note(tmp_path / "documentation", "pattern/edited.md", "# Edited by hand\n\nUse the okapi adapter.\n")

        def found() -> bool:
            hits = server.call("brain_search", query="okapi adapter")["structuredContent"]["hits"]
            return bool(hits) and hits[0]["slug"] == "pattern/edited"

        assert wait_for(found)


def test_stopping_a_watcher_that_never_started_is_harmless(tmp_path: Path) -> None:
    from pinky.indexing.watch import NoteWatcher

    NoteWatcher([tmp_path], lambda paths: None).stop()


def test_stopping_a_watcher_whose_observer_hangs_returns(tmp_path: Path) -> None:
    """watchdog joins its inotify threads without a timeout; a hang there must not hang pinky."""
    import threading
    import time

    from pinky.indexing.watch import NoteWatcher

    class HangingObserver(threading.Thread):  # stands in for a watchdog Observer stuck in stop()
        def __init__(self) -> None:
            super().__init__(daemon=True)
            self.release = threading.Event()

        def run(self) -> None:
            self.release.wait(30)

        def stop(self) -> None:
            self.release.wait(30)

    watcher = NoteWatcher([tmp_path], lambda paths: None)
    watcher._observer = HangingObserver()
    watcher._observer.start()
    started = time.monotonic()
    watcher.stop(timeout=0.3)
    assert time.monotonic() - started < 5
    watcher._observer.release.set()


def test_pinky_watch_stops_when_ctrl_c_lands_on_another_thread(project: Path) -> None:
    """The kernel may hand a process's SIGINT to any thread that does not block it. Python then raises
    KeyboardInterrupt only when the main thread runs bytecode again: a long sleep there never ended."""
    import ctypes
    import threading

    tgkill = getattr(ctypes.CDLL(None, use_errno=True), "tgkill", None)
    if tgkill is None or not Path("/proc/self/task").is_dir():
        pytest.skip("needs Linux's tgkill to aim a signal at one thread")
    write_note(project / "documentation", "note/first.md", "# First\n\nAbout walruses.\n")
    proc = subprocess.Popen([*console_script("pinky"), "watch", "--no-embed"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        assert wait_for(lambda: any(line.startswith("caught up") for line in said), 60)
        others = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        assert others, "pinky watch runs its watcher on threads of its own"
        assert tgkill(proc.pid, others[-1], signal.SIGINT) == 0
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
