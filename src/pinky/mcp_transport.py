"""The stdio transport of pinky-mcp: the SDK's, plus the protocol fixes it leaves out.

- A malformed line gets a JSON-RPC parse error (-32700) or invalid-request error (-32600)
  instead of being dropped silently; blank lines are ignored.
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


def malformed_reply(exc: Exception) -> tuple[Any, Any] | None:
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
