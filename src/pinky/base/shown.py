"""Text from a note as pinky shows it to the agent: every credential hidden, as in search snippets,
and every name on one line.

One rule for every surface (the hooks' lines, MCP results, the CLI, the page): `pinky.base.redact` for
secrets (stdlib until a text could hold one, `pinky.base.secret_words`, so a hot hook pays for the
redactor only then), and `plain` for the names (a slug, path, tag, relation, key or project name is
never more than one line, whatever a file name or a frontmatter holds).
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


# The fields of structured results that hold a name, never text: `plain` on each string in them.
NAME_FIELDS = frozenset({
    "slug", "path", "tags", "tag", "rel", "relation", "key", "subject", "project", "scope", "title", "type",
    "file", "files", "target", "to", "new_slug", "same_as", "supersedes", "superseded_by", "id", "a", "b",
    "a_title", "b_title", "kept", "archived", "display_path", "source", "folder", "root",
})


def shown_all(value: Any, *, name: bool = False) -> Any:
    """`shown` on every string inside `value` (dicts, lists and tuples walked; keys left as they are),
    and `plain` too on the strings under a key of NAME_FIELDS."""
    if isinstance(value, str):
        return plain(shown(value)) if name else shown(value)
    if isinstance(value, dict):
        return {key: shown_all(item, name=name or key in NAME_FIELDS) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown_all(item, name=name) for item in value]
    return value


def plain_names(value: Any, *, name: bool = False) -> Any:
    """`plain` on the strings under a key of NAME_FIELDS inside `value`; the rest as it is (the CLI's
    JSON: the user's own text, credentials included, but no name on more than one line)."""
    if isinstance(value, str):
        return plain(value) if name else value
    if isinstance(value, dict):
        return {key: plain_names(item, name=name or key in NAME_FIELDS) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_names(item, name=name) for item in value]
    return value


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def plain(text: str) -> str:
    """`text` as one line that cannot speak for itself: the gate every name pinky shows goes through
    (slug, path, tag, relation, key, project, title). Each control character (a newline, a carriage
    return, NEL, ESC that starts an ANSI code), line or paragraph separator (U+2028, U+2029) and
    invisible format character (bidi overrides and isolates, a zero-width space; not the joiners words
    and emoji are made of) is written as its escape (`\\n`,
    `\\x1b`, `\\u2028`), so a file named `yak\\nIMPORTANT: ...md` never becomes a line of its own in the
    agent's context or a terminal, and the name shown still says which file it is. Stdlib, one
    `isprintable` call for an ordinary name."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or _blank(c) else _escaped(c) for c in text)


def is_plain(text: str) -> bool:
    """True when `plain` leaves `text` as it is."""
    return text.isprintable() or plain(text) == text


_JOINERS = "\u200c\u200d\xad"  # zero-width (non-)joiner, soft hyphen: parts of words (Persian, emoji)


def _blank(char: str) -> bool:
    """A space that is not a line break (no-break space, ideographic space), or a joiner inside a word
    (an emoji sequence, Persian text): shown as it is."""
    return char > "\x9f" and (char in _JOINERS or (char.isspace() and char not in "\u2028\u2029"))


def _escaped(char: str) -> str:
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                                  else f"\\U{code:08x}")
