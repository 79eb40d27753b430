"""pinky.base.locations: where the brain is, found the same way from any folder by every front end."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pinky.base.locations import (
    DEFAULT_INDEX,
    GLOBAL_INDEX,
    LocationError,
    find_project_root,
    locate,
    read_marker,
    start_folder,
)
from pinky.errors import InvalidInput


def make_project(folder: Path, marker: str = "# a pinky project\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pinky.toml").write_text(marker, encoding="utf-8")
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def env_with(home: Path, **values: str) -> dict[str, str]:
    return {"PINKY_HOME": str(home), **{f"PINKY_{k.upper()}": v for k, v in values.items()}}


# --- finding the root ----------------------------------------------------------------------------------


def test_the_root_is_found_from_the_root_and_from_nested_subfolders(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo")
    deep = root / "src" / "pkg" / "sub"
    deep.mkdir(parents=True)
    for start in (root, root / "src", deep):
        loc = locate(env=env_with(home), start=str(start))
        assert loc.project_root == str(root)
        assert loc.save_dir == str(root / "documentation")
        assert loc.db == str(root / DEFAULT_INDEX)
        assert loc.project == "repo"
        assert loc.in_project
        assert loc.start == str(start)
    assert find_project_root(str(deep)) == str(root)


def test_the_nearest_marker_wins_for_nested_projects(tmp_path: Path, home: Path) -> None:
    outer = make_project(tmp_path / "outer")
    inner = make_project(outer / "vendor" / "inner")
    (inner / "lib").mkdir()
    assert locate(env=env_with(home), start=str(inner / "lib")).project_root == str(inner)
    assert locate(env=env_with(home), start=str(outer / "vendor")).project_root == str(outer)


def test_a_folder_named_like_the_marker_is_not_a_marker(tmp_path: Path) -> None:
    outer = make_project(tmp_path / "outer")
    (outer / "x" / "pinky.toml").mkdir(parents=True)
    assert find_project_root(str(outer / "x")) == str(outer)


def test_outside_any_project_there_is_no_save_dir_and_the_index_is_global(tmp_path: Path, home: Path) -> None:
    loc = locate(env=env_with(home), start=str(tmp_path))
    assert loc.project_root is None
    assert loc.save_dir is None
    assert not loc.in_project
    assert loc.project is None
    assert loc.project_explicit is False
    assert loc.db == os.path.join(str(home), GLOBAL_INDEX)
    assert loc.global_dir == os.path.join(str(home), "brain")
    assert loc.state_dir == os.path.join(str(home), "state")
    assert not home.exists(), "locating must never create anything"


def test_outside_a_project_an_explicit_project_name_is_kept(tmp_path: Path, home: Path) -> None:
    loc = locate(env=env_with(home), start=str(tmp_path), project="  api  ")
    assert loc.project == "api"
    assert loc.project_explicit is True
    assert loc.save_dir is None


# --- pinky.toml settings ------------------------------------------------------------------------------------


def test_marker_settings_move_the_save_dir_the_index_and_name_the_project(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo", 'save_dir = "docs/brain"\nindex = ".cache/pinky.db"\nproject = " api "\n')
    (root / "src").mkdir()
    loc = locate(env=env_with(home), start=str(root / "src"))
    assert loc.save_dir == str(root / "docs" / "brain")
    assert loc.db == str(root / ".cache" / "pinky.db")
    assert loc.project == "api"
    assert loc.project_explicit is False


def test_a_marker_of_comments_only_or_empty_sets_nothing(tmp_path: Path) -> None:
    assert read_marker(str(make_project(tmp_path / "a", "# only\n   # comments\n\n"))) == {}
    assert read_marker(str(make_project(tmp_path / "b", ""))) == {}


@pytest.mark.parametrize(("marker", "message"), [
    ('save_dir = "docs', "is not valid TOML"),
    ("save_dir = docs\n", "is not valid TOML"),
    ('colour = "blue"\n', "unknown setting 'colour'; pinky.toml takes save_dir, index, project"),
    ('[tool]\nsave_dir = "x"\n', "unknown setting 'tool'"),
    ("index = 3\n", "index must be a non-empty string"),
    ('project = "   "\n', "project must be a non-empty string"),
    ('save_dir = ["a"]\n', "save_dir must be a non-empty string"),
])
def test_a_bad_marker_is_one_clear_error_naming_the_file(tmp_path: Path, home: Path, marker: str,
                                                        message: str) -> None:
    root = make_project(tmp_path / "repo", marker)
    with pytest.raises(LocationError, match="pinky.toml") as caught:
        locate(env=env_with(home), start=str(root))
    assert message in str(caught.value)
    assert str(root / "pinky.toml") in str(caught.value)
    assert isinstance(caught.value, InvalidInput)
    assert "\n" not in str(caught.value).strip()


def test_an_unreadable_marker_is_reported(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pinky.toml").write_bytes(b'save_dir = "\xff\xfe"\n')
    with pytest.raises(LocationError, match="cannot read"):
        locate(env=env_with(home), start=str(root))


@pytest.mark.parametrize("save_dir", ["..", "../elsewhere", ".", "docs/../..", "/tmp/elsewhere"])
def test_a_save_dir_outside_the_project_is_refused(tmp_path: Path, home: Path, save_dir: str) -> None:
    root = make_project(tmp_path / "repo", f'save_dir = "{save_dir}"\n')
    with pytest.raises(LocationError, match="save_dir must be a folder inside the project"):
        locate(env=env_with(home), start=str(root))


# --- precedence: arguments > PINKY_* > pinky.toml --------------------------------------------------------------


def test_arguments_win_over_variables_which_win_over_the_marker(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo", 'index = "marker.db"\nproject = "from-marker"\n')
    env = env_with(home, db=str(tmp_path / "env.db"), project="from-env")
    assert locate(env=env_with(home), start=str(root)).db == str(root / "marker.db")
    by_env = locate(env=env, start=str(root))
    assert (by_env.db, by_env.project, by_env.project_explicit) == (str(tmp_path / "env.db"), "from-env", True)
    by_arg = locate(env=env, start=str(root), db=str(tmp_path / "arg.db"), project="from-arg")
    assert (by_arg.db, by_arg.project) == (str(tmp_path / "arg.db"), "from-arg")


def test_an_explicit_home_wins_over_pinky_home(tmp_path: Path, home: Path) -> None:
    loc = locate(env=env_with(home), start=str(tmp_path), home=str(tmp_path / "other"))
    assert loc.home == str(tmp_path / "other")
    assert loc.db == str(tmp_path / "other" / GLOBAL_INDEX)


def test_an_explicit_save_dir_wins_over_the_marker_and_sets_the_root(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo", 'save_dir = "docs"\n')
    elsewhere = tmp_path / "work" / "notes"
    loc = locate(env=env_with(home, save_dir=str(elsewhere)), start=str(root))
    assert loc.save_dir == str(elsewhere)
    assert loc.project_root == str(tmp_path / "work")
    assert loc.db == str(tmp_path / "work" / DEFAULT_INDEX)
    assert loc.project == "work"
    assert locate(env=env_with(home, save_dir="x/y"), start=str(root), save_dir=str(elsewhere)).save_dir == str(
        elsewhere)


def test_relative_explicit_paths_are_taken_from_the_start_folder(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo")
    start = root / "src"
    start.mkdir()
    loc = locate(env=env_with(home, db="idx/b.db"), start=str(start), save_dir="../notes", home="h")
    assert loc.db == str(start / "idx" / "b.db")
    assert loc.save_dir == str(root / "notes")
    assert loc.home == str(start / "h")
    assert locate(env=env_with(home), start=str(start), db="a.db").db == str(start / "a.db")


def test_empty_variables_count_as_unset(tmp_path: Path, home: Path) -> None:
    root = make_project(tmp_path / "repo")
    loc = locate(env=env_with(home, db="", save_dir="", project="  "), start=str(root))
    assert loc.db == str(root / DEFAULT_INDEX)
    assert loc.save_dir == str(root / "documentation")
    assert (loc.project, loc.project_explicit) == ("repo", False)


# --- the starting folder -------------------------------------------------------------------------------------


def test_start_folder_prefers_claude_project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert start_folder({"CLAUDE_PROJECT_DIR": str(tmp_path / "p")}, cwd="/somewhere") == str(tmp_path / "p")
    assert start_folder({"CLAUDE_PROJECT_DIR": ""}, cwd=str(tmp_path)) == str(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert start_folder({}) == str(tmp_path)
    assert start_folder({"CLAUDE_PROJECT_DIR": "rel"}) == str(tmp_path / "rel")


def test_locate_defaults_to_the_environment_and_the_current_folder(project: Path, isolated_env: Path) -> None:
    loc = locate()
    assert loc.project_root == str(project)
    assert loc.home == str(isolated_env)


# --- what the hooks pay for --------------------------------------------------------------------------------


def modules_after(code: str) -> list[str]:
    """Modules that `code` loads in a fresh interpreter, beyond what the interpreter loaded by itself."""
    script = ("import sys\nbefore = set(sys.modules)\n" + code +
              "\nnew = sorted(set(sys.modules) - before)\nprint(repr(new))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out)


def test_a_marker_of_comments_only_does_not_import_tomllib(tmp_path: Path) -> None:
    quiet = make_project(tmp_path / "quiet")
    noisy = make_project(tmp_path / "noisy", 'project = "x"\n')
    code = "from pinky.base.locations import locate\nlocate(env={{}}, start={!r})"
    assert "tomllib" not in modules_after(code.format(str(quiet)))
    assert "tomllib" in modules_after(code.format(str(noisy)))  # the check above can fail


def test_importing_locations_stays_light() -> None:
    loaded = modules_after("import pinky.base.locations")
    assert "pinky.base.locations" in loaded
    assert not {"re", "typing", "pathlib", "dataclasses", "tomllib"} & set(loaded), loaded


def test_an_explicit_save_dir_keeps_the_markers_other_settings(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text('index = ".cache/b.db"\nproject = "api"\n')
    loc = locate(env={"PINKY_SAVE_DIR": "documentation"}, start=str(root))
    assert loc.project_root == str(root) and loc.project == "api"
    assert loc.db == str(root / ".cache" / "b.db") and loc.save_dir == str(root / "documentation")


def test_the_file_index_sits_beside_the_index() -> None:
    from pinky.base.locations import file_index_path

    assert file_index_path("/x/brain.db") == "/x/brain.db-files"
