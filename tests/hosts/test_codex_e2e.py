"""Codex CLI (pinned in tests/support/host_support.py), the real one from npm, headless and offline against
tests/support/model_stand_in.py: a fresh HOME with the user's own config.toml, then only the documented `pinky-brain
setup
codex`, then one `codex exec` session that saves a note. What the model was sent is read from the stand-in's
request log."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from host_support import World, brain_tools, diary_today, find_cli, new_world
from host_worlds import (
    CODEX_CONFIG,
    CODEX_ENV,
    KNOWN,
    NEEDS_SETUP,
    PROMPT,
    codex_command,
    codex_home,
    saving_world,
    setup_round_trip,
    write_user_config,
)

from pinky.setup.codex_trust import hook_hash

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(6)]


@pytest.fixture(scope="module")
def codex(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "codex")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    return saving_world(tmp_path_factory, request, "codex")


def test_codex_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    spaces = {tool.get("name"): tool for r in session.main for tool in r["body"]["tools"]
              if tool.get("type") == "namespace"}
    assert "mcp__pinky" in spaces, sorted(spaces)
    assert sorted(tool["name"] for tool in spaces["mcp__pinky"]["tools"]) == sorted(brain_tools())


def test_codex_is_shown_a_note_title_at_session_start(world: World) -> None:
    first = world.sessions["save"].main[0]["body"]
    assert KNOWN[0] in json.dumps(first["input"], ensure_ascii=False), json.dumps(first["input"])[-3000:]


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    results = [item for r in session.main for item in r["body"]["input"]
               if item.get("type") == "function_call_output"]
    saved = world.project / "documentation" / "gotcha" / "pg-pool-hangs-on-shutdown.md"
    assert saved.is_file(), (results, session.stderr[-2000:])
    assert "pool.close(timeout=5)" in saved.read_text()
    assert not list((world.home / ".pinky").rglob("pg-pool-hangs-on-shutdown.md"))


def test_the_stop_hook_writes_the_diary_from_the_codex_rollout(world: World) -> None:
    diary = diary_today(world.project)
    asked = [line for line in diary.splitlines() if PROMPT in line]
    assert asked, diary[-2000:]
    assert any(re.search(r"\bcodex\b", line, re.IGNORECASE) for line in asked), asked  # the host's tag


USER_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send 'codex is done'"}]}]}}


@NEEDS_SETUP
def test_setup_twice_changes_nothing_keeps_the_users_config_and_remove_restores_it(
        tmp_path_factory: pytest.TempPathFactory, codex: str) -> None:
    world = new_world(tmp_path_factory.mktemp("codex-setup"), ("codex",), KNOWN)
    write_user_config(world, "codex")
    (codex_home(world) / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=2) + "\n")
    first, second = setup_round_trip(world, "codex", codex_home(world))
    assert second == first, "a second `pinky-brain setup codex` changed the files"
    config = first["config.toml"].decode()
    for line in CODEX_CONFIG.splitlines():
        if line.lstrip().startswith("#") or "#" in line:
            assert line in config, f"the user's comment was lost: {line!r}"
    parsed, original = tomllib.loads(config), tomllib.loads(CODEX_CONFIG)
    assert parsed["mcp_servers"]["notes"] == original["mcp_servers"]["notes"]
    assert parsed["model_providers"] == original["model_providers"] and parsed["model"] == original["model"]
    assert "pinky" in parsed["mcp_servers"]
    hooks = json.loads(first["hooks.json"])["hooks"]
    assert USER_HOOKS["hooks"]["Stop"][0] in hooks["Stop"], hooks
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(hooks)

    again = world.pinky("setup", "codex")  # the real CLI reads the merged config: both servers
    assert again.returncode == 0, again.stderr
    listed = world.run([codex, "mcp", "list", "--json"])
    assert listed.returncode == 0, listed.stderr
    assert {"notes", "pinky"} <= {server["name"] for server in json.loads(listed.stdout)}, listed.stdout


def stop_hook_runs(world: World, codex: str, name: str, ran: Path) -> int:
    """One headless session with no tool call (its turn ends: the Stop hooks run); how often the user's ran."""
    session = world.session(name, [], codex_command(codex, "Say done."), CODEX_ENV)
    assert session.returncode == 0, session.stderr[-3000:]
    return len(ran.read_text()) if ran.exists() else 0


@NEEDS_SETUP
def test_the_users_own_trusted_stop_hook_keeps_running_through_setup_and_remove(
        tmp_path_factory: pytest.TempPathFactory, codex: str) -> None:
    """Issue 35 item 5: Codex keys a hook's trust by its position in hooks.json. The user adds a Stop hook after
    `pinky-brain setup codex` and accepts it (the record Codex's TUI writes); a second setup moved it one place
    up and wrote pinky's hash over its record, and --remove did the same: it silently stopped running."""
    world = new_world(tmp_path_factory.mktemp("codex-trust"), ("codex",), KNOWN)
    write_user_config(world, "codex")
    assert world.pinky("setup", "codex").returncode == 0
    ran = world.root / "user-stop-hook-ran"
    hooks_path = codex_home(world) / "hooks.json"
    data = json.loads(hooks_path.read_text())
    mine = {"type": "command", "command": f"printf x >> {ran}"}
    data["hooks"]["Stop"].append({"hooks": [mine]})
    hooks_path.write_text(json.dumps(data, indent=2) + "\n")
    with open(codex_home(world) / "config.toml", "a", encoding="utf-8") as config:
        config.write(f'\n[hooks.state."{hooks_path}:stop:1:0"]\ntrusted_hash = "{hook_hash("Stop", None, mine)}"\n')
    assert stop_hook_runs(world, codex, "before", ran) == 1, "the user's hook did not run even before"
    assert world.pinky("setup", "codex").returncode == 0
    assert stop_hook_runs(world, codex, "after-setup", ran) == 2, "a second setup took the hook's trust away"
    assert world.pinky("setup", "codex", "--remove").returncode == 0
    assert stop_hook_runs(world, codex, "after-remove", ran) == 3, "--remove took the hook's trust away"
