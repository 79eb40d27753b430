"""Reading and writing a host's JSON config without losing anything of the user's: it keeps its key order and
indentation, and a file it could not write back whole (a key given twice) is refused. TOML (Codex) is
pinky.setup.toml_edit. Bad files raise InvalidInput naming the file and the line."""

from __future__ import annotations

import json
import re
import tomllib
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


def parsed(kind: str, data: bytes | None) -> Any:
    text = (data or b"").decode("utf-8").lstrip("\ufeff")
    if kind == "toml":
        return tomllib.loads(text)
    return json.loads(text) if text.strip() else {}


def same_meaning(kind: str, one: bytes | None, other: bytes | None) -> bool:
    """Whether two versions of a config hold the same values (an empty table counts as none: taking pinky's
    entries out also takes out the tables they leave empty)."""
    if kind == "text" or one is None or other is None:
        return one == other
    try:
        return bool(_without_empty(parsed(kind, one)) == _without_empty(parsed(kind, other)))
    except (ValueError, UnicodeDecodeError):
        return False


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: _without_empty(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item != {}}
    return value
