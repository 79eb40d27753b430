"""pinky-brain: local memory for coding agents.

Kept free of heavy imports so that `import pinky` stays fast for the CLI and the hooks.
"""

from __future__ import annotations

from pinky.errors import Conflict, IndexUnavailable, InvalidInput, NotFound, PinkyError, SyncError

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
