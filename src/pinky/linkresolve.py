"""Resolve the link table: which entry each written link names.

Links are resolved when they are written, and again whenever an entry they might name comes, goes
or is retitled: every write passes the ids it touched, and the links written by those notes or
naming them (by `target_key`) are resolved again. So related-entry and backlink queries are index
lookups, a link written before its target exists starts working when the target is saved, and a
link whose target was deleted or renamed shows up as unresolved (pinky doctor names it).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from pinky.linkrefs import entry_keys
from pinky.store import entries as eq
from pinky.store import graph as gq


def resolve_link(conn: Any, root: str, source_path: str, target: str) -> Any:
    """The entry row a link in `source_path` points at: a relative .md path, a slug, or a title."""
    target = target.strip()
    if target.lower().endswith(".md"):
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), target))
        row = eq.entry_at(conn, root, rel)
        if row is not None:
            return row
        target = target[:-3]
    found = eq.resolve_slug(conn, target.strip("./"), limit=2)
    if len(found) == 1:
        return found[0]
    titled = eq.entries_titled(conn, target)
    return titled[0] if len(titled) == 1 else None


def resolve_crumb(conn: Any, slug: str) -> Any:
    """The entry a breadcrumb names (by slug; an exact slug wins over shortened ones)."""
    found = eq.resolve_slug(conn, slug, limit=2)
    return found[0] if len(found) == 1 else None


def keys_of(conn: Any, entry_ids: Iterable[str]) -> set[str]:
    """Every target_key that may name one of these entries (call it before and after changing them)."""
    keys: set[str] = set()
    for slug, path, title in gq.entry_keys_rows(conn, list(entry_ids)):
        keys |= entry_keys(slug, path, title)
    return keys


def resolve_links(conn: Any, *, sources: Iterable[str] = (), files: Iterable[str] = (),
                  keys: Iterable[str] = ()) -> int:
    """Resolve the links written by `sources` (entry ids) or `files` (code), or named by `keys`;
    returns how many changed target. Caller holds the write transaction."""
    rows = gq.links_to_resolve(conn, sorted(set(sources)), sorted(set(files)), sorted(set(keys)))
    cache: dict[tuple[str, ...], str | None] = {}
    updates: list[tuple[str | None, int]] = []
    for link_id, kind, target, old, root, path in rows:
        if kind == "breadcrumb" or root is None:
            key: tuple[str, ...] = ("crumb", target)
        elif target.lower().endswith(".md"):
            key = ("md", root, posixpath.dirname(path), target)
        else:
            key = ("name", target)
        if key not in cache:
            hit = resolve_crumb(conn, target) if key[0] == "crumb" else resolve_link(conn, root, path, target)
            cache[key] = hit["id"] if hit is not None else None
        if cache[key] != old:
            updates.append((cache[key], link_id))
    gq.set_link_targets(conn, updates)
    return len(updates)
