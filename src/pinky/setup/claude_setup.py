"""Claude Code wiring for a project without the plugin: `.mcp.json`, the CLAUDE.md snippet, allow rules.

The plugin (plugin/ in this repository) brings the server and the hooks by itself, so `pinky init`
writes no server entry unless asked (`--mcp`): a project entry next to the plugin's server would
show every brain tool twice, since the plugin's command (its launcher) can never equal a project's
and Claude Code only deduplicates identical commands. Without the plugin, `pinky setup-claude`
registers `pinky-mcp` in the project's `.mcp.json`. The entry needs no paths: the server finds the
project from its working directory, as every pinky command does. Every file is read and written through
`pinky.base.repofiles`: a checkout's `CLAUDE.md` linked to `~/.bashrc` is refused, never appended to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pinky.base import repofiles
from pinky.base.fileio import read_regular
from pinky.config import Config
from pinky.errors import InvalidInput, NotInProject
from pinky.setup.project import inside_repository

MCP_JSON_KEY = "pinky"  # the server's name in .mcp.json (its serverInfo name is pinky.mcp.server.SERVER_NAME)
SERVER_COMMAND = "pinky-mcp"
SERVER_ARGS: list[str] = []
PLUGIN_ID = "pinky@pinky-market"
PLUGIN_TOOLS = "mcp__plugin_pinky_pinky__*"
PROJECT_TOOLS = "mcp__pinky__*"
ALLOW_RULES = (PROJECT_TOOLS, PLUGIN_TOOLS)
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


def read_json(path: Path, root: Path | None = None) -> dict[str, Any]:
    """The JSON object in `path` ({} when missing or empty); with `root`, read as a file of that repository."""
    if root is not None:
        with inside_repository():
            data = repofiles.read(root, path.relative_to(root).as_posix())
        text = "" if data is None else data.decode("utf-8")
    elif not path.exists():
        return {}
    else:  # a regular file only: a FIFO would hang `doctor`
        text = read_regular(path, limit=repofiles.MAX_BYTES).decode("utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it by hand, pinky will not overwrite it") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; fix it by hand")
    return data


def _write_json(root: Path, path: Path, data: dict[str, Any]) -> None:
    with inside_repository():
        repofiles.write(root, path.relative_to(root).as_posix(), json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def server_entry() -> dict[str, Any]:
    """`pinky-mcp` with no arguments and no paths: it finds the project the way the CLI does."""
    return {"type": "stdio", "command": SERVER_COMMAND, "args": list(SERVER_ARGS)}


def merge_mcp_json(config: Config, root: Path | None = None) -> str:
    """Add or update the `pinky` server in `<root>/.mcp.json`, keeping every other server and key.

    Returns 'created', 'updated' or 'unchanged'. Keys the user added to the pinky entry
    (timeout, alwaysLoad, env) are kept; type, command and args are set.
    """
    root = root or project_root(config)
    path = root / ".mcp.json"
    existed = path.exists()
    data = read_json(path, root)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{path}: mcpServers is not an object; fix it by hand")
    current = servers.get(MCP_JSON_KEY)
    merged = {**(current if isinstance(current, dict) else {}), **server_entry()}
    if merged == current:
        return "unchanged"
    servers[MCP_JSON_KEY] = merged
    _write_json(root, path, data)
    return "updated" if existed else "created"


def add_claude_md_snippet(root: Path) -> bool:
    """Append the snippet to `<root>/CLAUDE.md` (created if missing); False when it is already there."""
    def change(old: str | None) -> str | None:
        text = old or ""
        if SNIPPET_BEGIN in text:
            return old
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + CLAUDE_MD_SNIPPET

    with inside_repository():
        return repofiles.rewrite(root, "CLAUDE.md", change)


def add_allow_rules(root: Path) -> list[str]:
    """Add the brain tools to `<root>/.claude/settings.json` permissions.allow; returns the rules added."""
    path = root / ".claude" / "settings.json"
    data = read_json(path, root)
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise InvalidInput(f"{path}: permissions is not an object; fix it by hand")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise InvalidInput(f"{path}: permissions.allow is not a list; fix it by hand")
    added = [rule for rule in ALLOW_RULES if rule not in allow]
    if added:
        allow.extend(added)
        _write_json(root, path, data)
    return added


def extend_init(config: Config, *, mcp: bool = False, claude_md: str = "skip", allow_tools: bool = False,
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
            done.append(f"{status} {root / '.mcp.json'} (server {MCP_JSON_KEY!r}: {SERVER_COMMAND})")
    if claude_md == "append" and add_claude_md_snippet(root):
        done.append(f"added the pinky snippet to {root / 'CLAUDE.md'}")
    elif claude_md == "print":
        done.append("add this to CLAUDE.md:\n\n" + CLAUDE_MD_SNIPPET)
    if allow_tools:
        added = add_allow_rules(root)
        if added:
            done.append(f"allowed {', '.join(added)} in {root / '.claude' / 'settings.json'}")
    return done
