"""The MCP server that answers while the runtime is prepared, then hands the session to the real server.

The launcher imports this only in `mcp` mode with a runtime that is not ready yet. The standard library is
imported inside the methods that use it, for the reason pinky_runtime_prepare.py gives.
"""

import os
import sys

from pinky_runtime_lookup import LauncherError, entry_script, is_ready, venv_python
from pinky_runtime_prepare import (
    failure_record,
    failure_text,
    log_path,
    preparing_now,
    progress_report,
    start_preparing,
)

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
STATUS_TOOL = {
    "name": "brain_status",
    "description": ("pinky-brain is preparing its runtime (the first start after installing or updating the plugin). "
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

    def __init__(self, data: str, venv: str, started: float, why_not: str = "") -> None:
        import threading

        self.data, self.venv, self.started = data, venv, started  # started: when this session began
        self.why_not = why_not  # why no earlier runtime serves meanwhile (pinky_runtime_previous)
        self.key = os.path.basename(venv)
        self.mode_lock = threading.Lock()  # guards the switch to the real server
        self.out_lock = threading.Lock()  # one writer at a time on stdout
        self.initialize: dict | None = None  # the client's initialize request, replayed to the real server
        self.child = None  # the real server, once started
        self.problem: str | None = None  # why the real server could not be started
        self.version = "?"  # pinky-brain's version, as the real server's initialize answer gives it
        self.lifeline = -1  # the write end of the real server's lifeline, open as long as this process lives

    def serve(self) -> int:
        import threading

        threading.Thread(target=self.watch, daemon=True).start()
        for line in sys.stdin.buffer:
            with self.mode_lock:
                child = self.child
                if child is None:
                    self.answer(line)
                    continue
            if b'"brain_status"' in line and self.answer_status(line):
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
                      "instructions": "pinky-brain's memory tools (brain_*) appear when its runtime is ready; "
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

    def answer_status(self, line: bytes) -> bool:
        """brain_status once the real server serves: the client listed it while the runtime was prepared and
        may call it still (the real server does not have it). True when the line was a call of it."""
        import json

        try:
            message = json.loads(line)
        except ValueError:
            return False
        params = message.get("params") if isinstance(message, dict) else None
        if message.get("method") != "tools/call" or not isinstance(params, dict) or "id" not in message \
                or params.get("name") != STATUS_TOOL["name"]:
            return False
        text = (f"pinky-brain's runtime is ready: version {self.version}, in {self.venv} (Python "
                f"{sys.version.split()[0]}). Its brain_* tools (brain_search, brain_save, ...) serve this session "
                "now; list the tools again if they are not shown.")
        self.send({"jsonrpc": "2.0", "id": message["id"],
                   "result": {"content": [{"type": "text", "text": text}], "isError": False}})
        return True

    def status(self) -> tuple[str, bool]:
        """brain_status: what the preparation is doing (its step, for how long, the estimate from the last one on
        this machine), or why it failed, with the line of pip's output that names the cause."""
        if self.problem:
            return f"pinky-brain's runtime is ready but {self.problem}. Start a new session to try again.", True
        record = None if is_ready(self.venv) else failure_record(self.data, self.key)
        if record is not None and record[0] >= self.started:  # this session's try failed (an older one is retried)
            return failure_text(self.data, self.key, record[1]) + ".", True
        report, left = progress_report(self.data, self.key)
        return (f"pinky-brain is preparing its runtime (the first start after installing or updating the plugin "
                f"installs its Python packages). {report} The brain_* tools appear in this session by themselves "
                f"when it is ready: retry in {max(5, round(left))} s.{self.meanwhile()} Log: {log_path(self.data)}",
                False)

    def meanwhile(self) -> str:
        """Why the previous version does not serve until then, when an earlier runtime is there."""
        if not self.why_not or self.why_not.startswith("no earlier"):
            return ""
        return f" The previous version does not serve meanwhile: {self.why_not}."

    def watch(self) -> None:
        """Wait for the runtime, then switch to the real server (or keep answering if preparing failed)."""
        import threading
        import time

        polls = 0
        while not (is_ready(self.venv) and self.initialize is not None):
            time.sleep(0.5)
            polls += 1
            if polls % 20 == 0 and not is_ready(self.venv) and not preparing_now(self.data):
                record = failure_record(self.data, self.key)
                if record is not None and record[0] >= self.started:
                    return  # brain_status reports it
                start_preparing(self.data, self.key, since=self.started)  # the preparing process died silently
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
        # The real server dies with this process, however it ends (pinky.mcp.lifeline): it holds the read end of a
        # pipe whose write end only this process holds. No pid: this thread ends, which PR_SET_PDEATHSIG watches.
        lifeline, self.lifeline = os.pipe()
        env = {**os.environ, "PINKY_MCP_LIFELINE": f"{lifeline}:"}
        try:
            child = subprocess.Popen([python, entry_script(), self.data, "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, pass_fds=(lifeline,))
        finally:
            os.close(lifeline)
        replay = {**(self.initialize or {}), "id": "pinky-launcher-initialize"}
        child.stdin.write(json.dumps(replay).encode() + b"\n")
        child.stdin.flush()
        for line in child.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("id") == replay["id"]:
                info = (answer.get("result") or {}).get("serverInfo") or {}
                self.version = str(info.get("version", "?")) if isinstance(info, dict) else "?"
                break
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
