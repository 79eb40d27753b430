"""What a host's config names keeps working when the Claude Code plugin's runtime is rebuilt (issue 36 item 1):
`pinky-brain setup <host>` run through the plugin names the ~/.local/bin launchers, never the runtime's own
folder; those launchers run the plugin copy Claude Code has installed (one runtime for both); a rebuild deletes
no runtime that a plugin folder needs or a process runs from. Real plugin copies, real runtimes made the quick
way (test_plugin_runtime.linked_runtime), real setup, hook and server processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from test_plugin_runtime import PLUGIN, env_for, info, linked_runtime, plugin_copy, preparation

BIN = Path(sys.executable).parent
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


def with_console_scripts(venv: Path) -> Path:
    """A pip-built runtime has pinky-mcp and pinky-hooks in its bin/: the folder setup once named."""
    for name in ("pinky-mcp", "pinky-hooks", "pinky-brain"):
        text = (BIN / name).read_text().split("\n", 1)[1]
        (venv / "bin" / name).write_text(f"#!{venv / 'bin' / 'python'}\n{text}")
        (venv / "bin" / name).chmod(0o755)
    return venv


def user_env(tmp_path: Path, data: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    env = env_for(data, tmp_path, HOME=str(home), CODEX_HOME=str(home / ".codex"), PINKY_HOME=str(tmp_path / "pinky"),
                  CLAUDE_CONFIG_DIR=str(tmp_path / "claude"), PATH="/usr/bin:/bin")
    return {k: v for k, v in env.items() if k not in ("CLAUDE_PLUGIN_DATA", "VIRTUAL_ENV")}


def update(plugin: Path) -> None:
    """A plugin update, or a commit in the clone: new package content, so a new runtime key."""
    init = plugin / "package" / "src" / "pinky" / "__init__.py"
    init.write_text(init.read_text() + f"\n# an update {time.time()}\n")


def start_server(command: str, env: dict[str, str], cwd: Path) -> dict:
    done = subprocess.run([command], input=json.dumps(INITIALIZE) + "\n", capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])


def test_setup_through_the_plugin_names_launchers_that_survive_a_rebuild(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    data = config / "plugins" / "data" / "pinky-pinky-market"
    copy = plugin_copy(tmp_path)
    env = user_env(tmp_path, data)
    old = with_console_scripts(linked_runtime({**env, "CLAUDE_PLUGIN_DATA": str(data)}, copy))
    done = subprocess.run([str(copy / "bin" / "pinky-brain"), "setup", "codex"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    codex = Path(env["CODEX_HOME"])
    local = Path(env["HOME"]) / ".local" / "bin"
    server = tomllib.loads((codex / "config.toml").read_text())["mcp_servers"]["pinky"]["command"]
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    line = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert server == str(local / "pinky-mcp"), server
    assert line.startswith(str(local / "pinky-hooks")), line
    assert "/runtime/" not in (codex / "config.toml").read_text() + (codex / "hooks.json").read_text()
    assert f"wrote {local / 'pinky-hooks'}" in done.stdout

    update(copy)  # the next command prepares a new runtime, and that preparation prunes the old one
    new = linked_runtime({**env, "CLAUDE_PLUGIN_DATA": str(data)}, copy)
    assert new != old
    preparation.remove_unless_running(str(old))  # what a later rebuild's prune does (KEEP_OLD spares it once)
    assert not old.exists()

    assert start_server(server, env, tmp_path)["result"]["serverInfo"]["name"] == "pinky-brain"
    ran = subprocess.run(line, shell=True, input=json.dumps({"session_id": "s", "cwd": str(tmp_path),
                                                            "hook_event_name": "SessionStart"}),
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and "pinky-brain hook" not in ran.stderr, ran.stderr


def installed_copy(config: Path, tmp_path: Path) -> Path:
    """The plugin where Claude Code keeps it, named in installed_plugins.json as Claude Code writes it."""
    cache = config / "plugins" / "cache" / "pinky-market" / "pinky" / "0.1.0"
    cache.parent.mkdir(parents=True)
    shutil.copytree(PLUGIN, cache, ignore=shutil.ignore_patterns("__pycache__"))
    (config / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "pinky@pinky-market": [{"scope": "user", "installPath": str(cache), "version": "0.1.0"}]}}, indent=2))
    return cache


def test_the_local_bin_launchers_run_the_plugin_copy_claude_code_has_installed(tmp_path: Path) -> None:
    """install-cli run from the clone (as the README says) once ran the clone, while Claude Code ran its own copy:
    two runtimes that rebuilt and pruned each other. The launchers now run the installed copy."""
    config = tmp_path / "claude"
    env = user_env(tmp_path, config / "plugins" / "data" / "pinky-pinky-market")
    done = subprocess.run([sys.executable, "-c", "from pinky.setup.cli_install import install_cli; "
                           f"install_cli(program={str(PLUGIN / 'bin' / 'pinky-brain')!r}, force=True)"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    cache = installed_copy(config, tmp_path)
    for name in ("pinky-brain", "runtime/run"):
        stub = cache / name.replace("pinky-brain", "bin/pinky-brain")
        stub.write_text('#!/bin/sh\necho "installed copy $*"\n')
    local = Path(env["HOME"]) / ".local" / "bin"
    for name, expected in (("pinky-brain", "installed copy --version"), ("pinky-hooks", "installed copy hooks x"),
                           ("pinky-mcp", "installed copy mcp x")):
        ran = subprocess.run([str(local / name), *(["--version"] if name == "pinky-brain" else ["x"])], env=env,
                             capture_output=True, text=True, timeout=60)
        assert ran.stdout.strip() == expected, (name, ran.stdout, ran.stderr)
    (config / "plugins" / "installed_plugins.json").write_text('{"version": 2, "plugins": {}}')
    ran = subprocess.run([str(local / "pinky-mcp"), "--version"], env=env, capture_output=True, text=True, timeout=120)
    assert "installed copy" not in ran.stdout  # uninstalled: the folder it was written from again


def hold_lease(venv: Path) -> subprocess.Popen[str]:
    """A process that runs from `venv` the way the launcher starts one: holding its lease."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import pinky_runtime_lookup as l; "
            "assert l.lease(sys.argv[2]); print('held', flush=True); sys.stdin.read()")
    process = subprocess.Popen([sys.executable, "-c", code, str(PLUGIN / "runtime"), str(venv)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def ready_runtimes(home: Path, *names: str) -> None:
    for age, name in enumerate(names):
        (home / name).mkdir(parents=True)
        (home / name / "pinky-ready").write_text("")
        os.utime(home / name / "pinky-ready", (1_000_000 - age, 1_000_000 - age))


def test_prune_spares_a_runtime_a_process_runs_from_until_it_ends(tmp_path: Path) -> None:
    home = tmp_path / "runtime"
    ready_runtimes(home, "new", "previous", "in-use", "unused")
    process = hold_lease(home / "in-use")
    try:
        preparation.prune(str(home), str(home / "new"))
        assert sorted(p.name for p in home.iterdir()) == ["in-use", "new", "previous"]
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)
    preparation.prune(str(home), str(home / "new"))
    assert sorted(p.name for p in home.iterdir()) == ["new", "previous"]


def test_prune_spares_the_runtime_each_plugin_folder_needs(tmp_path: Path) -> None:
    """The clone and Claude Code's copy of it need different runtimes after a commit in the clone: neither
    rebuild deletes the other's."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    clone, cached = plugin_copy(tmp_path, "clone"), plugin_copy(tmp_path, "cached")
    copies = linked_runtime(env, cached)
    update(clone)
    first = linked_runtime(env, clone)
    update(clone)  # another commit: the clone's first runtime is needed by nothing now
    second = linked_runtime(env, clone)
    ready_runtimes(data / "runtime", "newer-unused")  # the KEEP_OLD one
    os.utime(data / "runtime" / "newer-unused" / "pinky-ready")
    preparation.prune(str(data / "runtime"), str(second))
    assert copies.exists(), "the runtime of Claude Code's copy was pruned by the clone's rebuild"
    assert not first.exists() and second.exists()
    shutil.rmtree(cached)  # Claude Code removed that version: its runtime goes with the next prune
    preparation.prune(str(data / "runtime"), str(second))
    preparation.prune(str(data / "runtime"), str(second))
    assert not copies.exists()


def test_a_launcher_started_process_holds_its_runtime(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    venv = linked_runtime(env)
    server = subprocess.Popen(["sh", str(PLUGIN / "runtime" / "run"), "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        server.stdin.flush()
        assert b"pinky-brain" in server.stdout.readline()
        preparation.remove_unless_running(str(venv))
        assert venv.exists() and info(env)["ready"] is True
    finally:
        server.kill()
        server.wait(timeout=30)
    preparation.remove_unless_running(str(venv))
    assert not venv.exists()


@pytest.mark.parametrize("host", ["codex", "gemini"])
def test_a_broken_host_entry_is_said_at_the_next_session_start(tmp_path: Path, host: str) -> None:
    env = user_env(tmp_path, tmp_path / "data")
    home = Path(env["HOME"])
    gone = tmp_path / "data" / "runtime" / "0123456789abcdef" / "bin"
    if host == "codex":
        (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": f"{gone}/pinky-hooks --host codex session-start"}]}]}}))
    else:
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"pinky": {
            "command": f"{gone}/pinky-mcp", "args": []}}}))
    project = tmp_path / "proj"
    (project / "documentation").mkdir(parents=True)
    (project / "pinky.toml").write_text("")
    ran = subprocess.run([str(BIN / "pinky-hooks"), "--host", "claude", "session-start"], cwd=project,
                         input=json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart"}),
                         env={**env, "PINKY_HOOKS_NO_BACKGROUND": "1"}, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    fix = f"run `pinky-brain setup {host}`"
    assert fix in out["systemMessage"] and fix in out["hookSpecificOutput"]["additionalContext"]
    assert f"{gone}/pinky-" in out["systemMessage"] and fix in ran.stderr


def test_doctor_warns_of_an_entry_that_names_a_plugin_runtime(tmp_path: Path) -> None:
    """What pinky-brain wrote before these launchers still runs until the next update deletes it: doctor says so."""
    env = user_env(tmp_path, tmp_path / "data")
    runtime = with_console_scripts(linked_runtime({**env, "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}))
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(f'[mcp_servers.pinky]\ncommand = "{runtime}/bin/pinky-mcp"\n')
    doctor = subprocess.run([str(BIN / "pinky-brain"), "doctor", "--json"], env={**env, "PINKY_HASH_EMBED": "1"},
                            cwd=tmp_path, capture_output=True, text=True, timeout=180)
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    server = checks["Codex CLI: MCP server"]
    assert server["status"] == "warn" and "next plugin update deletes" in server["detail"], server
    assert server["fix"].startswith("pinky-brain setup codex")
