"""The doctor's Claude Code checks, against settings files laid out as Claude Code writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinky.config import load_config
from pinky.setup.claude_doctor import claude_checks
from pinky.setup.claude_setup import merge_mcp_json

ENABLED = {"enabledPlugins": {"pinky@pinky-market": True}}


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude-config"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    return folder


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pinky.toml").touch()
    return root


def checks_of(root: Path) -> dict[str, object]:
    return {c.name: c for c in claude_checks(load_config(cwd=root))}


def test_nothing_installed_is_a_warning_with_the_install_command(claude: Path, proj: Path) -> None:
    checks = checks_of(proj)
    assert checks["claude code: plugin"].status == "warn"  # the CLI works without Claude Code: not an error
    assert "claude plugin install pinky@pinky-market" in checks["claude code: plugin"].fix
    assert checks["claude code: MCP server"].status == "warn"
    assert all(c.fix for c in checks.values() if c.status != "ok")


def test_the_plugin_and_a_project_server_together_show_every_tool_twice(claude: Path, proj: Path) -> None:
    (claude / "settings.json").write_text(json.dumps(ENABLED))
    assert checks_of(proj)["claude code: MCP server"].status == "ok"
    merge_mcp_json(load_config(cwd=proj), proj)
    twice = checks_of(proj)["claude code: MCP server"]
    assert twice.status == "warn" and "twice" in twice.detail and ".mcp.json" in twice.fix


def test_a_project_server_without_the_plugin_needs_its_command_and_approval(claude: Path, proj: Path,
                                                                             tmp_path: Path) -> None:
    merge_mcp_json(load_config(cwd=proj), proj)
    assert "not on PATH" in checks_of(proj)["claude code: MCP server"].detail
    bin_dir = tmp_path / "empty-bin"
    bin_dir.mkdir()
    (bin_dir / "pinky-mcp").write_text("#!/bin/sh\n")
    (bin_dir / "pinky-mcp").chmod(0o755)
    assert "not approved" in checks_of(proj)["claude code: MCP server"].detail
    (claude / ".claude.json").write_text(json.dumps({"projects": {str(proj): {"enabledMcpjsonServers": ["pinky"]}}}))
    assert checks_of(proj)["claude code: MCP server"].status == "ok"


def test_trust_is_read_from_the_git_top_and_user_allow_rules_count(claude: Path, proj: Path) -> None:
    (claude / "settings.json").write_text(json.dumps(ENABLED))
    trust = checks_of(proj)["claude code: workspace trust"]
    assert trust.status == "warn" and "hasTrustDialogAccepted" not in trust.fix and "--allowedTools" in trust.fix
    (claude / ".claude.json").write_text(json.dumps({"projects": {str(proj): {"hasTrustDialogAccepted": True}}}))
    assert checks_of(proj)["claude code: workspace trust"].status == "ok"
    sub = proj / "packages" / "api"
    sub.mkdir(parents=True)
    (sub / "pinky.toml").touch()
    (proj / ".git").mkdir()  # the trust key of a project inside a repository is the repository's top
    assert checks_of(sub)["claude code: workspace trust"].status == "ok"
    (claude / ".claude.json").write_text("{}")
    (claude / "settings.json").write_text(json.dumps({**ENABLED, "permissions": {
        "allow": ["mcp__plugin_pinky_pinky__*"]}}))
    allowed = checks_of(proj)["claude code: workspace trust"]
    assert allowed.status == "ok" and "allow" in allowed.detail


def test_the_plugin_runtime_state_is_reported(claude: Path, proj: Path, tmp_path: Path) -> None:
    (claude / "settings.json").write_text(json.dumps(ENABLED))
    assert "not prepared yet" in checks_of(proj)["claude code: plugin runtime"].detail
    runtime = claude / "plugins" / "data" / "pinky-pinky-market" / "runtime"
    runtime.mkdir(parents=True)
    (runtime / "failed").write_text("abc123\n1700000000\npip install failed: no index reachable")
    failed = checks_of(proj)["claude code: plugin runtime"]
    assert failed.status == "warn" and "no index reachable" in failed.detail and "prepare.log" in failed.fix
    (runtime / "failed").unlink()
    interpreter = tmp_path / "venv" / "bin" / "python"
    interpreter.parent.mkdir(parents=True)
    interpreter.write_text("")
    (runtime / "python").write_text(str(interpreter) + "\n")
    assert checks_of(proj)["claude code: plugin runtime"].status == "ok"


def test_outside_a_project_only_the_plugin_is_checked(claude: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    names = [c.name for c in claude_checks(load_config(cwd=elsewhere))]
    assert names == ["claude code: plugin"]
