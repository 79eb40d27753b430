"""Gemini CLI, GitHub Copilot CLI, OpenCode, Cline CLI, Qwen Code and Kilo Code CLI, the real ones, set up through
the Claude Code plugin: each keeps its tools and hooks across a plugin update, and its first session after setup,
beside two CPU hogs, is offered the tools and shown the digest (issue 36 items 1 and 3, as
tests/hosts/test_codex_plugin_update_e2e.py checks them for Codex)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from host_support import World, brain_tools, find_cli, new_world
from host_worlds import CLAUDE_ENV, KNOWN, NEEDS_SETUP, SAVE, SESSIONS, claude_command, cli_env, write_user_config
from mcp_helpers import slow_sdk_env
from test_codex_plugin_update_e2e import install_plugin
from test_plugin_runtime import linked_runtime, preparation
from test_plugin_updates import update, with_console_scripts

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(5)]


HOSTS = ["gemini", "copilot", "opencode", "cline", "qwen", "kilo"]
CONFIG = {"gemini": ".gemini", "copilot": ".copilot", "opencode": ".config/opencode", "cline": ".cline",
          "qwen": ".qwen", "kilo": ".config/kilo"}  # where setup writes
PREFIX = {"gemini": "mcp_pinky_", "copilot": "pinky-", "opencode": "pinky_", "claude": "mcp__pinky__",
          "cline": "pinky__", "qwen": "mcp__pinky__", "kilo": "pinky_"}  # as offered


def offered_and_shown(world: World, host: str, name: str) -> tuple[list[str], str]:
    """The brain tools the first request offered, and what it showed the model."""
    session = world.sessions[name]
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.main, session.stderr[-3000:]
    first = session.main[0]["body"]
    if host in ("claude", "qwen"):  # both defer MCP tools: the first request names them for their tool search
        text = json.dumps(first, ensure_ascii=False)
        return sorted({n for n in expected(host) if n in text}), text
    if host == "gemini":
        names = [d.get("name", "") for tool in first.get("tools") or [] for d in tool.get("functionDeclarations")
                 or []]
        return sorted(n for n in names if n.startswith("mcp_pinky_")), json.dumps(first.get("contents"),
                                                                                   ensure_ascii=False)
    names = [(tool.get("function") or {}).get("name", "") for tool in first.get("tools") or []]
    return sorted(n for n in names if n.startswith(PREFIX[host]) and "brain_" in n), json.dumps(
        first.get("messages"), ensure_ascii=False)


def expected(host: str) -> list[str]:
    return sorted(PREFIX[host] + name for name in brain_tools())


def run(world: World, host: str, cli: str, name: str, script: list[dict], extra: dict[str, str] | None = None) -> None:
    command, env = SESSIONS.get(host) or (claude_command, CLAUDE_ENV)
    world.session(name, script, command(cli, "Do it."), {**env, **cli_env(host, cli), **(extra or {})})


@NEEDS_SETUP
@pytest.mark.parametrize("host", HOSTS)
def test_the_host_keeps_tools_and_hooks_across_a_plugin_update(tmp_path_factory: pytest.TempPathFactory,
                                                               request: pytest.FixtureRequest, host: str) -> None:
    cli = find_cli(request, host)
    world = new_world(tmp_path_factory.mktemp(f"{host}-plugin-update"), (host,), KNOWN)
    write_user_config(world, host)
    copy, data, runtime_env = install_plugin(world)
    old = with_console_scripts(linked_runtime(runtime_env, copy))
    done = world.run([str(copy / "bin" / "pinky-brain"), "setup", host])
    assert done.returncode == 0, done.stdout + done.stderr
    written = "".join(p.read_text(errors="replace") for p in (world.home / CONFIG[host]).rglob("*")
                      if p.suffix in (".json", ".js") and p.is_file())
    assert str(data) not in written and str(world.home / ".local" / "bin" / "pinky-hooks") in written

    run(world, host, cli, "before", [{"tool": "brain_save", "wait": 30, "input": SAVE}])
    tools, shown = offered_and_shown(world, host, "before")
    assert tools == expected(host) and KNOWN[0] in shown, shown[-2000:]

    update(copy)  # the plugin update: new content, so the next start needs (and here gets) a new runtime
    new = linked_runtime(runtime_env, copy)
    preparation.remove_unless_running(str(old))
    assert new != old and not old.exists()

    run(world, host, cli, "after", [{"tool": "brain_search", "wait": 30, "input": {"query": "pool"}}])
    tools, shown = offered_and_shown(world, host, "after")
    assert tools == expected(host), world.sessions["after"].stderr[-3000:]
    assert KNOWN[0] in shown, shown[-2000:]  # the SessionStart hook ran: its digest reached the model


@NEEDS_SETUP
@pytest.mark.parametrize("host", [*HOSTS, "claude"])  # Claude Code by `pinky-brain setup claude` (the plugin's
# first session prepares its runtime in the background first: tests/test_claude_e2e.py)
def test_the_first_session_after_setup_has_the_tools_beside_two_cpu_hogs(
        tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, host: str) -> None:
    """No MCP answers cached yet, two CPU hogs, and importing the MCP SDK takes 16 s: the tools and the digest
    are in the first request all the same (Copilot CLI waits on prompts/list and resources/list too: without the
    front's answers to those its first request offered no brain tool)."""
    cli = find_cli(request, host)
    world = new_world(tmp_path_factory.mktemp(f"{host}-first-busy"), (host,), KNOWN)
    write_user_config(world, host)
    done = world.pinky("setup", host)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (world.home / ".pinky" / "cache" / "mcp").exists()  # a first start: nothing cached
    slow = slow_sdk_env(world.root, seconds=16)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        run(world, host, cli, "first", [{"tool": "brain_search", "input": {"query": "deploy"}}], slow)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    tools, shown = offered_and_shown(world, host, "first")
    assert tools == expected(host), world.sessions["first"].stderr[-3000:]
    assert KNOWN[0] in shown and Path(slow["PINKY_TEST_SDK_MARKER"]).exists()  # the slow import did happen
