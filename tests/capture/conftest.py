"""What the import-sessions tests share: a project and a HOME of its own, no host's own location variable."""

from __future__ import annotations

from pathlib import Path

import pytest

# Variables that move a host's sessions away from HOME: none of the runner's may leak into a test
HOST_HOMES = ("CODEX_HOME", "COPILOT_HOME", "XDG_DATA_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "CLAUDE_CONFIG_DIR")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "db.py").write_text("print(1)\n", encoding="utf-8")
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in HOST_HOMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PINKY_HOOKS_NO_BACKGROUND", "1")
    monkeypatch.setenv("PINKY_CAPTURE", "off")  # the import asks nothing: compare with a Stop hook that asks nothing
    return home
