"""Configuration: one frozen dataclass built from the brain's locations and the PINKY_* settings.

Where things are is decided by `pinky.base.locations` (the same answer for the CLI, the MCP server and
the hooks); this module adds how the brain embeds and ranks. Precedence: defaults < pinky.toml <
environment < explicit arguments (the CLI's flags).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from pinky.base.layout import ENTRY_TYPES
from pinky.base.locations import (
    ENV_BM25_WEIGHT,
    ENV_CHUNK_WORDS,
    ENV_COVERAGE_GATE,
    ENV_EMBED_MODEL,
    ENV_EMBED_MODEL_PATH,
    ENV_EMBED_WORKERS,
    ENV_EMBEDDER,
    ENV_FUSION,
    ENV_HASH_EMBED,
    ENV_MAX_IMPORT_BYTES,
    ENV_MAX_NOTE_BYTES,
    ENV_MAX_RESULT_CHARS,
    ENV_MIN_SIMILARITY,
    ENV_MODEL_CACHE,
    ENV_QUALITY,
    ENV_QUALITY_BM25_WEIGHT,
    ENV_QUALITY_USE_SHARE,
    ENV_RRF_K,
    ENV_VECTOR_WEIGHT,
    Locations,
    index_note,
    locate,
)
from pinky.base.staleness import ENV_STALE_DAYS, parse_stale_days
from pinky.errors import InvalidInput
from pinky.text.lexical import FTS_COLUMNS, field_weights

ENV_TELEMETRY = "PINKY_TELEMETRY"
ENV_LOG_QUERIES = "PINKY_LOG_QUERIES"

__all__ = ["ENTRY_TYPES", "Config", "FusionSettings", "config_from", "load_config"]

FUSION_METHODS: tuple[str, ...] = ("zscore", "score", "rrf")
EMBEDDERS: tuple[str, ...] = ("use", "fastembed", "hash")
QUALITY_MODELS: tuple[str, ...] = ("e5", "off")  # pinky.search.second_stage

# Measured on the retrieval sets (SciFact, CoSQA; documentation/RANKING.md): the defaults that beat BM25 on
# both sets.
DEFAULT_FUSION = "zscore"
DEFAULT_RRF_K = 60
DEFAULT_BM25_WEIGHT = 0.65
DEFAULT_VECTOR_WEIGHT = 0.35
DEFAULT_COVERAGE_GATE = 0.4
# Once the second-stage vectors (pinky.search.second_stage, multilingual-e5-small) rank, full text weighs this much
# against them; measured on the retrieval sets like the rest (documentation/RANKING.md).
DEFAULT_QUALITY_BM25_WEIGHT = 0.4
DEFAULT_QUALITY_USE_SHARE = 0.2  # the default embedder's share of the vector side beside the second stage (measured)
DEFAULT_CHUNK_WORDS = 150
# A note larger than this is indexed by its title and its first bytes (a warning says so): one huge
# file (a pasted log, a dump) must not stall a reindex. pinky's own saves stay under 0.4 MB.
DEFAULT_MAX_NOTE_BYTES = 4_000_000
MIN_MAX_NOTE_BYTES = 4096
# An export file larger than this is refused before anything is read (pinky import, brain_import): an
# export of 10,000 notes of ~300 words is ~25 MB, so this leaves room for very large brains.
DEFAULT_MAX_IMPORT_BYTES = 1 << 30
# What one pinky-mcp tool result may hold, text and structuredContent together (~10,000 tokens): a
# larger one is cut and says how to get the rest (pinky.mcp.budget). Claude Code moves a result over
# 50,000 characters out of the conversation into a file, and refuses one over 25,000 tokens.
DEFAULT_MAX_RESULT_CHARS = 40_000
MIN_MAX_RESULT_CHARS = 2_000
# Vector-only candidates below this cosine are noise (unrelated text scores ~0-0.15 with USE).
DEFAULT_MIN_SIMILARITY = 0.2


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _env_number(env: dict[str, str], name: str, default: float, kind: type = float) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise InvalidInput(f"{name}={raw!r} is not {'a whole number' if kind is int else 'a number'}") from None
    if not math.isfinite(value):
        raise InvalidInput(f"{name}={raw!r} is not a finite number")
    return value


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
    quality_bm25_weight: float = DEFAULT_QUALITY_BM25_WEIGHT  # the full-text share (0-1) beside second-stage vectors
    quality_use_share: float = DEFAULT_QUALITY_USE_SHARE  # of the vector side, what the default embedder keeps (0-1)
    # The lexical side (pinky.text.lexical): bm25() weight of each full-text field, in FTS_COLUMNS order, and
    # whether a query's identifiers are also asked for by their parts.
    field_weights: tuple[float, ...] = field(default_factory=field_weights)
    split_identifiers: bool = True
    # Second full-text passes whose scores add to the first's, times these weights (0: off): neighbouring
    # query words close together (proximity), and the words the top results share (pseudo-relevance feedback).
    proximity: float = 0.0
    feedback: float = 0.0

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise InvalidInput(f"unknown fusion {self.method!r}; use one of {', '.join(FUSION_METHODS)}")
        if self.rrf_k < 1:
            raise InvalidInput("the RRF k must be at least 1")
        numbers = (self.bm25_weight, self.vector_weight, self.min_similarity, self.coverage_gate, self.proximity,
                   self.feedback)
        if not all(math.isfinite(n) for n in numbers):
            raise InvalidInput("fusion settings must be finite numbers")
        if self.bm25_weight < 0 or self.vector_weight < 0 or self.bm25_weight + self.vector_weight == 0:
            raise InvalidInput("fusion weights must be non-negative and not both zero")
        if not -1 <= self.min_similarity <= 1:
            raise InvalidInput(f"the minimum similarity is a cosine, from -1 to 1; got {self.min_similarity}")
        if self.proximity < 0 or self.feedback < 0:
            raise InvalidInput("the proximity and feedback weights must not be negative")
        if len(self.field_weights) != len(FTS_COLUMNS) or not all(
                math.isfinite(w) and w >= 0 for w in self.field_weights):
            raise InvalidInput(f"field weights must be {len(FTS_COLUMNS)} non-negative numbers "
                               f"({', '.join(FTS_COLUMNS)})")
        if not (math.isfinite(self.quality_bm25_weight) and 0 <= self.quality_bm25_weight <= 1):
            raise InvalidInput(f"the full-text share beside second-stage vectors is from 0 to 1; got "
                               f"{self.quality_bm25_weight}")
        if not (math.isfinite(self.quality_use_share) and 0 <= self.quality_use_share <= 1):
            raise InvalidInput(f"the default embedder's share beside second-stage vectors is from 0 to 1; got "
                               f"{self.quality_use_share}")
        if not 0 <= self.coverage_gate <= 1:
            raise InvalidInput(f"the coverage gate is a share of query words, from 0 to 1; got {self.coverage_gate}")


@dataclass(frozen=True)
class Config:
    """Where the brain lives and how it is searched. Paths are absolute.

    `save_dir`, `project_root` and `project` are None outside an initialised project: then the
    brain is the global one only, and nothing is written into the current folder."""

    home: Path
    db_path: Path
    save_dir: Path | None
    project: str | None
    project_root: Path | None = None
    project_explicit: bool = False
    embedder: str = "use"
    embed_model: str | None = None
    embed_model_path: Path | None = None
    chunk_words: int = DEFAULT_CHUNK_WORDS
    max_note_bytes: int = DEFAULT_MAX_NOTE_BYTES
    max_import_bytes: int = DEFAULT_MAX_IMPORT_BYTES
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    fusion: FusionSettings = field(default_factory=FusionSettings)
    stale_days: dict[str, int | None] = field(default_factory=lambda: parse_stale_days(None))  # by type
    telemetry: bool = True  # PINKY_TELEMETRY=0: no usage, feedback or gap is recorded
    log_queries: bool = False  # PINKY_LOG_QUERIES=1: a knowledge gap keeps its query's text, not just a hash
    model_cache_off: bool = False
    embed_workers: int | None = None  # processes for large embedding runs; None: one per core (embed_pool)
    quality: str = "off"  # the second-stage retriever (pinky.search.second_stage): "e5" or "off"
    # A project folder that cannot hold its index (read-only): the index path it would have (db_path is then
    # in the user's cache folder), and its existing index, read in place until something must be written.
    db_moved_from: Path | None = None
    db_source: Path | None = None

    @property
    def in_project(self) -> bool:
        return self.save_dir is not None

    @property
    def db_note(self) -> str | None:
        """One line saying where the index is when the project folder cannot hold it; None otherwise."""
        return index_note(str(self.db_moved_from) if self.db_moved_from else None, str(self.db_path),
                          str(self.db_source) if self.db_source else None)

    @property
    def global_dir(self) -> Path:
        return self.home / "brain"

    @property
    def state_dir(self) -> Path:
        return self.home / "state"

    def roots(self) -> dict[str, Path]:
        """The markdown roots indexed into one brain.db: the project's (when in one) and the global brain."""
        found = {"project": self.save_dir} if self.save_dir is not None else {}
        return {**found, "global": self.global_dir}


def _embedder_choice(env: dict[str, str]) -> str:
    if _truthy(env.get(ENV_HASH_EMBED)):
        return "hash"
    choice = (env.get(ENV_EMBEDDER) or "use").strip().lower()
    if choice not in EMBEDDERS:
        raise InvalidInput(f"{ENV_EMBEDDER}={choice!r}: use one of {', '.join(EMBEDDERS)}")
    return choice


def _quality_choice(env: dict[str, str], embedder: str) -> str:
    """e5 beside the default embedder unless switched off; never beside the hashing stand-in (tests) or
    fastembed (a model the user chose) unless asked for."""
    raw = (env.get(ENV_QUALITY) or "").strip().lower()
    if not raw:
        return "e5" if embedder == "use" else "off"
    choice = {"0": "off", "false": "off", "no": "off", "none": "off", "1": "e5", "on": "e5"}.get(raw, raw)
    if choice not in QUALITY_MODELS:
        raise InvalidInput(f"{ENV_QUALITY}={raw!r}: use one of {', '.join(QUALITY_MODELS)}")
    return choice


def _fusion(env: dict[str, str]) -> FusionSettings:
    return FusionSettings(
        method=(env.get(ENV_FUSION) or DEFAULT_FUSION).strip().lower(),
        rrf_k=int(_env_number(env, ENV_RRF_K, DEFAULT_RRF_K, int)),
        bm25_weight=_env_number(env, ENV_BM25_WEIGHT, DEFAULT_BM25_WEIGHT),
        vector_weight=_env_number(env, ENV_VECTOR_WEIGHT, DEFAULT_VECTOR_WEIGHT),
        min_similarity=_env_number(env, ENV_MIN_SIMILARITY, DEFAULT_MIN_SIMILARITY),
        coverage_gate=_env_number(env, ENV_COVERAGE_GATE, DEFAULT_COVERAGE_GATE),
        quality_bm25_weight=_env_number(env, ENV_QUALITY_BM25_WEIGHT, DEFAULT_QUALITY_BM25_WEIGHT),
        quality_use_share=_env_number(env, ENV_QUALITY_USE_SHARE, DEFAULT_QUALITY_USE_SHARE),
    )


def _path(value: str | None) -> Path | None:
    return Path(value).resolve() if value else None


def config_from(loc: Locations, env: dict[str, str] | None = None) -> Config:
    """The configuration for these locations, with the embedding and ranking settings of `env`."""
    env = dict(os.environ) if env is None else env
    chunk_words = int(_env_number(env, ENV_CHUNK_WORDS, DEFAULT_CHUNK_WORDS, int))
    if not 20 <= chunk_words <= 2000:
        raise InvalidInput(f"{ENV_CHUNK_WORDS} must be between 20 and 2000, got {chunk_words}")
    max_note_bytes = int(_env_number(env, ENV_MAX_NOTE_BYTES, DEFAULT_MAX_NOTE_BYTES, int))
    if max_note_bytes < MIN_MAX_NOTE_BYTES:
        raise InvalidInput(f"{ENV_MAX_NOTE_BYTES} must be at least {MIN_MAX_NOTE_BYTES} (bytes), got {max_note_bytes}")
    max_import_bytes = int(_env_number(env, ENV_MAX_IMPORT_BYTES, DEFAULT_MAX_IMPORT_BYTES, int))
    if max_import_bytes < 1:
        raise InvalidInput(f"{ENV_MAX_IMPORT_BYTES} must be at least 1 (bytes), got {max_import_bytes}")
    max_result_chars = int(_env_number(env, ENV_MAX_RESULT_CHARS, DEFAULT_MAX_RESULT_CHARS, int))
    if max_result_chars < MIN_MAX_RESULT_CHARS:
        raise InvalidInput(f"{ENV_MAX_RESULT_CHARS} must be at least {MIN_MAX_RESULT_CHARS:,} (characters), "
                           f"got {max_result_chars}")
    model_path = env.get(ENV_EMBED_MODEL_PATH)
    embedder = _embedder_choice(env)
    return Config(
        home=Path(loc.home).resolve(),
        db_path=Path(loc.db).resolve(),
        save_dir=_path(loc.save_dir),
        project=loc.project,
        project_root=_path(loc.project_root),
        project_explicit=loc.project_explicit,
        embedder=embedder,
        embed_model=env.get(ENV_EMBED_MODEL) or None,
        embed_model_path=Path(model_path).expanduser() if model_path else None,
        chunk_words=chunk_words,
        max_note_bytes=max_note_bytes,
        max_import_bytes=max_import_bytes,
        max_result_chars=max_result_chars,
        fusion=_fusion(env),
        stale_days=parse_stale_days(env.get(ENV_STALE_DAYS)),
        telemetry=(env.get(ENV_TELEMETRY) or "1").strip().lower() not in {"0", "false", "no", "off"},
        log_queries=_truthy(env.get(ENV_LOG_QUERIES)),
        model_cache_off=(env.get(ENV_MODEL_CACHE) or "").strip().lower() in ("off", "0", "false", "no"),
        embed_workers=_embed_workers(env),
        quality=_quality_choice(env, embedder),
        db_moved_from=_path(loc.db_moved_from),
        db_source=_path(loc.db_source),
    )


def _embed_workers(env: dict[str, str]) -> int | None:
    value = (env.get(ENV_EMBED_WORKERS) or "").strip().lower()
    if value in ("", "auto"):
        return None
    try:
        workers = int(value)
    except ValueError:
        workers = -1
    if not 0 <= workers <= 64:
        raise InvalidInput(f"{ENV_EMBED_WORKERS} must be auto or a number of processes from 0 to 64, got {value!r}")
    return workers


def load_config(
    *,
    home: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    save_dir: str | os.PathLike[str] | None = None,
    project: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Config:
    """Locate the brain from `cwd` (default: the current folder) and build its configuration.

    Explicit arguments win over the environment, which wins over the project's pinky.toml."""
    env = dict(os.environ) if env is None else env
    loc = locate(env=env, start=os.fspath(cwd) if cwd is not None else None,
                 home=os.fspath(home) if home is not None else None, db=os.fspath(db) if db is not None else None,
                 save_dir=os.fspath(save_dir) if save_dir is not None else None, project=project)
    return config_from(loc, env)
