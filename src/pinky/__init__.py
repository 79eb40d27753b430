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

from pinky.errors import Conflict  # noqa: E402  (after the BLAS settings above, on purpose), IndexUnavailable, InvalidInput, NotFound, PinkyError, SyncError

__version__ = "0.1.0"

__all__ = [
    "Conflict",
    "IndexUnavailable",
    "InvalidInput",
    "NotFound",
    "PinkyError",
    "SyncError",
    "__version__",
]
