"""Follow the markdown roots: notes changed on disk are indexed within a second.

The agent edits notes with its own Write/Edit tools and people edit them in their editors; a
long-running process (the MCP server, `pinky watch`) notices through watchdog and indexes those
files, so the next search sees them without a reindex. Events are debounced: an editor's burst of
writes to one file becomes one update.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pinky.base import layout

log = logging.getLogger("pinky.indexing.watch")

DEBOUNCE_S = 0.5


def is_note(path: Path, roots: Iterable[Path]) -> bool:
    """A markdown file the indexer would index: under a root, and a note by `layout.is_note`."""
    for root in roots:
        if path.is_relative_to(root):
            return layout.is_note(path.relative_to(root).as_posix())
    return False


STOP_TIMEOUT_S = 3.0


class NoteWatcher:
    """Calls `on_change(paths)` with the notes created, changed, moved or deleted under `roots`."""

    def __init__(self, roots: Iterable[Path], on_change: Callable[[set[Path]], None],
                 debounce: float = DEBOUNCE_S) -> None:
        self.roots = [Path(r).resolve() for r in roots]
        self.on_change = on_change
        self.debounce = debounce
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._observer: Any = None  # a watchdog Observer once started

    def start(self) -> list[Path]:
        """Start watching the roots that exist; returns them. `refresh()` adds roots made later."""
        from watchdog.observers import Observer

        # watchdog's recursive inotify watch can be told twice about one new folder (the scan that adds
        # `.pinky/` finds `locks/` inside it, then the event for `locks/` arrives): it warns and keeps one
        # watch. Harmless, and nothing a user can act on; seen as a RuntimeWarning in the test suite.
        warnings.filterwarnings("ignore", message=r"Callback with id .* already exists for watch",
                                category=RuntimeWarning, module=r"watchdog\.")
        observer = Observer()
        observer.daemon = True
        self._watched: list[Path] = []
        observer.start()
        self._observer = observer  # only once started: stop() may run at any moment from another thread
        return self.refresh()

    def refresh(self) -> list[Path]:
        """Watch roots that did not exist before (`pinky init`, a first `pinky sync`)."""
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.is_directory or event.event_type in ("opened", "closed_no_write"):
                    return
                for raw in (getattr(event, "src_path", None), getattr(event, "dest_path", None)):
                    if raw:
                        watcher._note(Path(raw if isinstance(raw, str) else raw.decode()))

        for root in self.roots:
            if root not in self._watched and root.is_dir():
                self._observer.schedule(Handler(), str(root), recursive=True)
                self._watched.append(root)
        return list(self._watched)

    def _note(self, path: Path) -> None:
        if not is_note(path, self.roots):
            return
        with self._lock:
            self._pending.add(path)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            paths, self._pending = self._pending, set()
            self._timer = None
        if paths:
            try:
                self.on_change(paths)
            except Exception as exc:  # a failed update must not stop the watching
                log.warning("indexing changed notes failed: %s", exc)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop watching, waiting at most `timeout` seconds. watchdog's stop joins its inotify threads
        without a timeout, so it runs on a daemon thread of its own, left behind if it ever hangs."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        observer = self._observer
        if observer is None or not observer.is_alive():
            return

        def stop_observer() -> None:
            observer.stop()
            observer.join(timeout)

        stopper = threading.Thread(target=stop_observer, name="pinky-watch-stop", daemon=True)
        stopper.start()
        stopper.join(timeout)
        if stopper.is_alive():
            log.warning("the file watcher did not stop within %.0f s; leaving it behind", timeout)


def index_changes(kb: Any, paths: Iterable[Path], *, embed: bool) -> int:
    """Index (or drop, when gone) each changed note; returns how many were processed."""
    count = 0
    for path in sorted(paths):
        kb.index_file(path, embed=False)
        count += 1
    if embed and count:
        kb.embed_pending()
    return count
