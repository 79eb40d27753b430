"""Hermetic tests: a temporary PINKY_HOME, no inherited PINKY_* settings, the hashing embedder."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("PINKY_", "CLAUDE")) and not name.startswith("PINKY_TEST_"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("pinky-home")
    monkeypatch.setenv("PINKY_HOME", str(home))
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    return home


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised project folder (the cwd): pinky.toml, an empty documentation/, brain.db next to it."""
    root = tmp_path / "demo-project"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


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
