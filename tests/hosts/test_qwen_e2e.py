"""Qwen Code (@qwen-code/qwen-code, pinned in tests/support/host_support.py, from npm), headless and offline: an
OpenAI-compatible provider from the environment (OPENAI_BASE_URL at tests/support/model_stand_in.py, which speaks Chat
Completions). A fresh HOME, the documented `pinky-brain setup qwen`, then a `qwen -p` session that saves a note and a
second one that asks about it, reads a file linked to it and tries to write a stale fact into QWEN.md. Qwen Code
defers MCP tools: its first request names them for `tool_search`, and the model calls one through `tool_call` (the
stand-in plays both steps). What the model was sent is read from the stand-in's request log: the digest must reach
the first request of the first session, the recall the prompt, the file's notes the read's result, the guard's
reason the refused write; and the diary, written from Qwen Code's own chat file, must name the host."""

from __future__ import annotations

import json
import re

import pytest
from host_support import World, brain_tools, diary_today, find_cli, new_world
from host_worlds import (
    KNOWN,
    PROMPT,
    QWEN_ENV,
    SAVE,
    qwen_command,
    saving_world,
    setup_round_trip,
    snapshot,
    write_user_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(7)]
SLUG = "pg-pool-hangs-on-shutdown"
ASK = "Why does the pool hang on shutdown?"
STALE = "The suite has 1,234 tests as of 2026-11-28 (commit 3f9a2c1e).\n"


@pytest.fixture(scope="module")
def qwen(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "qwen")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, qwen: str) -> World:
    world = saving_world(tmp_path_factory, request, "qwen")
    (world.project / "db.py").write_text(f"import psycopg\n\n# Brain: {SLUG}\ndef close(pool):\n"
                                         "    pool.close(timeout=5)\n", encoding="utf-8")
    script = [{"tool": "read_file", "input": {"file_path": str(world.project / "db.py")}},
              {"tool": "write_file", "input": {"file_path": str(world.project / "QWEN.md"), "content": STALE}}]
    world.session("ask", script, qwen_command(qwen, ASK), QWEN_ENV)
    return world


def offered(body: dict) -> list[str]:
    return [(tool.get("function") or {}).get("name", "") for tool in body.get("tools") or []]


def text_of(body: dict, role: str) -> str:
    return json.dumps([m.get("content") for m in body.get("messages", []) if m.get("role") == role],
                      ensure_ascii=False)


def tool_results(world: World, name: str) -> list[str]:
    return [text_of(r["body"], "tool") for r in world.sessions[name].main]


def test_qwen_names_every_brain_tool_for_its_tool_search(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    first = session.main[0]["body"]
    assert {"tool_search", "tool_call"} <= set(offered(first))
    named = set(re.findall(r"mcp__pinky__brain_[a-z_]+", json.dumps(first)))
    assert sorted(named) == sorted(f"mcp__pinky__{name}" for name in brain_tools()), sorted(named)


def test_the_first_request_of_the_first_session_carries_the_digest(world: World) -> None:
    system = text_of(world.sessions["save"].main[0]["body"], "system")
    assert KNOWN[0] in system and "pinky brain:" in system, system[-3000:]
    assert "mcp__pinky__brain_search" in system  # named as Qwen's tool_search and tool_call take it
    assert not (world.project / "QWEN.md").exists() and not (world.project / "AGENTS.md").exists()


def test_a_scripted_brain_save_through_tool_call_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    last = [r["body"] for r in session.main if "tool_search" in offered(r["body"])][-1]  # the whole conversation
    called = [c["function"]["name"] for m in last["messages"] if m.get("role") == "assistant"
              for c in m.get("tool_calls") or []]
    assert called[:2] == ["tool_search", "tool_call"], called
    saved = world.project / "documentation" / "gotcha" / f"{SLUG}.md"
    assert saved.is_file(), session.stdout[-2000:] + session.stderr[-2000:]
    assert SAVE["body"] in saved.read_text()
    assert not list((world.home / ".pinky").rglob(f"{SLUG}.md"))


def test_a_prompt_about_a_note_gets_its_recall(world: World) -> None:
    shown = text_of(world.sessions["ask"].main[0]["body"], "user")
    recalled = shown.split("pinky recall", 1)
    assert len(recalled) == 2, shown[-3000:]
    assert f"gotcha/{SLUG}" in recalled[1][:800]


def test_reading_a_linked_file_brings_its_notes_after_the_result(world: World) -> None:
    results = tool_results(world, "ask")
    assert any(f"gotcha/{SLUG}" in text and "Brain: " + SLUG in text for text in results), results


def test_a_stale_fact_for_qwen_md_is_refused_with_the_reason(world: World) -> None:
    assert not (world.project / "QWEN.md").exists()
    assert any("QWEN.md must stay evergreen" in text for text in tool_results(world, "ask")), tool_results(
        world, "ask")[-1][-2000:]


def test_the_diary_names_the_prompts_and_the_host(world: World) -> None:
    diary = diary_today(world.project)
    for prompt in (PROMPT, ASK):
        asked = [line for line in diary.splitlines() if prompt in line]
        assert asked, diary[-2000:]
        assert any(re.search(r"\bqwen\b", line, re.IGNORECASE) for line in asked), asked


def test_setup_twice_changes_nothing_and_remove_restores_the_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                                   qwen: str) -> None:
    world = new_world(tmp_path_factory.mktemp("qwen-setup"), ("qwen",), KNOWN)
    write_user_config(world, "qwen")
    first, second = setup_round_trip(world, "qwen", world.home / ".qwen")
    assert first == second
    settings = json.loads(first["settings.json"])
    assert settings["mcpServers"]["pinky"]["trust"] is True and "notes" in settings["mcpServers"]
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact"} <= set(
        settings["hooks"])


def test_project_setup_runs_without_a_trust_step(tmp_path_factory: pytest.TempPathFactory, qwen: str) -> None:
    """`setup qwen --project` writes .qwen/settings.json in the repository; Qwen Code 0.24.4 ran its hooks and server
    in a folder it had never seen (no folder trust by default): the digest reaches the first request."""
    world = new_world(tmp_path_factory.mktemp("qwen-project"), ("qwen",), KNOWN)
    write_user_config(world, "qwen")
    before = snapshot(world.home / ".qwen")
    done = world.pinky("setup", "qwen", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (world.project / ".qwen" / "settings.json").is_file() and snapshot(world.home / ".qwen") == before
    session = world.session("project", [], qwen_command(qwen, PROMPT), QWEN_ENV)
    assert session.returncode == 0, session.stderr[-2000:]
    assert KNOWN[0] in text_of(session.main[0]["body"], "system")
