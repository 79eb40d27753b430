"""Claude Code wiring for a project: `.mcp.json`, the CLAUDE.md snippet, allow rules, doctor checks.

Why the server entry looks the way it does: the plugin bundles a `pinky` server with the
command `pinky-mcp` and no args. Claude Code drops a plugin server when a project server
has the same command and args (otherwise every tool appears twice), so the project entry
written here uses exactly that command and args. Its env carries the index and save dir
*relative* to the project root (the server's cwd), so the file works in every clone.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pinky.check import Check
from pinky.config import Config
from pinky.errors import InvalidInput, NotInProject
from pinky.fileio import atomic_write
from pinky.locations import ENV_DB, ENV_SAVE_DIR

SERVER_NAME = "pinky"
SERVER_COMMAND = "pinky-mcp"
SERVER_ARGS: list[str] = []  # must equal the plugin's .mcp.json, or both copies load
PLUGIN_ID = "pinky@pinky-market"
ALLOW_RULES = ("mcp__pinky__*", "mcp__plugin_pinky_pinky__*")
SNIPPET_BEGIN = "<!-- pinky:begin -->"
SNIPPET_END = "<!-- pinky:end -->"
CLAUDE_MD_SNIPPET = f"""{SNIPPET_BEGIN}
## Project memory (pinky)

Knowledge about this project lives as markdown in the pinky brain, searchable through the
`pinky` MCP tools.

- Before non-trivial work, `brain_search` for the area you are touching.
- Save with `brain_save` when you hit a trap another session would hit too (type gotcha),
  take a decision with a reason worth keeping (decision), find a reusable way of doing
  something here (pattern), or fix a bug whose cause was not obvious (bug). Name the code
  files it is about, and put `Brain: <slug>` in a comment next to that code.
- Keep this file evergreen: no counts, line numbers, commit hashes or dated status.
{SNIPPET_END}
"""


def project_root(config: Config) -> Path:
    """The repository root (where pinky.toml is); outside a project there is none to wire."""
    if config.project_root is None:
        raise NotInProject("wiring Claude Code into a project")
    return config.project_root


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)  # outside the project: only an absolute path can name it


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it by hand, pinky will not overwrite it") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; fix it by hand")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def server_entry(config: Config, root: Path) -> dict[str, Any]:
    return {
        "type": "stdio",
        "command": SERVER_COMMAND,
        "args": list(SERVER_ARGS),
        "env": {ENV_DB: _relative(config.db_path, root), ENV_SAVE_DIR: _relative(config.save_dir or root, root)},
    }


def merge_mcp_json(config: Config, root: Path | None = None) -> str:
    """Add or update the `pinky` server in `<root>/.mcp.json`, keeping every other server and key.

    Returns 'created', 'updated' or 'unchanged'. Keys the user added to the pinky entry
    (timeout, alwaysLoad, extra env) are kept; command and args are set so dedup works.
    """
    root = root or project_root(config)
    path = root / ".mcp.json"
    existed = path.exists()
    data = _read_json(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{path}: mcpServers is not an object; fix it by hand")
    wanted = server_entry(config, root)
    current = servers.get(SERVER_NAME)
    merged = dict(current) if isinstance(current, dict) else {}
    env = dict(merged.get("env") or {}) if isinstance(merged.get("env"), dict) else {}
    env.update(wanted["env"])
    merged.update({k: v for k, v in wanted.items() if k != "env"})
    merged["env"] = env
    if merged == current:
        return "unchanged"
    servers[SERVER_NAME] = merged
    _write_json(path, data)
    return "updated" if existed else "created"


def add_claude_md_snippet(root: Path) -> bool:
    """Append the snippet to `<root>/CLAUDE.md` (created if missing); False when it is already there."""
    path = root / "CLAUDE.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if SNIPPET_BEGIN in text:
        return False
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    path.write_text(text + sep + CLAUDE_MD_SNIPPET, encoding="utf-8")
    return True


def add_allow_rules(root: Path) -> list[str]:
    """Add the brain tools to `<root>/.claude/settings.json` permissions.allow; returns the rules added."""
    path = root / ".claude" / "settings.json"
    data = _read_json(path)
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise InvalidInput(f"{path}: permissions is not an object; fix it by hand")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise InvalidInput(f"{path}: permissions.allow is not a list; fix it by hand")
    added = [rule for rule in ALLOW_RULES if rule not in allow]
    if added:
        allow.extend(added)
        _write_json(path, data)
    return added


def extend_init(config: Config, *, mcp: bool = True, claude_md: str = "skip", allow_tools: bool = False,
                root: Path | None = None) -> list[str]:
    """The Claude Code part of `pinky init`; returns one human-readable line per thing done.

    claude_md: 'append' writes the snippet into CLAUDE.md, 'print' returns it as a line to
    show, 'skip' does neither.
    """
    if claude_md not in ("append", "print", "skip"):
        raise InvalidInput(f"claude_md must be append, print or skip, not {claude_md!r}")
    root = root or project_root(config)
    done: list[str] = []
    if mcp:
        status = merge_mcp_json(config, root)
        if status != "unchanged":
            done.append(f"{status} {root / '.mcp.json'} (server {SERVER_NAME!r}: {SERVER_COMMAND})")
    if claude_md == "append" and add_claude_md_snippet(root):
        done.append(f"added the pinky snippet to {root / 'CLAUDE.md'}")
    elif claude_md == "print":
        done.append("add this to CLAUDE.md:\n\n" + CLAUDE_MD_SNIPPET)
    if allow_tools:
        added = add_allow_rules(root)
        if added:
            done.append(f"allowed {', '.join(added)} in {root / '.claude' / 'settings.json'}")
    return done


# --- doctor ----------------------------------------------------------------------------------------


def _claude_dir() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def _claude_json() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() / ".claude.json" if configured else Path.home() / ".claude.json"


def _settings_files(root: Path | None) -> list[Path]:
    user = [_claude_dir() / "settings.json"]
    if root is None:
        return user
    return [*user, root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]


def _load_quiet(path: Path) -> dict[str, Any]:
    try:
        return _read_json(path)
    except (OSError, InvalidInput):
        return {}


def _plugin_enabled(settings: list[dict[str, Any]]) -> bool:
    enabled = False
    for data in settings:  # later files (project, local) override earlier ones (user)
        plugins = data.get("enabledPlugins")
        if isinstance(plugins, dict):
            for key, value in plugins.items():
                if isinstance(key, str) and key.split("@")[0] == "pinky":
                    enabled = bool(value)
    return enabled


def _on_path() -> Check:
    found = {name: shutil.which(name) for name in ("pinky-hooks", "pinky-mcp")}
    missing = [name for name, where in found.items() if not where]
    if not missing:
        return Check("claude code: commands on PATH", "ok", ", ".join(f"{n} -> {w}" for n, w in found.items()))
    return Check("claude code: commands on PATH", "warn", f"{', '.join(missing)} not on PATH, so Claude Code "
                 "cannot start the hooks or the server", "pipx install pinky-brain  (or: uv tool install pinky-brain)")


def _hooks_registered(settings: list[dict[str, Any]]) -> Check:
    if _plugin_enabled(settings):
        return Check("claude code: hooks registered", "ok", f"plugin {PLUGIN_ID} enabled")
    if any("pinky-hooks" in json.dumps(data.get("hooks", {})) for data in settings):
        return Check("claude code: hooks registered", "ok", "pinky-hooks found in a settings.json hooks block")
    return Check("claude code: hooks registered", "warn", "the pinky plugin is not enabled for this project",
                 "claude plugin marketplace add <pinky-brain repo or folder> && claude plugin install " + PLUGIN_ID)


def _server_approved(root: Path, settings: list[dict[str, Any]]) -> Check:
    name = "claude code: MCP server approved"
    mcp = _load_quiet(root / ".mcp.json").get("mcpServers") or {}
    in_project = isinstance(mcp, dict) and SERVER_NAME in mcp
    project_state = (_load_quiet(_claude_json()).get("projects") or {}).get(str(root)) or {}
    sources = [project_state, *settings]
    if any(SERVER_NAME in (s.get("disabledMcpjsonServers") or []) for s in sources):
        return Check(name, "warn", f"{SERVER_NAME!r} is listed in disabledMcpjsonServers",
                     "remove it from disabledMcpjsonServers (claude mcp reset-project-choices resets the choice)")
    if not in_project:
        if _plugin_enabled(settings):
            return Check(name, "ok", "served by the plugin (plugin servers need no approval)")
        return Check(name, "warn", f"no {SERVER_NAME!r} server in {root / '.mcp.json'} and the plugin is not enabled",
                     "pinky setup-claude  (or install the plugin)")
    if any(s.get("enableAllProjectMcpServers") is True or SERVER_NAME in (s.get("enabledMcpjsonServers") or [])
           for s in sources):
        return Check(name, "ok", f"{SERVER_NAME!r} from .mcp.json is approved")
    return Check(name, "warn", f"{SERVER_NAME!r} in .mcp.json is not approved yet; interactive sessions will ask",
                 f"approve it at the prompt of the next `claude` session, or add \"enabledMcpjsonServers\": "
                 f"[\"{SERVER_NAME}\"] to .claude/settings.local.json")


def _mcp_json_matches(root: Path) -> Check | None:
    entry = (_load_quiet(root / ".mcp.json").get("mcpServers") or {}).get(SERVER_NAME)
    if not isinstance(entry, dict):
        return None
    if entry.get("command") == SERVER_COMMAND and list(entry.get("args") or []) == SERVER_ARGS:
        return Check("claude code: .mcp.json server", "ok", f"{SERVER_COMMAND} (deduplicates with the plugin's copy)")
    return Check("claude code: .mcp.json server", "warn",
                 f"{SERVER_NAME!r} runs {entry.get('command')} {entry.get('args')}, unlike the plugin's "
                 f"{SERVER_COMMAND} {SERVER_ARGS}: with the plugin enabled every brain tool appears twice",
                 "pinky setup-claude  (rewrites the command and args, keeps your env)")


def plugin_checks(config: Config) -> list[Check]:
    """Is Claude Code wired up: commands on PATH, hooks registered, server approved, no duplicate server."""
    root = config.project_root
    settings = [_load_quiet(p) for p in _settings_files(root)]
    checks = [_on_path(), _hooks_registered(settings)]
    if root is None:  # the project's .mcp.json and approvals only exist inside a project
        return checks
    match = _mcp_json_matches(root)
    return checks + [_server_approved(root, settings)] + ([match] if match else [])
