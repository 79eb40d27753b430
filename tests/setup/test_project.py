"""pinky.setup.project (`pinky init`): the marker, templates, .gitignore and .gitattributes, only ever added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinky.base.layout import ENTRY_TYPES
from pinky.base.locations import read_marker
from pinky.setup.project import MARKER_TEXT, default_root, git_top, init_project, write_marker

IGNORE = ["brain.db", "brain.db-*", "brain.db.corrupt", "documentation/.pinky/"]
UNION = "documentation/diary/** merge=union"


def init(root: Path) -> list[str]:
    return init_project(root, root / "documentation", root / "brain.db").created


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_init_lays_out_a_project(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    report = init_project(root, root / "documentation", root / "brain.db")
    assert report.changed
    assert report.root == root
    assert report.created == (["pinky.toml"]
                              + [f"documentation/_templates/{kind}.md" for kind in ENTRY_TYPES]
                              + [f".gitignore (+{', '.join(IGNORE)})", f".gitattributes (+{UNION})"])
    assert (root / "pinky.toml").read_text(encoding="utf-8") == MARKER_TEXT
    assert read_marker(str(root)) == {}  # the marker sets nothing: its settings are commented out
    for kind in ENTRY_TYPES:
        template = root / "documentation" / "_templates" / f"{kind}.md"
        assert template.read_text(encoding="utf-8").strip(), kind
    assert set(IGNORE) <= set(lines(root / ".gitignore"))
    assert lines(root / ".gitignore")[0].startswith("# pinky-brain index")
    assert UNION in lines(root / ".gitattributes")


def test_init_is_idempotent(tmp_path: Path) -> None:
    init(tmp_path)
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    report = init_project(tmp_path, tmp_path / "documentation", tmp_path / "brain.db")
    assert report.created == []
    assert not report.changed
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot


def test_init_keeps_existing_content_and_adds_only_missing_lines(tmp_path: Path) -> None:
    (tmp_path / "pinky.toml").write_text('project = "mine"\n', encoding="utf-8")
    (tmp_path / ".gitignore").write_text("node_modules/\nbrain.db", encoding="utf-8")  # no final newline
    (tmp_path / ".gitattributes").write_text("*.png binary\n", encoding="utf-8")
    template = tmp_path / "documentation" / "_templates" / "gotcha.md"
    template.parent.mkdir(parents=True)
    template.write_text("my own gotcha template\n", encoding="utf-8")

    created = init(tmp_path)

    assert "pinky.toml" not in created
    assert "documentation/_templates/gotcha.md" not in created
    assert ".gitignore (+brain.db-*, brain.db.corrupt, documentation/.pinky/)" in created
    assert (tmp_path / "pinky.toml").read_text(encoding="utf-8") == 'project = "mine"\n'
    assert template.read_text(encoding="utf-8") == "my own gotcha template\n"
    ignore = lines(tmp_path / ".gitignore")
    assert ignore[:2] == ["node_modules/", "brain.db"]
    assert ignore.count("brain.db") == 1
    assert ignore[-3:] == ["brain.db-*", "brain.db.corrupt", "documentation/.pinky/"]
    attributes = (tmp_path / ".gitattributes").read_text(encoding="utf-8")
    assert attributes.startswith("*.png binary\n\n# pinky-brain")
    assert attributes.endswith(UNION + "\n")


def test_init_with_a_moved_save_dir_and_index(tmp_path: Path) -> None:
    created = init_project(tmp_path, tmp_path / "docs" / "kb", tmp_path / ".cache" / "pinky.db").created
    assert (tmp_path / "docs/kb/_templates/note.md").is_file()
    assert ".gitignore (+.cache/pinky.db, .cache/pinky.db-*, .cache/pinky.db.corrupt, docs/kb/.pinky/)" in created
    assert ".gitattributes (+docs/kb/diary/** merge=union)" in created


def test_write_marker_only_once(tmp_path: Path) -> None:
    assert write_marker(tmp_path) is True
    (tmp_path / "pinky.toml").write_text("# edited\n", encoding="utf-8")
    assert write_marker(tmp_path) is False
    assert (tmp_path / "pinky.toml").read_text(encoding="utf-8") == "# edited\n"


def test_default_root_prefers_the_existing_project(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    project = tmp_path / "sub" / "proj"
    (project / "src").mkdir(parents=True)
    (project / "pinky.toml").write_text("", encoding="utf-8")
    assert default_root(project / "src") == project


def test_git_top_finds_the_enclosing_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert git_top(repo / "src" / "deep") == repo
    assert git_top(repo) == repo
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")  # a worktree's .git is a file
    assert git_top(worktree) == worktree
    assert git_top(tmp_path / "repo-less") is None


def test_default_root_falls_back_to_the_start(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "folder"
    plain.mkdir(parents=True)
    assert default_root(plain) == plain.resolve()


def test_pinky_init_from_a_subfolder_of_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Like `git init`: the current folder, with a note that the repository's top is elsewhere."""
    from pinky.cli.main import cli

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    result = CliRunner().invoke(cli, ["init", "--no-mcp", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert Path(out["root"]) == repo / "src"
    assert Path(out["save_dir"]) == repo / "src" / "documentation"
    assert out["created"][0] == "pinky.toml"
    assert out["created"].count("pinky.toml") == 1
    assert f"pinky-brain init {repo}" in result.stderr
    assert not (repo / "pinky.toml").exists()
    again = CliRunner().invoke(cli, ["init", "--no-mcp", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["created"] == []
    top = CliRunner().invoke(cli, ["init", str(repo), "--no-mcp", "--json"])
    assert Path(json.loads(top.stdout)["root"]) == repo and (repo / "pinky.toml").is_file()
