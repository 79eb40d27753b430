"""The stdio transport of pinky-mcp: the SDK's, plus the protocol fixes it leaves out.

- A malformed line gets a JSON-RPC parse error (-32700) or invalid-request error (-32600)
  instead of being dropped silently, with its id whenever the id can be read (a line holding a
  lone UTF-16 surrogate such as `\\ud800`, or nested deeper than the SDK's parser reads, still
  gets its error, saying which, under its id); blank lines are ignored. An id that is not a string
  or an integer (a float, a boolean, null) and a `jsonrpc` other than "2.0" get -32600 (the SDK
  read such a request as a notification and answered nothing).
- `initialize` without protocolVersion/capabilities/clientInfo (the hand test sends `{}`)
  is completed with defaults instead of being refused.
- When stdin closes, requests already read still get their answers before the server stops
  (the SDK cancels in-flight calls at EOF, which would lose `printf ... | pinky-mcp` output).

The SDK is imported inside the functions: the server answers `initialize` sooner when nothing
here runs before it is needed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

DEFAULT_PROTOCOL = "2024-11-05"  # what the contract names; used when a client sends no protocolVersion
DRAIN_SECONDS = 300.0  # after stdin closes, how long in-flight calls may still finish and answer


@contextlib.asynccontextmanager
async def robust_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) over stdin/stdout for the low-level server's `run`."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    from pinky.mcp.sdk import screen_stdio_lines

    screen_stdio_lines(screen_line)
    pending: set[Any] = set()  # ids of requests read but not answered yet

    async with stdio_server() as (sdk_read, sdk_write):
        in_send, in_recv = anyio.create_memory_object_stream[Any](0)
        out_send, out_recv = anyio.create_memory_object_stream[Any](0)

        async def error_reply(exc: Exception) -> None:
            reply = malformed_reply(exc)
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
                            item = SessionMessage(complete_initialize(message), metadata=item.metadata)
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


def complete_initialize(message: Any) -> Any:
    """The `initialize` request with the fields a bare `{}` leaves out filled in."""
    params = dict(message.params or {})
    params.setdefault("protocolVersion", DEFAULT_PROTOCOL)
    params.setdefault("capabilities", {})
    params.setdefault("clientInfo", {"name": "unknown", "version": "0"})
    return message.model_copy(update={"params": params})


class Refused(Exception):
    """A line that gets an error reply: the id to answer under (None when unreadable), code, message."""

    def __init__(self, request_id: str | int | None, code: int, message: str) -> None:
        super().__init__(message)
        self.request_id, self.code, self.message = request_id, code, message


PARSE_ERROR = "Parse error: each line must be one JSON-RPC 2.0 message"
SURROGATE_ERROR = ("Parse error: the message holds a lone UTF-16 surrogate escape (such as \\ud800), "
                   "which is not valid Unicode; send valid UTF-8 text")
NESTING_ERROR = ("Parse error: the message nests arrays and objects too deeply (the server reads about 200 "
                 "levels); send flatter JSON")
INVALID_REQUEST = "Invalid Request: expected a JSON-RPC 2.0 object with jsonrpc, method (and id)"
INVALID_ID = "Invalid Request: id must be a string or an integer (not a fraction, a boolean or null)"
INVALID_VERSION = 'Invalid Request: jsonrpc must be "2.0"'


def screen_line(line: str, parse: Any) -> Any:
    """The SDK's message for a stdin line, or Refused for one that must be answered with an error.

    A blank line raises the SDK's own error, which `malformed_reply` ignores."""
    import mcp_types as types

    try:
        message = parse()
    except Exception as exc:
        raw = _loads(line)
        if raw is _UNREADABLE:
            raise  # not JSON at all: -32700 with id null, or a blank line
        if "json_invalid" in str(exc):
            why = NESTING_ERROR if "recursion limit" in str(exc) else SURROGATE_ERROR
            raise Refused(_readable_id(raw), -32700, why) from None
        raise Refused(_readable_id(raw), -32600, _why_invalid(raw)) from None
    if isinstance(message, types.JSONRPCNotification) and '"id"' in line:
        raw = _loads(line)
        if isinstance(raw, dict) and "id" in raw:  # the SDK dropped an id it could not take
            raise Refused(None, -32600, INVALID_ID)
    return message


_UNREADABLE = object()


def _loads(line: str) -> Any:
    """The line as Python's json reads it (lone surrogates allowed); _UNREADABLE when it is not JSON."""
    import json

    try:
        return json.loads(line)
    except ValueError:
        return _UNREADABLE


def _readable_id(raw: Any) -> str | int | None:
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def _why_invalid(raw: Any) -> str:
    if isinstance(raw, dict) and raw.get("jsonrpc") != "2.0" and "method" in raw:
        return INVALID_VERSION
    if isinstance(raw, dict) and "id" in raw and _readable_id(raw) is None:
        return INVALID_ID
    return INVALID_REQUEST


def malformed_reply(exc: Exception) -> tuple[Any, Any] | None:
    """(id, ErrorData) for a line that is not a JSON-RPC message; None for a blank line."""
    import mcp_types as types

    if isinstance(exc, Refused):
        return exc.request_id, types.ErrorData(code=exc.code, message=exc.message)
    errors = exc.errors() if hasattr(exc, "errors") else []
    first = errors[0] if errors else {}
    raw = first.get("input")
    if first.get("type") == "json_invalid":
        if isinstance(raw, str | bytes) and not raw.strip():
            return None
        return None, types.ErrorData(code=-32700, message=PARSE_ERROR)
    return _readable_id(raw), types.ErrorData(code=-32600, message=INVALID_REQUEST)
