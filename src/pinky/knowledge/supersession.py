"""Supersession: a newer entry with the same `key` (one fact: "ci.node-version") or `subject` (a status:
"deploy pipeline") replaces the older one in default results, and both files say so.

The new note gets `supersedes: <old slug>` and `valid_from`; the old one `superseded_by: <new slug>` and
`valid_until` (the day it stopped being what we believe). Nothing is deleted: `include_superseded`
(`--all`) and `at` (a date) still find the old one, and `chain` walks from the first version to the latest.
Only entries of the same scope (this project, or the global brain) supersede each other.
"""

from __future__ import annotations

import json
from typing import Any

from pinky.base.redact import redact_kinds
from pinky.errors import InvalidInput, NotFound
from pinky.indexing.index import Index
from pinky.store import entries as store_entries
from pinky.store import hygiene_queries

MAX_FACT_CHARS = 200
FACT_FIELDS = ("key", "subject")


def fact_meta(key: str | None, subject: str | None) -> tuple[dict[str, str], list[str]]:
    """The frontmatter `key`/`subject` a save asked for, checked and redacted, and the kinds redacted."""
    meta: dict[str, str] = {}
    kinds: list[str] = []
    for name, value in (("key", key), ("subject", subject)):
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_FACT_CHARS \
                or any(ord(c) < 32 for c in value):
            raise InvalidInput(f"{name} must be one line of 1-{MAX_FACT_CHARS} characters, e.g. "
                               + ("'ci.node-version'" if name == "key" else "'deploy pipeline'"))
        meta[name], found = redact_kinds(" ".join(value.split()))
        kinds += found
    return meta, kinds


def older_versions(index: Index, scope: str, fact: dict[str, str], exclude_id: str = "") -> list[Any]:
    """The current entries of `scope` this fact supersedes: same key, or same subject."""
    rows: dict[str, Any] = {}
    for name in FACT_FIELDS:
        if fact.get(name):
            rows.update((r["id"], r) for r in hygiene_queries.same_fact(index.conn, name, fact[name], scope,
                                                                        exclude_id))
    return list(rows.values())


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value).strip() or None if value else None


def chain(index: Index, slug: str) -> list[dict[str, Any]]:
    """Every version of the fact `slug` belongs to, oldest first, following supersedes / superseded_by.

    A loop in hand-edited links ends the walk instead of going round it."""
    row: Any = _resolve(index, slug)
    if row is None:
        raise NotFound(f"no entry (or more than one) with slug {slug!r}; search for it first")
    walked = {row["slug"]}
    while (back := _resolve(index, _first(json.loads(row["meta"]).get("supersedes")))) is not None \
            and back["slug"] not in walked:
        walked.add(back["slug"])
        row = back
    versions: list[dict[str, Any]] = []
    while row is not None and all(v["slug"] != row["slug"] for v in versions):
        meta = json.loads(row["meta"])
        versions.append({"slug": row["slug"], "title": row["title"], "created": row["created"],
                         "valid_from": meta.get("valid_from"), "valid_until": meta.get("valid_until"),
                         "superseded_by": meta.get("superseded_by"), "current": not meta.get("superseded_by")})
        row = _resolve(index, _first(meta.get("superseded_by")))
    return versions


def _resolve(index: Index, slug: str | None) -> Any:
    if not slug:
        return None
    rows = store_entries.resolve_slug(index.conn, slug)
    return rows[0] if len(rows) == 1 else None
