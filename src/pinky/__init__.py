"""pinky-brain: local memory for coding agents.

Kept free of heavy imports so that `import pinky` stays fast for the CLI and the hooks.
"""

from __future__ import annotations

import os

# pinky's matrix work is small (one query against a few thousand vectors, batches of 64 chunks):
# a multi-threaded BLAS spends more time waking threads than computing, and on a busy 2-core
# machine it measured 20-30x slower than one thread. Set before numpy loads; the user's value wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

__version__ = "0.1.0"

# The library's public API. Everything loads on first use (PEP 562), errors included: `import pinky`
# stays cheap for the hooks, which run once per tool call and rarely raise.
_LAZY = {
    **dict.fromkeys(("Conflict", "IndexUnavailable", "InvalidInput", "LocationError", "NotFound", "NotInProject",
                     "PinkyError", "SyncError"), "pinky.errors"),
    "Config": "pinky.config",
    "load_config": "pinky.config",
    "KnowledgeBase": "pinky.kb",
    "Entry": "pinky.knowledge.entries",
    "Hit": "pinky.search.hybrid",
    "SearchResult": "pinky.search.hybrid",
}

__all__ = [
    "Config",
    "Conflict",
    "Entry",
    "Hit",
    "IndexUnavailable",
    "InvalidInput",
    "KnowledgeBase",
    "LocationError",
    "NotFound",
    "NotInProject",
    "PinkyError",
    "SearchResult",
    "SyncError",
    "__version__",
    "load_config",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pinky' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
