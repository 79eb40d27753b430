"""A loopback stand-in for the model APIs of Codex CLI, Gemini CLI and OpenCode (and Claude Code's, through
messages_stand_in.py), so the real CLIs run a scripted session offline.

    python tests/support/model_stand_in.py run LOGDIR SCRIPT.json -- COMMAND...

serves on a free loopback port while COMMAND runs; every "{port}" in COMMAND's arguments and environment values
becomes that port (Codex takes its provider's base_url as `-c model_providers.<id>.base_url=...`, Gemini CLI from
GOOGLE_GEMINI_BASE_URL, OpenCode from its config's `{env:...}`). Both ends live in one process tree, so the pair
can run inside a network namespace with loopback only (unshare -n).

SCRIPT.json is a list of tool calls, one per turn, then the closing text "Done.":
[{"tool": "brain_save", "input": {...}, "wait": 30}, ...] ("wait": see `scripted`). A step's name matches an
offered tool exactly or as the part after "__" or "_" of an MCP tool's prefixed name (Codex: `brain_save`
inside the namespace `mcp__pinky`; Gemini: `mcp_pinky_brain_save`; OpenCode: `pinky_brain_save`). The step
is the number of tool calls already in the conversation. A request that offers no tools (a router, a title)
gets text and does not advance the script; a request asking for JSON (Gemini's `responseMimeType`) gets the
smallest object its schema allows. That matters: Gemini CLI's model router asks for
{"complexity_reasoning", "complexity_score"} before every turn and retries an answer that does not parse five
times with backoff, which made a session take ~90 s instead of ~12 s (measured: the same session with "Done." as
the router's answer, 1 min 28 s and five router requests 7-22 s apart).

What each CLI needs (checked with Codex CLI 0.169.0, Gemini CLI 0.61.0, opencode-ai 1.18.33):
- OpenAI Responses, POST /v1/responses (Codex): server-sent events response.created,
  response.output_item.added, response.function_call_arguments.delta or response.output_text.delta,
  response.output_item.done, response.completed (with usage). An MCP server's tools come inside one
  {"type": "namespace", "name": "mcp__<server>", "tools": [...]} entry; the call names the tool and that namespace.
  Tool results come back as `function_call_output` items.
- Chat Completions, POST /v1/chat/completions (OpenCode through an OpenAI-compatible provider): chunks of
  `choices[0].delta` (content, or tool_calls with the arguments as a JSON string), a finish_reason, `[DONE]`.
- Gemini, POST /v1beta/models/<m>:streamGenerateContent?alt=sse (and :generateContent): candidates whose
  content parts are `{"text": ...}` or `{"functionCall": {"name", "args"}}`; tools are `functionDeclarations`.
Every request body is written to LOGDIR/NNN.json as {"path", "body"}, so a test reads what the model was shown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from messages_stand_in import DEFERRED
from messages_stand_in import Handler as MessagesHandler
from messages_stand_in import StandIn as MessagesStandIn

DONE = "Done."
WAIT_COMMAND = "sleep 1  # the stand-in waits for a tool to be offered"
WAIT_CALLS = {"exec_command": {"cmd": WAIT_COMMAND},  # Codex's shell
              "run_shell_command": {"command": WAIT_COMMAND},  # Gemini CLI's
              "bash": {"command": WAIT_COMMAND, "description": "wait"}}  # OpenCode's
BRIDGE_SEARCH, BRIDGE_CALL = "tool_search", "tool_call"  # Qwen Code's loader and caller of deferred tools


def offered_tool(want: str, offered: list[str]) -> str | None:
    """The offered name that `want` means: itself, or an MCP tool whose prefixed name ends in `__want`/`_want`
    (`-want`: Copilot CLI's `pinky-brain_save`)."""
    exact = next((name for name in offered if name == want), None)
    return exact or next((name for name in offered if name.endswith(("__" + want, "_" + want, "-" + want))), None)


def is_wait(arguments: Any) -> bool:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return False
    return isinstance(arguments, dict) and WAIT_COMMAND in arguments.values()


def scripted(script: list[dict[str, Any]], calls: list[Any], offered: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(offered name, input) of the next call, or None when the answer is text. `calls` are the arguments of the
    tool calls already in the conversation. A step with "wait": N whose tool is not offered yet (a CLI that
    sends its first request before an MCP server has started) is preceded by at most N calls of
    `sleep 1` through the CLI's shell tool."""
    waited = 0
    for arguments in calls:
        waited = waited + 1 if is_wait(arguments) else 0
    played = sum(1 for arguments in calls if not is_wait(arguments))
    if not offered or played >= len(script):
        return None
    step = script[played]
    name = offered_tool(step["tool"], offered)
    if name:
        return name, step["input"]
    shell = next((tool for tool in WAIT_CALLS if tool in offered), None)
    return (shell, WAIT_CALLS[shell]) if shell and waited < step.get("wait", 0) else None


# --- OpenAI Responses (Codex CLI) ----------------------------------------------------------------------------

def responses_tools(body: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The tool names offered, and for a tool inside a namespace, that namespace."""
    names: list[str] = []
    spaces: dict[str, str] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                names.append(inner.get("name", ""))
                spaces[inner.get("name", "")] = tool.get("name", "")
        else:
            names.append(tool.get("name", ""))
    return names, spaces


def responses_events(body: dict[str, Any], script: list[dict[str, Any]], number: int) -> list[dict[str, Any]]:
    offered, spaces = responses_tools(body)
    items = body.get("input") if isinstance(body.get("input"), list) else []
    calls = [item.get("arguments") for item in items if isinstance(item, dict) and item.get("type") == "function_call"]
    step = scripted(script, calls, offered)
    if step:
        item: dict[str, Any] = {"id": f"fc_{number}", "type": "function_call", "status": "completed",
                                "call_id": f"call_{number}", "name": step[0], "arguments": json.dumps(step[1])}
        if step[0] in spaces:
            item["namespace"] = spaces[step[0]]
        added = {**item, "status": "in_progress", "arguments": ""}
        delta = {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0,
                 "delta": item["arguments"]}
    else:
        item = {"id": f"msg_{number}", "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": DONE, "annotations": []}]}
        added = {**item, "status": "in_progress", "content": []}
        delta = {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                 "content_index": 0, "delta": DONE}
    response = {"id": f"resp_{number}", "object": "response", "created_at": 0, "model": body.get("model", "m"),
                "status": "in_progress", "output": []}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return [{"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            delta,
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {**response, "status": "completed", "output": [item], "usage": usage}}]


# --- Chat Completions (OpenCode) -----------------------------------------------------------------------------

def bridged(script: list[dict[str, Any]], called: list[tuple[str, Any]], offered: list[str],
            body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Qwen Code 0.24.4 defers MCP tools: the request names them (mcp__pinky__brain_save) for its `tool_search`
    tool without offering their schemas, and the model calls one through `tool_call` ({"name", "arguments"})
    after a `tool_search` with the query `select:<name>`. The next step whose tool is only named that way is that
    search (not a step of the script), then the bridged call."""
    if not {BRIDGE_SEARCH, BRIDGE_CALL} <= set(offered):
        return None
    played = sum(1 for name, arguments in called if name != BRIDGE_SEARCH and not is_wait(arguments))
    if played >= len(script) or offered_tool(script[played]["tool"], offered):
        return None
    want = script[played]["tool"]
    deferred = next((name for name in DEFERRED.findall(json.dumps(body)) if name.endswith("__" + want)), None)
    if deferred is None:
        return None
    if not any(name == BRIDGE_SEARCH and deferred in str(arguments) for name, arguments in called):
        return BRIDGE_SEARCH, {"query": f"select:{deferred}"}
    return BRIDGE_CALL, {"name": deferred, "arguments": script[played]["input"]}


def chat_answer(body: dict[str, Any], script: list[dict[str, Any]], number: int) -> tuple[dict[str, Any], str]:
    """The assistant's delta (content or one tool call) and its finish_reason."""
    offered = [(tool.get("function") or {}).get("name", "") for tool in body.get("tools") or []]
    called = [((call.get("function") or {}).get("name", ""), (call.get("function") or {}).get("arguments"))
              for message in body.get("messages", []) if message.get("role") == "assistant"
              for call in message.get("tool_calls") or []]
    calls = [arguments for name, arguments in called if name != BRIDGE_SEARCH]
    step = bridged(script, called, offered, body) or scripted(script, calls, offered)
    if not step:
        return {"role": "assistant", "content": DONE}, "stop"
    call = {"index": 0, "id": f"call_{number}", "type": "function",
            "function": {"name": step[0], "arguments": json.dumps(step[1])}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


# --- Gemini API (Gemini CLI) ---------------------------------------------------------------------------------

def smallest(schema: dict[str, Any]) -> Any:
    """The smallest value a JSON schema (Gemini's responseSchema or responseJsonSchema) accepts."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: smallest(properties.get(name) or {}) for name in schema.get("required") or properties}
    return {"array": [], "string": "stand-in", "boolean": False, "integer": 1, "number": 1}.get(kind)


def gemini_part(body: dict[str, Any], script: list[dict[str, Any]]) -> dict[str, Any]:
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        return {"text": json.dumps(smallest(schema))}
    offered = [declaration.get("name", "") for tool in body.get("tools") or []
               for declaration in tool.get("functionDeclarations") or []]
    calls = [part["functionCall"].get("args") for content in body.get("contents", [])
             for part in content.get("parts") or [] if "functionCall" in part]
    step = scripted(script, calls, offered)
    return {"functionCall": {"name": step[0], "args": step[1]}} if step else {"text": DONE}


class Handler(MessagesHandler):
    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/").endswith("/models"):  # OpenAI-compatible clients list models
            self.send_json({"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        if path.startswith("/v1/messages"):
            super().do_POST()
            return
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        number = self.server.log_request_body(self.path, body)
        script = self.server.script
        if path.endswith("/responses"):
            self.send_events(responses_events(body, script, number), named=True)
        elif path.endswith("/chat/completions"):
            self.answer_chat(body, number)
        elif path.endswith((":generateContent", ":streamGenerateContent")):
            chunk = {"candidates": [{"content": {"role": "model", "parts": [gemini_part(body, script)]},
                                     "finishReason": "STOP", "index": 0}],
                     "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                     "modelVersion": body.get("model", "stand-in")}
            if path.endswith(":streamGenerateContent"):
                self.send_events([chunk], named=False)
            else:
                self.send_json(chunk)
        elif path.endswith(":countTokens"):
            self.send_json({"totalTokens": 100})
        else:
            self.send_error(404)

    def answer_chat(self, body: dict[str, Any], number: int) -> None:
        delta, finish = chat_answer(body, self.server.script, number)
        base = {"id": f"chatcmpl-{number}", "created": 0, "model": body.get("model", "m")}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message = {**delta}
            if "tool_calls" in delta:
                message["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}
                                         for call in delta["tool_calls"]]
            self.send_json({**base, "object": "chat.completion", "usage": usage,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return
        chunk = {**base, "object": "chat.completion.chunk"}
        self.send_events([{**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}],
                         named=False, done_marker=True)

    def send_events(self, events: list[dict[str, Any]], named: bool, done_marker: bool = False) -> None:
        """Server-sent events (`event:` lines only where the API names them), then close the connection."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            head = f"event: {event['type']}\n" if named else ""
            self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
        if done_marker:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class StandIn(MessagesStandIn):
    def __init__(self, logdir: Path, script: list[dict[str, Any]], port: int = 0) -> None:
        super().__init__(logdir, script, port)
        self.RequestHandlerClass = Handler


def with_port(text: str, port: int) -> str:
    return text.replace("{port}", str(port))


def run_session(logdir: Path, script: list[dict[str, Any]], command: list[str], timeout: float) -> int:
    """Serve on a free loopback port while `command` runs (stdout and stderr pass through), with "{port}" in
    its arguments and environment replaced; the command is killed after `timeout` seconds (exit 124)."""
    server = StandIn(logdir, script)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = {name: with_port(value, port) for name, value in os.environ.items()}
    try:
        return subprocess.run([with_port(arg, port) for arg in command], env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        print(f"model_stand_in: the command ran longer than {timeout:.0f} s and was killed", file=sys.stderr)
        return 124
    finally:
        server.shutdown()


USAGE = "usage: model_stand_in.py run LOGDIR SCRIPT.json [--timeout SECONDS] -- COMMAND..."


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[0] != "run" or "--" not in argv:
        print(USAGE, file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[3:split], argv[split + 1:]
    timeout = float(options[1]) if options[:1] == ["--timeout"] and len(options) == 2 else 600.0
    script = json.loads(Path(argv[2]).read_text(encoding="utf-8"))
    return run_session(Path(argv[1]), script, command, timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
