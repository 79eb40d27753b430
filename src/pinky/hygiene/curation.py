"""Curation: the compound edits of `pinky view`'s review list (supersede, merge), their undo, and the
near-duplicate pairs it offers to merge.

Each edit is made of the core's own single-note operations — `entries.update` with its version check,
`archive.delete` into `.archive/`, `archive.restore` of that very copy — so there is no second write path,
and each answers what its undo needs: the versions it wrote and the values it replaced. An undo refuses
(`Conflict`) when a note changed since, exactly as `update` does; nothing is ever overwritten.

An undo is all or nothing, also while other processes write: it takes the edit lock of every note it
touches (`edit_locks.edit_lock`, the lock `update` and `restore` take, reentrant for this thread) before it
checks their versions, so no writer can change a note between the check and the last write; should a
later step still fail (a note saved meanwhile where the archived one goes back, a full disk), the steps
already made are undone before the error is raised.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pinky.base.dates import now_utc
from pinky.base.shown import shown
from pinky.errors import Conflict, InvalidInput
from pinky.hygiene import similar
from pinky.indexing.index import Index
from pinky.knowledge import archive, edit_locks, entries
from pinky.store import hygiene_queries
from pinky.text.markdown import content_hash

MERGED_HEADING = "Merged from"


def supersede(index: Index, old: str, new: str) -> dict[str, Any]:
    """Mark `old` superseded by `new` as of today, in both files, as a save with the same key does:
    `new` gets `supersedes` and `valid_from`, `old` `superseded_by` and `valid_until` (kept when set)."""
    before_old, before_new = entries.get(index, old), entries.get(index, new)
    if before_old.slug == before_new.slug:
        raise InvalidInput("an entry cannot supersede itself")
    for entry, name in ((before_old, "superseded_by"), (before_new, "supersedes")):
        if entry.meta.get(name):  # one chain per fact: a second link would hide the first
            raise InvalidInput(f"{entry.slug} already has {name}: {entry.meta[name]}; edit it by hand")
    day = now_utc().date().isoformat()
    old_fields = {"superseded_by": before_new.slug, "valid_until": before_old.meta.get("valid_until") or day}
    new_fields = {"supersedes": before_old.slug, "valid_from": before_new.meta.get("valid_from") or day}
    after_new = entries.update(index, before_new.slug, before_new.version, fields=new_fields)
    after_old = entries.update(index, before_old.slug, before_old.version, fields=old_fields)
    return {"old": after_old.slug, "new": after_new.slug,
            "versions": {"old": after_old.version, "new": after_new.version},
            "previous": {"old": _values(before_old, old_fields), "new": _values(before_new, new_fields)}}


def unsupersede(index: Index, done: dict[str, Any]) -> dict[str, Any]:
    """Undo `supersede` (its result is `done`): both notes get back the values they had, if neither changed."""
    versions = {done["old"]: done["versions"]["old"], done["new"]: done["versions"]["new"]}
    with _locked(index, list(versions)):
        _unchanged(index, versions)
        superseded = _values(entries.get(index, done["old"]), done["previous"]["old"])  # what the undo replaces
        old = entries.update(index, done["old"], done["versions"]["old"], fields=done["previous"]["old"])
        try:
            new = entries.update(index, done["new"], done["versions"]["new"], fields=done["previous"]["new"])
        except BaseException:
            entries.update(index, old.slug, old.version, fields=superseded)
            raise
    return {"old": old.slug, "new": new.slug}


def merge(index: Index, keep: str, other: str) -> dict[str, Any]:
    """Fold `other` into `keep`: its text is appended under a "Merged from" heading, its tags joined,
    then `other` is archived (like `pinky delete`) with the reason naming `keep`."""
    kept, gone = entries.get(index, keep), entries.get(index, other)
    if kept.slug == gone.slug:
        raise InvalidInput("an entry cannot be merged into itself")
    body = f"{kept.body.rstrip()}\n\n## {MERGED_HEADING} {gone.title}\n\n{gone.body.strip()}\n"
    tags = list(dict.fromkeys([*kept.tags, *gone.tags]))
    merged = entries.update(index, kept.slug, kept.version, body=body, tags=tags)
    archived = archive.delete(index, gone.slug, f"merged into {kept.slug}")
    return {"kept": merged.slug, "archived": gone.slug, "archived_to": str(archived), "version": merged.version,
            "previous": {"body": kept.body, "tags": kept.tags}}


def unmerge(index: Index, done: dict[str, Any]) -> dict[str, Any]:
    """Undo `merge` (its result is `done`): the archived note comes back, the kept one gets its text back."""
    name = Path(done["archived_to"]).name  # that copy, of several
    copy = next((c for c in archive.versions(index, done["archived"]) if c.name.rsplit("/", 1)[-1] == name), None)
    if copy is None:
        raise Conflict(f"the archived copy {name} was restored or removed since; nothing was undone")
    with _locked(index, [done["kept"]], ((copy.root, copy.rel),)):
        _unchanged(index, {done["kept"]: done["version"]})
        merged = entries.get(index, done["kept"])
        kept = entries.update(index, done["kept"], done["version"], body=done["previous"]["body"],
                              tags=done["previous"]["tags"])
        try:
            restored = archive.restore(index, done["archived"], name)
        except BaseException:
            entries.update(index, kept.slug, kept.version, body=merged.body, tags=list(merged.tags))
            raise
    return {"kept": kept.slug, "restored": restored.slug}


@contextmanager
def _locked(index: Index, slugs: list[str], paths: tuple[tuple[str, str], ...] = ()) -> Iterator[None]:
    """Hold the edit lock of every note named (by slug, or as root and path) for the block, taken in one
    order (by lock file) so two undos never wait for each other."""
    rows = [entries.find(index, slug) for slug in slugs]
    notes = [*paths, *((row["root"], row["path"]) for row in rows)]
    locks = sorted((edit_locks.edit_lock(index, root, rel) for root, rel in notes), key=lambda lock: lock.path)
    with ExitStack() as stack:
        for lock in locks:
            stack.enter_context(lock)
        yield


def _values(entry: entries.Entry, fields: dict[str, str]) -> dict[str, str | None]:
    """What `fields` held in the entry before (None: absent), as `update(fields=…)` takes it back."""
    out: dict[str, str | None] = {}
    for name in fields:
        value = entry.meta.get(name) if name != "last_verified" else entry.last_verified
        out[name] = None if value is None else str(value)
    return out


def _unchanged(index: Index, versions: dict[str, str]) -> None:
    """Refuse an undo before any write when a note it would touch changed since (its file's version
    moved on; read under the notes' locks, so it cannot move on before the undo's writes)."""
    for slug, version in versions.items():
        try:
            current = content_hash(entries.file_of(index, slug).read_bytes())
        except FileNotFoundError:
            raise Conflict(f"entry {slug!r} was deleted or moved since; nothing was undone") from None
        if current != version:
            raise Conflict(f"entry {slug!r} changed since; nothing was undone (its version is {current})")


def near_duplicates(index: Index, *, threshold: float | None = None, limit: int = 50) -> dict[str, Any]:
    """Pairs of current entries (diaries aside) that the save-time warning calls likely duplicates
    (pinky.knowledge.duplicates), closest first: candidates to merge. Empty, with a notice, when vectors
    are unavailable."""
    usable, why = index.vector_status()
    if not usable:
        return {"count": 0, "pairs": [], "notice": f"vector search unavailable ({why}): no duplicates found"}
    rows = {r["id"]: r for r in hygiene_queries.current_entries(index.conn)}
    scores = (similar.likely_duplicate_scores(index, list(rows.values()), rows) if threshold is None
              else similar.similar_scores(index, list(rows.values()), rows, threshold))
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    pairs = []
    for (first, second), score in ranked[:limit]:
        a, b = sorted((rows[first], rows[second]), key=lambda row: row["slug"])
        pairs.append({"a": a["slug"], "b": b["slug"], "a_title": shown(a["title"]), "b_title": shown(b["title"]),
                      "a_path": index.display_path(a["root"], a["path"]),
                      "b_path": index.display_path(b["root"], b["path"]), "similarity": round(score, 4)})
    return {"count": len(ranked), "pairs": pairs, "notice": None}
