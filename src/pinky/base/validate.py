"""Checks on what callers pass in (the CLI, MCP tools, the library): each failure is one clear line.

Shared by search and the entry operations, so the same argument gets the same message everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pinky.base.layout import ENTRY_TYPES
from pinky.errors import InvalidInput, NotInProject

MAX_QUERY_CHARS = 2000
MAX_HYPOTHETICAL_CHARS = 4000  # brain_search's draft answer (HyDE): a paragraph or two
MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 100_000
MAX_TAGS = 32
MAX_TAG_CHARS = 100
MAX_LIMIT = 100
MAX_QUESTIONS = 20
MAX_QUESTION_CHARS = 300


def clean_text(value: Any, name: str, limit: int, *, required: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    if required and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value


def clean_title(value: Any) -> str:
    title = clean_text(value, "title", MAX_TITLE_CHARS)
    if any(ord(c) < 32 for c in title):
        raise InvalidInput("title must be one line without control characters")
    return title.strip()


def validate_type(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in ENTRY_TYPES:
        raise InvalidInput(f"unknown type {value!r}; use one of: {', '.join(ENTRY_TYPES)}")
    return value.strip().lower()


def _string_list(value: Any, name: str, item: str, most: int, chars: int, clean: Callable[[str], str]) -> list[str]:
    """A list of at most `most` distinct strings, each of 1-`chars` printable characters once cleaned."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(f"{name} must be a list of strings")
    if len(value) > most:
        raise InvalidInput(f"{len(value)} {name} given; at most {most} are allowed")
    kept: list[str] = []
    for raw in value:
        if not isinstance(raw, str):
            raise InvalidInput(f"{item} {raw!r} is not a string")
        cleaned = clean(raw)
        if not cleaned or len(cleaned) > chars or any(ord(c) < 32 for c in cleaned):
            raise InvalidInput(f"{item} {raw[:40]!r} must be 1-{chars} printable characters")
        if cleaned not in kept:
            kept.append(cleaned)
    return kept


def validate_tags(value: Any, name: str = "tags") -> list[str]:
    return _string_list(value, name, "tag", MAX_TAGS, MAX_TAG_CHARS, str.strip)


def validate_questions(value: Any) -> list[str]:
    """The questions a note answers (frontmatter `questions:`): one line each (runs of blanks become one
    space), each given once."""
    return _string_list(value, "questions", "question", MAX_QUESTIONS, MAX_QUESTION_CHARS,
                        lambda q: " ".join(q.split()))


def validate_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {value!r}")
    return value


def validate_slug(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("slug must be a non-empty string")
    return value.strip()


def normalise_tag(tag: str) -> str:
    """How a tag is kept: lower case, one space between words, none around ('  CI  Cache' -> 'ci cache')."""
    return " ".join(tag.split()).lower()


def resolve_scope(scope: Any, project: Any, current_project: str | None) -> str | None:
    """'global' or 'project:<name>' from a scope and/or project argument; None for both scopes.
    `current_project`: the project the caller runs in, which the bare scope 'project' means."""
    if project is not None:
        if not isinstance(project, str) or not project.strip() or any(ord(c) < 32 for c in project):
            raise InvalidInput("project must be a non-empty name")
        wanted = f"project:{project.strip()}"
        if scope not in (None, wanted):
            raise InvalidInput(f"scope {scope!r} contradicts project {project!r}")
        return wanted
    if scope is None or scope == "":
        return None
    if not isinstance(scope, str):
        raise InvalidInput("scope must be a string")
    if scope == "global":
        return scope
    if scope == "project":
        if current_project is None:
            raise NotInProject("scope 'project'")
        return f"project:{current_project}"
    if scope.startswith("project:") and scope[8:].strip():
        return f"project:{scope[8:].strip()}"
    raise InvalidInput(f"scope {scope!r} must be 'global' or 'project:<name>'")
