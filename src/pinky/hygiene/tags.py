"""Tags as a vocabulary: what tags exist and how often, and renaming one across every note.

Tags are kept normalised (lower case, single spaces: `validate.normalise_tag`) when pinky writes them;
hand-written tags are matched the same way, so `Postgres` and `postgres ` count as one tag.
"""

from __future__ import annotations

from typing import Any

from pinky.base.validate import normalise_tag, validate_tags
from pinky.errors import InvalidInput, NotFound
from pinky.indexing.index import Index
from pinky.knowledge.entries import edit_meta
from pinky.store import hygiene_queries


def list_tags(index: Index) -> list[dict[str, Any]]:
    """Every tag with how many entries carry it, most used first."""
    return [{"tag": tag, "count": count} for tag, count in hygiene_queries.tag_counts(index.conn)]


def renamed_tags(tags: Any, old: str, new: str) -> list[str] | None:
    """`tags` (a frontmatter value) with `old` replaced by `new` (both normalised), or None when it lacks `old`."""
    items = tags.split(",") if isinstance(tags, str) else tags if isinstance(tags, list) else []
    if not any(normalise_tag(str(t)) == old for t in items):
        return None
    return list(dict.fromkeys(new if normalise_tag(str(t)) == old else str(t).strip() for t in items if str(t).strip()))


def rename_tag(index: Index, old: str, new: str) -> dict[str, Any]:
    """Rewrite the frontmatter of every note tagged `old` to carry `new` instead.

    Each note's `tags:` line(s) are rewritten under its edit lock, atomically, and nothing else in it;
    a note whose frontmatter is malformed is left alone and named in `skipped` with the reason."""
    old_tag, new_tag = (normalise_tag(validate_tags([value], name)[0]) for value, name in ((old, "old"), (new, "new")))
    if old_tag == new_tag:
        raise InvalidInput(f"tag {old!r} already is {new_tag!r}")
    renamed: list[str] = []
    skipped: list[str] = []

    def change(meta: dict[str, Any]) -> bool:
        tags = renamed_tags(meta.get("tags"), old_tag, new_tag)
        if tags is not None:
            meta["tags"] = tags
        return tags is not None

    for row in hygiene_queries.entries_tagged(index.conn, old_tag):
        try:  # the text is unchanged: vectors come from the cache
            if edit_meta(index, row, change):
                renamed.append(row["slug"])
            else:
                skipped.append(f"{row['slug']}: its file no longer has the tag")
        except (NotFound, InvalidInput) as exc:
            skipped.append(f"{row['slug']}: {exc}")
    return {"old": old_tag, "new": new_tag, "renamed": renamed, "skipped": skipped}
