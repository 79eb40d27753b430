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


def test_a_field_the_cli_finds_itself_is_required_of_the_tool_only() -> None:
    """brain_update's expected_version: an agent says which version it read; the CLI reads the current one."""
    import inspect

    from pinky.base.operations import UpdateRequest
    from pinky.mcp.declared import signature_from

    @signature_from(UpdateRequest)
    def tool(state: object, **fields: object) -> None: ...

    parameters = inspect.signature(tool).parameters
    assert parameters["expected_version"].default is inspect.Parameter.empty
    assert "| None" not in str(parameters["expected_version"].annotation).split("Field(")[0]  # not optional
    assert parameters["title"].default is None
    option = next(f for f in fields_of(UpdateRequest) if f.name == "expected_version")
    assert option.default is None and option.spec.flag == "--expected-version"  # optional at the CLI
