"""Gemini CLI (pinned in tests/support/host_support.py), the real one from npm, headless and offline against
tests/support/model_stand_in.py: a fresh HOME with the user's own settings.json, then only the documented `pinky-brain
setup gemini`, then one `gemini -p` session that saves a note. What the model was sent is read from the stand-in's
request log."""

from __future__ import annotations

import json
import re

import pytest
from host_support import World, brain_tools, diary_today, find_cli, new_world
from host_worlds import (
    GEMINI_SETTINGS,
    KNOWN,
    NEEDS_SETUP,
    PROMPT,
    saving_world,
    setup_round_trip,
    write_user_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(5)]


@pytest.fixture(scope="module")
def gemini(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "gemini")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    return saving_world(tmp_path_factory, request, "gemini")


def declared(body: dict) -> list[str]:
    return [d.get("name", "") for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]


def test_gemini_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    offered = {name for r in session.main for name in declared(r["body"]) if name.startswith("mcp_pinky_")}
    assert sorted(offered) == sorted(f"mcp_pinky_{name}" for name in brain_tools()), sorted(offered)


def test_gemini_is_shown_a_note_title_at_session_start(world: World) -> None:
    first = world.sessions["save"].main[0]["body"]
    assert KNOWN[0] in json.dumps(first["contents"], ensure_ascii=False), json.dumps(first["contents"])[-3000:]


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    saved = world.project / "documentation" / "gotcha" / "pg-pool-hangs-on-shutdown.md"
    assert saved.is_file(), session.stderr[-3000:]
    assert "pool.close(timeout=5)" in saved.read_text()
    assert not list((world.home / ".pinky").rglob("pg-pool-hangs-on-shutdown.md"))


def test_the_after_agent_hook_writes_the_diary_from_the_gemini_chat(world: World) -> None:
    diary = diary_today(world.project)
    asked = [line for line in diary.splitlines() if PROMPT in line]
    assert asked, diary[-2000:]
    assert any(re.search(r"\bgemini\b", line, re.IGNORECASE) for line in asked), asked  # the host's tag


@NEEDS_SETUP
def test_setup_twice_changes_nothing_keeps_the_users_settings_and_remove_restores_them(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    world = new_world(tmp_path_factory.mktemp("gemini-setup"), ("gemini",), KNOWN)
    write_user_config(world, "gemini")
    settings = world.home / ".gemini" / "settings.json"
    mine = {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    settings.write_text(json.dumps({**GEMINI_SETTINGS, **mine}, indent=2) + "\n")
    first, second = setup_round_trip(world, "gemini", settings.parent)
    assert second == first, "a second `pinky-brain setup gemini` changed the files"
    merged = json.loads(first["settings.json"])
    for key, value in GEMINI_SETTINGS.items():
        if key != "mcpServers":
            assert merged[key] == value, key
    assert merged["mcpServers"]["notes"] == GEMINI_SETTINGS["mcpServers"]["notes"]
    assert "pinky" in merged["mcpServers"]
    assert mine["hooks"]["AfterAgent"][0] in merged["hooks"]["AfterAgent"]
    assert {"SessionStart", "BeforeAgent", "AfterAgent"} <= set(merged["hooks"])
