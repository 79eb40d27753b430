"""The MCP server that answers while the runtime is prepared, then hands the session to the real server.

The launcher imports this only in `mcp` mode with a runtime that is not ready yet. The standard library is
imported inside the methods that use it, for the reason pinky_runtime_prepare.py gives.
"""

import os
import sys

from pinky_runtime_lookup import LauncherError, entry_script, is_ready, venv_python
from pinky_runtime_prepare import log_path, preparing_now, progress_report, recent_failure, start_preparing

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
STATUS_TOOL = {
    "name": "brain_status",
    "description": ("pinky is preparing its runtime (the first start after installing or updating the plugin). "
                    "Call this to see how long it will take. The brain_* tools (brain_search, brain_save, ...) "
                    "appear in this session by themselves when it is ready."),
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"title": "pinky runtime status", "readOnlyHint": True},
}


class PreparingServer:
    """Speaks just enough MCP while the runtime is prepared, then hands the session to the real server.

    Why: Claude Code gives a stdio server 30 s (MCP_TIMEOUT) to answer `initialize` and drops it after that,
    and `claude -p` sends its first request without waiting for servers at all. A first start installs the
    Python packages, which can take longer. So this answers at once, with one tool (brain_status) and
    tools.listChanged declared; when the runtime is ready it starts the real server, replays the client's
    initialize to it, sends notifications/tools/list_changed, and from then on only passes lines between
    Claude Code and the real server, which lists the brain_* tools (Claude Code lists them again on the
    notification, in the same session).
    """

    def __init__(self, data: str, venv: str) -> None:
        import threading

        self.data, self.venv = data, venv
        self.key = os.path.basename(venv)
        self.mode_lock = threading.Lock()  # guards the switch to the real server
        self.out_lock = threading.Lock()  # one writer at a time on stdout
        self.initialize: dict | None = None  # the client's initialize request, replayed to the real server
        self.child = None  # the real server, once started
        self.problem: str | None = None  # why the real server could not be started

    def serve(self) -> int:
        import threading

        threading.Thread(target=self.watch, daemon=True).start()
        for line in sys.stdin.buffer:
            with self.mode_lock:
                child = self.child
                if child is None:
                    self.answer(line)
                    continue
            child.stdin.write(line)
            child.stdin.flush()
        with self.mode_lock:
            child = self.child
        if child is None:
            return 0
        child.stdin.close()
        return child.wait()

    def send(self, message: dict) -> None:
        import json

        with self.out_lock:
            sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
            sys.stdout.buffer.flush()

    def answer(self, line: bytes) -> None:
        """One client message, answered as the stand-in server."""
        import json

        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return  # notifications need no answer
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            self.initialize = message
            requested = params.get("protocolVersion")
            result = {"protocolVersion": requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                      "capabilities": {"tools": {"listChanged": True}},
                      "serverInfo": {"name": "pinky", "version": "preparing"},
                      "instructions": "pinky's memory tools (brain_*) appear when its runtime is ready; "
                                      "until then brain_status says how long that takes."}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [STATUS_TOOL]}
        elif method == "tools/call":
            text, failed = self.status()
            result = {"content": [{"type": "text", "text": text}],
                      "isError": failed or params.get("name") != STATUS_TOOL["name"]}
        else:
            self.send({"jsonrpc": "2.0", "id": message["id"],
                       "error": {"code": -32601, "message": f"{method} is not available while pinky prepares"}})
            return
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def status(self) -> tuple[str, bool]:
        """brain_status: what the preparation is doing (its step, for how long, the estimate from the last one on
        this machine), or why it failed, with the line of pip's output that names the cause."""
        failure = self.problem or (None if is_ready(self.venv) else recent_failure(self.data, self.key, None))
        if failure:
            return (f"pinky could not prepare its runtime: {failure}. Log: {log_path(self.data)}. Fix that, then "
                    "run `pinky` in the shell (it prepares in the foreground) or start a new session.", True)
        report, left = progress_report(self.data, self.key)
        return (f"pinky is preparing its runtime (the first start after installing or updating the plugin installs "
                f"its Python packages). {report} The brain_* tools appear in this session by themselves when it "
                f"is ready: retry in {max(5, round(left))} s. Log: {log_path(self.data)}", False)

    def watch(self) -> None:
        """Wait for the runtime, then switch to the real server (or keep answering if preparing failed)."""
        import threading
        import time

        polls = 0
        while not (is_ready(self.venv) and self.initialize is not None):
            time.sleep(0.5)
            polls += 1
            if polls % 20 == 0 and not is_ready(self.venv) and not preparing_now(self.data):
                if recent_failure(self.data, self.key, max_age=None):
                    return  # brain_status reports it
                start_preparing(self.data, self.key)  # the preparing process died without a word
        try:
            child = self.start_real_server()
        except (OSError, LauncherError) as exc:
            self.problem = f"the MCP server did not start: {exc}"
            sys.stderr.write(f"pinky-mcp: {self.problem}\n")
            return
        with self.mode_lock:
            self.child = child
            threading.Thread(target=self.relay, args=(child,), daemon=True).start()
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def start_real_server(self):  # noqa: ANN201 - a subprocess.Popen
        import json
        import subprocess

        python = venv_python(self.venv)
        child = subprocess.Popen([python, entry_script(), self.data, "mcp"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        replay = {**(self.initialize or {}), "id": "pinky-launcher-initialize"}
        child.stdin.write(json.dumps(replay).encode() + b"\n")
        child.stdin.flush()
        for line in child.stdout:
            try:
                if json.loads(line).get("id") == replay["id"]:
                    break
            except (ValueError, AttributeError):
                continue
        else:
            raise LauncherError(f"it exited with {child.wait()} before answering initialize")
        child.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        child.stdin.flush()
        return child

    def relay(self, child) -> None:  # noqa: ANN001 - a subprocess.Popen
        """Copy the real server's messages to Claude Code; when it exits, so does this process."""
        for line in child.stdout:
            with self.out_lock:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
        sys.stderr.flush()
        os._exit(child.wait())
