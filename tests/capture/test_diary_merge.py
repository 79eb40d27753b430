"""`pinky init` in a real git repository: diaries written on two branches merge without a conflict."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import console_script

PINKY = console_script("pinky")
GIT = shutil.which("git")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    result = subprocess.run([GIT or "git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout


@pytest.mark.skipif(GIT is None, reason="needs the git command")
def test_a_diary_appended_on_two_branches_merges_as_a_union(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    subprocess.run([*PINKY, "init", "--no-mcp"], cwd=repo, check=True, capture_output=True)
    diary = repo / "documentation/diary/2026-11-26.md"
    diary.parent.mkdir(parents=True)
    diary.write_text("---\ntitle: Diary 2026-11-26\ntype: diary\n---\n\n- 09:00 [aaaa1111] asked: start\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    git("checkout", "-qb", "feature", cwd=repo)
    with diary.open("a") as handle:
        handle.write("- 10:00 [bbbb2222] asked: on the feature branch\n")
    git("commit", "-qam", "feature diary", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    with diary.open("a") as handle:
        handle.write("- 10:05 [cccc3333] asked: on main\n")
    git("commit", "-qam", "main diary", cwd=repo)
    git("merge", "-q", "--no-edit", "feature", cwd=repo)  # fails (exit 1) on a conflict
    text = diary.read_text()
    assert "on the feature branch" in text and "on main" in text and "<<<<<<<" not in text
    assert git("status", "--porcelain", cwd=repo) == ""


@pytest.mark.skipif(GIT is None, reason="needs the git command")
def test_without_the_attribute_the_same_merge_conflicts(tmp_path: Path) -> None:
    """The control: it is the .gitattributes line pinky init writes that makes the merge clean."""
    repo = tmp_path / "repo"
    diary = repo / "diary.md"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    diary.write_text("- 09:00 [a] asked: start\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "init", cwd=repo)
    git("checkout", "-qb", "feature", cwd=repo)
    diary.write_text(diary.read_text() + "- 10:00 [b] asked: feature\n")
    git("commit", "-qam", "f", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    diary.write_text(diary.read_text() + "- 10:05 [c] asked: main\n")
    git("commit", "-qam", "m", cwd=repo)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    merged = subprocess.run([GIT or "git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True,
                            text=True, env=env)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
