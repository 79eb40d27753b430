"""Reading and writing a host's JSON config without losing anything of the user's: it keeps its key order and
indentation, and a file it could not write back whole (a key given twice) is refused. TOML (Codex) is
pinky.setup.toml_edit. Bad files raise InvalidInput naming the file and the line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pinky.errors import InvalidInput

Edit = Callable[[Any], None]


def load_json(path: str, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise InvalidInput(f"{path} has the key {exc.args[0]!r} twice in one object (only the last counts); keep "
                           "one, pinky-brain changed nothing") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it, pinky-brain changed "
                           "nothing") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; fix it, pinky-brain changed nothing")
    return data


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a key comes twice: rewriting it would silently drop the first value."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen.add(key)
    return dict(pairs)


_FIRST_INDENT = re.compile(r"^\{[ \t]*\r?\n([ \t]+)\S")

def json_indent(text: str) -> int | str:
    """The indentation the file uses (its first indented line), 2 for a new or flat file."""
    found = _FIRST_INDENT.search(text)
    if not found:
        return 2
    lead = found.group(1)
    return lead if "\t" in lead else len(lead)


def dump_json(data: dict[str, Any], like: str) -> str:
    """`data` indented as `like` (the file's old text) was, ending in a newline unless it had none."""
    out = json.dumps(data, indent=json_indent(like), ensure_ascii=False)
    return out + ("" if like and not like.endswith("\n") else "\n")


