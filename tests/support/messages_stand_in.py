"""A loopback stand-in for the Anthropic Messages API, so a real Claude Code session runs offline.

Claude Code (the real CLI) is pointed at it with ANTHROPIC_BASE_URL=http://127.0.0.1:<port>. Instead of a
model it plays a script: a JSON list of tool calls, one per turn, then a final "Done.".

    python tests/support/messages_stand_in.py serve LOGDIR SCRIPT.json [PORT]    # prints the port, then serves
    python tests/support/messages_stand_in.py run LOGDIR SCRIPT.json -- claude -p ...   # serves while claude runs

SCRIPT.json: [{"tool": "brain_save", "input": {...}, "wait": 90}, {"tool": "Read", "input": {"file_path": "/abs/x.py"}}]
A name matches an offered tool exactly or as the part after "__", so an MCP tool matches whatever server
prefix Claude Code gives it (mcp__plugin_pinky_pinky__brain_save). "wait": see next_block.

What Claude Code 2.1.197 needs from the API, and what this reproduces:
- POST /v1/messages with "stream": true, answered as server-sent events: message_start, content_block_start,
  content_block_delta (text_delta, or input_json_delta carrying the tool input), content_block_stop,
  message_delta (stop_reason), message_stop. A tool call is one tool_use block with stop_reason "tool_use".
- Side requests (session titles, summaries) come without the Read tool in "tools"; they get plain text and do
  not advance the script.
- POST /v1/messages/count_tokens gets {"input_tokens": n}.
- Claude Code 2.1.337 defers MCP tools: a request names them (in its text, for the ToolSearch tool) without
  offering their schemas, and a tool becomes callable after a `ToolSearch` call with the query
  `select:<full name>`. A step whose tool is only named that way is preceded by that one ToolSearch call, as a
  model that read the names would make; ToolSearch calls do not count as script steps.
Every request body is written to LOGDIR/NNN.json, so a test can read what the model was shown (hook context
in the user turn, MCP tool results).
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_SEARCH = "ToolSearch"  # Claude Code's loader of deferred tools
DEFERRED = re.compile(r"mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_]+")
WAIT_ID = "toolu_wait"  # tool calls the stand-in makes up while it waits for a tool to appear
WAIT_CALL = {"tool": "Bash", "input": {"command": "sleep 1", "description": "wait for the tool to appear"}}


def scripted_calls(body: dict[str, Any]) -> tuple[int, int]:
    """(script steps already played, waiting calls made since the last one), read from the conversation."""
    played = waited = 0
    for message in body.get("messages", []):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                if block.get("name") == TOOL_SEARCH:
                    continue  # loading a deferred tool is not a step of the script
                if str(block.get("id", "")).startswith(WAIT_ID):
                    waited += 1
                else:
                    played, waited = played + 1, 0
    return played, waited


def deferred_name(want: str, body: dict[str, Any]) -> str | None:
    """The full name of an MCP tool `want` (brain_save) that the request names without offering it: a deferred
    tool, callable once ToolSearch has loaded it."""
    return next((name for name in DEFERRED.findall(json.dumps(body)) if name.endswith("__" + want)), None)


def searched(body: dict[str, Any], name: str) -> bool:
    """Whether the conversation already holds a ToolSearch call that loads `name`."""
    return any(isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == TOOL_SEARCH
               and name in json.dumps(block.get("input"))
               for message in body.get("messages", []) if isinstance(message.get("content"), list)
               for block in message["content"])


def offered_name(want: str, offered: list[str]) -> str | None:
    """The offered tool `want` names: itself, or an MCP tool whose name ends in `__<want>`."""
    return next((name for name in offered if name == want or name.endswith("__" + want)), None)


def next_block(body: dict[str, Any], script: list[dict[str, Any]], tool_id: str) -> dict[str, Any]:
    """The assistant's one content block for this request: the next scripted tool call, or closing text.

    A step with "wait": N (seconds) waits until its tool is offered: until then, and for at most N turns,
    the stand-in calls `sleep 1` through Bash (the session must allow Bash(sleep:*)). MCP tools of a server
    that is still starting appear in a later request, like this."""
    offered = [tool.get("name", "") for tool in body.get("tools") or []]
    if "Read" not in offered:  # a side request (title, summary): never a tool call
        return {"type": "text", "text": "pinky test session"}
    played, waited = scripted_calls(body)
    if played >= len(script):
        return {"type": "text", "text": "Done."}
    step = script[played]
    name = offered_name(step["tool"], offered)
    deferred = deferred_name(step["tool"], body) if name is None and TOOL_SEARCH in offered else None
    if deferred and not searched(body, deferred):
        return {"type": "tool_use", "id": tool_id, "name": TOOL_SEARCH, "input": {"query": f"select:{deferred}"}}
    name = name or deferred
    if name is None and waited < step.get("wait", 0):
        return {"type": "tool_use", "id": f"{WAIT_ID}_{tool_id}", "name": "Bash", "input": WAIT_CALL["input"]}
    return {"type": "tool_use", "id": tool_id, "name": name or step["tool"], "input": step["input"]}


def sse_events(message: dict[str, Any], block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The event stream Claude Code parses for one assistant message holding `block`."""
    if block["type"] == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    return [
        ("message_start", {"type": "message_start",
                           "message": {**message, "content": [], "stop_reason": None}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                           "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ]


class StandIn(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, logdir: Path, script: list[dict[str, Any]], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.logdir, self.script = logdir, script
        self.counter = itertools.count()
        self.lock = threading.Lock()
        logdir.mkdir(parents=True, exist_ok=True)

    def log_request_body(self, path: str, body: dict[str, Any]) -> int:
        with self.lock:
            number = next(self.counter)
        (self.logdir / f"{number:03d}.json").write_text(json.dumps({"path": path, "body": body}), encoding="utf-8")
        return number


class Handler(BaseHTTPRequestHandler):
    server: StandIn

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # stdout carries the port only

    def do_GET(self) -> None:
        self.send_error(404)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        number = self.server.log_request_body(self.path, body)
        if self.path.startswith("/v1/messages/count_tokens"):
            self.send_json({"input_tokens": 100})
        elif self.path.startswith("/v1/messages"):
            self.answer_message(body, f"toolu_{number:04d}standin")
        else:
            self.send_error(404)

    def answer_message(self, body: dict[str, Any], tool_id: str) -> None:
        block = next_block(body, self.server.script, tool_id)
        message = {"id": "msg_" + tool_id, "type": "message", "role": "assistant", "model": body.get("model", "m"),
                   "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
                   "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
        if not body.get("stream"):
            self.send_json(message)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for name, data in sse_events(message, block):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    def send_json(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def requests_logged(logdir: Path) -> list[dict[str, Any]]:
    """Every logged request, in arrival order: {"path": ..., "body": ...}."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(logdir.glob("*.json"))]


def run_session(logdir: Path, script: list[dict[str, Any]], command: list[str]) -> int:
    """Serve on a free loopback port while `command` runs with ANTHROPIC_BASE_URL pointing here.

    The command's stdout passes through; LOGDIR/timing.json gets the seconds from its start to the first
    system/init event of a stream-json output and to its exit. One process holds both ends, so the pair can
    run inside a network namespace of its own (unshare -n)."""
    import os
    import subprocess
    import time

    server = StandIn(logdir, script)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}"}
    started, init_at = time.monotonic(), None
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE)
    assert child.stdout is not None
    for line in child.stdout:
        if init_at is None and b'"subtype":"init"' in line:
            init_at = time.monotonic() - started
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    returncode = child.wait()
    timing = {"init": init_at, "end": time.monotonic() - started}
    (logdir / "timing.json").write_text(json.dumps(timing), encoding="utf-8")
    server.shutdown()
    return returncode


USAGE = """usage: messages_stand_in.py serve LOGDIR SCRIPT.json [PORT]   (prints the port, serves until killed)
       messages_stand_in.py run LOGDIR SCRIPT.json -- COMMAND...  (serves while COMMAND runs)"""


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("serve", "run"):
        print(USAGE, file=sys.stderr)
        return 2
    logdir, script = Path(argv[1]), json.loads(Path(argv[2]).read_text(encoding="utf-8"))
    if argv[0] == "run":
        if len(argv) < 5 or argv[3] != "--":
            print(USAGE, file=sys.stderr)
            return 2
        return run_session(logdir, script, argv[4:])
    server = StandIn(logdir, script, int(argv[3]) if len(argv) > 3 else 0)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
