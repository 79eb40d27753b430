"""What the hooks share below their entry point: JSON without the `json` package, and their small state files.

`json` drags in `re` and `enum` (~5 ms), a third of a hot hook's budget, so the hooks parse with the C scanner
from `_json` and write with its string encoder. Stdlib only, like everything the hooks import.
"""

from __future__ import annotations

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
    """Compact, ASCII-only json.dumps for the str/int/bool/None/list/dict values hooks emit: the C encoder
    `json` itself uses, without loading the `json` package."""
    from _json import encode_basestring_ascii, make_encoder

    def refuse(item: object) -> object:
        raise TypeError(f"cannot encode {type(item).__name__}")

    encode = make_encoder(None, refuse, encode_basestring_ascii, None, ":", ",", False, False, False)
    return "".join(encode(value, 0))


class StateFiles:
    """The hooks' small JSON state files (session starts, rollup days). A cache: missing or damaged reads
    as empty, and a crash may lose a write. Handed by the entry point to the hooks that keep state; `top` is
    the state folder, kept the owner's alone down to each file (`pinky.base.private`)."""

    def __init__(self, top: str | None = None) -> None:
        self.top = top

    @staticmethod
    def read(path: str) -> dict:
        return read_state(path)

    def write(self, path: str, data: dict) -> None:
        write_state(path, data, self.top)


def read_state(path: str) -> dict:
    """A small JSON state file of the hooks; missing or damaged reads as empty (it is only a cache), and
    so does anything but a regular file (a FIFO would block every hook)."""
    from pinky.base.fileio import read_regular

    try:
        data = loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: str, data: dict, top: str | None = None) -> None:
    """Replace a state file atomically, so a concurrent hook never reads half of it; 0600, in folders only the
    owner may enter from `top` (the state folder) down."""
    from pinky.base.private import write_private

    write_private(path, dumps(data), top, durable=False)  # a cache: losing it in a crash costs nothing
