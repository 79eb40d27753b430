"""pinky.config: the frozen configuration built from the brain's locations and the PINKY_* settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pinky.base.locations import LocationError, locate
from pinky.config import (
    DEFAULT_BM25_WEIGHT,
    DEFAULT_CHUNK_WORDS,
    DEFAULT_FUSION,
    FusionSettings,
    config_from,
    load_config,
)
from pinky.errors import InvalidInput


def base_env(home: Path, **values: str) -> dict[str, str]:
    return {"PINKY_HOME": str(home), **values}


def test_config_from_a_project_location(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = config_from(locate(env=base_env(home), start=str(project)), base_env(home))
    assert config.home == home
    assert config.db_path == project / "brain.db"
    assert config.save_dir == project / "documentation"
    assert config.project_root == project
    assert config.project == "demo-project"
    assert config.project_explicit is False
    assert config.in_project
    assert config.global_dir == home / "brain"
    assert config.state_dir == home / "state"
    assert config.roots() == {"project": project / "documentation", "global": home / "brain"}
    assert list(config.roots()) == ["project", "global"]
    assert (config.embedder, config.chunk_words, config.fusion) == ("use", DEFAULT_CHUNK_WORDS, FusionSettings())


def test_load_config_outside_a_project_has_the_global_brain_only(tmp_path: Path, isolated_env: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.save_dir is None
    assert config.project_root is None
    assert config.project is None
    assert not config.in_project
    assert config.db_path == isolated_env / "global.db"
    assert config.roots() == {"global": isolated_env / "brain"}
    assert config.embedder == "hash"  # the test environment sets PINKY_HASH_EMBED=1


def test_load_config_from_a_subfolder_of_the_project(project: Path) -> None:
    (project / "src" / "deep").mkdir(parents=True)
    assert load_config(cwd=project / "src" / "deep").save_dir == project / "documentation"
    assert load_config().project_root == project  # the cwd by default


def test_load_config_arguments_win_over_the_environment(project: Path, tmp_path: Path) -> None:
    env = base_env(tmp_path / "env-home", PINKY_DB=str(tmp_path / "env.db"), PINKY_PROJECT="env")
    config = load_config(env=env, cwd=project, home=tmp_path / "arg-home", db=tmp_path / "arg.db",
                         save_dir=tmp_path / "notes", project="arg")
    assert config.home == tmp_path / "arg-home"
    assert config.db_path == tmp_path / "arg.db"
    assert config.save_dir == tmp_path / "notes"
    assert config.project_root == tmp_path
    assert (config.project, config.project_explicit) == ("arg", True)
    by_env = load_config(env=env, cwd=project)
    assert (by_env.db_path, by_env.project, by_env.home) == (tmp_path / "env.db", "env", tmp_path / "env-home")


def test_paths_are_resolved_through_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "documentation").mkdir(parents=True)
    (real / "pinky.toml").write_text("", encoding="utf-8")
    (tmp_path / "link").symlink_to(real)
    config = load_config(env=base_env(tmp_path / "h"), cwd=tmp_path / "link")
    assert config.project_root == real
    assert config.save_dir == real / "documentation"
    assert config.db_path == real / "brain.db"


def test_a_bad_marker_surfaces_as_invalid_input(project: Path) -> None:
    (project / "pinky.toml").write_text('save_dir = "../outside"\n', encoding="utf-8")
    with pytest.raises(LocationError, match="save_dir must be a folder inside the project"):
        load_config()


@pytest.mark.parametrize(("name", "value", "message"), [
    ("PINKY_CHUNK_WORDS", "many", "PINKY_CHUNK_WORDS='many' is not a whole number"),
    ("PINKY_CHUNK_WORDS", "19", "PINKY_CHUNK_WORDS must be between 20 and 2000, got 19"),
    ("PINKY_CHUNK_WORDS", "2001", "PINKY_CHUNK_WORDS must be between 20 and 2000, got 2001"),
    ("PINKY_CHUNK_WORDS", "-5", "PINKY_CHUNK_WORDS must be between 20 and 2000, got -5"),
    ("PINKY_RRF_K", "k", "PINKY_RRF_K='k' is not a whole number"),
    ("PINKY_RRF_K", "0", "the RRF k must be at least 1"),
    ("PINKY_BM25_WEIGHT", "heavy", "PINKY_BM25_WEIGHT='heavy' is not a number"),
    ("PINKY_BM25_WEIGHT", "-0.1", "fusion weights must be non-negative and not both zero"),
    ("PINKY_VECTOR_WEIGHT", "x", "PINKY_VECTOR_WEIGHT='x' is not a number"),
    ("PINKY_VECTOR_WEIGHT", "-1", "fusion weights must be non-negative and not both zero"),
    ("PINKY_MIN_SIMILARITY", "lots", "PINKY_MIN_SIMILARITY='lots' is not a number"),
    ("PINKY_COVERAGE_GATE", "half", "PINKY_COVERAGE_GATE='half' is not a number"),
    ("PINKY_FUSION", "average", "unknown fusion 'average'; use one of zscore, score, rrf"),
    ("PINKY_EMBEDDER", "openai", "PINKY_EMBEDDER='openai': use one of use, fastembed, hash"),
])
def test_every_bad_environment_value_is_one_clear_error(tmp_path: Path, name: str, value: str,
                                                        message: str) -> None:
    env = base_env(tmp_path, **{name: value})
    env.pop("PINKY_HASH_EMBED", None)
    with pytest.raises(InvalidInput) as caught:
        load_config(env=env, cwd=tmp_path)
    assert str(caught.value) == message


def test_both_weights_zero_is_refused(tmp_path: Path) -> None:
    env = base_env(tmp_path, PINKY_BM25_WEIGHT="0", PINKY_VECTOR_WEIGHT="0")
    with pytest.raises(InvalidInput, match="not both zero"):
        load_config(env=env, cwd=tmp_path)
    assert load_config(env={**env, "PINKY_VECTOR_WEIGHT": "1"}, cwd=tmp_path).fusion.bm25_weight == 0.0


def test_fusion_settings_from_the_environment(tmp_path: Path) -> None:
    env = base_env(tmp_path, PINKY_FUSION=" RRF ", PINKY_RRF_K="10", PINKY_BM25_WEIGHT="0.5",
                   PINKY_VECTOR_WEIGHT="1.5", PINKY_MIN_SIMILARITY="0.3", PINKY_COVERAGE_GATE="0",
                   PINKY_CHUNK_WORDS="20")
    config = load_config(env=env, cwd=tmp_path)
    assert config.fusion == FusionSettings(method="rrf", rrf_k=10, bm25_weight=0.5, vector_weight=1.5,
                                           min_similarity=0.3, coverage_gate=0.0)
    assert config.chunk_words == 20


def test_blank_settings_fall_back_to_the_defaults(tmp_path: Path) -> None:
    env = base_env(tmp_path, PINKY_FUSION="", PINKY_RRF_K=" ", PINKY_BM25_WEIGHT="", PINKY_CHUNK_WORDS="  ",
                   PINKY_EMBED_MODEL="", PINKY_EMBED_MODEL_PATH="")
    config = load_config(env=env, cwd=tmp_path)
    assert config.fusion.method == DEFAULT_FUSION
    assert config.fusion.bm25_weight == DEFAULT_BM25_WEIGHT
    assert config.chunk_words == DEFAULT_CHUNK_WORDS
    assert config.embed_model is None
    assert config.embed_model_path is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "max"}, "unknown fusion 'max'"),
    ({"rrf_k": 0}, "the RRF k must be at least 1"),
    ({"bm25_weight": -1.0}, "non-negative"),
    ({"vector_weight": -0.5}, "non-negative"),
    ({"bm25_weight": 0.0, "vector_weight": 0.0}, "not both zero"),
])
def test_fusion_settings_validate_themselves(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        FusionSettings(**kwargs)


@pytest.mark.parametrize(("env", "embedder"), [
    ({}, "use"),
    ({"PINKY_EMBEDDER": "FastEmbed"}, "fastembed"),
    ({"PINKY_EMBEDDER": " hash "}, "hash"),
    ({"PINKY_HASH_EMBED": "1"}, "hash"),
    ({"PINKY_HASH_EMBED": "yes", "PINKY_EMBEDDER": "fastembed"}, "hash"),
    ({"PINKY_HASH_EMBED": "TRUE", "PINKY_EMBEDDER": "bogus"}, "hash"),  # the hash switch wins outright
    ({"PINKY_HASH_EMBED": "0", "PINKY_EMBEDDER": "fastembed"}, "fastembed"),
    ({"PINKY_HASH_EMBED": "off"}, "use"),
])
def test_embedder_choice(tmp_path: Path, env: dict[str, str], embedder: str) -> None:
    assert load_config(env=base_env(tmp_path, **env), cwd=tmp_path).embedder == embedder


def test_embedding_model_settings(tmp_path: Path) -> None:
    env = base_env(tmp_path, PINKY_EMBED_MODEL="intfloat/e5-small", PINKY_EMBED_MODEL_PATH="~/models/e5")
    config = load_config(env=env, cwd=tmp_path)
    assert config.embed_model == "intfloat/e5-small"
    assert config.embed_model_path == Path("~/models/e5").expanduser()


def test_config_is_frozen(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.chunk_words = 10  # type: ignore[misc]


@pytest.mark.parametrize(("name", "raw", "message"), [
    ("PINKY_BM25_WEIGHT", "nan", "not a finite number"),
    ("PINKY_VECTOR_WEIGHT", "inf", "not a finite number"),
    ("PINKY_MIN_SIMILARITY", "2", "from -1 to 1"),
    ("PINKY_COVERAGE_GATE", "-0.5", "from 0 to 1"),
])
def test_out_of_range_fusion_settings_are_refused(project: Path, name: str, raw: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        load_config(env={"PINKY_HOME": str(project / "home"), name: raw}, cwd=project)
