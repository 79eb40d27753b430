"""The click options of a command that takes a request, derived from the request's declared fields
(`pinky.base.declare`): each field with a `flag` is one option, named as the flag says, with the field's
default, choices and help; its value reaches the command under the field's own name, so the command builds
the request with `Request(**fields)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING
from typing import Any

import click

from pinky.base.declare import Declared, fields_of

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def request_options(request: type, *, skip: Sequence[str] = ()) -> Decorator:
    """The options of every field of `request` the CLI offers (but those in `skip`), in declaration order."""
    chosen = [field for field in fields_of(request, skip=skip) if field.spec.flag]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for field in reversed(chosen):  # decorators apply bottom-up: the first field is listed first
            command = option(field)(command)
        return command

    return decorate


def option(field: Declared) -> Decorator:
    """One field as a click option: a flag for a bool, repeatable for a list, a choice for fixed values."""
    spec = field.spec
    names = [spec.flag, *([spec.short] if spec.short else []), field.name]
    kind: Any = click.Choice(spec.choices, case_sensitive=False) if spec.choices else field.scalar
    settings: dict[str, Any] = {"help": spec.cli_help, "required": spec.required or field.default is MISSING}
    if spec.show_default:
        settings["show_default"] = True
    if spec.metavar:
        settings["metavar"] = spec.metavar
    if field.scalar is bool and not field.many:
        return click.option(*names, is_flag=True, **settings)
    if field.many:
        settings["multiple"] = True
    elif field.default is not MISSING and field.default is not None:
        settings["default"] = field.default
    return click.option(*names, type=kind, **settings)
