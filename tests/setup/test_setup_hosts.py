"""`pinky-brain setup <host>` through the real CLI in a temporary HOME/CODEX_HOME/PINKY_HOME: merged with the
user's config, idempotent, reversible to the byte, --dry-run writes nothing, bad input changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
CODEX_CONFIG = """\
# My settings: keep this comment.
model = "o4"  # and this one

[mcp_servers.notes]
command = "notes-server"
args = ["--read-only"]
"""
GEMINI_SETTINGS = '{\n    "ui": {"theme": "GitHub"},\n    "mcpServers": {"notes": {"command": "notes"}},\n' \
    '    "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n'


def pinky(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "pinky-brain"), *args], env=env, cwd=env["HOME"], capture_output=True,
                          text=True, timeout=120)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("host", ["codex", "gemini", "claude", "cursor", "opencode", "windsurf"])
def test_setup_twice_changes_nothing_and_remove_gives_back_the_bytes(env: dict[str, str], host: str) -> None:
    home = Path(env["HOME"])
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    before = snapshot(home)
    first = pinky(env, "setup", host)
    assert first.returncode == 0, first.stderr
    after_one = snapshot(home)
    assert after_one != before
    assert pinky(env, "setup", host).returncode == 0
    assert snapshot(home) == after_one, "a second setup changed a byte"
    removed = pinky(env, "setup", host, "--remove")
    assert removed.returncode == 0, removed.stderr
    assert snapshot(home) == before


def test_codex_keeps_comments_and_other_servers_and_its_commands_run(env: dict[str, str]) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(CODEX_CONFIG)
    assert pinky(env, "setup", "codex").returncode == 0
    text = config.read_text()
    assert "# My settings: keep this comment." in text and "# and this one" in text
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["notes"] == {"command": "notes-server", "args": ["--read-only"]}
    assert os.access(parsed["mcp_servers"]["pinky"]["command"], os.X_OK)
    hooks = json.loads((config.parent / "hooks.json").read_text())["hooks"]
    line = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert line.endswith("pinky-hooks --host codex session-start")
    ran = subprocess.run(line, shell=True, input=json.dumps({"session_id": "s", "cwd": env["HOME"],
                                                            "hook_event_name": "SessionStart", "source": "startup"}),
                         env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr


def test_gemini_keeps_order_indentation_and_the_users_hook(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.write_text(GEMINI_SETTINGS)
    assert pinky(env, "setup", "gemini").returncode == 0
    text = settings.read_text()
    assert text.startswith('{\n    "ui"'), text[:40]
    data = json.loads(text)
    assert list(data) == ["ui", "mcpServers", "hooks"]
    assert list(data["mcpServers"]) == ["notes", "pinky"]
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["command"] == "notify-send done"
    assert data["hooks"]["AfterAgent"][1]["hooks"][0]["command"].endswith("--host gemini stop")
    assert data["hooks"]["AfterAgent"][1]["hooks"][0]["timeout"] == 30000


def test_remove_after_the_user_edited_takes_out_only_pinkys_entries(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.write_text(GEMINI_SETTINGS)
    assert pinky(env, "setup", "gemini").returncode == 0
    data = json.loads(settings.read_text())
    data["ui"]["theme"] = "Dracula"
    settings.write_text(json.dumps(data, indent=4) + "\n")
    assert pinky(env, "setup", "gemini", "--remove").returncode == 0
    left = json.loads(settings.read_text())
    assert left["ui"]["theme"] == "Dracula" and "pinky" not in left["mcpServers"]
    assert left["hooks"] == json.loads(GEMINI_SETTINGS)["hooks"]


def test_dry_run_prints_a_diff_and_writes_nothing(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    before = snapshot(home)
    done = pinky(env, "setup", "codex", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+[mcp_servers.pinky]" in done.stdout and "+++ " in done.stdout
    assert snapshot(home) == before and not Path(env["PINKY_HOME"]).exists()


def test_project_level_writes_the_repositorys_config(env: dict[str, str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    done = subprocess.run([str(BIN / "pinky-brain"), "setup", "gemini", "--project"], env=env, cwd=repo / "src",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pinky" in json.loads((repo / ".gemini" / "settings.json").read_text())["mcpServers"]
    assert not (Path(env["HOME"]) / ".gemini" / "settings.json").exists()


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("config.toml", 'model = "o4"\n[mcp_servers\n', "config.toml is not valid TOML (line 2"),
])
def test_bad_toml_names_the_file_and_line(env: dict[str, str], name: str, text: str, expected: str) -> None:
    config = Path(env["CODEX_HOME"]) / name
    config.write_text(text)
    done = pinky(env, "setup", "codex")
    assert done.returncode != 0 and expected in done.stderr, done.stderr
    assert config.read_text() == text and not (config.parent / "hooks.json").exists()


def test_bad_json_names_the_file_and_line(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.write_text('{\n  "ui": {,\n}\n')
    done = pinky(env, "setup", "gemini")
    assert done.returncode != 0 and "settings.json is not valid JSON (line 2" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert settings.read_text() == '{\n  "ui": {,\n}\n'


def test_read_only_config_is_refused_and_left_alone(env: dict[str, str]) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(CODEX_CONFIG)
    config.chmod(0o444)
    done = pinky(env, "setup", "codex")
    assert done.returncode != 0 and "config.toml is read-only" in done.stderr, done.stderr
    assert config.read_text() == CODEX_CONFIG and not (config.parent / "hooks.json").exists()


def test_unknown_host_lists_the_known_ones(env: dict[str, str]) -> None:
    done = pinky(env, "setup", "vim")
    assert done.returncode != 0 and "codex" in done.stderr and "gemini" in done.stderr


def test_a_host_not_installed_is_named_on_stderr_and_still_set_up(env: dict[str, str]) -> None:
    done = pinky(env, "setup", "gemini")
    assert done.returncode == 0
    assert "Gemini CLI is not installed" in done.stderr
    assert (Path(env["HOME"]) / ".gemini" / "settings.json").exists()


def test_json_output(env: dict[str, str]) -> None:
    done = pinky(env, "setup", "codex", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["host"] == "codex" and {f["created"] for f in data["files"]} == {True}


def test_codex_trust_is_recorded_for_exactly_pinkys_hooks(env: dict[str, str]) -> None:
    """Codex runs a hooks.json hook only when config.toml holds its trusted hash under [hooks.state."<path>:<event
    label>:<group>:<handler>"] (checked with the real Codex 0.169 offline: with the record `codex exec` ran the
    hooks, without it none ran); the user's own hook is not trusted on their behalf."""
    codex = Path(env["CODEX_HOME"])
    user_hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    (codex / "hooks.json").write_text(json.dumps(user_hooks, indent=2) + "\n")
    (codex / "config.toml").write_text(CODEX_CONFIG)
    assert pinky(env, "setup", "codex").returncode == 0
    states = tomllib.loads((codex / "config.toml").read_text())["hooks"]["state"]
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    path = str(codex / "hooks.json")
    ours = {f"{path}:{event}:{g}:0" for name, event in (("SessionStart", "session_start"),
                                                         ("UserPromptSubmit", "user_prompt_submit"),
                                                         ("PreToolUse", "pre_tool_use"), ("Stop", "stop"),
                                                         ("PreCompact", "pre_compact"))
            for g, group in enumerate(hooks[name]) if "pinky-hooks" in group["hooks"][0]["command"]}
    assert set(states) == ours and f"{path}:stop:0:0" not in states and f"{path}:stop:1:0" in states
    assert all(state["trusted_hash"].startswith("sha256:") for state in states.values())
    assert len({state["trusted_hash"] for state in states.values()}) == len(states)
    assert pinky(env, "setup", "codex", "--remove").returncode == 0
    assert "hooks" not in tomllib.loads((codex / "config.toml").read_text())


def doctor(env: dict[str, str]) -> dict[str, dict[str, str]]:
    done = pinky(env, "doctor", "--json")
    return {check["name"]: check for check in json.loads(done.stdout)["checks"]}


def test_doctor_has_a_section_per_host_set_up(env: dict[str, str]) -> None:
    assert not [name for name in doctor(env) if name.startswith(("Codex CLI", "Gemini CLI"))]
    assert pinky(env, "setup", "codex").returncode == 0
    checks = doctor(env)
    assert checks["Codex CLI: MCP server"]["status"] == "ok"
    assert checks["Codex CLI: hooks"]["status"] == "ok" and "all trusted" in checks["Codex CLI: hooks"]["detail"]
    assert "not installed" in checks["Codex CLI: version"]["detail"]  # no codex on this PATH
    assert "apply_patch" in checks["Codex CLI: limits"]["detail"]
    assert not [name for name in checks if name.startswith("Gemini CLI")]

    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(config.read_text().replace("trusted_hash = \"sha256:", "trusted_hash = \"sha256:0", 1))
    hooks = doctor(env)["Codex CLI: hooks"]
    assert hooks["status"] == "warn" and "1 not trusted" in hooks["detail"] and "setup codex" in hooks["fix"]
    mcp = Path(env["HOME"]) / "bin" / "pinky-mcp"
    config.write_text(config.read_text().replace(str(BIN / "pinky-mcp"), str(mcp)))
    assert doctor(env)["Codex CLI: MCP server"]["status"] == "error"


def test_a_config_folder_that_is_a_file_is_one_clear_line(env: dict[str, str]) -> None:
    folder = Path(env["HOME"]) / ".gemini"
    folder.rmdir()
    folder.write_text("not a folder")
    done = pinky(env, "setup", "gemini")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot read" in done.stderr and "settings.json" in done.stderr
    assert folder.read_text() == "not a folder"


def test_opencode_setup_stops_the_offline_npm_stall_and_keeps_the_users_npmrc(env: dict[str, str]) -> None:
    """OpenCode installs @opencode-ai/plugin into its config folder at every start and waits for it once a plugin
    is there; offline npm's retries took ~70 s (tests/hosts/test_opencode_e2e.py measures it with the real CLI)."""
    folder = Path(env["HOME"]) / ".config" / "opencode"
    folder.mkdir(parents=True)
    npmrc = folder / ".npmrc"
    npmrc.write_text("registry=https://npm.example.com/\n")
    assert pinky(env, "setup", "opencode").returncode == 0
    text = npmrc.read_text()
    assert text.startswith("registry=https://npm.example.com/\n") and "fetch-retries=0" in text
    plugin = (folder / "plugins" / "pinky-brain.js").read_text()
    assert "import " not in plugin.replace('import { spawnSync } from "node:child_process";', "")  # built-ins only
    npmrc.write_text(npmrc.read_text() + "strict-ssl=false\n")  # the user edits it afterwards
    assert pinky(env, "setup", "opencode", "--remove").returncode == 0
    assert npmrc.read_text() == "registry=https://npm.example.com/\nstrict-ssl=false\n"
    npmrc.write_text("fetch-retries=5\n")  # the user's own choice is left alone
    assert pinky(env, "setup", "opencode").returncode == 0
    assert npmrc.read_text() == "fetch-retries=5\n"
