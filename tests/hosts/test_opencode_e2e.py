"""OpenCode (opencode-ai 1.18.33 from npm), headless and offline: it speaks Chat Completions to an
OpenAI-compatible provider in the user's opencode.json (the @ai-sdk/openai-compatible provider ships inside the
binary, so nothing is fetched), here tests/model_stand_in.py. A fresh HOME, the documented
`pinky-brain setup opencode`, then one `opencode run` session that saves a note."""

from __future__ import annotations

import pytest
from host_support import World, brain_tools
from host_worlds import saving_world

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(4)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    return saving_world(tmp_path_factory, request, "opencode")


def test_opencode_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    offered = {(tool.get("function") or {}).get("name", "") for r in session.main for tool in r["body"]["tools"]}
    assert sorted(name for name in offered if "brain_" in name) == sorted(f"pinky_{name}" for name in brain_tools())


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    saved = world.project / "documentation" / "gotcha" / "pg-pool-hangs-on-shutdown.md"
    assert saved.is_file(), session.stdout[-2000:] + session.stderr[-2000:]
    assert "pool.close(timeout=5)" in saved.read_text()
