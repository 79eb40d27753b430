"""The MCP layer in this process: the tier table, every tool through the SDK's in-memory client,
the tool functions called directly, and the server's lifespan around the Runtime.

The real-process tests (test_mcp_protocol, test_mcp_tools) cover the wire; these are the fast ones.
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import write_note
from mcp.server.mcpserver.exceptions import ToolError
from mcp_helpers import hermetic_config, in_process

from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.knowledge.entries import save_scope
from pinky.mcp import admin_tools, entry_tools, resources, search_tools
from pinky.mcp.common import ServerState
from pinky.mcp.sdk import make_tool
from pinky.mcp.tiers import FAMILIES, TIERS, TOOL_TIERS, tier_of, tools_for
from pinky.runtime.process import Runtime

pytestmark = pytest.mark.anyio
READ = ["brain_search", "brain_get", "brain_related", "brain_briefing", "brain_list", "brain_stats", "brain_tags",
        "brain_gaps", "brain_check", "brain_research"]
WRITE = ["brain_save", "brain_update", "brain_delete", "brain_feedback"]
ADMIN = ["brain_reindex", "brain_sync", "brain_export", "brain_import"]


# --- the tier table -----------------------------------------------------------------------------


def test_tiers_are_cumulative_in_table_order() -> None:
    assert TIERS == ("read", "write", "admin")
    assert [s.name for s in tools_for("read")] == READ
    assert [s.name for s in tools_for("write")] == READ + WRITE
    assert [s.name for s in tools_for("admin")] == READ + WRITE + ADMIN
    with pytest.raises(ValueError, match="read, write, admin"):
        tools_for("root")


def test_each_tool_has_one_tier_and_is_a_module_level_function() -> None:
    assert {name: tier_of(name) for name in READ + WRITE + ADMIN} == {
        **dict.fromkeys(READ, "read"), **dict.fromkeys(WRITE, "write"), **dict.fromkeys(ADMIN, "admin")}
    assert tier_of("brain_nope") is None
    for specs in TOOL_TIERS.values():
        for spec in specs:
            assert getattr(sys.modules[spec.fn.__module__], spec.name) is spec.fn
            assert spec.fn.__module__ in {family.__name__ for family in FAMILIES}
            assert spec.annotations.read_only_hint is (spec.name in READ)


def test_a_tool_its_output_model_and_its_text_are_in_one_module() -> None:
    """Issue 40 item 4: one tool, one place. Its output model is declared beside it (derived from the core's
    type where the core declares one), and so is every function its module calls to write its text."""
    for spec in tools_for("admin"):
        model = typing.get_args(inspect.signature(spec.fn).return_annotation)[1]
        assert model.__module__ == spec.fn.__module__, (spec.name, model.__module__)
        for name in spec.fn.__code__.co_names:
            if name.endswith("_text") and name in vars(sys.modules[spec.fn.__module__]):
                assert getattr(sys.modules[spec.fn.__module__], name).__module__ == spec.fn.__module__, name


def test_a_rewritten_signature_is_said_at_the_tool_and_not_sent() -> None:
    """`@signature_from` replaces the signature the SDK reads: the tool's docstring says so in a paragraph of its
    own, which the description sent to the model leaves out."""
    rewritten = {spec.name for spec in tools_for("admin") if "__signature__" in vars(spec.fn)}
    assert rewritten == {"brain_search", "brain_list", "brain_save", "brain_update", "brain_export"}
    for spec in tools_for("admin"):
        said = "Signature rewritten by @signature_from" in (spec.fn.__doc__ or "")
        assert said is (spec.name in rewritten), spec.name
        tool = make_tool(spec.fn, title=spec.title, annotations=spec.annotations)
        assert "@signature_from" not in (tool.description or "")


@pytest.mark.parametrize("tier", TIERS)
async def test_tools_list_follows_the_table(tmp_path: Path, tier: str) -> None:
    async with in_process(tmp_path, tier) as (client, _):
        tools = (await client.list_tools()).tools
    assert [(t.name, t.title) for t in tools] == [(s.name, s.title) for s in tools_for(tier)]
    for tool, spec in zip(tools, tools_for(tier), strict=True):
        assert tool.annotations == spec.annotations
        assert "state" not in tool.input_schema.get("properties", {})  # injected, not an argument
        assert tool.output_schema["type"] == "object" and "\n" not in tool.description


# --- every tool through the in-memory client ----------------------------------------------------


async def ok(client: Any, schemas: dict[str, Any], tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert result.content[0].text.strip()
    jsonschema.validate(result.structured_content, schemas[tool])
    return result.structured_content


async def test_every_tool_answers_in_process(tmp_path: Path) -> None:
    from dulwich import porcelain

    remote = tmp_path / "remote.git"
    porcelain.init(str(remote), bare=True)
    write_note(tmp_path / "documentation", "pattern/retries.md", "# Retries\n\nBack off; see [[gotcha/pool]].\n")
    async with in_process(tmp_path, "admin", project="demo") as (client, runtime):
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        assert runtime.upkeep_running  # the lifespan started it
        saved = await ok(client, schemas, "brain_save", title="Pool hangs", body="Close it with a timeout.",
                         type="gotcha", tags=["pool"], files=["src/db.py"])
        assert saved["scope"] == "project:demo"
        assert (await ok(client, schemas, "brain_search", query="pool timeout"))["hits"][0]["slug"] == saved["slug"]
        entry = await ok(client, schemas, "brain_get", slug=saved["slug"])
        assert entry["body"].startswith("Close it")
        related = await ok(client, schemas, "brain_related", slug=saved["slug"])
        assert related["code"][0]["file"] == "src/db.py"
        assert saved["slug"] in {i["slug"] for i in (await ok(client, schemas, "brain_briefing", since="1h"))["new"]}
        updated = await ok(client, schemas, "brain_update", slug=saved["slug"], expected_version=saved["version"],
                           tags=["pool", "postgres"])
        assert updated["tags"] == ["pool", "postgres"]
        reindexed = await ok(client, schemas, "brain_reindex")
        assert reindexed["errors"] == []
        stats = await ok(client, schemas, "brain_stats")
        assert (stats["entries"], stats["tier"]) == (2, "admin") and stats["background"]["catch_up"] == "done"
        deleted = await ok(client, schemas, "brain_delete", slug=saved["slug"], reason="test")
        assert Path(deleted["archived_to"]).is_file()
        synced = await ok(client, schemas, "brain_sync", remote=str(remote))
        assert synced["remote"] == str(remote)
    assert not runtime.upkeep_running  # and stopped it


async def test_refusals_say_what_to_fix(tmp_path: Path) -> None:
    async with in_process(tmp_path, "read") as (client, _):
        save = await client.call_tool("brain_save", {"title": "t", "body": "b"})
        unknown = await client.call_tool("brain_nope", {})
        invalid = await client.call_tool("brain_search", {"query": "q", "limit": 500})
        nothing = await client.call_tool("brain_get", {"slug": "nope/x"})
    assert save.is_error and "PINKY_TIER=read" in save.content[0].text and "PINKY_TIER=write" in save.content[0].text
    assert unknown.is_error and unknown.content[0].text.endswith(", ".join(READ))
    assert invalid.is_error and invalid.content[0].text.startswith("invalid arguments for brain_search: limit")
    assert nothing.is_error and "no entry" in nothing.content[0].text


async def test_a_client_cannot_supply_the_injected_state(tmp_path: Path) -> None:
    async with in_process(tmp_path) as (client, _):
        stats = await client.call_tool("brain_stats", {"state": {"tier": "admin"}})
        got = await client.call_tool("brain_get", {"slug": "nope/x", "state": "evil"})
    assert not stats.is_error and stats.structured_content["tier"] == "write"
    assert got.is_error and "no entry" in got.content[0].text  # the real state ran the call


async def test_resources_and_prompts_in_process(tmp_path: Path) -> None:
    write_note(tmp_path / "documentation", "gotcha/pool.md", "---\ntitle: Pool\n---\nClose it.\n")
    async with in_process(tmp_path) as (client, runtime):
        assert runtime.caught_up.wait(30)
        listing = await client.read_resource("pinky://entries")
        assert '"uri": "pinky://entry/gotcha/pool"' in listing.contents[0].text
        page = await client.read_resource("pinky://entry/gotcha/pool")
        assert page.contents[0].text.startswith("---\n") and "Close it." in page.contents[0].text
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        assert prompts == ["save_knowledge", "session_briefing", "research_topic"]
        briefing = await client.get_prompt("session_briefing", {"since": "7d"})
        assert "since='7d'" in briefing.messages[0].content.text


async def test_the_sdks_modern_direct_mode_works_too(tmp_path: Path) -> None:
    async with in_process(tmp_path, mode="auto") as (client, _):
        result = await client.call_tool("brain_stats", {})
    assert not result.is_error and result.structured_content["tier"] == "write"


# --- the tool functions called directly ---------------------------------------------------------


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ServerState]:
    runtime = Runtime(hermetic_config(tmp_path))  # not started: the foreground works without upkeep
    try:
        yield ServerState(runtime, "write")
    finally:
        runtime.stop()


async def test_tool_functions_can_be_called_directly(state: ServerState) -> None:
    saved = await entry_tools.brain_save(state, title="Direct call", body="No client, no server.")
    slug = saved.structured_content["slug"]
    assert saved.content[0].text.startswith(f"Saved {slug}")
    found = await search_tools.brain_search(state, query="client server", format="full")
    assert found.structured_content["hits"][0]["body"].strip() == "No client, no server."
    stats = (await admin_tools.brain_stats(state)).structured_content
    assert stats["tier"] == "write" and stats["background"]["catch_up"] == "pending"
    with pytest.raises(ToolError, match="no entry"):
        await entry_tools.brain_get(state, slug="nope/x")
    with pytest.raises(ToolError, match="nothing to change"):
        await entry_tools.brain_update(state, slug=slug, expected_version="x")


async def test_resource_functions_can_be_called_directly(state: ServerState) -> None:
    from mcp.server.mcpserver.exceptions import ResourceError

    await entry_tools.brain_save(state, title="Listed", body="x")  # inside a project: the project's folder
    assert '"slug": "note/listed"' in await resources.read_entries(state.runtime)
    assert "title: Listed" in await resources.read_entry(state.runtime, "note/listed")
    with pytest.raises(ResourceError):
        await resources.read_entry(state.runtime, "nope/x")


def test_save_scope_rule(tmp_path: Path) -> None:
    """Where a save lands, for brain_save and `pinky-brain save` alike (pinky.knowledge.entries.save_scope):
    project argument > scope argument > PINKY_PROJECT > the project the server runs in > global."""
    plain = hermetic_config(tmp_path)
    pinned = hermetic_config(tmp_path, project="billing")
    outside = load_config(home=tmp_path / "home", cwd=tmp_path)  # no pinky.toml anywhere above
    assert save_scope(outside, None, None) == "global"
    assert save_scope(plain, None, None) == f"project:{plain.project}"
    assert save_scope(pinned, None, None) == "project:billing"
    assert save_scope(pinned, "global", None) == "global"
    assert save_scope(pinned, None, "other") == save_scope(pinned, "project:other", "other") == "project:other"
    with pytest.raises(InvalidInput, match="scope 'global' contradicts project 'other'"):
        save_scope(pinned, "global", "other")
    assert save_scope(plain, "", None) == f"project:{plain.project}"
    assert save_scope(outside, "", None) == "global"


async def test_save_and_update_take_the_questions_a_note_answers(tmp_path: Path) -> None:
    async with in_process(tmp_path, project="demo") as (client, _):
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        saved = await ok(client, schemas, "brain_save", title="Pool close", body="Call pool.close(timeout=5).",
                         questions=["why does the worker hang on shutdown?"])
        assert (await ok(client, schemas, "brain_search", query="worker shutdown"))["hits"][0]["slug"] == saved["slug"]
        updated = await ok(client, schemas, "brain_update", slug=saved["slug"], expected_version=saved["version"],
                           questions=["how long may draining take?"])
        entry = await ok(client, schemas, "brain_get", slug=saved["slug"])
        assert entry["meta"]["questions"] == ["how long may draining take?"]
        assert (await ok(client, schemas, "brain_search", query="worker shutdown"))["count"] == 0
        too_many = await client.call_tool("brain_save", {"title": "t", "body": "b", "questions": ["q?"] * 21})
        too_long = await client.call_tool("brain_update", {"slug": saved["slug"], "expected_version":
                                                           updated["version"], "questions": ["x" * 301]})
    assert too_many.is_error and "questions" in too_many.content[0].text
    assert too_long.is_error and "must be 1-300 printable characters" in too_long.content[0].text
