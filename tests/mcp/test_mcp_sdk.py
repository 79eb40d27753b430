"""pinky.mcp.sdk, the one module that reaches past MCPServer's documented surface: each helper on a
small server of its own, so an SDK upgrade that breaks one shows here first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import pytest
from mcp import Client
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer, Resolve
from mcp.shared.message import SessionMessage
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field, ValidationError

from pinky.mcp.sdk import (
    check_tool_calls,
    lifespan_state,
    lowlevel_server,
    make_tool,
    one_paragraph,
    run_on_streams,
    validate_arguments,
)

pytestmark = pytest.mark.anyio
READ_ONLY = ToolAnnotations(readOnlyHint=True)


class Echoed(BaseModel):
    text: str
    answer: int


async def echo(
    state: Annotated[dict[str, Any], Resolve(lifespan_state)],
    text: Annotated[str, Field(max_length=5, description="At most five characters.")],
) -> Annotated[CallToolResult, Echoed]:
    """Say it back
    with what the lifespan yielded."""
    out = Echoed(text=text, answer=state["answer"])
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=out.model_dump())


def small_server(**kwargs: Any) -> MCPServer:
    @asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[dict[str, Any]]:
        yield {"answer": 42}

    return MCPServer("small", tools=[make_tool(echo, title="Echo", annotations=READ_ONLY)], lifespan=lifespan,
                     **kwargs)


def test_make_tool_names_describes_and_schemas_from_the_function() -> None:
    tool = make_tool(echo, title="Echo", annotations=READ_ONLY)
    assert (tool.name, tool.title, tool.annotations) == ("echo", "Echo", READ_ONLY)
    assert tool.description == "Say it back with what the lifespan yielded."  # one paragraph, no newline
    assert set(tool.parameters["properties"]) == {"text"}  # the injected state is no argument
    assert tool.parameters["properties"]["text"]["maxLength"] == 5
    assert tool.output_schema is not None and set(tool.output_schema["properties"]) == {"text", "answer"}


def test_validate_arguments_refuses_what_the_schema_refuses() -> None:
    tool = make_tool(echo, title="Echo", annotations=READ_ONLY)
    validate_arguments(tool, {"text": "hi"})
    with pytest.raises(ValidationError):
        validate_arguments(tool, {"text": "far too long"})
    with pytest.raises(ValidationError):
        validate_arguments(tool, {})


def test_one_paragraph_joins_lines_and_spaces() -> None:
    assert one_paragraph("  a\n   b\tc \n") == "a b c"


def test_lowlevel_server_is_the_server_under_the_app() -> None:
    app = small_server()
    server = lowlevel_server(app)
    assert isinstance(server, Server) and server.name == app.name == "small"
    assert server.get_request_handler("tools/call") is not None


async def test_tools_reach_the_lifespan_state_through_resolve() -> None:
    async with Client(small_server(), mode="legacy") as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert not result.is_error and result.structured_content == {"text": "hi", "answer": 42}


async def test_check_tool_calls_answers_first_and_lets_the_sdk_do_the_rest() -> None:
    app = small_server()
    seen: list[str] = []

    def check(params: CallToolRequestParams) -> CallToolResult | None:
        seen.append(params.name)
        if params.name == "refused":
            return CallToolResult(content=[TextContent(type="text", text="not here")], is_error=True)
        return None

    check_tool_calls(app, check)
    async with Client(app, mode="legacy") as client:
        refused = await client.call_tool("refused", {})
        passed = await client.call_tool("echo", {"text": "ok"})
        unknown = await client.call_tool("nothing", {})
    assert refused.is_error and refused.content[0].text == "not here"
    assert not passed.is_error and passed.structured_content == {"text": "ok", "answer": 42}
    assert unknown.is_error and "nothing" in unknown.content[0].text  # the SDK's own answer
    assert seen == ["refused", "echo", "nothing"]


async def test_run_on_streams_serves_one_connection_over_given_streams() -> None:
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[Any](10)
    request = JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params={
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_on_streams, small_server(), server_in, server_out)
        await to_server.send(SessionMessage(request))
        with anyio.fail_after(10):
            reply = await from_server.receive()
        await to_server.aclose()  # EOF: the server returns
    assert isinstance(reply.message, JSONRPCResponse) and reply.message.id == 1
    assert reply.message.result["serverInfo"]["name"] == "small"
