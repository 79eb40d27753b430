"""Per host: the user's own configuration before pinky-brain (their model provider, another MCP server, their
settings and comments), the documented set-up, and the headless session command pointed at the stand-in.

The set-up is `pinky-brain setup <host>`. Until that command exists in this checkout, `configure` writes what
was found to work by hand with the real CLIs (an MCP entry for `pinky-mcp`, hooks running `pinky-hooks`),
so the sessions still run; the tests that need the command itself are marked xfail(strict) by NEEDS_SETUP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from host_support import World, find_cli, new_world

try:
    from pinky.cli.main import cli as _cli

    HAS_SETUP = "setup" in getattr(_cli, "commands", {})
except ImportError:  # pragma: no cover - the package is installed in the test venv
    HAS_SETUP = False


NEEDS_SETUP = pytest.mark.xfail(not HAS_SETUP, strict=True,
                                reason="needs `pinky-brain setup <host>` (branch hosts-setup, not merged yet)")

# --- Codex CLI: $CODEX_HOME/config.toml (CODEX_HOME defaults to ~/.codex), TOML with the user's comments ------
CODEX_CONFIG = """\
# My Codex settings. The model runs behind our gateway.
model = "stand-in"
model_provider = "standin"  # see below

[model_providers.standin]
name = "stand-in"
base_url = "http://127.0.0.1:9/v1"  # the sessions pass the stand-in's port with -c
env_key = "STANDIN_KEY"
wire_api = "responses"
supports_websockets = false

# A server of my own, switched off for now.
[mcp_servers.notes]
command = "notes-server"
args = ["--read-only"]
enabled = false
"""
CODEX_HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "Stop": "stop"}

# --- Gemini CLI: ~/.gemini/settings.json --------------------------------------------------------------------
GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "ui": {"theme": "GitHub"},
    "mcp": {"excluded": ["notes"]},
    "mcpServers": {"notes": {"command": "notes-server", "args": ["--read-only"]}},
}
GEMINI_HOOKS = {"SessionStart": "session-start", "BeforeAgent": "user-prompt", "AfterAgent": "stop"}

# --- Qwen Code: ~/.qwen/settings.json, an OpenAI-compatible provider from the environment (QWEN_ENV) ---------
QWEN_SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "ui": {"theme": "GitHub"},
    "mcp": {"excluded": ["notes"]},
    "mcpServers": {"notes": {"command": "notes-server", "args": ["--read-only"]}},
}

# --- OpenCode: ~/.config/opencode/opencode.json, an OpenAI-compatible provider --------------------------------
OPENCODE_CONFIG = {
    "$schema": "https://opencode.ai/config.json",
    "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "stand-in",
                             "options": {"baseURL": "{env:STANDIN_URL}", "apiKey": "x"},
                             "models": {"stand-in": {"name": "stand-in", "tool_call": True}}}},
    "model": "standin/stand-in",
    "autoupdate": False,
    "share": "disabled",
}
# Kilo Code CLI, an OpenCode fork: ~/.config/kilo/kilo.json, the same provider shape
KILO_CONFIG = {**OPENCODE_CONFIG, "$schema": "https://app.kilo.ai/config.json"}


def codex_home(world: World) -> Path:
    return world.home / ".codex"


# --- Cline CLI: ~/.cline (CLINE_DIR): MCP servers in data/settings/cline_mcp_settings.json, plugins, hook files ---
CLINE_MCP = {"mcpServers": {"notes": {"command": "notes-server", "args": ["--read-only"], "disabled": True}}}
CLINE_HOOK = "#!/bin/sh\n# my own: log every finished task\necho done >> /tmp/my-cline-tasks.log\n"


def write_user_config(world: World, host: str) -> None:
    """What the user had before installing pinky-brain."""
    if host == "codex":
        codex_home(world).mkdir(parents=True, exist_ok=True)
        (codex_home(world) / "config.toml").write_text(CODEX_CONFIG, encoding="utf-8")
    elif host == "gemini":
        (world.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (world.home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2) + "\n")
    elif host == "opencode":
        folder = world.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(OPENCODE_CONFIG, indent=2) + "\n")
    elif host == "cline":
        settings = world.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "cline_mcp_settings.json").write_text(json.dumps(CLINE_MCP, indent=2) + "\n")
        (world.home / ".cline" / "hooks").mkdir(parents=True)
        (world.home / ".cline" / "hooks" / "TaskComplete").write_text(CLINE_HOOK)
    elif host == "kilo":
        folder = world.home / ".config" / "kilo"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kilo.json").write_text(json.dumps(KILO_CONFIG, indent=2) + "\n")
    elif host == "qwen":
        (world.home / ".qwen").mkdir(parents=True, exist_ok=True)
        (world.home / ".qwen" / "settings.json").write_text(json.dumps(QWEN_SETTINGS, indent=2) + "\n")


def hook_entries(events: dict[str, str], host: str) -> dict[str, list[dict[str, object]]]:
    """Claude-Code-shaped hook entries; Gemini CLI counts a hook's `timeout` in milliseconds (the others'
    defaults are in seconds and fit)."""
    flag = "" if host == "claude" else f"--host {host} "
    limit = {"timeout": 30_000} if host == "gemini" else {}
    return {name: [{"hooks": [{"type": "command", "command": f"pinky-hooks {flag}{event}", **limit}]}]
            for name, event in events.items()}


def configure_by_hand(world: World, host: str) -> None:
    """The entries found to work by hand with the real CLIs, for a checkout without `pinky-brain setup`."""
    if host == "codex":
        with open(codex_home(world) / "config.toml", "a", encoding="utf-8") as config:
            config.write('\n[mcp_servers.pinky]\ncommand = "pinky-mcp"\n')
        (codex_home(world) / "hooks.json").write_text(json.dumps({"hooks": hook_entries(CODEX_HOOKS, host)}))
    elif host == "gemini":
        path = world.home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text())
        settings["mcpServers"]["pinky"] = {"command": "pinky-mcp"}
        settings["hooks"] = hook_entries(GEMINI_HOOKS, host)
        path.write_text(json.dumps(settings, indent=2) + "\n")
    elif host == "opencode":
        path = world.home / ".config" / "opencode" / "opencode.json"
        config = json.loads(path.read_text())
        config["mcp"] = {"pinky": {"type": "local", "command": ["pinky-mcp"], "enabled": True}}
        path.write_text(json.dumps(config, indent=2) + "\n")
    elif host == "claude":
        settings = world.home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"hooks": hook_entries({"SessionStart": "session-start"}, "claude")}))
        done = world.pinky("setup-claude")
        assert done.returncode == 0, done.stdout + done.stderr


def configure(world: World, host: str) -> None:
    """The user's own config, then the documented set-up (`pinky-brain setup <host>`, or by hand without it)."""
    write_user_config(world, host)
    if not HAS_SETUP:
        configure_by_hand(world, host)
        return
    done = world.pinky("setup", host)
    assert done.returncode == 0, done.stdout + done.stderr


def codex_command(codex: str, prompt: str) -> list[str]:
    trust = [] if HAS_SETUP else ["--dangerously-bypass-hook-trust"]  # setup records the trust of its hooks
    return [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *trust,
            "-c", 'model_providers.standin.base_url="http://127.0.0.1:{port}/v1"', prompt]


CODEX_ENV = {"STANDIN_KEY": "stand-in-key"}
GEMINI_ENV = {"GEMINI_API_KEY": "stand-in-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{port}"}
OPENCODE_ENV = {"STANDIN_URL": "http://127.0.0.1:{port}/v1"}
CLAUDE_ENV = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-stand-in"}


COPILOT_ENV = {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:{port}/v1"}
QWEN_ENV = {"OPENAI_BASE_URL": "http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "stand-in-key",
            "OPENAI_MODEL": "stand-in"}


def qwen_command(qwen: str, prompt: str) -> list[str]:
    """Headless with file edits approved (as root, --yolo asks for a sandbox); MCP tools need the server's
    `trust`, which setup writes."""
    return [qwen, "-p", prompt, "--approval-mode", "auto-edit"]


CLINE_ENV: dict[str, str] = {}
CLINE_MODEL = "-k stand-in-key -m stand-in"


def cline_command(cline: str, prompt: str) -> list[str]:
    """`cline auth` points the openai-compatible provider at the stand-in's port (Cline reads its base URL only
    from providers.json), then one headless run of `prompt` (stdout is not a terminal: headless, auto-approved)."""
    script = (f'"$1" auth -p openai-compatible {CLINE_MODEL} -b http://127.0.0.1:{{port}}/v1 >/dev/null && '
              f'exec "$1" -P openai-compatible {CLINE_MODEL} "$0"')
    return ["sh", "-c", script, prompt, cline]


def copilot_command(copilot: str, prompt: str) -> list[str]:
    return [copilot, "-p", prompt, "--allow-all-tools"]


def gemini_command(gemini: str, prompt: str) -> list[str]:
    return [gemini, "-p", prompt, "--yolo"]


def opencode_command(opencode: str, prompt: str) -> list[str]:
    return [opencode, "run", prompt]


def kilo_command(kilo: str, prompt: str) -> list[str]:
    return [kilo, "run", prompt]


def claude_command(claude: str, prompt: str) -> list[str]:
    return [claude, "-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
            "--allowedTools", "mcp__pinky__*", "Bash(sleep:*)"]  # sleep: the stand-in's wait for a server


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def setup_round_trip(world: World, host: str, folder: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """`pinky-brain setup <host>` twice, then `--remove`: (the folder after the first run, after the second),
    asserting that each run succeeds and that --remove gives back the bytes there were before."""
    before = snapshot(folder)
    runs = []
    for _ in range(2):
        done = world.pinky("setup", host)
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(snapshot(folder))
    removed = world.pinky("setup", host, "--remove")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert snapshot(folder) == before
    return runs[0], runs[1]


# --- the session every host's own e2e file starts with -----------------------------------------------------------

KNOWN = ("Staging deploys need the VPN up", "Run `vpn up` before `make deploy-staging`, or it times out.")
PROMPT = "Remember why the pool hangs on shutdown."
SAVE = {"title": "PG pool hangs on shutdown", "type": "gotcha", "tags": ["postgres"],
        "body": "Call pool.close(timeout=5) before the process exits, or it hangs."}
SESSIONS = {"codex": (codex_command, CODEX_ENV), "gemini": (gemini_command, GEMINI_ENV),
            "opencode": (opencode_command, OPENCODE_ENV), "copilot": (copilot_command, COPILOT_ENV),
            "cline": (cline_command, CLINE_ENV),
            "qwen": (qwen_command, QWEN_ENV), "kilo": (kilo_command, OPENCODE_ENV)}


def saving_world(factory: pytest.TempPathFactory, request: pytest.FixtureRequest, host: str) -> World:
    """A fresh HOME whose brain knows KNOWN, the user's own config of `host`, the documented set-up, then one
    headless session of the real CLI (as `sessions["save"]`) in which the model asks for a `brain_save` of SAVE."""
    world = new_world(factory.mktemp(f"{host}-e2e"), (host,), KNOWN)
    configure(world, host)
    command, env = SESSIONS[host]
    cli = find_cli(request, host)
    world.session("save", [{"tool": "brain_save", "wait": 30, "input": SAVE}], command(cli, PROMPT),
                  {**env, **cli_env(host, cli)})
    return world


def cli_env(host: str, cli: str) -> dict[str, str]:
    """Copilot CLI unpacks its 235 MB package into the user's cache on its first start (~9 s): every world's
    fresh HOME would pay it, so the worlds share one next to the npm install (COPILOT_PKG_CACHE_HOME)."""
    if host != "copilot":
        return {}
    return {"COPILOT_PKG_CACHE_HOME": str(Path(cli).resolve().parents[3] / "copilot-pkg-cache")}
