"""Checks on what callers pass in (the CLI, MCP tools, the library): each failure is one clear line.

Shared by search and the entry operations, so the same argument gets the same message everywhere.
"""

from __future__ import annotations

from typing import Any

from pinky.errors import InvalidInput
from pinky.layout import ENTRY_TYPES

MAX_QUERY_CHARS = 2000
MAX_HYPOTHETICAL_CHARS = 4000  # brain_search's draft answer (HyDE): a paragraph or two
MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 100_000
MAX_TAGS = 32
MAX_TAG_CHARS = 100
MAX_LIMIT = 100


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


def validate_tags(value: Any, name: str = "tags") -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(f"{name} must be a list of strings")
    if len(value) > MAX_TAGS:
        raise InvalidInput(f"{len(value)} {name} given; at most {MAX_TAGS} are allowed")
    tags: list[str] = []
    for tag in value:
        if not isinstance(tag, str):
            raise InvalidInput(f"tag {tag!r} is not a string")
        cleaned = tag.strip()
        if not cleaned or len(cleaned) > MAX_TAG_CHARS or any(ord(c) < 32 for c in cleaned):
            raise InvalidInput(f"tag {tag[:40]!r} must be 1-{MAX_TAG_CHARS} printable characters")
        if cleaned not in tags:
            tags.append(cleaned)
    return tags


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
