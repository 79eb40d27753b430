"""Every use of the MCP SDK beyond `MCPServer`'s documented surface, in one small place.

`MCPServer` keeps its low-level server private (`_lowlevel_server`; the SDK's own in-memory
client reads it the same way, under a TODO to make it public). pinky needs it twice: to serve
over its own stdio streams (see mcp_transport) and to put a check in front of `tools/call`.
When the SDK changes, this module and tests/mcp/test_mcp_sdk.py are what to look at.
"""

import inspect
from collections.abc import Callable
from typing import Any

from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolRequestParams, CallToolResult, GetPromptRequestParams, ToolAnnotations

CallCheck = Callable[[CallToolRequestParams], CallToolResult | None]


def lowlevel_server(app: MCPServer) -> Server[Any]:
    """The low-level server under `app` (private in the SDK: the one place it is read)."""
    return app._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does the same


async def run_on_streams(app: MCPServer, read_stream: Any, write_stream: Any) -> None:
    """Serve one connection over the given streams, as `MCPServer.run_stdio_async` does over its own.

    tools.listChanged is declared: pinky-mcp's front (pinky.mcp.front) sends notifications/tools/list_changed
    when the tool list it served from its cache turns out to differ from this server's."""
    server = lowlevel_server(app)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    await server.run(read_stream, write_stream, options)


def check_tool_calls(app: MCPServer, check: CallCheck) -> None:
    """Put `check(params)` in front of `tools/call`: a result it returns is the answer; None lets
    the SDK's own handler run. Install it after every tool is registered."""
    _in_front(app, "tools/call", CallToolRequestParams, check)


def check_prompt_gets(app: MCPServer, check: Callable[[GetPromptRequestParams], None]) -> None:
    """Put `check(params)` in front of `prompts/get`; it raises MCPError to refuse the request (the SDK
    answers a prompt it cannot render with error code 0). Install it after every prompt is registered."""
    _in_front(app, "prompts/get", GetPromptRequestParams, check)


def _in_front(app: MCPServer, method: str, params_type: type, check: Callable[[Any], Any]) -> None:
    server = lowlevel_server(app)
    entry = server.get_request_handler(method)
    if entry is None:
        raise RuntimeError(f"the SDK registered no {method} handler")
    sdk_handler = entry.handler

    async def handle(ctx: Any, params: Any) -> Any:
        answer = check(params)
        return answer if answer is not None else await sdk_handler(ctx, params)

    server.add_request_handler(method, params_type, handle)


def make_tool(fn: Callable[..., Any], *, title: str, annotations: ToolAnnotations) -> Tool:
    """A structured tool named after `fn`, described by its docstring's first paragraph joined into one line
    (what follows a blank line is for the reader of the source, not sent), its input schema without the
    verbosity pydantic adds (see `lean_schema`)."""
    tool = Tool.from_function(fn, name=fn.__name__, title=title, description=one_paragraph(first_paragraph(fn)),
                              annotations=annotations, structured_output=True)
    tool.parameters = lean_schema(tool.parameters)  # tools/list only: arguments are validated by fn_metadata
    return tool


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` in fewer characters: Claude Code sends every tool's input schema to the model in every
    request. Drops the `title`s pydantic derives from names and the defaults that go without saying
    (`false`, `0`), and writes an optional argument's `anyOf: [X, {type: null}], default: null`
    as X: leaving it out is how to say null (the server still accepts an explicit null: arguments are
    validated against the function's signature, not this schema)."""
    node = {key: value for key, value in schema.items() if key != "title" and not _says_nothing(key, value)}
    variants = node.get("anyOf")
    if "default" in node and node["default"] is None and isinstance(variants, list) and {"type": "null"} in variants:
        others = [variant for variant in variants if variant != {"type": "null"}]
        del node["anyOf"], node["default"]
        node.update(others[0] if len(others) == 1 else {"anyOf": others})
    for key in ("properties", "$defs"):
        if isinstance(node.get(key), dict):
            node[key] = {name: lean_schema(value) for name, value in node[key].items()}
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list):
            node[key] = [lean_schema(value) for value in node[key]]
    if isinstance(node.get("items"), dict):
        node["items"] = lean_schema(node["items"])
    return node


def _says_nothing(key: str, value: Any) -> bool:
    """A default of `false` or `0`: a flag left off, an offset at the start."""
    return key == "default" and (value is False or (type(value) is int and value == 0))


def validate_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Raise pydantic's ValidationError when `arguments` do not fit the tool's input schema."""
    tool.fn_metadata.validate_arguments(arguments)


async def lifespan_state(ctx: Context) -> Any:
    """What the server's lifespan yielded, for a `Resolve(...)` parameter of a tool."""
    return ctx.request_context.lifespan_context


def one_paragraph(text: str) -> str:
    return " ".join(text.split())


def first_paragraph(fn: Callable[..., Any]) -> str:
    """`fn`'s docstring up to its first blank line: what a tool's description says."""
    return inspect.cleandoc(fn.__doc__ or "").split("\n\n", 1)[0]


def screen_stdio_lines(screen: Callable[[str, Callable[[], Any]], Any]) -> None:
    """Parse each stdin line of the SDK's `stdio_server` through `screen(line, parse)`, where `parse()`
    is the SDK's own parse. The SDK reads a line with an id that is not a string or an integer as a
    notification (it drops the id) and gives no access to the line; this is the one place to see it.
    Patches only the name `types` inside `mcp.server.stdio`, so no other transport changes."""
    import mcp.server.stdio as stdio
    import mcp_types

    class Adapter:
        def validate_json(self, data: Any, **kwargs: Any) -> Any:
            return screen(data, lambda: mcp_types.jsonrpc_message_adapter.validate_json(data, **kwargs))

    class Types:
        jsonrpc_message_adapter = Adapter()

        def __getattr__(self, name: str) -> Any:
            return getattr(mcp_types, name)

    stdio.types = Types()  # type: ignore[assignment]
