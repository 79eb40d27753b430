"""The Gemini CLI extension in packaging/gemini/ is what the host catalog gives: regenerated into a temporary
folder, every file equals the committed one (`python -m pinky.setup.packaging` rewrites them)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from pinky.setup.host_entries import find_script
from pinky.setup.packaging import GEMINI_DIR, gemini_files, write

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_gemini_extension_is_the_generated_one(tmp_path: Path) -> None:
    assert write(str(tmp_path))  # a fresh folder: every file written
    for relative in gemini_files():
        committed = ROOT.joinpath(*GEMINI_DIR, relative)
        assert committed.is_file(), f"{committed} is missing: python -m pinky.setup.packaging"
        assert committed.read_text() == tmp_path.joinpath(*GEMINI_DIR, relative).read_text(), relative
    assert write(str(tmp_path)) == []  # idempotent


def test_the_extension_runs_pinkys_commands_for_gemini() -> None:
    files = gemini_files()
    manifest = json.loads(files["gemini-extension.json"])
    server = manifest["mcpServers"]["pinky"]
    assert [server["command"], *server["args"]] == ["sh", "-c", find_script("pinky-mcp"), "pinky-mcp"]
    hooks = json.loads(files["hooks/hooks.json"])["hooks"]
    assert {"SessionStart", "BeforeAgent", "AfterAgent"} <= set(hooks)
    words = shlex.split(hooks["AfterAgent"][0]["hooks"][0]["command"])
    assert words[:2] == ["sh", "-c"] and words[3:] == ["pinky-hooks", "--host", "gemini", "stop"]
    assert "mcp_pinky_brain_search" in files["GEMINI.md"]
