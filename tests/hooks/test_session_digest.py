"""The session-start digest's first line, as Claude Code receives it."""

from __future__ import annotations

from pathlib import Path

from hook_helpers import base, context_of, run_hook

from pinky.config import load_config
from pinky.kb import KnowledgeBase


def test_an_empty_brain_says_so_without_a_dangling_separator(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("", encoding="utf-8")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    digest = context_of(run_hook("session-start", base(root, "SessionStart", source="startup"), root), "SessionStart")
    head = digest.splitlines()[0]
    assert head == "pinky brain: 0 entries (0 in this project, 0 global)."
