"""Host packages generated from the host catalog: the Gemini CLI extension in packaging/gemini/
(`gemini extensions install <clone>/packaging/gemini`): the `pinky` MCP server, the hooks and a context file.
`python -m pinky.setup.packaging [ROOT]` rewrites them; tests/setup/test_packaging.py regenerates and compares.

The commands are bare (`pinky-mcp`, `pinky-hooks`): an extension cannot know where pinky-brain is installed, so
they must be on PATH (pip/pipx/uv put them there; for the Claude Code plugin, `pinky-brain install-cli`). Codex
CLI 0.169 has plugins, but `codex features list` shows `plugin_hooks` removed (a plugin's hooks are not run), so
Codex is set up with `pinky-brain setup codex` only.
"""

from __future__ import annotations

import json
import os
import sys

from pinky import __version__
from pinky.hosts.catalog import SERVER, host
from pinky.setup import host_entries

GEMINI_DIR = ("packaging", "gemini")
CONTEXT = """# pinky-brain

This project keeps its long-term memory in pinky-brain: gotchas, patterns, decisions, guides and notes as
markdown. Search it ({search}) before debugging an error, changing unfamiliar code or making a design choice,
and save ({save}) what a future session would need: a non-obvious fix, a convention, a decision and why.
"""


def gemini_files() -> dict[str, str]:
    """Relative path -> text of the Gemini CLI extension."""
    gemini = host("gemini")
    manifest = {"name": "pinky-brain", "version": __version__,
                "description": "pinky-brain: local markdown memory for coding agents (MCP tools, digest, recall, "
                               "file notes, diary)",
                "mcpServers": {SERVER: host_entries.mcp_entry(gemini, "")},
                "contextFileName": "GEMINI.md"}
    hooks = {"hooks": host_entries.hook_entries(gemini, "")}
    return {"gemini-extension.json": json.dumps(manifest, indent=2) + "\n",
            "hooks/hooks.json": json.dumps(hooks, indent=2) + "\n",
            "GEMINI.md": CONTEXT.format(search=gemini.tool("brain_search"), save=gemini.tool("brain_save"))}


def write(root: str) -> list[str]:
    """Write the packages under the repository `root`; the paths whose text changed."""
    changed = []
    for relative, text in gemini_files().items():
        path = os.path.join(root, *GEMINI_DIR, *relative.split("/"))
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        changed.append(path)
    return changed


if __name__ == "__main__":  # pragma: no cover - the packages' generator
    for line in write(sys.argv[1] if len(sys.argv) > 1 else "."):
        print(f"wrote {line}")
