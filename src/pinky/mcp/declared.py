"""An MCP tool's arguments and result derived from the core's declared types (`pinky.base.declare`).

`@signature_from(SearchRequest)` REWRITES the tool's `__signature__`: each field of the request the tool takes
becomes a keyword parameter, annotated with its JSON type, limits, choices and description, so the SDK writes
the input schema from the one declaration. The tool as written takes `**fields` and builds the request from
them: what it accepts is the signature the SDK reads (`inspect.signature(tool)`), not the one in the source.

`result_model(Entry)` is the pydantic model of a result dataclass the core returns (an `Entry`, a `Hit`, a
`ReindexReport`): a tool's output model derives from it, each field with its type, default and the description
declared on the core's field, and adds only what the tool itself adds.

No `from __future__ import annotations`: the SDK reads the signatures at runtime.
"""

import dataclasses
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import MISSING
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from pinky.base.declare import SPEC, Declared, fields_of


def argument(field: Declared) -> Any:
    """A field's annotation for the tool's signature: `Annotated[<json type>, Field(<limits, description>)]`."""
    spec = field.spec
    kind: Any = Literal[spec.choices] if spec.choices else field.scalar
    if field.many:
        kind = list[kind]
    if field.optional and not spec.tool_required:
        kind = kind | None
    limits: dict[str, Any] = {"ge": spec.low, "le": spec.high, "min_length": spec.min_length,
                              "max_length": spec.max_length, "description": spec.doc or None}
    return Annotated[kind, Field(**{name: value for name, value in limits.items() if value is not None})]


def signature_from(request: type, *, skip: Sequence[str] = ()) -> Callable[[Any], Any]:
    """Rewrite the signature of a tool `fn(state, <own parameters>, **fields)` to the one the SDK reads: its
    state, then every field of `request` the tool takes (but those in `skip`) as keyword parameters, then its own
    parameters (those `fn` declares itself: a page offset, an output format)."""

    def decorate(fn: Any) -> Any:
        declared = inspect.signature(fn)
        state, *rest = [p for p in declared.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        fields = [inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, annotation=argument(field),
                                    **({} if field.default is MISSING or field.spec.tool_required
                                       else {"default": field.default}))
                  for field in fields_of(request, skip=skip) if field.spec.tool]
        tail = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in rest]
        fn.__signature__ = declared.replace(parameters=[state, *fields, *tail])
        fn.__annotations__ = {**{p.name: p.annotation for p in [state, *fields, *tail]},
                              "return": declared.return_annotation}
        return fn

    return decorate


def result_model(result: type, *, skip: Sequence[str] = (), only: Sequence[str] = (), complete: bool = False) -> Any:
    """The pydantic model of a result dataclass's fields (`only` these when given; never those in `skip`), for
    a tool's output schema: each with its type, its default (None for an optional one without one), and its
    description when declared (`specified(doc=...)` on the core's field). `complete`: the tool's answer always
    carries every field (a report the core fills in step by step from its defaults), so each is required."""
    hints = typing.get_type_hints(result)
    fields: dict[str, Any] = {}
    for found in dataclasses.fields(result):
        if found.name in skip or (only and found.name not in only):
            continue
        spec = found.metadata.get(SPEC)
        kind = hints[found.name]
        description = (spec.doc or None) if spec else None
        if complete:
            fields[found.name] = (kind, Field(..., description=description))
            continue
        if found.default_factory is not MISSING:
            fields[found.name] = (kind, Field(default_factory=found.default_factory, description=description))
            continue
        default = found.default if found.default is not MISSING else (
            None if type(None) in typing.get_args(kind) else ...)
        fields[found.name] = (kind, Field(default, description=description))
    return create_model(f"{result.__name__}Fields", __base__=BaseModel, **fields)
