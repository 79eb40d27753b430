"""pinky-mcp: the brain as MCP tools over stdio (JSON-RPC 2.0, one message per line).

Configured only by the environment (PINKY_DB, PINKY_SAVE_DIR, PINKY_PROJECT, PINKY_HASH_EMBED,
PINKY_HOME, PINKY_TIER, PINKY_LOG / RUST_LOG); stdout carries nothing but JSON-RPC, logs go to stderr.

Start-up stays fast: `initialize` is answered before the index is opened or the embedder loaded (and the
`pinky-mcp` console script runs pinky.mcp.front, which answers it and `tools/list` from a cache of this
server's answers while this module imports the MCP SDK).
A background thread, on its own SQLite connection, brings a stale index up to date, warms the
embedder and embeds new chunks, so full-text search works at once and vectors follow.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, GetPromptRequestParams, TextContent
from pydantic import ValidationError

from pinky import __version__
from pinky.base.locations import ENV_LOG, ENV_TIER, start_folder
from pinky.config import Config, load_config
from pinky.errors import PinkyError
from pinky.mcp import lifeline
from pinky.mcp import text as mcp_text
from pinky.mcp.common import ServerState, with_cause
from pinky.mcp.prompts import PROMPTS, arguments_problem
from pinky.mcp.resources import read_entries, read_entry
from pinky.mcp.sdk import CallCheck, check_prompt_gets, check_tool_calls, make_tool, run_on_streams, validate_arguments
from pinky.mcp.tiers import TIERS, tier_of, tools_for
from pinky.mcp.transport import robust_stdio
from pinky.runtime.process import Runtime

log = logging.getLogger("pinky.mcp")

SERVER_NAME = "pinky-brain"  # serverInfo.name
DEFAULT_TIER = "write"
INSTRUCTIONS = (
    "pinky-brain is this project's long-term memory: gotchas, patterns, decisions, guides and notes "
    "kept as markdown. Search it (brain_search) before debugging an error, changing unfamiliar code "
    "or making a design choice; cite the `path` of what you use. Save (brain_save) what you learn "
    "that would save a future session time: a non-obvious fix, a convention, a decision and why. "
    "Where the host loads MCP tools on demand, load these with its tool search first (ToolSearch query: "
    "pinky brain)."
)
_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
           "off": logging.CRITICAL + 10, "none": logging.CRITICAL + 10}


def log_level(env: dict[str, str] | None = None) -> int:
    """PINKY_LOG, else RUST_LOG (`info`, or directives like `pinky=debug,warn`), else warn."""
    env = dict(os.environ) if env is None else env
    raw = (env.get(ENV_LOG) or env.get("RUST_LOG") or "warn").strip().lower()
    bare = None
    for directive in raw.split(","):
        target, _, level = directive.strip().rpartition("=")
        if level not in _LEVELS:
            continue
        if target in ("pinky", "pinky_mcp", "pinky-mcp", "pinky_brain"):
            return _LEVELS[level]  # a directive naming us wins
        if not target:
            bare = _LEVELS[level]
    return bare if bare is not None else logging.WARNING


def tier_from_env(env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    tier = (env.get(ENV_TIER) or DEFAULT_TIER).strip().lower()
    if tier not in TIERS:
        raise PinkyError(f"{ENV_TIER}={tier!r}: use one of {', '.join(TIERS)}")
    return tier


# --- assembly -----------------------------------------------------------------------------------


def build_server(runtime: Runtime, tier: str) -> MCPServer:
    """The MCPServer for `tier` (its tools from the tier table) over `runtime`.

    The server's lifespan starts the runtime's upkeep when a connection opens and stops it when the
    connection ends; tools reach the runtime through what the lifespan yields.
    """
    tools = [make_tool(with_cause(spec.fn), title=spec.title, annotations=spec.annotations) for spec in tools_for(tier)]
    app: MCPServer = MCPServer(SERVER_NAME, title=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                               log_level="WARNING", tools=tools, lifespan=_lifespan(runtime, tier))
    for fn, title in PROMPTS:
        app.prompt(name=fn.__name__, title=title)(fn)
    _add_resources(app, runtime)
    check_tool_calls(app, _call_check({tool.name: tool for tool in tools}, tier))
    check_prompt_gets(app, _prompt_check)
    return app


def _lifespan(runtime: Runtime, tier: str) -> Callable[[MCPServer], AbstractAsyncContextManager[ServerState]]:
    @contextlib.asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[ServerState]:
        runtime.start()
        try:
            yield ServerState(runtime, tier)
        finally:
            with anyio.CancelScope(shield=True):  # stop even when the connection was cancelled
                await anyio.to_thread.run_sync(runtime.stop)

    return lifespan


def _add_resources(app: MCPServer, runtime: Runtime) -> None:
    """Resources are bound to the runtime here: a static resource cannot ask for the lifespan's state."""

    @app.resource("pinky://entries", name="entries", title="All entries", mime_type="application/json",
                  description=read_entries.__doc__)
    async def entries() -> str:
        return await read_entries(runtime)

    @app.resource("pinky://entry/{+slug}", name="entry", title="One entry", mime_type="text/markdown",
                  description=read_entry.__doc__)
    async def entry(slug: str) -> str:
        return await read_entry(runtime, slug)


def _call_check(tools: dict[str, Tool], tier: str) -> CallCheck:
    """tools/call answers that say what to fix: an unknown tool, one of a higher tier, bad arguments."""

    def check(params: CallToolRequestParams) -> CallToolResult | None:
        tool = tools.get(params.name)
        if tool is None:
            needed = tier_of(params.name)
            return _error(mcp_text.unavailable_text(params.name, tier, needed) if needed
                          else mcp_text.unknown_tool_text(params.name, list(tools)))
        try:
            validate_arguments(tool, params.arguments or {})
        except ValidationError as exc:
            return _error(mcp_text.invalid_arguments_text(params.name, exc.errors()))
        return None

    return check


def _prompt_check(params: GetPromptRequestParams) -> None:
    """An unknown prompt, or a missing or unknown argument: JSON-RPC invalid params (-32602), saying which."""
    problem = arguments_problem(params.name, params.arguments)
    if problem is not None:
        raise MCPError(INVALID_PARAMS, problem)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


# --- entry point --------------------------------------------------------------------------------


async def serve(config: Config, tier: str) -> None:
    runtime = Runtime(config)
    app = build_server(runtime, tier)
    async with robust_stdio() as (read_stream, write_stream):
        await run_on_streams(app, read_stream, write_stream)
    runtime.exit_if_busy()  # after the last answer went out


USAGE = """usage: pinky-mcp

pinky-brain's MCP server: it gives a coding agent (Claude Code, or any MCP client) tools to search
and save the project's knowledge. The client starts it and speaks JSON-RPC on its stdin and stdout;
you do not run it by hand except to test it. It takes no options; the environment configures it:

  PINKY_TIER        read | write (default) | admin: which tools are offered
  PINKY_HOME        global state (default ~/.pinky); the global brain is $PINKY_HOME/brain
  PINKY_DB, PINKY_SAVE_DIR, PINKY_PROJECT
                    override what the project's pinky.toml says (see `pinky --help`)
  PINKY_HASH_EMBED  1: the model-free embedder (tests, minimal installs)
  PINKY_LOG         log level on stderr: error, warn (default), info, debug

Which brain: the project found by walking up from CLAUDE_PROJECT_DIR (or the current folder) to a
pinky.toml; brain_save writes there, or into the global brain with scope "global". Outside any
project, only the global brain.

Try it by hand:
  printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \\
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | pinky-mcp

Every tool, argument and error: documentation/MCP.md in the pinky-brain repository."""


def main() -> None:
    """Console entry point `pinky-mcp` (no flags: configured by the environment)."""
    logging.basicConfig(level=log_level(), stream=sys.stderr, format="pinky-mcp %(levelname)s: %(message)s")
    args = [arg for arg in sys.argv[1:] if arg != "--stdio"]  # stdio is the only transport: accepted, implied
    if args:
        arg = args[0]
        if arg in ("-h", "--help"):
            print(USAGE)
        elif arg in ("-V", "--version"):
            print(f"pinky-mcp (pinky-brain {__version__})")
        else:
            print(f"pinky-mcp: it takes no arguments, got {arg!r}; see `pinky-mcp --help`", file=sys.stderr)
            raise SystemExit(2)
        return
    lifeline.hold()  # started by the front: die with it
    try:
        config = load_config(cwd=start_folder(os.environ))
        tier = tier_from_env()
    except PinkyError as exc:
        print(f"pinky-mcp: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    from pinky.setup.broken import broken_entries

    for line in broken_entries():  # another host's entry that no longer runs: said where a user may look
        print(line, file=sys.stderr)
    try:
        anyio.run(serve, config, tier)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
