"""What every module of MCP tools shares: `@tool`, which registers a function as a tool of a tier with its
title and annotations; the server state a tool receives; running a core call off the event loop with errors
the model can act on; the result (`result`, and `ResultOut`, the `page` every output model has); and the
common parameter types.

A tool lives in one place, its family's module (`pinky.mcp.tiers.FAMILIES` lists them): the function under
`@tool(tier, title)`, its output model (derived from the core's own result type where the core declares one:
`pinky.mcp.declared.result_model`) and the function that writes its text. A tool is a module-level function,
a thin adapter over KnowledgeBase, whose first parameter is the server's state (the shared Runtime and the
tier), filled by the SDK from the server's lifespan (`Resolve(lifespan_state)`), so a test can call it directly:
`await brain_search(state, query="pool")`. The SDK reads the other parameters for the input schema and the
return annotation (`Annotated[CallToolResult, <output model>]`) for the outputSchema; the docstring's first
paragraph, joined into one line, is the description. Every tool answers with a readable text block and
structuredContent (Claude Code shows the model the structured part; other clients read the text). Core errors
(PinkyError) are raised as ToolError, so the result carries `isError: true` and a message that says what to fix.

No `from __future__ import annotations`: the SDK reads the tools' signatures at runtime.
"""

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

import anyio
from mcp.server.mcpserver import Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from pinky.base.shown import shown, shown_all
from pinky.errors import PinkyError
from pinky.kb import KnowledgeBase
from pinky.mcp import lifeline
from pinky.mcp.budget import Pages, fit
from pinky.mcp.sdk import lifespan_state
from pinky.runtime.process import Runtime

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
log = logging.getLogger("pinky.mcp")


@dataclass(frozen=True)
class ServerState:
    """What the server's lifespan yields to every tool call."""

    runtime: Runtime
    tier: str


State = Annotated[ServerState, Resolve(lifespan_state)]
Tier = Literal["read", "write", "admin"]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def writes(*, destructive: bool, idempotent: bool = False, open_world: bool = False) -> ToolAnnotations:
    """The annotations of a tool that changes the brain."""
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent,
                           open_world_hint=open_world)


@dataclass(frozen=True)
class ToolSpec:
    """A tool function with what tools/list shows besides its signature and docstring, and its tier."""

    fn: Callable[..., Awaitable[CallToolResult]]
    tier: Tier
    title: str
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.fn.__name__


SPEC_ATTRIBUTE = "pinky_tool"  # where `@tool` leaves a function's ToolSpec (pinky.mcp.tiers collects them)


def tool(tier: Tier, title: str, annotations: ToolAnnotations = READ_ONLY) -> Callable[[T], T]:
    """Make a module-level function a tool of `tier` (tiers are cumulative: read, write, admin) with this title
    and these annotations; its family module's place in `pinky.mcp.tiers.FAMILIES` and its place in that module
    give its place in tools/list. The function is returned as it is: a test calls it directly."""

    def register(fn: T) -> T:
        setattr(fn, SPEC_ATTRIBUTE, ToolSpec(fn, tier, title, annotations))  # type: ignore[arg-type]
        return fn

    return register


# Descriptions say only what the agent needs to call a tool: Claude Code sends them in every request
# (tests/mcp/test_tool_definitions.py holds the total to 10,000 characters); the detail is in documentation/MCP.md.
# An offset needs no words: a result cut to fit the size limit says which offset brings the next page.
Offset = Annotated[int, Field(ge=0, le=1_000_000)]
RankOffset = Annotated[int, Field(ge=0, le=99)]
ListOffset = Annotated[int, Field(ge=0, le=9_500)]
BodyOffset = Annotated[int, Field(ge=0, le=10_000_000, description="Body from this character.")]
Slug = Annotated[str, Field(min_length=1, max_length=500)]
Format = Literal["compact", "full"]


async def run_core(runtime: Runtime, fn: Callable[[KnowledgeBase], T], *, exclusive: bool = False,
                   error: type[Exception] = ToolError) -> T:
    """Run a core call in a worker thread; turn core errors into messages the model can act on."""
    call = runtime.call_exclusive if exclusive else runtime.call

    def checked(kb: KnowledgeBase) -> T:
        lifeline.check()  # with the knowledge base to ourselves: nothing once the front that relayed it is gone
        return fn(kb)

    try:
        return await anyio.to_thread.run_sync(call, checked)
    except (PinkyError, OSError) as exc:
        raise error(cause(exc)) from exc


def cause(exc: BaseException) -> str:
    """What went wrong, in words the model can act on: a core error's own sentence, a file system error
    with its file, anything else with its type (an unexpected one is a bug: the log has its traceback)."""
    if isinstance(exc, PinkyError):
        return str(exc)
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"file system error: {exc.strerror or exc}{where}"
    return f"unexpected {type(exc).__name__}: {exc or 'no message'} (the server's log on stderr has the details)"


def with_cause(tool: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """`tool` whose every failure carries its cause: the SDK answers an exception that is not a ToolError
    with a bare 'Error executing tool <name>' and keeps the cause to itself."""

    @functools.wraps(tool)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await tool(*args, **kwargs)
        except (ToolError, MCPError):
            raise
        except Exception as exc:
            if not isinstance(exc, PinkyError | OSError):
                log.exception("%s failed", tool.__name__)
            raise ToolError(cause(exc)) from exc

    return call


class PageOut(BaseModel):
    offset: int = Field(description="Where this page starts (the `offset` given).")
    next_offset: int | None = Field(default=None, description=(
        "Call the tool again with the same arguments and this `offset` for the next page; null: no next page."))
    left_out: dict[str, int] = Field(default_factory=dict, description=(
        "Per list (or long text, in characters) cut to fit: how much this page left out."))
    shortened: list[str] = Field(default_factory=list, description=(
        "Values shortened to fit (dotted paths): what no page brings back; ask for less instead."))
    limit_chars: int = Field(description=(
        "The size limit of a result, text and structuredContent together (PINKY_MAX_RESULT_CHARS)."))


class ResultOut(BaseModel):
    """What every tool's output has: `page`, present only when the result was cut to fit the size limit."""

    page: PageOut | None = Field(default=None, description=(
        "Only when the result was cut to fit the size limit: what was left out and the offset of the next page."))


def result(state: ServerState, text: str | Callable[[Any], str], model: BaseModel, *, drop_none: tuple[str, ...] = (),
           pages: Pages | None = None) -> CallToolResult:
    """A tool's answer: `text` for the model to read (or the function that writes it from a model like
    `model`, so a page cut to fit is described as it is), the model as structuredContent; both together
    within the server's result limit (pinky.mcp.budget: `pages` says how the tool pages).

    Every string of both goes through `pinky.base.shown`, as search snippets do, before it is measured: a
    credential in a hand-written or pulled note (a title, a diary line, frontmatter) never reaches the
    model."""

    def render(data: dict[str, Any]) -> str:
        return shown(text if isinstance(text, str) else text(type(model).model_validate(data)))

    said, data = fit(render, shown_all(model.model_dump(mode="json")), state.runtime.config.max_result_chars, pages)
    _drop_nones(data, (*drop_none, "page"))
    return CallToolResult(content=[TextContent(type="text", text=said)], structured_content=data)


def _drop_nones(data: Any, keys: tuple[str, ...]) -> None:
    if isinstance(data, dict):
        for key in keys:
            if key in data and data[key] is None:
                del data[key]
        for value in data.values():
            _drop_nones(value, keys)
    elif isinstance(data, list):
        for value in data:
            _drop_nones(value, keys)
