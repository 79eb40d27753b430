"""The doctor's Claude Code checks: is the plugin installed and its runtime ready, is the server loaded
once, is the workspace trusted, can the brain's tools be called.

Facts these checks rely on (Claude Code 2.1.197, observed headless):
- The plugin's hooks and server run in an untrusted workspace, but its tools are refused ("you haven't
  granted it yet") unless allowed by the user's settings or `--allowedTools`; the project's
  `.claude/settings*.json` allow rules are ignored until the workspace is trusted.
- Trust is `projects[<git top, else the folder>].hasTrustDialogAccepted` in `~/.claude.json`
  (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set); a trusted parent folder does not count.
- The plugin's runtime lives in `<config>/plugins/data/pinky-<marketplace>/runtime/`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from pinky.config import Config
from pinky.errors import InvalidInput
from pinky.setup.check import Check
from pinky.setup.claude_setup import MCP_JSON_KEY, PLUGIN_ID, PLUGIN_TOOLS, PROJECT_TOOLS, read_json
from pinky.setup.project import git_top

INSTALL = f"claude plugin marketplace add <pinky-brain clone or git URL> && claude plugin install {PLUGIN_ID}"


def claude_dir() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def claude_json() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() / ".claude.json" if configured else Path.home() / ".claude.json"


def load_quiet(path: Path) -> dict[str, Any]:
    try:
        return read_json(path)
    except (OSError, InvalidInput):
        return {}


def settings_files(root: Path | None) -> list[Path]:
    user = [claude_dir() / "settings.json"]
    if root is None:
        return user
    return [*user, root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]


def plugin_enabled(settings: list[dict[str, Any]]) -> bool:
    enabled = False
    for data in settings:  # later files (project, local) override earlier ones (user)
        plugins = data.get("enabledPlugins")
        if isinstance(plugins, dict):
            for key, value in plugins.items():
                if isinstance(key, str) and key.split("@")[0] == "pinky":
                    enabled = bool(value)
    return enabled


def _allowed(settings: dict[str, Any], rule: str) -> bool:
    allow = (settings.get("permissions") or {}).get("allow") if isinstance(settings.get("permissions"), dict) else None
    return isinstance(allow, list) and any(item in (rule, rule.rstrip("*")) for item in allow)


# --- the checks ------------------------------------------------------------------------------------


def _plugin(settings: list[dict[str, Any]], has_entry: bool) -> Check:
    name = "claude code: plugin"
    if plugin_enabled(settings):
        return Check(name, "ok", f"{PLUGIN_ID} enabled: it brings the server and the hooks")
    if has_entry:
        return Check(name, "warn", "not installed: the project's .mcp.json gives the agent the tools, but no hook "
                     "runs (no session digest, no linked notes on Read, no diary)", INSTALL)
    return Check(name, "warn", "not installed: Claude Code sessions here have neither the brain's tools nor its hooks",
                 INSTALL)


def _runtime_folders() -> list[Path]:
    data = claude_dir() / "plugins" / "data"
    return sorted(data.glob("pinky-*")) if data.is_dir() else []


def _runtime(settings: list[dict[str, Any]]) -> Check | None:
    """The plugin prepares its Python runtime once, in its data folder; say whether that worked."""
    if not plugin_enabled(settings):
        return None
    name = "claude code: plugin runtime"
    for folder in _runtime_folders():
        home = folder / "runtime"
        failed = home / "failed"
        if failed.is_file():
            message = failed.read_text(encoding="utf-8", errors="replace").split("\n", 2)[-1].strip()
            return Check(name, "warn", f"preparing it failed: {message[:300]}",
                         f"read {home / 'prepare.log'}, fix the cause (a package index the installer cannot "
                         "reach?), then start a new session or run `pinky-brain` in the agent's shell")
        python = home / "python"
        if python.is_file():
            interpreter = python.read_text(encoding="utf-8").strip()
            if Path(interpreter).exists():
                return Check(name, "ok", f"ready ({Path(interpreter).parent.parent})")
    return Check(name, "warn", "not prepared yet: the first Claude Code session prepares it (10-25 s, in the "
                 "background; the brain's tools appear when it is done)",
                 "start a Claude Code session, or run `pinky-brain doctor` from the agent's shell")


def _server(root: Path, settings: list[dict[str, Any]], project_state: dict[str, Any]) -> Check:
    name = "claude code: MCP server"
    servers = load_quiet(root / ".mcp.json").get("mcpServers") or {}
    entry = servers.get(MCP_JSON_KEY) if isinstance(servers, dict) else None
    if isinstance(entry, dict) and plugin_enabled(settings):
        return Check(name, "warn", f"both the plugin and {root / '.mcp.json'} start a pinky server: every brain "
                     "tool appears twice",
                     f"delete the {MCP_JSON_KEY!r} server from .mcp.json (the plugin's is enough)")
    if plugin_enabled(settings):
        return Check(name, "ok", "served by the plugin (plugin servers need no approval)")
    if not isinstance(entry, dict):
        return Check(name, "warn", "no pinky server for this project",
                     "install the plugin, or `pinky-brain setup-claude`")
    sources = [project_state, *settings]
    if any(MCP_JSON_KEY in (s.get("disabledMcpjsonServers") or []) for s in sources):
        return Check(name, "warn", f"{MCP_JSON_KEY!r} is listed in disabledMcpjsonServers",
                     "remove it from disabledMcpjsonServers (claude mcp reset-project-choices resets the choice)")
    if not shutil.which(str(entry.get("command") or "")):
        return Check(name, "warn", f".mcp.json runs {entry.get('command')!r}, which is not on PATH",
                     "pipx install <pinky-brain clone or git URL>, or install the plugin instead")
    if any(s.get("enableAllProjectMcpServers") is True or MCP_JSON_KEY in (s.get("enabledMcpjsonServers") or [])
           for s in sources):
        return Check(name, "ok", f"{MCP_JSON_KEY!r} from .mcp.json is approved")
    return Check(name, "warn", f"{MCP_JSON_KEY!r} in .mcp.json is not approved yet; interactive sessions will ask",
                 f"approve it at the prompt of the next `claude` session, or add \"enabledMcpjsonServers\": "
                 f"[\"{MCP_JSON_KEY}\"] to .claude/settings.local.json")


def _trust(root: Path, settings: list[dict[str, Any]], project_state: dict[str, Any], key: Path) -> Check:
    name = "claude code: workspace trust"
    rule = PLUGIN_TOOLS if plugin_enabled(settings) else PROJECT_TOOLS
    allowed_for_user = _allowed(settings[0], rule)
    if project_state.get("hasTrustDialogAccepted") is True:
        return Check(name, "ok", f"{key} is trusted")
    if allowed_for_user:
        return Check(name, "ok", f"{key} is not trusted, but your user settings allow {rule}, so headless runs "
                     "can call the brain's tools")
    return Check(name, "warn", f"{key} is not trusted: headless runs (claude -p) refuse the brain's tools and ignore "
                 "this project's .claude/settings.json allow rules until it is",
                 f"run `claude` in {key} once and accept the trust dialog; or allow the tools for your user "
                 f"(\"permissions\": {{\"allow\": [\"{rule}\"]}} in {claude_dir() / 'settings.json'}); or pass "
                 f"--allowedTools '{rule}' to claude -p")


def _twice(settings: list[dict[str, Any]]) -> Check | None:
    """The plugin enabled and `pinky-brain setup claude`'s user-level server or hooks too: every brain tool twice,
    two session digests (issue 36 item 7). Both where setup writes (under HOME) and where Claude Code reads
    (CLAUDE_CONFIG_DIR, when set)."""
    if not plugin_enabled(settings):
        return None
    from pinky.hosts.catalog import host
    from pinky.setup.core import config_path
    from pinky.setup.host_entries import is_ours

    claude = host("claude")
    found = []
    for path in dict.fromkeys([claude_json(), Path(str(config_path(claude, "mcp", project=None)))]):
        servers = load_quiet(path).get("mcpServers")
        if isinstance(servers, dict) and MCP_JSON_KEY in servers:
            found.append(f"the {MCP_JSON_KEY!r} server in {path}")
    for path in dict.fromkeys([claude_dir() / "settings.json", Path(str(config_path(claude, "hooks", project=None)))]):
        hooks = load_quiet(path).get("hooks")
        groups = [g for gs in hooks.values() if isinstance(gs, list) for g in gs] if isinstance(hooks, dict) else []
        if any(is_ours(group) for group in groups):
            found.append(f"pinky-brain's hooks in {path}")
    if not found:
        return None
    return Check("claude code: set up twice", "warn", f"the pinky plugin is enabled and {' and '.join(found)} "
                 "too: every brain tool appears twice and each session gets two digests",
                 "pinky-brain setup claude --remove (the plugin brings both), or disable the plugin")


def claude_checks(config: Config) -> list[Check]:
    """Is Claude Code wired up: plugin and its runtime, one server, trust."""
    root = config.project_root
    settings = [load_quiet(p) for p in settings_files(root)]
    has_entry = root is not None and MCP_JSON_KEY in (load_quiet(root / ".mcp.json").get("mcpServers") or {})
    checks = [_plugin(settings, has_entry)]
    twice = _twice(settings)
    checks += [twice] if twice else []
    runtime = _runtime(settings)
    checks += [runtime] if runtime else []
    if root is None:  # the project's .mcp.json, approvals and trust only exist inside a project
        return checks
    key = git_top(root) or root
    project_state = (load_quiet(claude_json()).get("projects") or {}).get(str(key)) or {}
    checks.append(_server(root, settings, project_state))
    if plugin_enabled(settings) or has_entry:  # trust only matters once Claude Code has the tools to refuse
        checks.append(_trust(root, settings, project_state, key))
    return checks
