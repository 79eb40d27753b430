"""What the hook modules share: JSON without the `json` package, small state files, locations.

Stdlib only, like everything on the hooks' path (see `pinky.hooks`).
"""

from __future__ import annotations

import os

from pinky.locations import Locations, locate, start_folder

# --- JSON without the `json` package -----------------------------------------------------------


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


def loads(text: str) -> object:
    """json.loads for one document, through the C scanner when it is available."""
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - every CPython has _json
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip())
    try:
        scanner = make_scanner(_ScanContext())  # type: ignore[arg-type]  # duck-typed like json's own context
        value, end = scanner(text, start)
    except StopIteration:
        value, end = None, -1
    if end < 0 or text[end:].strip():
        import json  # a malformed document: let json produce the precise error

        return json.loads(text)
    return value


def dumps(value: object) -> str:
    """Compact, ASCII-only json.dumps for the str/int/bool/None/list/dict values hooks emit."""
    from _json import encode_basestring_ascii as enc

    def walk(item: object) -> str:
        if isinstance(item, str):
            return enc(item)
        if item is None:
            return "null"
        if item is True or item is False:
            return "true" if item else "false"
        if isinstance(item, int | float):
            return repr(item)
        if isinstance(item, dict):
            return "{" + ",".join(f"{enc(str(k))}:{walk(v)}" for k, v in item.items()) + "}"
        if isinstance(item, list | tuple):
            return "[" + ",".join(walk(v) for v in item) + "]"
        raise TypeError(f"cannot encode {type(item).__name__}")

    return walk(value)


def read_state(path: str) -> dict:
    """A small JSON state file of the hooks; missing or damaged reads as empty (it is only a cache)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: str, data: dict) -> None:
    """Replace a state file atomically, so a concurrent hook never reads half of it."""
    from pinky.fileio import atomic_write

    atomic_write(path, dumps(data), durable=False)  # a cache: losing it in a crash costs nothing


# --- where things are ----------------------------------------------------------------------------


def hook_locations(payload: dict, env: dict[str, str] | os._Environ[str] | None = None) -> Locations:
    """The brain the CLI and the MCP server would use, seen from the session's project folder."""
    env = os.environ if env is None else env
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    return locate(env=env, start=start_folder(env, cwd))


def project_dir(loc: Locations) -> str:
    """The folder tool paths are taken relative to: the project root, else where the session runs."""
    return loc.project_root or loc.start
