"""The result of one `pinky doctor` check: what was found and, when something is wrong, the fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | error
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
