"""The real agent CLIs for the host tests, and a fresh user's world to run them in.

Each CLI is pinned (PINNED) and comes from PATH when that is the pinned version; else, with PINKY_TEST_HOSTS=1
(`.ci/run` sets it; PINKY_TEST_CLAUDE=1 still works for Claude Code alone), it is installed from the npm
registry once into pytest's cache folder, under a lock because test files run in parallel processes; without
either, the test is skipped.

A World is a fresh HOME and an initialised project; its sessions run the CLI against tests/support/model_stand_in.py
inside a network namespace with loopback only (unshare -n) where this machine allows it, with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# npm package, version, the binary in node_modules/.bin, pytest's cache folder (Claude Code's name predates this)
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.337", "claude", "claude-code"),
    "codex": ("@openai/codex", "0.171.0", "codex", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini", "gemini-cli"),
    "opencode": ("opencode-ai", "1.18.33", "opencode", "opencode"),
    "copilot": ("@github/copilot", "1.0.102", "copilot", "copilot"),
    "cline": ("cline", "3.0.65", "cline", "cline"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4", "qwen", "qwen-code"),
    "kilo": ("@kilocode/cli", "7.8.1", "kilo", "kilo-cli"),
}
# Packages installed beside a pinned one, its install scripts skipped: @kilocode/cli 7.8.1's script fails offline
# and online alike (it asks npm for @kilocode/cli-linux-x64@7.8.1, which was never published: newest 7.7.9), and its
# `kilo` runs the platform package's binary, found in node_modules (it reports 7.7.9).
BESIDE = {"kilo": ("@kilocode/cli-linux-x64@7.7.9",)}
# PINKY_HOST_VERSIONS="claude=2.1.340,codex=0.172.0" runs other releases than the pinned ones
# (scripts/hosts_matrix.py sets it to what npm serves today).
OVERRIDES = dict(part.split("=", 1) for part in os.environ.get("PINKY_HOST_VERSIONS", "").split(",") if "=" in part)
PINNED = {host: (package, OVERRIDES.get(host, version), binary, folder)
          for host, (package, version, binary, folder) in PINNED.items()}
STAND_IN = Path(__file__).resolve().parent / "model_stand_in.py"
VENV_BIN = Path(sys.executable).parent  # pinky-brain, pinky-mcp and pinky-hooks, as a user's install has them
# What each CLI must not try to reach offline: update checks, telemetry, downloads of plugins and models.
OFFLINE_ENV = {
    "claude": {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1", "MCP_CONNECTION_NONBLOCKING": "0"},
    "codex": {},
    "gemini": {"GEMINI_CLI_TRUST_WORKSPACE": "true"},
    "opencode": {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                 "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"},
    # BYOK offline: COPILOT_OFFLINE plus a provider (the sessions add its URL); no GitHub sign-in, no update check
    "copilot": {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "COPILOT_PROVIDER_API_KEY": "stand-in-key",
                "COPILOT_MODEL": "stand-in"},
    # The session runs in the CLI process, not in a hub daemon started for it that would outlive the test
    "cline": {"CLINE_SESSION_BACKEND_MODE": "local", "CLINE_NO_AUTO_UPDATE": "1"},
    "qwen": {},  # no update check nor usage statistics: the user's settings say so (host_worlds.QWEN_SETTINGS)
    "kilo": {"KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1",
             "KILO_DISABLE_DEFAULT_PLUGINS": "1"},
}
FOREIGN = ("PINKY_", "CLAUDE", "ANTHROPIC", "OPENAI", "CODEX", "GEMINI", "GOOGLE", "OPENCODE", "COPILOT", "GH_",
           "GITHUB_", "QWEN", "KILO", "PIP_", "VIRTUAL_ENV", "XDG_", "CLINE_")


def opted_in(host: str) -> bool:
    claude_alone = host == "claude" and os.environ.get("PINKY_TEST_CLAUDE") == "1"
    return os.environ.get("PINKY_TEST_HOSTS") == "1" or claude_alone


def on_path(binary: str, version: str) -> str | None:
    found = shutil.which(binary)
    if found is None:
        return None
    try:
        shown = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if version in shown else None


def find_cli(request: pytest.FixtureRequest, host: str) -> str:
    """The pinned CLI of `host` (a key of PINNED): on PATH, or installed from npm into pytest's cache."""
    package, version, binary, folder = PINNED[host]
    found = on_path(binary, version)
    if found:
        return found
    if not opted_in(host):
        pytest.skip(f"{binary} {version} is not installed (set PINKY_TEST_HOSTS=1 to install it from npm)")
    if shutil.which("npm") is None:  # asked for the real CLIs (CI does): a skip would hide that none ran
        pytest.fail("PINKY_TEST_HOSTS=1 (or PINKY_TEST_CLAUDE=1) needs npm to install the pinned agent CLIs")
    prefix = Path(request.config.cache.mkdir(f"{folder}-{version}"))
    installed = prefix / "node_modules" / ".bin" / binary
    if not installed.exists():
        import fcntl

        with open(prefix / ".install.lock", "w") as lock:  # test processes run in parallel: one installs
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not installed.exists():
                beside = BESIDE.get(host, ())
                subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--prefer-online",
                                *(["--ignore-scripts"] if beside else []), f"{package}@{version}", *beside],
                               check=True, capture_output=True, timeout=600)
    return str(installed)


def loopback_only() -> list[str]:
    """The command prefix that confines a process to a network namespace with loopback only, if allowed."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return []
    prefix = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    return prefix if probe.returncode == 0 else []


@dataclass
class Session:
    requests: list[dict[str, Any]]
    stdout: str
    stderr: str
    returncode: int
    seconds: float

    @property
    def main(self) -> list[dict[str, Any]]:
        """The requests that offer tools (the agent loop's, not a router's or a title's)."""
        return [r for r in self.requests if r["body"].get("tools")]

    def shown(self) -> str:
        """Everything the model was sent in the agent loop, as one JSON text."""
        return json.dumps([r["body"] for r in self.main], ensure_ascii=False)


@dataclass
class World:
    """A fresh user: HOME, an initialised project with a note in it, the CLIs' binaries."""

    root: Path
    home: Path
    project: Path
    env: dict[str, str]
    isolate: list[str]
    sessions: dict[str, Session] = field(default_factory=dict)

    def pinky(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(VENV_BIN / "pinky-brain"), *args], cwd=self.project, env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=300)

    def run(self, command: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.isolate, *command], cwd=self.project, env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def session(self, name: str, script: list[dict[str, Any]], command: list[str], extra_env: dict[str, str],
                timeout: float = 420) -> Session:
        """Run `command` against the stand-in playing `script`; "{port}" in it and in extra_env is the port."""
        logdir = self.root / f"log-{name}"
        script_path = self.root / f"script-{name}.json"
        script_path.write_text(json.dumps(script), encoding="utf-8")
        started = time.monotonic()
        result = subprocess.run([*self.isolate, sys.executable, str(STAND_IN), "run", str(logdir), str(script_path),
                                 "--timeout", str(timeout), "--", *command], cwd=self.project,
                                env={**self.env, **extra_env}, capture_output=True, text=True, timeout=timeout + 60,
                                stdin=subprocess.DEVNULL)
        requests = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(logdir.glob("[0-9]*.json"))]
        done = Session(requests, result.stdout, result.stderr, result.returncode, time.monotonic() - started)
        self.sessions[name] = done
        return done


def new_world(root: Path, hosts: tuple[str, ...], note: tuple[str, str]) -> World:
    """A fresh HOME (XDG folders inside it) and a project initialised by `pinky-brain init` holding one gotcha
    (title, body) saved from the CLI, as a user who has used pinky-brain before has."""
    home, project = root / "home", root / "project"
    home.mkdir(parents=True)
    project.mkdir()
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    folders = [str(VENV_BIN), *(str(Path(shutil.which("node") or "/usr/bin/node").parent),), "/usr/local/bin",
               "/usr/bin", "/bin"]
    env = {**inherited, "HOME": str(home), "PATH": os.pathsep.join(dict.fromkeys(folders)),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local" / "state")}
    for host in hosts:
        env.update(OFFLINE_ENV[host])
    world = World(root, home, project, env, loopback_only())
    for args, stdin in ((["init"], None), (["save", "-t", note[0], "--type", "gotcha", "--tag", "deploy"], note[1])):
        done = world.pinky(*args, stdin=stdin)
        assert done.returncode == 0, done.stdout + done.stderr
    return world


def diary_today(project: Path) -> str:
    from datetime import date

    path = project / "documentation" / "diary" / f"{date.today().isoformat()}.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def brain_tools() -> list[str]:
    """The names of the tools pinky-mcp offers at its default tier."""
    from pinky.mcp.tiers import tools_for

    return [spec.name for spec in tools_for("write")]
