"""Editing Codex's config.toml in every shape Codex accepts, keeping every comment and every other value.

An edit is a list of operations on a table path (`("set", ("mcp_servers", "pinky"), {...})`). Each is made twice:
on the plain data (what the file must mean afterwards) and on the tomlkit document (what keeps the file's
layout). The document is written only when it parses to exactly that data: tomlkit puts a new `[table]` in the
wrong place after dotted keys (`mcp_servers.other.command = ...`), and cannot put one inside an inline table
(`mcp_servers = { other = {...} }`); there the entry is written as an inline table instead, and a file where
neither keeps everything else as it was is refused in one line.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from typing import Any

from pinky.errors import InvalidInput

Op = tuple[str, tuple[str, ...], dict[str, Any]]  # "set" merges into the table, "put" replaces it, "drop" deletes
TomlEdit = Callable[[dict[str, Any]], list[Op]]  # the file's data as plain Python -> the operations to make
UNCHANGED = "pinky-brain changed nothing"


def set_table(keys: tuple[str, ...], values: dict[str, Any]) -> Op:
    return ("set", keys, values)


def put_table(keys: tuple[str, ...], values: dict[str, Any]) -> Op:
    return ("put", keys, values)


def drop_table(keys: tuple[str, ...]) -> Op:
    return ("drop", keys, {})


def edit(path: str, text: str, edits: list[TomlEdit]) -> str:
    """`text` (config.toml at `path`) with `edits` made."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(text)
        data = tomllib.loads(text)
    except (ParseError, tomllib.TOMLDecodeError) as exc:
        line = getattr(exc, "line", None) or getattr(exc, "lineno", "?")
        raise InvalidInput(f"{path} is not valid TOML (line {line}: {exc}); fix it, {UNCHANGED}") from None
    for make in edits:
        for op in make(data):
            expected = apply_plain(path, copy.deepcopy(data), op)
            if expected != data:
                doc = apply_document(path, doc, op, expected)
            data = expected
    return doc.as_string()


def _dotted(keys: tuple[str, ...]) -> str:
    return ".".join(key if key.replace("_", "").replace("-", "").isalnum() else f'"{key}"' for key in keys)


def apply_plain(path: str, data: dict[str, Any], op: Op) -> dict[str, Any]:
    kind, keys, values = op
    chain = [data]
    for depth, key in enumerate(keys[:-1]):
        child = chain[-1].get(key)
        if child is None:
            if kind == "drop":
                return data
            child = chain[-1][key] = {}
        elif not isinstance(child, dict):
            raise InvalidInput(f"{path}: `{_dotted(keys[:depth + 1])}` is {type(child).__name__} {child!r}, not a "
                               f"table; fix it by hand, {UNCHANGED}")
        chain.append(child)
    name, parent = keys[-1], chain[-1]
    current = parent.get(name)
    if kind == "drop":
        if name in parent:
            del parent[name]
            _prune_plain(chain, keys)
    else:
        parent[name] = {**current, **values} if kind == "set" and isinstance(current, dict) else dict(values)
    return data


def _prune_plain(chain: list[dict[str, Any]], keys: tuple[str, ...]) -> None:
    for depth in range(len(keys) - 2, -1, -1):
        if chain[depth + 1]:
            return
        del chain[depth][keys[depth]]


def apply_document(path: str, doc: Any, op: Op, expected: dict[str, Any]) -> Any:
    """`doc` with `op` made, as tables; else as inline tables; refused when neither means `expected`."""
    import tomlkit

    before = doc.as_string()
    for inline in (False, True):
        trial = doc if not inline else tomlkit.parse(before)
        try:
            _apply(trial, op, inline)
            if tomllib.loads(trial.as_string()) == expected:
                return trial
        except Exception:  # noqa: BLE001 - tomlkit refuses some shapes with its own errors: try the other way
            pass
    raise InvalidInput(f"{path}: pinky-brain cannot change `{_dotted(op[1])}` in this file without changing "
                       f"something else in it; make that change by hand, {UNCHANGED}")


def _new_table(parent: Any, inline: bool, *, super_table: bool = False) -> Any:
    import tomlkit
    from tomlkit.items import InlineTable

    if inline or isinstance(parent, InlineTable):
        return tomlkit.inline_table()
    return tomlkit.table(is_super_table=True) if super_table else tomlkit.table()


def _apply(doc: Any, op: Op, inline: bool) -> None:
    kind, keys, values = op
    chain = [doc]
    for key in keys[:-1]:
        if key not in chain[-1]:
            chain[-1][key] = _new_table(chain[-1], inline, super_table=True)
        chain.append(chain[-1][key])
    name, parent = keys[-1], chain[-1]
    current = parent.get(name)
    if kind == "drop":
        del parent[name]
        for depth in range(len(keys) - 2, -1, -1):
            if _plain(chain[depth + 1]):
                break
            del chain[depth][keys[depth]]
        return
    if isinstance(current, dict) and (kind == "set" or _plain(current) == values):
        for key, value in values.items():
            if _plain(current.get(key)) != value:
                current[key] = value
        return
    table = _new_table(parent, inline)
    for key, value in values.items():
        table[key] = value
    parent[name] = table


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if unwrap else value
