"""Every error the core raises is a PinkyError; front ends turn them into their own shape."""

from __future__ import annotations


class PinkyError(Exception):
    """Base class: a clear, one-line message meant for the user or the agent."""


class InvalidInput(PinkyError):
    """An argument is out of range, of the wrong kind, or unsafe (a path escaping its root)."""


class NotFound(PinkyError):
    """No entry has that slug (or it was deleted)."""


class Conflict(PinkyError):
    """Optimistic concurrency failed: the entry changed since the caller read it."""


class NotInProject(InvalidInput):
    """Project knowledge was asked for outside an initialised project (no pinky.toml here or above)."""

    def __init__(self, what: str = "project knowledge") -> None:
        super().__init__(f"{what} needs an initialised project, and there is no pinky.toml in this folder or "
                         "above: run `pinky-brain init` in your repository, or use the global brain (--scope global)")


class ReadOnlyFolder(InvalidInput):
    """A folder pinky must write into cannot be written (a read-only checkout, a mounted volume)."""

    def __init__(self, folder: object, reason: str, *, offer_global: bool = False) -> None:
        hint = "; save into the global brain instead (--scope global)" if offer_global else ""
        super().__init__(f"cannot write into {folder}: {reason}{hint}")


class LocationError(InvalidInput):
    """pinky.toml or a PINKY_* path is unusable; the message says which and how to fix it."""



class GoldenError(InvalidInput):
    """A golden file or baseline for `pinky eval` cannot be used; the message names the file and line."""

class IndexUnavailable(PinkyError):
    """brain.db cannot be opened or created."""


class IndexReplaced(IndexUnavailable):
    """Another process replaced the index file (a repair) while this one had it open: reopen and retry."""


class SyncError(PinkyError):
    """Git sync failed; the local brain is left intact."""
