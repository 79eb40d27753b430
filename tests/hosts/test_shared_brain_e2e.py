"""One brain across hosts: a note saved in a Codex CLI session is shown to the next Gemini CLI session and to a
Claude Code session, all three real CLIs from npm, in one fresh HOME set up with `pinky-brain setup <host>`
for each, offline against tests/support/model_stand_in.py."""

from __future__ import annotations

import json

import pytest
from host_support import World, find_cli, new_world
from host_worlds import (
    CLAUDE_ENV,
    CODEX_ENV,
    GEMINI_ENV,
    claude_command,
    codex_command,
    configure,
    gemini_command,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(3)]
KNOWN = ("Staging deploys need the VPN up", "Run `vpn up` before `make deploy-staging`, or it times out.")
SAVED = {"title": "Flaky login test needs a frozen clock", "type": "gotcha", "tags": ["tests"],
         "body": "test_login compares token expiry to now(): freeze the clock or it fails at midnight."}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    clis = {host: find_cli(request, host) for host in ("codex", "gemini", "claude")}
    world = new_world(tmp_path_factory.mktemp("shared-brain"), tuple(clis), KNOWN)
    for host in clis:
        configure(world, host)
    saved = world.session("codex", [{"tool": "brain_save", "wait": 30, "input": SAVED}],
                          codex_command(clis["codex"], "Note the login test trap."), CODEX_ENV)
    assert saved.returncode == 0, saved.stderr[-3000:]
    world.session("gemini", [], gemini_command(clis["gemini"], "What should I know before touching login?"),
                  GEMINI_ENV)
    search = {"tool": "brain_search", "wait": 30, "input": {"query": "login test clock"}}
    world.session("claude", [search], claude_command(clis["claude"], "What should I know before touching login?"),
                  {**CLAUDE_ENV, "CLAUDE_CONFIG_DIR": str(world.home / ".claude")})
    return world


def test_the_codex_session_saved_the_note(world: World) -> None:
    assert (world.project / "documentation" / "gotcha" / "flaky-login-test-needs-a-frozen-clock.md").is_file()


@pytest.mark.parametrize("host", ["gemini", "claude"])
def test_the_next_session_on_another_host_is_shown_the_note(world: World, host: str) -> None:
    """Gemini's first request carries it (the session digest); Claude Code's, or its brain_search result."""
    session = world.sessions[host]
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.main, f"{host} sent the stand-in no request with tools"
    shown = session.shown() if host == "claude" else json.dumps(session.main[0]["body"], ensure_ascii=False)
    assert SAVED["title"] in shown, shown[-3000:]
