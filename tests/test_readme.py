"""The README's commands, run the way a new user would paste them (the plugin route runs in the opt-in
end-to-end test with the real Claude Code CLI)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def block_after(heading: str) -> str:
    """The first ```sh block of a README section."""
    section = README.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match, f"no sh block under {heading!r}"
    return match.group(1)


@pytest.mark.skipif(shutil.which("bash") is None, reason="runs the block with bash")
def test_the_first_use_block_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "my-repo" / "src").mkdir(parents=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    script = "set -euo pipefail\n" + block_after("First use")
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    assert "gotcha/pg-pool-hangs-on-shutdown" in result.stdout  # found from src/, listed by type
    assert (tmp_path / "my-repo" / "documentation" / "gotcha" / "pg-pool-hangs-on-shutdown.md").is_file()
    assert not (tmp_path / "my-repo" / "src" / "documentation").exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="runs the block with bash")
def test_the_mcp_hand_test_answers_in_a_project(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "pinky.toml").touch()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", block_after("The agent's side: MCP")], cwd=project, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 3 and '"id":3' in lines[2] and '"entries"' in lines[2]


def test_every_make_target_the_readme_names_exists() -> None:
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(), re.MULTILINE))
    named = set(re.findall(r"`make ([a-z]+)`", README)) | set(re.findall(r"^make ([a-z]+)", README, re.MULTILINE))
    assert named and named <= targets, named - targets
