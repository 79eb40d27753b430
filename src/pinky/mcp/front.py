"""pinky-mcp's front: `initialize` and `tools/list` answered within milliseconds of the spawn, then a relay.

Why: the real server (pinky.mcp.server) imports the MCP SDK and pydantic before it can answer anything. That
takes 0.4 s on a quiet machine and took 6 s on a busy 2-core one, while `claude -p` waits about 5 s for its MCP
servers and then runs the turn without their tools.

How: the console script starts here, with the standard library only. It spawns the real server at once
(`python -P -m pinky.mcp.server`, stderr shared) and passes lines between it and the client. While the real
server is still starting, the front answers `initialize` and `tools/list` itself, from a cache of what the real
server answered the last time (so the answers cannot differ from its own): $PINKY_HOME/cache/mcp/<install>.json,
one file per installation and PINKY_TIER, with one answer per protocol version, and valid only while every file
of the pinky package and the SDK's packages keeps its size and mtime. The real server's own answer to the
client's `initialize` is then dropped (the client has one), and the front asks it for `tools/list` once: when
the answer differs from the cache (an edit the key missed), the cache is rewritten and, if the cached list was
served, `notifications/tools/list_changed` makes the client list again. Without a valid cache (the first start
of an install or after an update) everything is relayed, and the cache is written for the next start.

Arguments (--help, --version) go to the real server's main() in this process.
"""

from __future__ import annotations

import os
import sys
import threading

from pinky.base.locations import ENV_HOME, ENV_TIER, default_home

CACHE_FORMAT = 1
PROBE_ID = "pinky-front-tools-list"  # the id of the front's own tools/list request to the real server
SDK_PACKAGES = ("mcp", "mcp_types", "pydantic", "pydantic_core")  # what else shapes the answers

TYPE_CHECKING = False  # not typing's: importing typing took a third of the front's start (mypy knows the name)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping


def main() -> int:
    if [arg for arg in sys.argv[1:] if arg != "--stdio"]:
        from pinky.mcp import server

        server.main()
        return 0
    return Front().serve()


# --- the cache --------------------------------------------------------------------------------------------


def _crc(text: str) -> str:
    import zlib

    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}{len(text):x}"


def package_signature(folders: list[str]) -> str:
    """Size and mtime of every .py file under `folders` (a missing one counts as such): what a cached answer
    depends on. Stats only; about 1 ms for pinky and the SDK."""
    lines: list[str] = []
    for folder in folders:
        _stat_tree(folder, lines)
    return _crc("\n".join(lines))


def _stat_tree(folder: str, lines: list[str]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        lines.append(f"{folder} -")
        return
    for entry in entries:
        if entry.name == "__pycache__":
            continue
        if entry.is_dir(follow_symlinks=False):
            _stat_tree(entry.path, lines)
        elif entry.name.endswith(".py"):
            info = entry.stat()
            lines.append(f"{entry.path} {info.st_size} {info.st_mtime_ns}")


def _sdk_markers() -> list[str]:
    """The __init__.py of each SDK package, found the way import would find it (a reinstall rewrites it)."""
    found = []
    for name in SDK_PACKAGES:
        for entry in sys.path:
            init = os.path.join(entry or ".", name, "__init__.py")
            if os.path.isfile(init):
                info = os.stat(init)
                found.append(f"{init} {info.st_size} {info.st_mtime_ns}")
                break
    return found


def cache_path(env: Mapping[str, str] | None = None) -> str:
    """This installation's cache file for the tier the environment asks for."""
    env = os.environ if env is None else env
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tier = (env.get(ENV_TIER) or "").strip().lower()
    home = env.get(ENV_HOME) or default_home()
    return os.path.join(os.path.expanduser(home), "cache", "mcp", f"{_crc(package + chr(0) + sys.executable)}-"
                                                                 f"{tier or 'default'}.json")


def current_signature() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return _crc(package_signature([package]) + "\n".join(_sdk_markers()) + sys.version)


def read_cache(path: str, signature: str) -> dict:
    """{"initialize": {version: result}, "tools": {version: result}} when the file is valid for `signature`."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            cache = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(cache, dict) or cache.get("format") != CACHE_FORMAT or cache.get("signature") != signature:
        return {}
    return {part: cache[part] for part in ("initialize", "tools") if isinstance(cache.get(part), dict)}


def write_cache(path: str, signature: str, answers: dict) -> None:
    import json

    from pinky.base.fileio import atomic_write

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, json.dumps({"format": CACHE_FORMAT, "signature": signature, **answers}))
    except OSError as exc:  # only a cache: the next start relays again
        sys.stderr.write(f"pinky-mcp: could not write {path}: {exc}\n")


# --- the relay --------------------------------------------------------------------------------------------


class Front:
    """The relay between the client (stdin/stdout) and the real server (a child process); see the module's
    docstring. The client's lines are read on the main thread, the real server's on another."""

    def __init__(self) -> None:
        self.path, self.signature = cache_path(), current_signature()
        self.lock = threading.Lock()  # guards the state below and the client's output
        self.child_lock = threading.Lock()  # one writer at a time on the real server's input
        self.child: subprocess.Popen[bytes] | None = None  # the real server
        self.watching = True  # until the real server answered the front's own tools/list
        self.probed = threading.Event()  # set then
        self.version: str | None = None  # the protocol version the client asked for in initialize
        self.init_id: object = None  # the client's initialize request's id
        self.answered_init = False  # the front answered it from the cache: drop the real server's answer
        self.served_tools: object = None  # the cached tools/list result the front served, if it did
        self.fresh: dict = {}  # the real server's answers, for the cache
        self.cache: dict = {}

    def serve(self) -> int:
        import subprocess

        self.child = subprocess.Popen([sys.executable, "-P", "-m", "pinky.mcp.server"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, bufsize=0)
        threading.Thread(target=self.relay, daemon=True).start()
        self.cache = read_cache(self.path, self.signature)
        try:
            for line in sys.stdin.buffer:
                if self.watching and (b'"initialize"' in line or b'"tools/list"' in line) and self.answer(line):
                    continue
                self.to_child(line)
            if self.init_id is not None:
                self.probed.wait()  # the client is done; the cache may still need the real server's answer
        except KeyboardInterrupt:
            pass
        finally:
            self.close_child_input()
        try:
            threading.Event().wait()  # relay() ends the process when the real server is done
        except KeyboardInterrupt:
            pass
        return 0

    def answer(self, line: bytes) -> bool:
        """Note an initialize request (and answer it from the cache); answer tools/list from the cache while
        the real server starts. True when the line must not go to the real server."""
        import json

        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "id" not in message:
            return False
        method, params = message.get("method"), message.get("params") or {}
        if not isinstance(params, dict):
            return False
        with self.lock:
            if method == "initialize" and self.init_id is None:
                self.init_id = message["id"]
                self.version = str(params.get("protocolVersion") or "")
                cached = self.cache.get("initialize", {}).get(self.version)
                if cached is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": cached})
                    self.answered_init = True
                return False  # the real server needs it too
            if method == "tools/list" and self.version is not None and "cursor" not in params:
                cached = self.cache.get("tools", {}).get(self.version)
                if cached is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": cached})
                    self.served_tools = cached
                    return True
        return False

    def relay(self) -> None:
        """Copy the real server's lines to the client, keeping back its answers to the initialize the front
        answered and to the front's own tools/list; when the real server exits, so does this process."""
        import json

        assert self.child is not None and self.child.stdout is not None
        for line in self.child.stdout:
            if self.watching and line.startswith(b"{") and b'"id"' in line:
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if isinstance(message, dict) and self.kept_back(message):
                    continue
            with self.lock:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(self.child.wait())

    def kept_back(self, message: dict) -> bool:
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
        known_init, known_tools = self.cache.get("initialize", {}), self.cache.get("tools", {})
        if known_init.get(version) != initialize or known_tools.get(version) != tools:
            answers = {"initialize": {**known_init, version: initialize}, "tools": {**known_tools, version: tools}}
            threading.Thread(target=write_cache, args=(self.path, self.signature, answers)).start()

    def send(self, message: dict) -> None:
        """A message to the client (called under the lock)."""
        sys.stdout.buffer.write(json_line(message))
        sys.stdout.buffer.flush()

    def to_child(self, line: bytes) -> None:
        assert self.child is not None and self.child.stdin is not None
        with self.child_lock:
            try:
                self.child.stdin.write(line)
            except (BrokenPipeError, ValueError):
                pass  # it exited: relay() ends this process with its exit code

    def close_child_input(self) -> None:
        assert self.child is not None and self.child.stdin is not None
        with self.child_lock:
            try:
                self.child.stdin.close()
            except BrokenPipeError:
                pass


def json_line(message: dict) -> bytes:
    import json

    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


if __name__ == "__main__":
    sys.exit(main())
