"""What the MCP tests share: the real `pinky-mcp` process driven line by line, its environment,
and the same server in-process behind the SDK's in-memory client.

A plain module (not a test file): test modules import it, never each other.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from helpers import console_script

TIMEOUT = 30.0


def server_env(root: Path, **extra: str) -> dict[str, str]:
    """A hermetic environment: everything under `root`, the hashing embedder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE", "RUST_LOG"))}
    env.update(PINKY_HOME=str(root / "home"), PINKY_DB=str(root / "brain.db"),
               PINKY_SAVE_DIR=str(root / "documentation"), PINKY_HASH_EMBED="1")
    env.update(extra)
    return env


class RawServer:
    """The real `pinky-mcp` process driven one JSON line at a time."""

    def __init__(self, root: Path, *, prefix: tuple[str, ...] = (), **extra_env: str) -> None:
        """`prefix`: a command the server runs under (tests/readonly_helpers.py: without root's powers)."""
        self.root = root
        self.stderr_path = root / f"stderr-{id(self)}.log"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([*prefix, *console_script("pinky-mcp")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=server_env(root, **extra_env), cwd=root)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.other: list[dict[str, Any]] = []  # messages that were not the awaited answer
        self.raw_stdout: list[bytes] = []
        self._next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise EOFError(f"server closed stdout; stderr:\n{self.stderr()}")
        return json.loads(line)

    def answer(self, request_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The reply to `request_id`; replies to other ids that arrive first are kept for later."""
        matches = lambda m: m.get("id") == request_id and type(m.get("id")) is type(request_id)  # noqa: E731
        for n, message in enumerate(self.other):
            if matches(message):
                return self.other.pop(n)
        while True:
            message = self.receive(timeout)
            if matches(message):
                return message
            self.other.append(message)

    def request(self, method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> dict[str, Any]:
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message))
        return self.answer(request_id)

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "pytest", "version": "1"}})
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return reply

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in reply, reply
        return reply["result"]

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self, timeout: float = TIMEOUT) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self._stderr.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the same server in this process ------------------------------------------------------------


def hermetic_config(root: Path, **overrides: Any) -> Any:
    """The configuration `server_env(root)` gives the real process: everything under `root`."""
    from pinky.config import load_config

    return load_config(home=root / "home", db=root / "brain.db", save_dir=root / "documentation", **overrides)


@asynccontextmanager
async def in_process(root: Path, tier: str = "write", *, mode: str = "legacy",
                     **overrides: Any) -> AsyncIterator[tuple[Any, Any]]:
    """(client, runtime): the server of `tier` built in this process over a fresh Runtime on `root`,
    behind the SDK's in-memory client. The server's lifespan starts and stops the runtime."""
    from mcp import Client

    from pinky.mcp.server import build_server
    from pinky.runtime.process import Runtime

    runtime = Runtime(hermetic_config(root, **overrides))
    app = build_server(runtime, tier)
    async with Client(app, mode=mode, read_timeout_seconds=TIMEOUT) as client:  # type: ignore[arg-type]
        yield client, runtime


def wait_for(check: Callable[[], Any], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


# --- a busy machine, for the MCP SDK only ---------------------------------------------------------


SLOW_SDK = '''"""Test helper (tests/support/mcp_helpers.py): `import mcp` waits PINKY_TEST_SLOW_SDK seconds, then
touches
PINKY_TEST_SDK_MARKER: the MCP SDK taking seconds to import, as on a busy machine."""
import os
import sys
import time


class _SlowSDK:
    done = False

    def find_spec(self, name, path=None, target=None):
        if name == "mcp" and not self.done:
            self.done = True
            time.sleep(float(os.environ["PINKY_TEST_SLOW_SDK"]))
            open(os.environ["PINKY_TEST_SDK_MARKER"], "a").close()
        return None


sys.meta_path.insert(0, _SlowSDK())
'''


def slow_sdk_env(folder: Path, seconds: float = 4.0) -> dict[str, str]:
    """Environment entries under which every Python process takes `seconds` to import the MCP SDK and then
    creates the returned PINKY_TEST_SDK_MARKER file (a sitecustomize on PYTHONPATH)."""
    site = folder / "slow-sdk"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SLOW_SDK)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "PINKY_TEST_SLOW_SDK": str(seconds),
            "PINKY_TEST_SDK_MARKER": str(folder / "sdk-imported")}


# --- processes: which are whose, which still run (Linux /proc) ----------------------------------------------------


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def descendants_of(pid: int) -> list[int]:
    found = children_of(pid)
    for child in list(found):
        found += descendants_of(child)
    return found


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
