"""What the setup tests share: a user's HOME as setup finds it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    """A HOME with empty ~/.codex and ~/.gemini folders, CODEX_HOME and PINKY_HOME inside the test's folder."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".gemini").mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CODEX_"))}
    out.update(HOME=str(home), CODEX_HOME=str(home / ".codex"), PINKY_HOME=str(tmp_path / "pinky"),
               PATH=f"{BIN}:/usr/bin:/bin")
    return out
