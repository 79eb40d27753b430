"""pinky-mcp's tools, prompts and resources through the SDK's own stdio client, on the real process."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, server_env

pytestmark = pytest.mark.anyio


def client_for(root: Path, mode: str = "legacy", **extra_env: str) -> Any:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = console_script("pinky-mcp")
    params = StdioServerParameters(command=command[0], args=command[1:], env=server_env(root, **extra_env),
                                   cwd=root)
    return Client(params, mode=mode, read_timeout_seconds=30)  # type: ignore[arg-type]


class Checked:
    """Calls tools and checks every result against the tool's declared outputSchema."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.schemas: dict[str, dict[str, Any]] = {}

    async def load(self) -> set[str]:
        tools = (await self.client.list_tools()).tools
        self.schemas = {t.name: t.output_schema for t in tools}
        return set(self.schemas)

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments)
        text = result.content[0].text
        assert not result.is_error, text
        assert text.strip(), "every result has a readable text block"
        jsonschema.validate(result.structured_content, self.schemas[tool])
        return result.structured_content

    async def error(self, tool: str, **arguments: Any) -> str:
        result = await self.client.call_tool(tool, arguments)
        assert result.is_error, result
        return result.content[0].text


async def test_save_search_get_update_delete(tmp_path: Path) -> None:
    async with client_for(tmp_path, PINKY_PROJECT="demo") as client:
        brain = Checked(client)
        assert {"brain_save", "brain_update", "brain_delete"} <= await brain.load()

        saved = await brain.ok("brain_save", type="gotcha", title="El pool de PG se cuelga al apagar",
                               body="Usar pool.close(timeout=5) antes de salir; si no, el proceso espera.",
                               tags=["postgres", "pool"], files=["src/db.py"])
        assert saved["scope"] == "project:demo" and saved["slug"] == "gotcha/el-pool-de-pg-se-cuelga-al-apagar"
        assert (tmp_path / saved["path"]).is_file()  # relative to the repo, inside PINKY_SAVE_DIR

        found = await brain.ok("brain_search", query="pool close timeout", type="gotcha", project="demo", limit=5)
        assert found["count"] >= 1
        hit = found["hits"][0]
        assert (hit["slug"], hit["path"]) == (saved["slug"], saved["path"]) and "body" not in hit
        full = await brain.ok("brain_search", query="pool close timeout", format="full", tags=["postgres"])
        assert "pool.close(timeout=5)" in full["hits"][0]["body"]
        assert (await brain.ok("brain_search", query="pool", tags=["nope"]))["count"] == 0
        assert (await brain.ok("brain_stats"))["usage_events"] >= 1  # searches record what they returned

        entry = await brain.ok("brain_get", slug=saved["slug"])
        assert entry["version"] == saved["version"] and entry["files"] == ["src/db.py"]
        assert "pool.close" in entry["body"] and entry["meta"]["type"] == "gotcha"

        stale = await brain.error("brain_update", slug=saved["slug"], expected_version="0000", body="new")
        assert "changed" in stale and saved["version"] in stale
        assert "nothing to change" in await brain.error("brain_update", slug=saved["slug"],
                                                        expected_version=saved["version"])
        updated = await brain.ok("brain_update", slug=saved["slug"], expected_version=saved["version"],
                                 body="Llamar pool.close(timeout=5) y luego pool.join().", tags=["postgres"],
                                 last_verified="2026-01-02")
        assert updated["version"] != saved["version"] and updated["last_verified"] == "2026-01-02"
        again = await brain.error("brain_update", slug=saved["slug"], expected_version=saved["version"], title="x")
        assert "changed" in again  # the old version no longer applies: no silent overwrite
        assert (await brain.ok("brain_search", query="pool.join"))["hits"][0]["slug"] == saved["slug"]

        deleted = await brain.ok("brain_delete", slug=saved["slug"], reason="superseded by the runbook")
        assert ".archive" in deleted["archived_to"] and "pinky-brain restore" in deleted["restore"]
        assert Path(deleted["archived_to"]).is_file() and not (tmp_path / saved["path"]).exists()
        assert "superseded by the runbook" in Path(deleted["archived_to"]).read_text()
        assert (await brain.ok("brain_search", query="pool join close"))["count"] == 0
        assert "no entry" in await brain.error("brain_get", slug=saved["slug"])


async def test_a_second_delete_keeps_the_first_copy_and_says_which_version_to_restore(tmp_path: Path) -> None:
    async with client_for(tmp_path, PINKY_PROJECT="demo") as client:
        brain = Checked(client)
        await brain.load()
        copies = []
        for body in ("ONE", "TWO"):
            saved = await brain.ok("brain_save", title="Twice", body=body)
            copies.append(await brain.ok("brain_delete", slug=saved["slug"], reason="wrong"))
        assert [Path(c["archived_to"]).read_text().count(body) for c, body in zip(copies, ("ONE", "TWO"),
                                                                                    strict=True)] == [1, 1]
        assert [c["restore"] for c in copies] == ["pinky-brain restore note/twice",
                                                  "pinky-brain restore note/twice --version 2"]


async def test_save_scope_follows_the_contract(tmp_path: Path) -> None:
    """project argument > scope argument > PINKY_PROJECT > the project the server runs in > global."""
    async with client_for(tmp_path, PINKY_SAVE_DIR="", PINKY_DB="") as client:  # outside any project
        brain = Checked(client)
        await brain.load()
        plain = await brain.ok("brain_save", title="Shared tip", body="applies everywhere")
        assert plain["scope"] == "global" and plain["slug"].startswith("global/")
        assert Path(plain["path"]).is_relative_to(tmp_path / "home" / "brain")
        assert "global brain" in plain["saved_to"]
        assert not (tmp_path / "documentation").exists() and not (tmp_path / "brain.db").exists()
    async with client_for(tmp_path) as client:  # no PINKY_PROJECT, inside a project (PINKY_SAVE_DIR)
        brain = Checked(client)
        await brain.load()
        here = await brain.ok("brain_save", title="Local tip", body="applies here")
        assert here["scope"] == f"project:{tmp_path.name}" and here["path"] == "documentation/note/local-tip.md"
        assert "commit it with the code" in here["saved_to"]
        scoped = await brain.ok("brain_save", title="Project tip", body="only here", project="billing")
        assert scoped["scope"] == "project:billing"
        assert (tmp_path / "documentation" / "note" / "project-tip.md").is_file()
        explicit = await brain.ok("brain_save", title="Also global", body="x", scope="global")
        assert explicit["scope"] == "global"
        only_billing = await brain.ok("brain_search", query="tip", project="billing")
        assert [h["slug"] for h in only_billing["hits"]] == [scoped["slug"]]
        assert "scope" in await brain.error("brain_save", title="t", body="b", scope="galactic")
    async with client_for(tmp_path, PINKY_PROJECT="billing") as client:
        brain = Checked(client)
        await brain.load()
        assert (await brain.ok("brain_save", title="Env tip", body="x"))["scope"] == "project:billing"
        assert (await brain.ok("brain_save", title="Env global", body="x", scope="global"))["scope"] == "global"


async def test_catch_up_briefing_related_resources_and_prompts(tmp_path: Path) -> None:
    docs = tmp_path / "documentation"
    write_note(docs, "gotcha/pg-pool.md", "---\ntitle: PG pool hangs\ntype: gotcha\nfiles: [src/db.py]\n---\n"
               "Close the pool with a timeout. See [[pattern/retries]].\n")
    write_note(docs, "pattern/retries.md", "# Retries\n\nBack off exponentially; the [pool note](../gotcha/pg-pool.md)"
               " explains why.\n")
    now = dt.datetime.now().astimezone()
    write_note(docs, f"diary/{now:%Y-%m-%d}.md", "---\ntitle: Diary\ntype: diary\n---\n"
               f"- {now:%H:%M} [abcd1234] asked: why does the pool hang on shutdown\n")
    async with client_for(tmp_path, mode="auto") as client:  # 'auto': the SDK's own negotiation
        brain = Checked(client)
        await brain.load()
        for _ in range(600):  # the catch-up reindex runs in the background after start
            stats = await brain.ok("brain_stats")
            if stats["background"]["catch_up"] in ("done", "failed"):
                break
            time.sleep(0.05)
        assert stats["background"]["catch_up"] == "done", stats["background"]
        assert stats["entries"] == 3
        assert (await brain.ok("brain_search", query="pool timeout"))["hits"][0]["slug"] == "gotcha/pg-pool"

        news = await brain.ok("brain_briefing", since=(now - dt.timedelta(hours=1)).isoformat())
        assert {i["slug"] for i in news["new"] + news["updated"]} == {"gotcha/pg-pool", "pattern/retries"}
        assert news["diary"][0]["text"] == "why does the pool hang on shutdown"
        assert (await brain.ok("brain_briefing", since="2999-01-01"))["counts"]["diary_lines"] == 0
        assert "ISO-8601" in await brain.error("brain_briefing", since="last tuesday")

        graph = await brain.ok("brain_related", slug="gotcha/pg-pool")
        assert [link["slug"] for link in graph["links"]] == ["pattern/retries"]
        assert [b["slug"] for b in graph["backlinks"]] == ["pattern/retries"]
        assert graph["code"][0]["file"] == "src/db.py"

        listing = await client.read_resource("pinky://entries")
        assert "gotcha/pg-pool" in listing.contents[0].text
        templates = (await client.list_resource_templates()).resource_templates
        assert any(t.uri_template == "pinky://entry/{+slug}" for t in templates)
        for uri in ("pinky://entry/gotcha/pg-pool", "pinky://entry/gotcha%2Fpg-pool"):
            page = await client.read_resource(uri)
            assert "Close the pool with a timeout" in page.contents[0].text

        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"save_knowledge", "session_briefing", "research_topic"}
        research = await client.get_prompt("research_topic", {"topic": "connection pools"})
        assert "connection pools" in research.messages[0].content.text


def test_admin_reindex_picks_up_files_written_after_start(tmp_path: Path) -> None:
    with RawServer(tmp_path, PINKY_TIER="admin") as server:
        server.initialize()
        write_note(tmp_path / "documentation", "guide/deploy.md", "# Deploy\n\nRun make deploy.\n")
        report = server.call("brain_reindex")
        assert report["isError"] is False
        assert report["structuredContent"]["added"] + report["structuredContent"]["unchanged"] >= 1
        hits = server.call("brain_search", query="make deploy")["structuredContent"]["hits"]
        assert hits[0]["slug"] == "guide/deploy"
        full = server.call("brain_reindex", full=True)["structuredContent"]
        assert full["added"] == 1 and not full["errors"]
        assert server.call("brain_stats")["structuredContent"]["entries"] == 1


def test_admin_brain_sync_pulls_what_another_machine_saved(tmp_path: Path) -> None:
    from dulwich import porcelain

    from pinky.config import load_config
    from pinky.kb import KnowledgeBase
    from pinky.services.brain_sync import sync_global

    remote = tmp_path / "remote.git"
    porcelain.init(str(remote), bare=True)
    machine_a = tmp_path / "a"
    (machine_a / "documentation").mkdir(parents=True)
    config_a = load_config(home=machine_a / "home", db=machine_a / "brain.db", save_dir=machine_a / "documentation")
    with KnowledgeBase(config_a) as kb:
        kb.save("Shared shell tip", "Use ctrl-r to search the shell history.", scope="global")
        assert sync_global(kb, str(remote))["pushed"] is True

    machine_b = tmp_path / "b"
    machine_b.mkdir()
    with RawServer(machine_b, PINKY_TIER="admin") as server:
        server.initialize()
        result = server.call("brain_sync", remote=str(remote))
        assert result["isError"] is False, result
        data = result["structuredContent"]
        assert "note/shared-shell-tip.md" in data["pulled_paths"] and data["reindexed"] >= 1
        hits = server.call("brain_search", query="shell history ctrl-r")["structuredContent"]["hits"]
        assert hits[0]["slug"] == "global/note/shared-shell-tip" and hits[0]["scope"] == "global"
        dead = server.call("brain_sync", remote=str(tmp_path / "no-such-remote"))
        assert dead["isError"] is True and "no-such-remote" in dead["content"][0]["text"]


def test_brain_sync_is_admin_only(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        server.initialize()
        assert server.call("brain_sync")["isError"] is True


def test_brain_save_points_out_a_near_duplicate(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        server.initialize()
        body = "Call pool.close(timeout=5) before exiting, or the process waits for idle connections."
        first = server.call("brain_save", title="Postgres pool hangs on shutdown", body=body, type="gotcha")
        assert first["structuredContent"]["similar"] == []
        for _ in range(100):  # vectors of the first save are filled in the background
            if server.call("brain_stats")["structuredContent"]["vectors"] >= 1:
                break
            time.sleep(0.05)
        again = server.call("brain_save", title="PG pool hangs at shutdown", body=body, type="gotcha")
        similar = again["structuredContent"]["similar"]
        assert [s["slug"] for s in similar] == [first["structuredContent"]["slug"]]
        assert "Likely a duplicate of" in again["content"][0]["text"]
