"""What one sync of the global brain did (`SyncReport`), apart from the run (pinky.sync.run): the MCP's brain_sync
derives its output model from it when the server starts, which must not load git.
"""

from dataclasses import dataclass, field
from typing import Any

from pinky.base.declare import specified


@dataclass(frozen=True)
class SyncReport:
    """What one sync run did; ``pulled_paths`` are the files the caller must reindex."""

    cloned: bool = False
    initialised: bool = False
    committed: bool = False
    commit_message: str | None = None
    pulled_paths: list[str] = field(default_factory=list)
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)
    remote: str | None = None
    notes: list[str] = field(default_factory=list)
    held_back: list[dict[str, Any]] = field(default_factory=list, metadata=specified(doc=(
        "Files that look like they hold a credential, kept out of the commit and the push and left as they "
        "are: {path, kinds, why}. The user removes the secret, or runs `pinky-brain sync --allow PATH`.")))
    allowed: list[dict[str, Any]] = field(default_factory=list)  # {path, kinds}: `allow` took effect
