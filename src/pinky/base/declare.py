"""How an operation's fields are declared once: on the request dataclass, each field with its type, default,
limits and one line of description (`declared(...)`), from which the front ends derive what they show: the
CLI's click options (`pinky.cli.options`) and the MCP tools' input schemas (`pinky.mcp.declared`).

Stdlib only: `pinky-brain --help` and the hooks load it without the core.
"""

import dataclasses
import typing
from collections.abc import Sequence
from dataclasses import MISSING
from typing import Any, NamedTuple

SPEC = "pinky"  # the key of a field's metadata that holds its Spec


class Spec:
    """How a front end asks for one field. `doc`: the one line an MCP argument carries ("" when its name
    says it: every character is sent to the model in every request); `help`: the CLI's line, when it says
    more than `doc`. `flag`: the CLI option ("--tag"; "" when the CLI does not offer it) and `short` its
    one-letter form; `tool`: whether the MCP tool takes it. `choices`: the values it takes; `low`/`high`: an
    integer's bounds; `min_length`/`max_length`: a text's length or a list's items; `required`: a CLI option
    the command cannot do without (a field with no default is one too); `tool_required`: an MCP argument the tool
    cannot do without though the CLI can (it finds the value itself).

    A plain class, not a dataclass: `pinky-brain --help` builds some thirty of them at start."""

    __slots__ = ("choices", "doc", "flag", "help", "high", "low", "max_length", "metavar", "min_length",
                 "required", "short", "show_default", "tool", "tool_required")

    def __init__(self, *, doc: str = "", help: str = "", flag: str = "", short: str = "", tool: bool = True,
                 choices: tuple[str, ...] = (), low: int | None = None, high: int | None = None,
                 min_length: int | None = None, max_length: int | None = None, metavar: str = "",
                 show_default: bool = False, required: bool = False, tool_required: bool = False) -> None:
        self.doc, self.help, self.flag, self.short, self.tool = doc, help, flag, short, tool
        self.choices, self.low, self.high, self.min_length, self.max_length = choices, low, high, min_length, max_length
        self.metavar, self.show_default, self.required = metavar, show_default, required
        self.tool_required = tool_required

    @property
    def cli_help(self) -> str:
        return self.help or self.doc


def declared(default: Any = MISSING, **spec: Any) -> Any:
    """A dataclass field with its `Spec`: `limit: int = declared(10, flag="--limit", low=1, high=100)`."""
    return dataclasses.field(default=default, metadata=specified(**spec))


def specified(**spec: Any) -> dict[str, Spec]:
    """The metadata of a field with this Spec, for `dataclasses.field(metadata=...)`: how a field without a
    default that follows inherited fields is declared (type checkers see `field()` has no default)."""
    return {SPEC: Spec(**spec)}


class Declared(NamedTuple):
    """One field of a request as the front ends see it: its name, its type, its default (MISSING when
    required) and its Spec."""

    name: str
    type: Any
    default: Any
    spec: Spec

    @property
    def many(self) -> bool:
        """A list of values (a repeatable CLI option, a JSON array): `Sequence[str]`, `list[str]` or
        `tuple[str, ...]` alike."""
        return _base(self.type) in MANY

    @property
    def optional(self) -> bool:
        return type(None) in typing.get_args(self.type)

    @property
    def scalar(self) -> Any:
        """The value's Python type: str, int or bool (a list's item type for a list)."""
        base = _base(self.type)
        return typing.get_args(_without_none(self.type))[0] if base in MANY else base


def fields_of(request: type, *, skip: Sequence[str] = ()) -> list[Declared]:
    """The declared fields of a request type, required ones first, in their order of declaration. A field whose
    type no front end can take (a dict, a set, a list of lists) is refused here, by name: click would otherwise
    split a `list[str]` it did not know was a list into characters, silently."""
    found = [_checked(request, Declared(f.name, f.type, f.default, f.metadata[SPEC]))
             for f in dataclasses.fields(request) if SPEC in f.metadata and f.name not in skip]
    return sorted(found, key=lambda field: field.default is not MISSING)


def _checked(request: type, field: Declared) -> Declared:
    if isinstance(field.type, str):
        raise TypeError(f"{request.__name__}.{field.name}: declared fields need real annotations, not the string "
                        f"{field.type!r} (no `from __future__ import annotations` where requests are declared)")
    bare = _without_none(field.type)
    if field.many and (len(typing.get_args(bare)) != 1 and typing.get_args(bare)[1:] != (Ellipsis,)):
        raise TypeError(f"{request.__name__}.{field.name}: a list field takes one item type "
                        f"(Sequence[str], list[str] or tuple[str, ...]), not {field.type!r}")
    if field.scalar not in SCALARS:
        raise TypeError(f"{request.__name__}.{field.name}: the CLI and MCP take str, int, float or bool, or a list "
                        f"of one of them; {field.type!r} is none of these")
    return field


def _without_none(hint: Any) -> Any:
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return args[0] if typing.get_origin(hint) in (typing.Union, _UNION) and len(args) == 1 else hint


def _base(hint: Any) -> Any:
    bare = _without_none(hint)
    return typing.get_origin(bare) or bare


_UNION = type(int | None)
MANY = (Sequence, list, tuple)  # the container types a field of many values may be declared with
SCALARS = (str, int, float, bool)
