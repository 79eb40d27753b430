"""Configuration: one frozen dataclass built from defaults < environment < explicit overrides.

Every PINKY_* variable is named here once, so `--help`, the docs and the code agree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from pinky.errors import InvalidInput

ENV_HOME = "PINKY_HOME"
ENV_DB = "PINKY_DB"
ENV_SAVE_DIR = "PINKY_SAVE_DIR"
ENV_PROJECT = "PINKY_PROJECT"
ENV_HASH_EMBED = "PINKY_HASH_EMBED"
ENV_EMBEDDER = "PINKY_EMBEDDER"
ENV_EMBED_MODEL = "PINKY_EMBED_MODEL"
ENV_EMBED_MODEL_PATH = "PINKY_EMBED_MODEL_PATH"
ENV_CHUNK_WORDS = "PINKY_CHUNK_WORDS"
ENV_FUSION = "PINKY_FUSION"
ENV_RRF_K = "PINKY_RRF_K"
ENV_BM25_WEIGHT = "PINKY_BM25_WEIGHT"
ENV_VECTOR_WEIGHT = "PINKY_VECTOR_WEIGHT"
ENV_MIN_SIMILARITY = "PINKY_MIN_SIMILARITY"
ENV_COVERAGE_GATE = "PINKY_COVERAGE_GATE"
ENV_LOG = "PINKY_LOG"
ENV_TIER = "PINKY_TIER"

ENTRY_TYPES: tuple[str, ...] = ("gotcha", "pattern", "bug", "decision", "diary", "guide", "note")
FUSION_METHODS: tuple[str, ...] = ("zscore", "score", "rrf")

# Measured on ../shared/eval (see documentation/HOW-IT-WORKS.md): the defaults that beat BM25 on both sets.
DEFAULT_FUSION = "zscore"
DEFAULT_RRF_K = 60
DEFAULT_BM25_WEIGHT = 0.65
DEFAULT_VECTOR_WEIGHT = 0.35
DEFAULT_COVERAGE_GATE = 0.4
DEFAULT_CHUNK_WORDS = 150
# Vector-only candidates below this cosine are noise (unrelated text scores ~0-0.15 with USE).
DEFAULT_MIN_SIMILARITY = 0.2


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _env_number(env: dict[str, str], name: str, default: float, kind: type = float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return kind(raw)
    except ValueError:
        raise InvalidInput(f"{name}={raw!r} is not a number") from None


def default_home() -> Path:
    return Path("~/.pinky").expanduser()


@dataclass(frozen=True)
class FusionSettings:
    """How the BM25 and vector rankings are combined."""

    method: str = DEFAULT_FUSION
    rrf_k: int = DEFAULT_RRF_K
    bm25_weight: float = DEFAULT_BM25_WEIGHT
    vector_weight: float = DEFAULT_VECTOR_WEIGHT
    depth: int = 100
    min_similarity: float = DEFAULT_MIN_SIMILARITY
    coverage_gate: float = DEFAULT_COVERAGE_GATE

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise InvalidInput(f"unknown fusion {self.method!r}; use one of {', '.join(FUSION_METHODS)}")
        if self.rrf_k < 1:
            raise InvalidInput("the RRF k must be at least 1")
        if self.bm25_weight < 0 or self.vector_weight < 0 or self.bm25_weight + self.vector_weight == 0:
            raise InvalidInput("fusion weights must be non-negative and not both zero")


@dataclass(frozen=True)
class Config:
    """Where the brain lives and how it is searched. Paths are absolute."""

    home: Path
    db_path: Path
    save_dir: Path
    project: str
    project_explicit: bool = False
    embedder: str = "use"
    embed_model: str | None = None
    embed_model_path: Path | None = None
    chunk_words: int = DEFAULT_CHUNK_WORDS
    fusion: FusionSettings = field(default_factory=FusionSettings)

    @property
    def global_dir(self) -> Path:
        return self.home / "brain"

    @property
    def state_dir(self) -> Path:
        return self.home / "state"

    def roots(self) -> dict[str, Path]:
        """The two markdown roots indexed into one brain.db."""
        return {"project": self.save_dir, "global": self.global_dir}

    def with_overrides(self, **changes: object) -> Config:
        return replace(self, **changes)  # type: ignore[arg-type]


def _project_name(save_dir: Path) -> str:
    # documentation/ sits at the repository root, so its parent names the project.
    parent = save_dir.parent.name or save_dir.name
    return parent or "default"


def _db_path(explicit: str | os.PathLike[str] | None, cwd: Path, save_dir: Path, home: Path) -> Path:
    """`brain.db` in the project; outside a pinky project, the global brain's own index.

    Claude Code starts the plugin's server in every folder it opens: creating brain.db in a
    repository that never asked for pinky would litter it, so a folder without a save dir and
    without brain.db gets `$PINKY_HOME/global.db` (global knowledge only) instead.
    """
    if explicit:
        path = Path(explicit).expanduser()
        return path if path.is_absolute() else cwd / path
    local = cwd / "brain.db"
    return local if save_dir.is_dir() or local.exists() else home / "global.db"


def _embedder_choice(env: dict[str, str]) -> str:
    if _truthy(env.get(ENV_HASH_EMBED)):
        return "hash"
    choice = (env.get(ENV_EMBEDDER) or "use").strip().lower()
    if choice not in {"use", "fastembed", "hash"}:
        raise InvalidInput(f"{ENV_EMBEDDER}={choice!r}: use one of use, fastembed, hash")
    return choice


def load_config(
    *,
    home: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    save_dir: str | os.PathLike[str] | None = None,
    project: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Config:
    """Build the configuration. Explicit arguments win over the environment, which wins over defaults."""
    env = dict(os.environ) if env is None else env
    cwd = cwd or Path.cwd()
    home_path = Path(home or env.get(ENV_HOME) or default_home()).expanduser()
    save_path = Path(save_dir or env.get(ENV_SAVE_DIR) or "documentation").expanduser()
    home_path = home_path if home_path.is_absolute() else cwd / home_path
    save_path = save_path if save_path.is_absolute() else cwd / save_path
    db_path = _db_path(db or env.get(ENV_DB), cwd, save_path, home_path)
    explicit_project = project or env.get(ENV_PROJECT) or None
    chunk_words = int(_env_number(env, ENV_CHUNK_WORDS, DEFAULT_CHUNK_WORDS, int))
    if not 20 <= chunk_words <= 2000:
        raise InvalidInput(f"{ENV_CHUNK_WORDS} must be between 20 and 2000, got {chunk_words}")
    fusion = FusionSettings(
        method=(env.get(ENV_FUSION) or DEFAULT_FUSION).strip().lower(),
        rrf_k=int(_env_number(env, ENV_RRF_K, DEFAULT_RRF_K, int)),
        bm25_weight=_env_number(env, ENV_BM25_WEIGHT, DEFAULT_BM25_WEIGHT),
        vector_weight=_env_number(env, ENV_VECTOR_WEIGHT, DEFAULT_VECTOR_WEIGHT),
        min_similarity=_env_number(env, ENV_MIN_SIMILARITY, DEFAULT_MIN_SIMILARITY),
        coverage_gate=_env_number(env, ENV_COVERAGE_GATE, DEFAULT_COVERAGE_GATE),
    )
    model_path = env.get(ENV_EMBED_MODEL_PATH)
    return Config(
        home=home_path.resolve(),
        db_path=db_path.resolve(),
        save_dir=save_path.resolve(),
        project=explicit_project or _project_name(save_path.resolve()),
        project_explicit=explicit_project is not None,
        embedder=_embedder_choice(env),
        embed_model=env.get(ENV_EMBED_MODEL) or None,
        embed_model_path=Path(model_path).expanduser() if model_path else None,
        chunk_words=chunk_words,
        fusion=fusion,
    )
