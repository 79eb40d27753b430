"""Text from a note as pinky shows it to the agent: every credential hidden, as in search snippets.

One rule for every surface (the hooks' lines, MCP results): `pinky.base.redact`. Stdlib until a text
could hold a secret (`pinky.base.secret_words`), so a hot hook pays for the redactor only then.
"""

from __future__ import annotations

from pinky.base.secret_words import may_hold_secret

TYPE_CHECKING = False  # `typing` imports `re`: the hot hooks must not pay for it
if TYPE_CHECKING:
    from typing import Any


def shown(text: str) -> str:
    """`text` with its credentials replaced by `[REDACTED:<kind>]` markers."""
    if not may_hold_secret(text):
        return text
    from pinky.base.redact import redact

    return redact(text)


def shown_all(value: Any) -> Any:
    """`shown` on every string inside `value` (dicts, lists and tuples walked; keys left as they are)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {key: shown_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown_all(item) for item in value]
    return value
