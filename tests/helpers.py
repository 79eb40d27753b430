"""Helpers shared by test modules (fixtures live in conftest.py; no test module imports another)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def write_note(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def console_script(name: str) -> list[str]:
    """The installed entry point next to this interpreter, else `python -m` of its module."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which(name)
    if found:
        return [found]
    module = {"pinky": "pinky", "pinky-mcp": "pinky.mcp_server", "pinky-hooks": "pinky.hooks"}[name]
    return [sys.executable, "-m", module]
