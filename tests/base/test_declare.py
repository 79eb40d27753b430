"""A declared field becomes a CLI option and an MCP argument of the right shape, whichever list type it is
declared with; a type no front end can take is refused when the request is read, naming the field."""

from collections.abc import Sequence
from dataclasses import dataclass

import click
import pytest
from click.testing import CliRunner

from pinky.base.declare import declared, fields_of
from pinky.cli.options import request_options
from pinky.mcp.declared import argument


@dataclass(frozen=True)
class Lists:
    as_sequence: Sequence[str] = declared((), flag="--seq")
    as_list: list[str] = declared((), flag="--lst")
    as_tuple: tuple[str, ...] = declared((), flag="--tup")
    optional_list: list[str] | None = declared(None, flag="--opt")


def run(*args: str) -> dict[str, object]:
    seen: dict[str, object] = {}

    @click.command()
    @request_options(Lists)
    def command(**fields: object) -> None:
        seen.update(fields)

    result = CliRunner().invoke(command, list(args))
    assert result.exit_code == 0, result.output
    return seen


@pytest.mark.parametrize("flag,name", [("--seq", "as_sequence"), ("--lst", "as_list"), ("--tup", "as_tuple"),
                                       ("--opt", "optional_list")])
def test_every_list_type_is_a_repeatable_option(flag: str, name: str) -> None:
    assert list(run(flag, "postgres", flag, "pool")[name]) == ["postgres", "pool"]  # not ['p', 'o', ...]


def test_every_list_type_is_a_json_array() -> None:
    for field in fields_of(Lists):
        assert field.many and field.scalar is str
        assert "list[str]" in str(argument(field)), field.name


def test_a_type_no_front_end_takes_is_refused_by_name() -> None:
    @dataclass(frozen=True)
    class Odd:
        weights: dict[str, int] = declared(None, flag="--weights")

    @dataclass(frozen=True)
    class Pairs:
        pairs: tuple[str, int] = declared(None, flag="--pairs")

    with pytest.raises(TypeError, match=r"Odd\.weights"):
        fields_of(Odd)
    with pytest.raises(TypeError, match=r"Pairs\.pairs: a list field takes one item type"):
        fields_of(Pairs)
