"""A long-running brain: one shared KnowledgeBase for the foreground, background upkeep behind it.

Used by every process that stays up (pinky-mcp, `pinky watch`). The foreground (tool calls)
shares one KnowledgeBase that keeps its vectors in memory, serialised by a lock. A background
thread, on connections of its own, imports the core, watches the notes for edits, brings a stale
index up to date, warms the embedder and gives new chunks their vectors, so the foreground never
waits for any of it; SQLite's WAL and BEGIN IMMEDIATE keep the two sides apart.

Core module: no MCP SDK here, and the heavy modules (numpy, the index, watchdog) load in the
background thread, so a server can answer its first message before they are imported.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pinky.config import Config
    from pinky.kb import KnowledgeBase

log = logging.getLogger("pinky.runtime.process")
T = TypeVar("T")

ROOT_CHECK_S = 10.0  # how often the upkeep thread looks for knowledge folders created after start
IMPORT_WAIT_S = 60.0  # how long a foreground call waits for the upkeep thread's imports
CATCH_UP_ATTEMPTS = 3  # another process may be creating or migrating the same index
REFINE_THREADS = 1  # cores the background second-stage fill uses: the other is the agent's
REFINE_NICENESS = 10  # and at a lower priority than anything in the foreground (Linux: this thread only)


def _lower_this_threads_priority() -> None:
    """Hours of background embedding on a large brain must not slow the user's own work: on Linux a
    thread has its own nice value, so the upkeep thread alone yields (tool calls run on other threads)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), max(current, REFINE_NICENESS))


class Runtime:
    """One KnowledgeBase shared by all foreground calls (serialised by a lock), plus background upkeep.

    `embed`: give new chunks their vectors (warm the embedder, embed after catch-up and edits).
    `warm_search`: load the in-memory vectors before the first search (for a process that searches).
    `on_indexed(paths)`: called from the upkeep thread after notes edited on disk were indexed.
    """

    def __init__(self, config: Config, *, embed: bool = True, warm_search: bool = True,
                 on_indexed: Callable[[set[Path]], None] | None = None) -> None:
        self.config = config
        self.embed = embed
        self.warm_search = warm_search
        self.on_indexed = on_indexed
        self._kb: KnowledgeBase | None = None
        self._lock = threading.Lock()
        self._upkeep_lock = threading.Lock()  # held while an upkeep connection works; exclusive calls wait on it
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._imported = threading.Event()  # heavy modules loaded (numpy must not be imported by two threads at once)
        self._imported.set()  # start() clears it until the upkeep thread has imported them
        self.caught_up = threading.Event()  # set once the start-up catch-up reindex finished or gave up
        self._thread: threading.Thread | None = None
        self._watcher: Any = None
        self.status: dict[str, Any] = {"catch_up": "pending", "embedder": "cold", "last_error": None}

    # --- foreground --------------------------------------------------------------------------

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            from pinky.kb import KnowledgeBase

            self._kb = KnowledgeBase(self.config, cache_vectors=True)  # a long-running process: keep vectors
        return self._kb

    def call(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """Run `fn(kb)` with the shared knowledge base to ourselves (call from a worker thread)."""
        self._imported.wait(IMPORT_WAIT_S)
        with self._lock:
            return fn(self.kb)

    def call_exclusive(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """Like `call`, but with background upkeep paused (a full reindex replaces the DB file)."""
        self._imported.wait(IMPORT_WAIT_S)
        with self._upkeep_lock, self._lock:
            return fn(self.kb)

    def embed_soon(self) -> None:
        """Ask the upkeep thread to give new chunks their vectors."""
        self._wake.set()

    # --- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a Runtime starts once; make a new one")
        if self.config.db_note:  # a read-only project: one line on stderr says where its index is
            log.warning("%s", self.config.db_note)
        self._imported.clear()
        self._thread = threading.Thread(target=self._upkeep, name="pinky-upkeep", daemon=True)
        self._thread.start()

    def stop(self, wait: float = 2.0) -> None:
        self._stop.set()
        if self._watcher is not None:
            with contextlib.suppress(Exception):  # shutting down: never let the watcher block the exit
                self._watcher.stop()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(wait)
        with contextlib.suppress(Exception):
            if self._lock.acquire(timeout=wait):
                try:
                    if self._kb is not None:
                        if self._kb.index.feed is not None:
                            self._kb.index.feed.close()
                        self._kb.close()
                finally:
                    self._lock.release()

    @property
    def upkeep_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def exit_if_busy(self, code: int = 0) -> None:
        """After stop(): if upkeep is still mid-work (embedding, say), leave without interpreter teardown.

        SQLite rolls the open batch back; tearing the interpreter down under a live thread that is
        inside numpy or SQLite can crash or hang instead.
        """
        if self.upkeep_running:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    @property
    def watched(self) -> list[Path]:
        """The knowledge folders being watched for edits (empty until the watcher started)."""
        watching = self.status.get("watching")
        return [Path(p) for p in watching] if isinstance(watching, list) else []

    # --- background --------------------------------------------------------------------------

    def _upkeep(self) -> None:
        try:
            self._import_core()
            self._start_feed()
            self._start_watching()  # before catching up: a note edited meanwhile is not missed
            if not self._with_upkeep_kb(self._catch_up) and not self._stop.is_set():
                self.status["catch_up"] = "failed"
        finally:
            self.caught_up.set()  # also when something above raised: nobody waits for it forever
        if self.embed:
            self._warm_embedder()
            self._with_upkeep_kb(self._embed_pending)
        if self.warm_search:
            self._warm_search()
        self._with_upkeep_kb(self._verify)  # last: the foreground is served meanwhile
        self._refine()
        self._wake.set()
        while not self._stop.is_set():
            woken = self._wake.wait(ROOT_CHECK_S)
            if self._stop.is_set():
                break
            if self._watcher is not None:  # a knowledge folder created since start
                with contextlib.suppress(Exception):
                    self.status["watching"] = [str(p) for p in self._watcher.refresh()]
            if not woken:
                continue
            self._wake.clear()
            if self.embed:
                self._with_upkeep_kb(self._embed_pending)
                self._refine()

    def _import_core(self) -> None:
        """Import the core once, in this thread, after the first message could already be answered."""
        try:
            import numpy  # noqa: F401

            import pinky.briefing
            import pinky.indexing.vectors
            import pinky.kb  # noqa: F401
        except Exception as exc:  # the foreground call that needs it will report the error
            log.warning("importing the core failed: %s", exc)
        finally:
            self._imported.set()

    def _with_upkeep_kb(self, job: Callable[[KnowledgeBase], object]) -> bool:
        """Run `job` on a connection of its own; False when it failed (logged, never raised)."""
        from pinky.kb import KnowledgeBase

        with self._upkeep_lock:
            if self._stop.is_set():
                return False
            kb = None
            try:
                kb = KnowledgeBase(self.config)  # in the try: an index that cannot be opened is a failure too
                job(kb)
                return True
            except Exception as exc:  # upkeep must never take the process down
                self.status["last_error"] = f"{type(exc).__name__}: {exc}"
                log.warning("background upkeep failed: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
                return False
            finally:
                if kb is not None:
                    kb.close()

    def _catch_up(self, kb: KnowledgeBase) -> None:
        """Index markdown changed on disk while nothing ran (git pull, edits); full text first."""
        self.status["catch_up"] = "running"
        started = time.perf_counter()
        for attempt in range(CATCH_UP_ATTEMPTS):
            try:
                report = kb.reindex(embed=False)
                break
            except Exception as exc:
                if attempt == CATCH_UP_ATTEMPTS - 1 or self._stop.wait(0.5 * (attempt + 1)):
                    raise
                log.info("catch-up reindex failed (%s); retrying", exc)
        self.status["catch_up"] = "done"
        self.status["catch_up_report"] = report.as_dict()
        log.info("catch-up reindex: %s in %.2fs", report.as_dict(), time.perf_counter() - started)

    def _start_watching(self) -> None:
        """Notes edited on disk while we run (the agent's own Edit tool, an editor, a git pull)
        are indexed at once, full text first; the upkeep loop then embeds them."""
        if self._stop.is_set():
            return
        from pinky.indexing.watch import NoteWatcher

        try:
            self._watcher = NoteWatcher(self.config.roots().values(), self._notes_changed)
            watched = self._watcher.start()
            self.status["watching"] = [str(p) for p in watched]
        except Exception as exc:  # no inotify instances left, say: searches still work
            self.status["watching"] = f"failed: {exc}"
            log.warning("cannot watch the notes for changes: %s", exc)

    def _start_feed(self) -> None:
        """The foreground's change feed (pinky.indexing.change_feed): each request reads what the OS reported since
        the last one instead of walking the global brain. Where none can run, requests walk (bounded)."""
        if self._stop.is_set():
            return
        from pinky.indexing.change_feed import ChangeFeed, FeedUnavailable

        try:
            feed = ChangeFeed(self.config.roots())
            feed.start()
        except (FeedUnavailable, OSError) as exc:
            self.status["freshness"] = f"walking the global brain before each request: no change feed ({exc})"
            log.warning("no change feed (%s): each request checks the global brain's files", exc)
            return
        with self._lock:
            self.kb.index.feed = feed
        self.status["freshness"] = f"change feed (inotify over {feed.folders} folders)"
        log.info("following the notes' changes: inotify over %d folders", feed.folders)

    def _notes_changed(self, paths: set[Path]) -> None:
        from pinky.indexing.watch import index_changes

        indexed = self._with_upkeep_kb(lambda kb: index_changes(kb, paths, embed=False))
        self._wake.set()
        if indexed and self.on_indexed is not None:
            self.on_indexed(paths)

    def _warm_embedder(self) -> None:
        if self._stop.is_set():
            return
        self.status["embedder"] = "loading"
        try:
            from pinky.embed.embedding import get_embedder

            get_embedder(self.config).embed(["warm up"])
            self.status["embedder"] = "ready"
        except Exception as exc:
            self.status["embedder"] = f"failed: {exc}"
            log.warning("embedder warm-up failed: %s", exc)

    def _warm_search(self) -> None:
        """Load the in-memory vectors now, so the first search does not pay for it."""
        if self._stop.is_set():
            return
        try:
            self.call(lambda kb: kb.search("warm up", limit=1))
        except Exception as exc:
            log.info("warm-up search failed: %s", exc)

    def _verify(self, kb: KnowledgeBase) -> None:
        """A damaged page nobody has read yet: found by quick_check, and the index rebuilt."""
        if self._stop.is_set():
            return
        problem = kb.verify()
        self.status["integrity"] = f"repaired: {problem}" if problem else "ok"
        if problem:
            log.warning("the index was damaged (%s); rebuilt it from the markdown", problem)
            self._wake.set()  # embed what the rebuild left without vectors

    def _refine(self) -> None:
        """Second-stage vectors (pinky.search.second_stage) for chunks without one, a batch at a time on one core, the
        upkeep lock released between batches; new edits (a wake-up) and stopping come first."""
        if not self.embed or self._stop.is_set():
            return
        from pinky.search import second_stage
        available, why = second_stage.status(self.config)
        if not available:
            self.status["quality"] = f"off: {why}"
            return
        _lower_this_threads_priority()
        made = [0]

        def batch(kb: KnowledgeBase) -> None:
            made[0] = kb.refine_pending(limit=second_stage.BATCH, threads=REFINE_THREADS)
            self.status["quality"] = "filling" if made[0] else "ready"

        while not (self._stop.is_set() or self._wake.is_set()):
            if not self._with_upkeep_kb(batch) or not made[0]:
                break

    def _embed_pending(self, kb: KnowledgeBase) -> None:
        if not str(self.status["embedder"]).startswith("failed"):
            embedded = kb.embed_pending()
            if embedded:
                log.info("embedded %d new chunks", embedded)
