"""pinky-mcp: the brain as MCP tools over stdio (JSON-RPC 2.0, one message per line).

Configured only by the environment (PINKY_DB, PINKY_SAVE_DIR, PINKY_PROJECT, PINKY_HASH_EMBED,
PINKY_HOME, PINKY_TIER, PINKY_LOG / RUST_LOG); stdout carries nothing but JSON-RPC, logs go to stderr.

Start-up stays fast: `initialize` is answered before the index is opened or the embedder loaded.
A background thread, on its own SQLite connection, brings a stale index up to date, warms the
embedder and embeds new chunks, so full-text search works at once and vectors follow.
This is the only module (with mcp_tools) that imports the `mcp` SDK.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pinky.config import Config, load_config
from pinky.errors import PinkyError
from pinky.locations import ENV_LOG, ENV_TIER

if TYPE_CHECKING:
    from pinky.kb import KnowledgeBase

log = logging.getLogger("pinky.mcp")
T = TypeVar("T")

SERVER_NAME = "pinky-brain"
TIERS = ("read", "write", "admin")
DEFAULT_TIER = "write"
DEFAULT_PROTOCOL = "2024-11-05"  # what the contract names; used when a client sends no protocolVersion
DRAIN_SECONDS = 300.0  # after stdin closes, how long in-flight calls may still finish and answer
_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
           "off": logging.CRITICAL + 10, "none": logging.CRITICAL + 10}


def log_level(env: dict[str, str] | None = None) -> int:
    """PINKY_LOG, else RUST_LOG (`info`, or directives like `pinky=debug,warn`), else warn."""
    env = dict(os.environ) if env is None else env
    raw = (env.get(ENV_LOG) or env.get("RUST_LOG") or "warn").strip().lower()
    bare = None
    for directive in raw.split(","):
        target, _, level = directive.strip().rpartition("=")
        if level not in _LEVELS:
            continue
        if target in ("pinky", "pinky_mcp", "pinky-mcp", "pinky_brain"):
            return _LEVELS[level]  # a directive naming us wins
        if not target:
            bare = _LEVELS[level]
    return bare if bare is not None else logging.WARNING


def tier_from_env(env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    tier = (env.get(ENV_TIER) or DEFAULT_TIER).strip().lower()
    if tier not in TIERS:
        raise PinkyError(f"{ENV_TIER}={tier!r}: use one of {', '.join(TIERS)}")
    return tier


ROOT_CHECK_S = 10.0  # how often the upkeep thread looks for knowledge folders created after start


class Brain:
    """One KnowledgeBase shared by all tool calls (serialised by a lock), plus background upkeep.

    Tool calls run in worker threads so the event loop keeps answering (ping, cancellations).
    Upkeep (catch-up reindex, embedder warm-up, embedding new chunks) uses a second connection,
    so searches and saves never wait for it; SQLite's WAL and BEGIN IMMEDIATE do the rest.
    """

    def __init__(self, config: Config, tier: str) -> None:
        self.config = config
        self.tier = tier
        self._kb: KnowledgeBase | None = None
        self._lock = threading.Lock()
        self._upkeep_lock = threading.Lock()  # held while the upkeep connection works; brain_reindex waits on it
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._imported = threading.Event()  # heavy modules loaded (numpy must not be imported by two threads at once)
        self._imported.set()  # start() clears it until the upkeep thread has imported them
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
        """Run `fn(kb)` with the knowledge base to ourselves (call from a worker thread)."""
        self._imported.wait(60)
        with self._lock:
            return fn(self.kb)

    def call_exclusive(self, fn: Callable[[KnowledgeBase], T]) -> T:
        """Like `call`, but with background upkeep paused (a full reindex replaces the DB file)."""
        self._imported.wait(60)
        with self._upkeep_lock, self._lock:
            return fn(self.kb)

    def embed_soon(self) -> None:
        """Ask the upkeep thread to give new chunks their vectors."""
        self._wake.set()

    # --- background --------------------------------------------------------------------------

    def start(self) -> None:
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
                        self._kb.close()
                finally:
                    self._lock.release()

    @property
    def upkeep_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _upkeep(self) -> None:
        self._import_core()
        self._start_watching()  # before catching up: a note edited meanwhile is not missed
        self._with_upkeep_kb(self._catch_up)
        self._warm_embedder()
        self._with_upkeep_kb(self._embed_pending)
        self._warm_search()
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
            self._with_upkeep_kb(self._embed_pending)

    def _import_core(self) -> None:
        """Import the core once, in this thread, after `initialize` could already be answered."""
        try:
            import numpy  # noqa: F401

            import pinky.briefing
            import pinky.kb
            import pinky.vectors  # noqa: F401
        except Exception as exc:  # the tool call that needs it will report the error
            log.warning("importing the core failed: %s", exc)
        finally:
            self._imported.set()

    def _with_upkeep_kb(self, job: Callable[[KnowledgeBase], None]) -> None:
        from pinky.kb import KnowledgeBase

        with self._upkeep_lock:
            if self._stop.is_set():
                return
            kb = KnowledgeBase(self.config)
            try:
                job(kb)
            except Exception as exc:  # upkeep must never take the server down
                self.status["last_error"] = f"{type(exc).__name__}: {exc}"
                log.warning("background upkeep failed: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            finally:
                kb.close()

    def _catch_up(self, kb: KnowledgeBase) -> None:
        """Index markdown changed on disk while no server ran (git pull, edits); full text first."""
        self.status["catch_up"] = "running"
        started = time.perf_counter()
        for attempt in range(3):  # another process may be creating or migrating the same index
            try:
                report = kb.reindex(embed=False)
                break
            except Exception as exc:
                if attempt == 2 or self._stop.wait(0.5 * (attempt + 1)):
                    self.status["catch_up"] = "failed"
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
        from pinky.watch import NoteWatcher, index_changes

        def on_change(paths: set[Path]) -> None:
            self._with_upkeep_kb(lambda kb: index_changes(kb, paths, embed=False))
            self._wake.set()

        try:
            self._watcher = NoteWatcher(self.config.roots().values(), on_change)
            watched = self._watcher.start()
            self.status["watching"] = [str(p) for p in watched]
        except Exception as exc:  # no inotify instances left, say: searches still work
            self.status["watching"] = f"failed: {exc}"
            log.warning("cannot watch the notes for changes: %s", exc)

    def _warm_embedder(self) -> None:
        if self._stop.is_set():
            return
        self.status["embedder"] = "loading"
        try:
            from pinky.embedding import get_embedder

            get_embedder(self.config).embed(["warm up"])
            self.status["embedder"] = "ready"
        except Exception as exc:
            self.status["embedder"] = f"failed: {exc}"
            log.warning("embedder warm-up failed: %s", exc)

    def _warm_search(self) -> None:
        """Load the in-memory vectors now, so the agent's first search does not pay for it."""
        if self._stop.is_set():
            return
        try:
            self.call(lambda kb: kb.search("warm up", limit=1))
        except Exception as exc:
            log.info("warm-up search failed: %s", exc)

    def _embed_pending(self, kb: KnowledgeBase) -> None:
        if not str(self.status["embedder"]).startswith("failed"):
            embedded = kb.embed_pending()
            if embedded:
                log.info("embedded %d new chunks", embedded)


# --- stdio transport ----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def robust_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, plus what it leaves out.

    - A malformed line gets a JSON-RPC parse error (-32700) or invalid-request error (-32600)
      instead of being dropped silently; blank lines are ignored.
    - `initialize` without protocolVersion/capabilities/clientInfo (the hand test sends `{}`)
      is completed with defaults instead of being refused.
    - When stdin closes, requests already read still get their answers before the server stops
      (the SDK cancels in-flight calls at EOF, which would lose `printf ... | pinky-mcp` output).
    """
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    pending: set[Any] = set()

    async with stdio_server() as (sdk_read, sdk_write):
        in_send, in_recv = anyio.create_memory_object_stream[Any](0)
        out_send, out_recv = anyio.create_memory_object_stream[Any](0)

        async def error_reply(exc: Exception) -> None:
            reply = _malformed_reply(exc)
            if reply is not None:
                await sdk_write.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=reply[0], error=reply[1])))

        async def pump_in() -> None:
            async with in_send:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        await error_reply(item)
                        continue
                    message = item.message
                    if isinstance(message, types.JSONRPCRequest):
                        if message.method == "initialize":
                            item = SessionMessage(_complete_initialize(message), metadata=item.metadata)
                        pending.add(message.id)
                    elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                        pending.discard((message.params or {}).get("requestId"))
                    await in_send.send(item)
                with anyio.move_on_after(DRAIN_SECONDS):
                    while pending:
                        await anyio.sleep(0.01)

        async def pump_out() -> None:
            async with sdk_write:
                async for item in out_recv:
                    if isinstance(item.message, types.JSONRPCResponse | types.JSONRPCError):
                        pending.discard(item.message.id)
                    await sdk_write.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            yield in_recv, out_send


def _complete_initialize(message: Any) -> Any:
    params = dict(message.params or {})
    params.setdefault("protocolVersion", DEFAULT_PROTOCOL)
    params.setdefault("capabilities", {})
    params.setdefault("clientInfo", {"name": "unknown", "version": "0"})
    return message.model_copy(update={"params": params})


def _malformed_reply(exc: Exception) -> tuple[Any, Any] | None:
    """(id, ErrorData) for a line that is not a JSON-RPC message; None for a blank line."""
    import mcp_types as types

    errors = exc.errors() if hasattr(exc, "errors") else []
    first = errors[0] if errors else {}
    raw = first.get("input")
    if first.get("type") == "json_invalid":
        if isinstance(raw, str | bytes) and not raw.strip():
            return None
        return None, types.ErrorData(code=-32700, message="Parse error: each line must be one JSON-RPC 2.0 message")
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        request_id = None
    return request_id, types.ErrorData(
        code=-32600, message="Invalid Request: expected a JSON-RPC 2.0 object with jsonrpc, method (and id)")


# --- entry point --------------------------------------------------------------------------------


async def serve(config: Config, tier: str) -> None:
    from pinky.mcp_tools import build_server

    brain = Brain(config, tier)
    app = build_server(brain)
    lowlevel = app._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does the same
    brain.start()
    try:
        async with robust_stdio() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        brain.stop()
    if brain.upkeep_running:
        # Mid-embedding at exit: SQLite rolls the open batch back; skip interpreter teardown under a live thread.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def main() -> None:
    """Console entry point `pinky-mcp` (no flags: configured by the environment)."""
    logging.basicConfig(level=log_level(), stream=sys.stderr, format="pinky-mcp %(levelname)s: %(message)s")
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help", "--version"):
        print(__doc__.strip() if sys.argv[1] != "--version" else "pinky-mcp", file=sys.stderr)
        return
    try:
        config = load_config()
        tier = tier_from_env()
    except PinkyError as exc:
        print(f"pinky-mcp: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    import anyio

    try:
        anyio.run(serve, config, tier)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
