"""`pinky-brain setup claude` beside the enabled pinky plugin registered every brain tool twice and two session
digests, without a word (issue 36 item 7): setup refuses in one line that says how to proceed, and doctor flags
a machine where both are there. The real CLI in a temporary HOME and CLAUDE_CONFIG_DIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
ENABLED = {"enabledPlugins": {"pinky@pinky-market": True}}


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    home, claude = tmp_path / "home", tmp_path / "claude"
    home.mkdir()
    claude.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CODEX_", "CLAUDE_"))}
    out.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), PINKY_HOME=str(tmp_path / "pinky"),
               PINKY_HASH_EMBED="1", PATH=f"{BIN}:/usr/bin:/bin")
    return out


def pinky(env: dict[str, str], *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "pinky-brain"), *args], env=env, cwd=cwd or env["HOME"], capture_output=True,
                          text=True, timeout=180)


def enable_plugin(env: dict[str, str]) -> None:
    (Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").write_text(json.dumps(ENABLED))


def test_setup_claude_beside_the_enabled_plugin_is_refused_in_one_line(env: dict[str, str]) -> None:
    enable_plugin(env)
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    before = settings.read_bytes()
    done = pinky(env, "setup", "claude")
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "plugin is enabled" in lines[0] and "--force" in lines[0], lines
    assert "claude plugin disable" in lines[0]
    assert settings.read_bytes() == before and not (Path(env["HOME"]) / ".claude.json").exists()
    assert pinky(env, "setup", "claude", "--dry-run").returncode != 0  # a dry run says it too


def test_force_sets_it_up_anyway_and_remove_is_never_refused(env: dict[str, str]) -> None:
    enable_plugin(env)
    assert pinky(env, "setup", "claude", "--force").returncode == 0
    assert "pinky" in json.loads((Path(env["HOME"]) / ".claude.json").read_text())["mcpServers"]
    removed = pinky(env, "setup", "claude", "--remove")
    assert removed.returncode == 0, removed.stderr


def test_without_the_plugin_setup_claude_needs_no_force(env: dict[str, str]) -> None:
    done = pinky(env, "setup", "claude")
    assert done.returncode == 0, done.stderr


def test_doctor_flags_the_plugin_and_setup_claude_together(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert pinky(env, "init", cwd=str(project)).returncode == 0
    assert pinky(env, "setup", "claude").returncode == 0  # before the plugin was installed
    enable_plugin(env)
    doctor = pinky(env, "doctor", "--json", cwd=str(project))
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    twice = checks.get("claude code: set up twice")
    assert twice is not None and twice["status"] == "warn", sorted(checks)
    assert "twice" in twice["detail"] and "setup claude --remove" in twice["fix"]
    assert pinky(env, "setup", "claude", "--remove").returncode == 0
    doctor = pinky(env, "doctor", "--json", cwd=str(project))
    assert "claude code: set up twice" not in {check["name"] for check in json.loads(doctor.stdout)["checks"]}
