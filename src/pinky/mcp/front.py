"""pinky-mcp's front: `initialize` and `tools/list` answered within milliseconds of the spawn, then a relay.

Why: the real server (pinky.mcp.server) imports the MCP SDK and pydantic before it can answer anything. That
takes 0.4 s on a quiet machine and took 6 s on a busy 2-core one, while `claude -p` waits about 5 s for its MCP
servers and then runs the turn without their tools.

How: the console script starts here, with the standard library only. It answers `initialize` and `tools/list`
itself, from a cache of what the real server answered the last time (so the answers cannot differ from its own;
pinky.mcp.answer_cache), or before there is one from the answers shipped in the package (pinky.mcp.answers: the
first start after an install or update, on a busy machine, must list the tools too). Only then does it start the
real server (`python -P -m pinky.mcp.server`, stderr shared): when the cached tool list is out, on the first message
the cache cannot answer, or IDLE_START seconds after a cached `initialize` (the two processes would otherwise
compete for the CPU while the client waits for its tool list; with stdin closed at once none is started). It passes
lines between the real server and the client from then on. The real server gets the client's `initialize` (its own
answer is dropped: the client has one) and the front asks it for `tools/list` once: when the answer differs from the
cache (an edit the key missed), the cache is rewritten and, if the cached list was served,
`notifications/tools/list_changed` makes the client list again. Without a valid cache (the first start of an install
or after an update) the shipped answers are served, and the cache is written for the next start.

A cache that cannot be trusted is ignored (everything relayed) and rewritten. The real server dies with the
front (pinky.mcp.lifeline).

Arguments (--help, --version) go to the real server's main() in this process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from pinky.base.locations import ENV_TIER
from pinky.mcp.answer_cache import cache_path, current_signature, read_cache, write_cache

PROBE_ID = "pinky-front-tools-list"  # the id of the front's own tools/list request to the real server
TIERS = ("", "read", "write", "admin")  # PINKY_TIER values the real server takes (pinky.mcp.tiers; "": the default)
IDLE_START = 0.3  # seconds after a cached initialize with nothing more from the client: start the real server
CHUNK = 1 << 16

TYPE_CHECKING = False  # not typing's: importing typing took a third of the front's start (mypy knows the name)
if TYPE_CHECKING:
    import subprocess


def main() -> int:
    if [arg for arg in sys.argv[1:] if arg != "--stdio"]:
        from pinky.mcp import server

        server.main()
        return 0
    return Front().serve()


# --- the relay --------------------------------------------------------------------------------------------

SERVED, HELD = "served", "held"  # what answer() did with a line: answered it, or answered it and keeps it


class Front:
    """The relay between the client (stdin/stdout) and the real server (a child process); see the module's
    docstring. The client's lines are read on the main thread (which alone starts the real server), the real
    server's on another."""

    def __init__(self) -> None:
        self.path, self.signature = cache_path(), current_signature()
        self.lock = threading.Lock()  # guards the state below and the client's output
        self.child_lock = threading.Lock()  # one writer at a time on the real server's input
        self.child: subprocess.Popen[bytes] | None = None  # the real server, once started
        self.held: list[bytes] = []  # the client's lines read before the real server started
        self.start_by: float | None = None  # when to start the real server if the client says nothing more
        self.watching = True  # until the real server answered the front's own tools/list
        self.probed = threading.Event()  # set then
        self.version: str | None = None  # the protocol version the client asked for in initialize
        self.init_id: object = None  # the client's initialize request's id
        self.answered_init = False  # the front answered it from the cache: drop the real server's answer
        self.served_tools: object = None  # the cached tools/list result the front served, if it did
        self.fresh: dict = {}  # the real server's answers, for the cache
        self.cache: dict = {}  # what the front serves: the stored answers, else the shipped ones
        self.stored: dict = {}
        self.writer: threading.Thread | None = None  # writing the cache

    def serve(self) -> int:
        from pinky.mcp import lifeline

        if lifeline.ENV in os.environ:
            lifeline.hold()  # started by the plugin's stand-in server: die with it, and the real server with us
        from pinky.mcp.answers import shipped

        tier = (os.environ.get(ENV_TIER) or "").strip().lower()
        self.stored = read_cache(self.path, self.signature)  # this install's own answers, when a session wrote them
        ready = shipped(tier) if tier in TIERS else {}  # else the package's (pinky.mcp.answers): the first start too
        self.cache = {part: {**ready.get(part, {}), **self.stored.get(part, {})} for part in ("initialize", "tools")}
        self.cache["static"] = ready.get("static", {})  # prompts and resources (answers.STATIC), the package's
        if tier not in TIERS:
            self.start_child()  # it says what is wrong and exits, even to a client that says nothing
        try:
            self.read_client()
            if self.child is None:
                return 0  # the client only initialized (answered from the cache), or said nothing at all
            if self.init_id is not None and self.version not in self.stored.get("tools", {}):
                self.probed.wait()  # the client is done; the cache still needs the real server's answers
        except KeyboardInterrupt:
            pass
        finally:
            self.close_child_input()
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()  # relay() ends the process when the real server is done
        return 0

    def read_client(self) -> None:
        """The client's messages, until its end of input; a partial line is kept until it is complete."""
        pending = b""
        while True:
            if self.child is None and self.start_by is not None and not self.readable(self.start_by):
                self.start_child()
            chunk = os.read(0, CHUNK)
            if not chunk:
                break
            if self.child is not None and not self.watching and not pending:
                self.to_child(chunk)  # the common case: passed on as read
                continue
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self.from_client(line + b"\n")
        if pending.strip():
            self.from_client(pending)

    @staticmethod
    def readable(deadline: float) -> bool:
        import select
        import time

        wait = deadline - time.monotonic()
        return wait > 0 and bool(select.select([0], [], [], wait)[0])

    def from_client(self, line: bytes) -> None:
        verdict = None
        if self.watching and (b'"initialize"' in line or b'/list"' in line or b'"server/discover"' in line):
            verdict = self.answer(line)
        elif self.watching and self.init_id is None and b'"method"' in line and b'"id"' in line:
            self.watching = False  # opened with a request the front does not know: relay all
        if self.child is not None:
            if verdict != SERVED:
                self.to_child(line)
            return
        if verdict != SERVED:
            self.held.append(line)
        if verdict == SERVED or (verdict != HELD and b'"id"' in line):
            self.start_child()  # the tools are listed, or a request the real server must answer
        elif self.start_by is None:
            import time

            self.start_by = time.monotonic() + IDLE_START

    def start_child(self) -> None:
        """Start the real server (it dies with this process: pinky.mcp.lifeline) and give it the lines held."""
        import subprocess

        from pinky.mcp.lifeline import open_lifeline

        env = dict(os.environ)
        lifeline = open_lifeline(env)
        try:
            self.child = subprocess.Popen([sys.executable, "-P", "-m", "pinky.mcp.server"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, bufsize=0, env=env, pass_fds=(lifeline,))
        finally:
            os.close(lifeline)
        threading.Thread(target=self.relay, daemon=True).start()
        held, self.held = self.held, []
        for line in held:
            self.to_child(line)

    def answer(self, line: bytes) -> str | None:
        """Answer initialize from the cache (HELD: the real server needs it too), tools/list and the static lists
        (SERVED) while the real server has not answered the front's own; refuse server/discover (SERVED)."""
        import json

        try:
            message = json.loads(line)
        except ValueError:
            return None
        if not isinstance(message, dict) or "id" not in message:
            return None
        method, params = message.get("method"), message.get("params") or {}
        if not isinstance(params, dict):
            return None
        with self.lock:
            if not self.watching:
                return None
            if method == "server/discover" and self.init_id is None:  # the 2026-07-28 protocol's opening: refused and
                # not forwarded, both sides fall back to `initialize` (Copilot CLI 1.0.102 failed if this came late)
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no method"}})
                return SERVED
            if method == "initialize" and self.init_id is None:
                self.init_id = message["id"]
                self.version = str(params.get("protocolVersion") or "")
                cached = self.cache.get("initialize", {}).get(self.version)
                if cached is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": cached})
                    self.answered_init = True
                    return HELD
                return None
            if method == "tools/list" and self.version is not None and "cursor" not in params:
                cached = self.cache.get("tools", {}).get(self.version)
                if cached is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": cached})
                    self.served_tools = cached
                    return SERVED
            if method in self.cache.get("static", {}) and self.version is not None and "cursor" not in params:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.cache["static"][method]})
                return SERVED
        return None

    def relay(self) -> None:
        """Copy the real server's output to the client, keeping back its answers to the initialize the front
        answered and to the front's own tools/list; when the real server exits, so does this process."""
        assert self.child is not None and self.child.stdout is not None
        fd, pending = self.child.stdout.fileno(), b""
        while chunk := os.read(fd, CHUNK):
            if not self.watching and not pending:
                self.emit(chunk)  # the common case: passed on as read
                continue
            *lines, pending = (pending + chunk).split(b"\n")
            kept = [line + b"\n" for line in lines if not self.kept_back(line)]
            if not self.watching:
                kept.append(pending)
                pending = b""
            self.emit(b"".join(kept))
        self.emit(pending)
        sys.stderr.flush()
        if self.writer is not None:
            self.writer.join(10)  # the cache for the next start, whose first answers it is
        os._exit(self.child.wait())

    def kept_back(self, line: bytes) -> bool:
        import json

        if not (self.watching and line.startswith(b"{") and b'"id"' in line):
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict):
            return False
        with self.lock:
            if self.init_id is not None and message.get("id") == self.init_id and "initialize" not in self.fresh:
                self.fresh["initialize"] = message.get("result")
                probe = json_line({"jsonrpc": "2.0", "id": PROBE_ID, "method": "tools/list"})
                # Not from this thread: if the main thread is blocked writing to a full pipe, this one must
                # keep reading the real server's output or both would wait for ever.
                threading.Thread(target=self.to_child, args=(probe,), daemon=True).start()
                return self.answered_init
            if message.get("id") == PROBE_ID:
                self.check_tools(message.get("result"))
                return True
        return False

    def check_tools(self, tools: object) -> None:
        """The real server's tools/list is in: rewrite a cache that differs; tell the client to list again
        if it got a different list from the cache. Called under the lock."""
        self.watching = False
        self.probed.set()
        initialize, version = self.fresh.get("initialize"), self.version or ""
        if not isinstance(tools, dict) or not isinstance(initialize, dict):
            return
        if self.served_tools is not None and self.served_tools != tools:
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        known_init, known_tools = self.stored.get("initialize", {}), self.stored.get("tools", {})
        if known_init.get(version) != initialize or known_tools.get(version) != tools:
            answers = {"initialize": {**known_init, version: initialize}, "tools": {**known_tools, version: tools}}
            self.writer = threading.Thread(target=write_cache, args=(self.path, self.signature, answers))
            self.writer.start()

    def send(self, message: dict) -> None:  # to the client, under the lock
        _write_all(1, json_line(message))

    def emit(self, data: bytes) -> None:  # the real server's output, to the client
        if data:
            with self.lock:
                _write_all(1, data)

    def to_child(self, data: bytes) -> None:
        assert self.child is not None and self.child.stdin is not None
        with self.child_lock, contextlib.suppress(BrokenPipeError, ValueError):  # it exited: relay() ends this one
            _write_all(self.child.stdin.fileno(), data)

    def close_child_input(self) -> None:
        if self.child is not None and self.child.stdin is not None:
            with self.child_lock, contextlib.suppress(BrokenPipeError):
                self.child.stdin.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BrokenPipeError:
            if fd == 1:  # the client has gone: so does this process, and with it the real server
                os._exit(0)
            raise


def json_line(message: dict) -> bytes:
    import json

    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


if __name__ == "__main__":
    sys.exit(main())
