"""Reading and writing a host's config file without losing anything of the user's: JSON keeps its key order and
indentation, TOML (Codex) goes through tomlkit, which keeps comments and layout. Bad files raise InvalidInput
naming the file and the line."""

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
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it, pinky-brain changed "
                           "nothing") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; fix it, pinky-brain changed nothing")
    return data


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


def load_toml(path: str, text: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise InvalidInput(f"{path} is not valid TOML (line {exc.line}: {exc}); fix it, pinky-brain changed "
                           "nothing") from None


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python (for comparing with what setup would write)."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if unwrap else value


def set_toml_table(doc: Any, parent: str, name: str, values: dict[str, Any]) -> None:
    """`doc[parent][name]` = `values` (keys the user added to it kept), written as `[parent.name]`."""
    import tomlkit

    if parent not in doc:
        doc.add(parent, tomlkit.table(is_super_table=True))
    section = doc[parent]
    current = section.get(name)
    if current is not None and isinstance(plain(current), dict):
        if all(plain(current).get(k) == v for k, v in values.items()):
            return
        for key, value in values.items():
            current[key] = value
        return
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, value)
    section[name] = table


def drop_toml_table(doc: Any, parent: str, name: str) -> None:
    section = doc.get(parent)
    if section is not None and name in section:
        del section[name]
        if not plain(section):
            del doc[parent]


def set_nested(doc: Any, parents: tuple[str, ...], name: str, values: dict[str, Any]) -> None:
    """`doc[p1][p2]...[name]` = `values`, the parents created as super tables (`[p1.p2."name"]`)."""
    import tomlkit

    section = doc
    for parent in parents:
        if parent not in section:
            section.add(parent, tomlkit.table(is_super_table=True))
        section = section[parent]
    current = section.get(name)
    if current is not None and plain(current) == values:
        return
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, value)
    section[name] = table


def drop_nested(doc: Any, parents: tuple[str, ...], name: str) -> None:
    """Delete `doc[p1]...[name]`, and each parent left empty by it."""
    chain = [doc]
    for parent in parents:
        if parent not in chain[-1]:
            return
        chain.append(chain[-1][parent])
    if name not in chain[-1]:
        return
    del chain[-1][name]
    for index in range(len(parents) - 1, -1, -1):
        if plain(chain[index + 1]):
            break
        del chain[index][parents[index]]
