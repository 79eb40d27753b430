"""What `pinky-brain setup <host> --project` writes is committed by a team: it holds no path of the machine that
wrote it, runs pinky-brain wherever a clone finds it (PATH, or ~/.local/bin), and where none is installed a hook
says what to install in one line and exits 0 (issue 36 item 2). Real setup runs, real `sh -c` hook processes fed
a host's JSON, the real pinky-mcp."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
SESSION_START = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture()
def world(tmp_path: Path) -> dict[str, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    return {"home": home, "repo": repo}


def env_of(home: Path, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CODEX_"))}
    env.update(HOME=str(home), PATH=path, PINKY_HOME=str(home / ".pinky"), PINKY_HOOKS_NO_BACKGROUND="1")
    return env


def setup_project(world: dict[str, Path], host: str) -> None:
    done = subprocess.run([str(BIN / "pinky-brain"), "setup", host, "--project"], cwd=world["repo"],
                          env=env_of(world["home"], f"{BIN}:/usr/bin:/bin"), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def written(repo: Path) -> dict[str, str]:
    return {str(p.relative_to(repo)): p.read_text() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}


@pytest.mark.parametrize("host", ["codex", "gemini", "cursor", "copilot", "claude", "windsurf", "opencode"])
def test_project_files_hold_no_path_of_this_machine(world: dict[str, Path], host: str) -> None:
    setup_project(world, host)
    files = written(world["repo"])
    assert files, "setup --project wrote nothing"
    for name, text in files.items():
        for local in (str(world["home"]), str(BIN), sys.prefix, "/plugins/data/", "/runtime/"):
            assert local not in text, f"{name} names {local}"


def codex_session_start(world: dict[str, Path]) -> str:
    setup_project(world, "codex")
    hooks = json.loads((world["repo"] / ".codex" / "hooks.json").read_text())["hooks"]
    return hooks["SessionStart"][0]["hooks"][0]["command"]


def run_line(line: str, world: dict[str, Path], path: str) -> subprocess.CompletedProcess[str]:
    payload = json.dumps({**SESSION_START, "cwd": str(world["repo"])})
    return subprocess.run(line, shell=True, input=payload, cwd=world["repo"], env=env_of(world["home"], path),
                          capture_output=True, text=True, timeout=120)


def test_a_project_hook_runs_the_pinky_hooks_on_path(world: dict[str, Path]) -> None:
    line = codex_session_start(world)
    assert shlex.split(line)[3:] == ["pinky-hooks", "--host", "codex", "session-start"]
    ran = run_line(line, world, f"{BIN}:/usr/bin:/bin")
    assert ran.returncode == 0 and "not found" not in ran.stderr, ran.stderr


def test_a_project_hook_finds_pinky_in_local_bin_when_path_lacks_it(world: dict[str, Path]) -> None:
    """A host started from a desktop menu may not have ~/.local/bin on PATH: the hook looks there too."""
    line = codex_session_start(world)
    local = world["home"] / ".local" / "bin"
    local.mkdir(parents=True)
    marker = world["home"] / "ran"
    (local / "pinky-hooks").write_text(f'#!/bin/sh\necho "$@" > {shlex.quote(str(marker))}\n')
    (local / "pinky-hooks").chmod(0o755)
    ran = run_line(line, world, "/usr/bin:/bin")
    assert ran.returncode == 0, ran.stderr
    assert marker.read_text().split() == ["--host", "codex", "session-start"]


def test_a_project_hook_without_pinky_says_what_to_install_and_fails_open(world: dict[str, Path]) -> None:
    line = codex_session_start(world)
    ran = run_line(line, world, "/usr/bin:/bin")
    assert ran.returncode == 0 and ran.stdout == ""
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and "pinky-hooks not found" in lines[0] and "install pinky-brain" in lines[0], lines


def test_the_project_mcp_server_runs_from_path_or_says_what_to_install(world: dict[str, Path]) -> None:
    setup_project(world, "codex")
    server = tomllib.loads((world["repo"] / ".codex" / "config.toml").read_text())["mcp_servers"]["pinky"]
    argv = [server["command"], *server["args"]]
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    found = subprocess.run(argv, input=request, cwd=world["repo"], env=env_of(world["home"], f"{BIN}:/usr/bin:/bin"),
                           capture_output=True, text=True, timeout=120)
    assert json.loads(found.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "pinky-brain", found.stderr
    missing = subprocess.run(argv, input=request, cwd=world["repo"], env=env_of(world["home"], "/usr/bin:/bin"),
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and missing.stdout == ""
    assert "pinky-mcp not found" in missing.stderr and "install pinky-brain" in missing.stderr


def test_setup_again_and_remove_recognise_the_portable_hooks(world: dict[str, Path]) -> None:
    setup_project(world, "gemini")
    settings = world["repo"] / ".gemini" / "settings.json"
    first = settings.read_bytes()
    setup_project(world, "gemini")
    assert settings.read_bytes() == first, "a second setup added its hooks again"
    done = subprocess.run([str(BIN / "pinky-brain"), "setup", "gemini", "--project", "--remove"], cwd=world["repo"],
                          env=env_of(world["home"], f"{BIN}:/usr/bin:/bin"), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert not settings.exists()
