"""The plugin manifest, hooks.json, the bundled server, and the Claude Code half of `pinky init`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from claude_support import OFFLINE_ENV, find_claude

from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.hooks.dispatch import EVENTS
from pinky.hygiene.evergreen import find_volatile
from pinky.setup.claude_setup import (
    ALLOW_RULES,
    CLAUDE_MD_SNIPPET,
    extend_init,
    merge_mcp_json,
)

REPO = Path(__file__).resolve().parents[1]


def load(rel: str) -> dict:
    return json.loads((REPO / rel).read_text(encoding="utf-8"))


def test_manifest_and_marketplace_agree() -> None:
    plugin, market = load("plugin/.claude-plugin/plugin.json"), load(".claude-plugin/marketplace.json")
    assert plugin["name"] == "pinky" and isinstance(plugin.get("keywords", []), list)
    assert "hooks" not in plugin  # the default hooks/hooks.json is auto-loaded; declaring it is an error
    entry = next(p for p in market["plugins"] if p["name"] == plugin["name"])
    assert entry["source"] == "./plugin" and entry["version"] == plugin["version"]


def test_hooks_json_registers_every_hook_event_with_timeouts() -> None:
    hooks = load("plugin/hooks/hooks.json")["hooks"]
    assert set(hooks) == {"SessionStart", "PreToolUse", "UserPromptSubmit", "Stop", "PreCompact"}
    matchers = {group.get("matcher"): group["hooks"][0] for event in hooks.values() for group in event}
    assert set(matchers) == {"startup|resume|clear|compact", "Read", "Write|Edit|MultiEdit|NotebookEdit", None}
    events = {h["args"][-1] for event in hooks.values() for group in event for h in group["hooks"]}
    assert events == set(EVENTS)  # every event the hooks handle is registered, and nothing else
    for handler in matchers.values():  # the launcher itself is tested in test_plugin_runtime.py
        assert handler["type"] == "command" and 1 <= handler["timeout"] <= 30


def test_init_adds_no_second_server_next_to_the_plugins(tmp_path: Path) -> None:
    bundled = load("plugin/.mcp.json")["mcpServers"]["pinky"]
    (tmp_path / "documentation").mkdir(exist_ok=True)  # `pinky init` made it
    (tmp_path / "pinky.toml").touch()
    extend_init(load_config(cwd=tmp_path), root=tmp_path)
    path = tmp_path / ".mcp.json"
    written = json.loads(path.read_text())["mcpServers"].get("pinky") if path.exists() else None
    assert written is None or (written["command"], written["args"]) == (bundled["command"], bundled["args"])


def test_mcp_json_merge_keeps_other_servers_is_relative_and_idempotent(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({
        "mcpServers": {"other": {"command": "x", "args": ["--y"]},
                       "pinky": {"command": "old", "args": ["--stdio"], "timeout": 9000, "env": {"PINKY_LOG": "info"}}},
        "extra": True}))
    (tmp_path / "documentation").mkdir(exist_ok=True)  # `pinky init` made it
    (tmp_path / "pinky.toml").touch()
    config = load_config(cwd=tmp_path)
    assert merge_mcp_json(config, tmp_path) == "updated"
    data = json.loads((tmp_path / ".mcp.json").read_text())
    assert data["extra"] is True and data["mcpServers"]["other"] == {"command": "x", "args": ["--y"]}
    pinky = data["mcpServers"]["pinky"]
    assert pinky["command"] == "pinky-mcp" and pinky["args"] == [] and pinky["timeout"] == 9000
    assert pinky["env"] == {"PINKY_LOG": "info"}  # the user's own; no paths: the server finds the project
    before = (tmp_path / ".mcp.json").read_bytes()
    assert merge_mcp_json(config, tmp_path) == "unchanged"
    assert (tmp_path / ".mcp.json").read_bytes() == before


def test_mcp_json_merge_refuses_to_clobber_broken_json(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{ oops")
    with pytest.raises(InvalidInput):
        merge_mcp_json(load_config(cwd=tmp_path), tmp_path)
    assert (tmp_path / ".mcp.json").read_text() == "{ oops"


def test_extend_init_snippet_and_allow_rules_once(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# House rules\nBe kind.")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    (tmp_path / "documentation").mkdir(exist_ok=True)  # `pinky init` made it
    (tmp_path / "pinky.toml").touch()
    config = load_config(cwd=tmp_path)
    done = extend_init(config, mcp=True, claude_md="append", allow_tools=True, root=tmp_path)
    assert len(done) == 3
    assert extend_init(config, mcp=True, claude_md="append", allow_tools=True, root=tmp_path) == []
    text = (tmp_path / "CLAUDE.md").read_text()
    assert text.startswith("# House rules\nBe kind.\n\n") and text.count("pinky:begin") == 1
    allow = json.loads((tmp_path / ".claude/settings.json").read_text())["permissions"]["allow"]
    assert allow == ["Bash(ls)", *ALLOW_RULES]
    printed = extend_init(config, mcp=False, claude_md="print", root=tmp_path)
    assert CLAUDE_MD_SNIPPET in printed[0]


def test_the_snippet_itself_is_evergreen() -> None:
    assert find_volatile(CLAUDE_MD_SNIPPET) == []


def test_setup_claude_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from pinky.cli.main import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "documentation").mkdir()
    (tmp_path / "pinky.toml").touch()
    result = CliRunner().invoke(cli, ["setup-claude", "--allow-tools"], catch_exceptions=False)
    assert result.exit_code == 0 and ".mcp.json" in result.output
    assert (tmp_path / ".claude/settings.json").exists()


# --- opt-in: the real Claude Code CLI, offline (more in test_claude_e2e.py) -------------------------


@pytest.fixture(scope="session")
def claude_cli(request: pytest.FixtureRequest) -> str:
    return find_claude(request)


@pytest.mark.integration
@pytest.mark.parametrize("target", [".", "plugin", "plugin/.claude-plugin/plugin.json"])
def test_claude_plugin_validate(tmp_path: Path, target: str, claude_cli: str) -> None:
    """`.` checks the marketplace; the plugin folder and its plugin.json also check hooks/hooks.json."""
    env = {**os.environ, **OFFLINE_ENV, "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")}
    result = subprocess.run([claude_cli, "plugin", "validate", target], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "Validation passed" in result.stdout, result.stdout + result.stderr
