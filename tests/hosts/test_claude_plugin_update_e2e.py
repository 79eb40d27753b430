"""Claude Code, the real one, through its plugin across a plugin update (issue 36, left at its close): the first
session after `claude plugin update` had brain_status alone, and no digest, until the update's runtime was
prepared in the background (37-126 s measured). Now the previous runtime serves meanwhile.

A fresh HOME; a marketplace folder holding a copy of this plugin at version 0.1.0, added and installed with the
real CLI; its runtime made the quick way (tests/test_plugin_runtime.py); one session. Then version 0.1.1 with new
package content in the marketplace, `claude plugin marketplace update` and `claude plugin update`, and pip cut
off from any index: the update's runtime cannot be prepared here, as on a machine where it takes minutes. The
first session after the update is offered every brain tool and shown the digest in its first request. Once the
new runtime is ready and the previous one deleted, the next session runs on the new one alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from host_support import World, brain_tools, find_cli, new_world
from host_worlds import CLAUDE_ENV, KNOWN, SAVE
from test_plugin_runtime import BASE_PYTHON, PLUGIN, REPO, info, linked_runtime, preparation, wait_for
from test_plugin_updates import update

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(1)]

PREFIX = "mcp__plugin_pinky_pinky__"  # the plugin's server, as Claude Code names its tools


def market(root: Path) -> Path:
    """A marketplace folder like this repository: .claude-plugin/marketplace.json and the plugin (its symlinks
    into the repository made files, as Claude Code's copy has them)."""
    folder = root / "market"
    (folder / ".claude-plugin").mkdir(parents=True)
    shutil.copy(REPO / ".claude-plugin" / "marketplace.json", folder / ".claude-plugin")
    shutil.copytree(PLUGIN, folder / "plugin", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def bump(folder: Path, version: str) -> None:
    """A new release in the marketplace: its version in both manifests, and new package content."""
    for manifest in (folder / ".claude-plugin" / "marketplace.json",
                     folder / "plugin" / ".claude-plugin" / "plugin.json"):
        manifest.write_text(manifest.read_text().replace('"version": "0.1.0"', f'"version": "{version}"'))
    update(folder / "plugin")


def installed(world: World) -> Path:
    plugins = json.loads((world.home / ".claude" / "plugins" / "installed_plugins.json").read_text())["plugins"]
    return Path(plugins["pinky@pinky-market"][0]["installPath"])


def claude(world: World, cli: str, *args: str) -> None:
    done = world.run([cli, *args])
    assert done.returncode == 0, done.stdout + done.stderr


def session(world: World, cli: str, name: str, step: dict) -> tuple[list[str], str]:
    """One headless session; (the brain tools its first request names, all it showed the model)."""
    command = [cli, "-p", "Do it.", "--output-format", "stream-json", "--verbose", "--permission-mode",
               "acceptEdits", "--allowedTools", f"{PREFIX}*", "Bash(sleep:*)"]
    done = world.session(name, [step], command, CLAUDE_ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.main, done.stderr[-3000:]
    first = json.dumps(done.main[0]["body"], ensure_ascii=False)  # 2.1.337 names deferred MCP tools for ToolSearch
    return sorted(PREFIX + name for name in brain_tools() if PREFIX + name in first), first


def test_the_first_session_after_a_plugin_update_has_every_brain_tool_and_the_digest(
        tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> None:
    cli = find_cli(request, "claude")
    world = new_world(tmp_path_factory.mktemp("claude-plugin-update"), ("claude",), KNOWN)
    wheels = world.root / "no-wheels"
    wheels.mkdir()
    data = world.home / ".claude" / "plugins" / "data" / "pinky-pinky-market"
    world.env.update({"CLAUDE_CONFIG_DIR": str(world.home / ".claude"), "PINKY_PYTHON": BASE_PYTHON,
                      "PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)})
    runtime_env = {**world.env, "CLAUDE_PLUGIN_DATA": str(data)}
    folder = market(world.root)
    claude(world, cli, "plugin", "marketplace", "add", str(folder))
    claude(world, cli, "plugin", "install", "pinky@pinky-market")
    before = installed(world)
    old = linked_runtime(runtime_env, before)
    expected = sorted(PREFIX + name for name in brain_tools())

    tools, shown = session(world, cli, "before", {"tool": "brain_save", "wait": 30, "input": SAVE})
    assert tools == expected and KNOWN[0] in shown, shown[-2000:]

    bump(folder, "0.1.1")
    claude(world, cli, "plugin", "marketplace", "update", "pinky-market")
    claude(world, cli, "plugin", "update", "pinky@pinky-market")
    after = installed(world)
    assert after != before and info(runtime_env, after)["ready"] is False  # the update needs a new runtime

    tools, shown = session(world, cli, "after", {"tool": "brain_search", "wait": 5, "input": {"query": "pool"}})
    assert tools == expected, world.sessions["after"].stderr[-3000:]
    assert KNOWN[0] in shown, shown[-2000:]  # the SessionStart hook ran: its digest reached the model
    assert "pool.close(timeout=5)" in world.sessions["after"].shown()  # brain_search found the note saved before

    # The update's runtime is ready (here: once its failed preparation has ended, made the quick way) and the
    # previous one is deleted: the next session runs on the new one.
    wait_for(lambda: not preparation.preparing_now(str(data)), 300, "the background preparation to end")
    new = linked_runtime(runtime_env, after)
    preparation.remove_unless_running(str(old))
    assert new != old and not old.exists()
    tools, shown = session(world, cli, "next", {"tool": "brain_search", "wait": 5, "input": {"query": "pool"}})
    assert tools == expected and KNOWN[0] in shown, shown[-2000:]
