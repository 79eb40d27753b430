"""Resolve the link table: which entry each written link names.

Links are resolved when they are written, and again whenever an entry they might name comes, goes
or is retitled: every write passes the ids it touched, and the links written by those notes or
naming them (by `target_key`) are resolved again. So related-entry and backlink queries are index
lookups, a link written before its target exists starts working when the target is saved, and a
link whose target was deleted or renamed shows up as unresolved (pinky doctor names it).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pinky.base.layout import slug_candidates
from pinky.store import entries as store_entries
from pinky.store import link_queries
from pinky.text.linkrefs import LinkRef, entry_keys, link_row


def resolve_link(conn: Any, root: str, source_path: str, target: str) -> Any:
    """The entry row a link in `source_path` points at: a relative .md path, a slug, or a title."""
    target = target.strip()
    if target.lower().endswith(".md"):
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), target))
        row = store_entries.entry_at(conn, root, rel)
        if row is not None:
            return row
        target = target[:-3]
    found = store_entries.resolve_slug(conn, target.strip("./"), limit=2)
    if len(found) == 1:
        return found[0]
    titled = store_entries.entries_titled(conn, target)
    return titled[0] if len(titled) == 1 else None


def resolve_crumb(conn: Any, slug: str) -> Any:
    """The entry a breadcrumb names (by slug; an exact slug wins over shortened ones)."""
    found = store_entries.resolve_slug(conn, slug, limit=2)
    return found[0] if len(found) == 1 else None


def keys_of(conn: Any, entry_ids: Iterable[str]) -> set[str]:
    """Every target_key that may name one of these entries (call it before and after changing them)."""
    keys: set[str] = set()
    for slug, path, title in link_queries.entry_keys_rows(conn, list(entry_ids)):
        keys |= entry_keys(slug, path, title)
    return keys


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
IN_MEMORY_FROM = 200  # links to resolve at once from which every entry's names are read into dicts


def _lower(text: str) -> str:
    """Lowercase as SQLite's lower() and LIKE do: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


class EntryNames:
    """Every entry's names in dicts, answering as `resolve_link` and `resolve_crumb` do in SQL: a
    big reindex resolves tens of thousands of links, and three queries each cost more than the
    reindex itself. Reading 10,000 entries' names takes a few milliseconds."""

    def __init__(self, conn: Any) -> None:
        self.by_slug: dict[str, str] = {}
        self.by_path: dict[tuple[str, str], str] = {}
        self.by_title: dict[str, list[str]] = {}
        self.by_last: dict[str, list[tuple[str, str]]] = {}
        for eid, root, path, slug, title in link_queries.entry_names(conn):
            self.by_slug[slug] = eid
            self.by_path[(root, path)] = eid
            self.by_title.setdefault(_lower(title), []).append(eid)
            self.by_last.setdefault(_lower(slug.rsplit("/", 1)[-1]), []).append((slug, eid))

    def slugs(self, name: str, limit: int) -> list[str]:
        """Entry ids `store.entries.resolve_slug` would return, in its order."""
        if (exact := self.by_slug.get(name)) is not None and name == name.strip().strip("/") \
                and not name.lower().endswith(".md") and not name.startswith("./"):
            return [exact]  # the common case, a whole slug: the first candidate, found
        candidates = slug_candidates(name)
        if not candidates:
            return []
        hits = [self.by_slug[c] for c in candidates if c in self.by_slug]  # candidates are in rank order
        exact = self.by_slug.get(candidates[0])
        if exact is not None or hits:
            return [exact] if exact is not None else hits[:limit]
        suffix = "/" + _lower(candidates[0])
        found = sorted((slug, eid) for slug, eid in self.by_last.get(_lower(candidates[0].rsplit("/", 1)[-1]), [])
                       if _lower(slug).endswith(suffix))
        return [eid for _, eid in found[:limit]]

    def link(self, root: str, source_path: str, target: str) -> str | None:
        target = target.strip()
        if target.lower().endswith(".md"):
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), target))
            if (hit := self.by_path.get((root, rel))) is not None:
                return hit
            target = target[:-3]
        found = self.slugs(target.strip("./"), 2)
        if len(found) == 1:
            return found[0]
        titled = self.by_title.get(_lower(target), [])
        return titled[0] if len(titled) == 1 else None

    def crumb(self, slug: str) -> str | None:
        found = self.slugs(slug, 2)
        return found[0] if len(found) == 1 else None


class Resolver:
    """Answers "which entry does this link name?", from SQL for a few links or from every entry's
    names in memory for many, remembering each answer for the rest of one write."""

    def __init__(self, conn: Any, many: bool) -> None:
        self.conn = conn
        self.names = EntryNames(conn) if many else None
        self.cache: dict[tuple[str, ...], str | None] = {}

    def target(self, kind: str, target: str, root: str | None, path: str | None) -> str | None:
        if kind == "files":
            return None
        if kind == "breadcrumb" or root is None:
            key: tuple[str, ...] = ("crumb", target)
        elif target[-3:].lower() == ".md":
            key = ("md", root, path or "", target)
        else:
            key = ("name", target)
        try:
            return self.cache[key]
        except KeyError:
            found = self.cache[key] = self._lookup(key[0], target, root, path or "")
            return found

    def _lookup(self, how: str, target: str, root: str | None, path: str) -> str | None:
        if self.names is not None:
            return self.names.crumb(target) if how == "crumb" or root is None else self.names.link(root, path, target)
        hit = resolve_crumb(self.conn, target) if how == "crumb" or root is None else resolve_link(
            self.conn, root, path, target)
        return hit["id"] if hit is not None else None


def resolve_links(conn: Any, *, sources: Iterable[str] = (), files: Iterable[str] = (),
                  keys: Iterable[str] = (), resolver: Resolver | None = None,
                  skip_sources: Collection[str] = ()) -> int:
    """Resolve the links written by `sources` (entry ids) or `files` (code), or named by `keys`
    (except those written by `skip_sources`, just written resolved); returns how many changed
    target. Caller holds the write transaction."""
    # When every note was just written resolved (a full reindex), only code links may name a changed note.
    code_only = bool(skip_sources) and len(skip_sources) >= store_entries.entry_count(conn)
    rows = link_queries.links_to_resolve(conn, sorted(set(sources)), sorted(set(files)), sorted(set(keys)), code_only)
    resolver = resolver or Resolver(conn, many=len(rows) >= IN_MEMORY_FROM)
    updates: list[tuple[str | None, int]] = []
    for link_id, kind, target, old, root, path, source in rows:
        if source in skip_sources:
            continue
        new = resolver.target(kind, target, root, path)
        if new != old:
            updates.append((new, link_id))
    link_queries.set_link_targets(conn, updates)
    return len(updates)


NoteLinks = tuple[str, str, str, Sequence[LinkRef]]  # root, path, content hash, links


def write_note_links(conn: Any, notes: Mapping[str, NoteLinks], keys: set[str]) -> None:
    """Write the links of the notes a reindex stored, resolved as they are written (one write per link,
    not an insert and an update), then resolve the other links that may name a note that came, went
    or changed (`keys`). A note whose content changed meanwhile (another process indexed a newer
    version, with its own links) is left alone. Caller holds the write transaction."""
    resolver = Resolver(conn, many=sum(len(note[3]) for note in notes.values()) >= IN_MEMORY_FROM)
    current = store_entries.content_hashes(conn, list(notes))
    link_queries.replace_links_of(conn, {eid: [link_row(ref, resolver.target(ref.kind, ref.target, root,
                                                                             path)) for ref in links]
                                         for eid, (root, path, content_hash, links) in notes.items()
                                         if current.get(eid) == content_hash})
    resolve_links(conn, keys=keys, resolver=resolver, skip_sources=notes.keys())
