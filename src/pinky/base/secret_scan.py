"""Finding credentials without replacing them: what `pinky sync` holds back and an import reports.

A finding names a credential by a SHA-256 of its text, never the text, so it can be compared (is
this secret new since the last commit? was it allowed?) and written down without leaking it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from pinky.base.redact import scan


@dataclass(frozen=True)
class Finding:
    """One credential `pinky.base.redact.redact` would replace: its kind, and a fingerprint of its text."""

    kind: str
    fingerprint: str


def find_secrets(text: str) -> list[Finding]:
    """The credentials `redact(text)` would replace, in order; the text itself is left alone."""
    found: list[Finding] = []
    scan(text, lambda kind, secret: found.append(
        Finding(kind, hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest())))
    return found
