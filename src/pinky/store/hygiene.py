"""What keeps knowledge true: tag counts, supersession lookups, feedback, gaps (see documentation/HYGIENE.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# --- tags ------------------------------------------------------------------------------------------


def tag_counts(conn: Any) -> list[tuple[str, int]]:
    """Every tag with how many entries carry it, matched without case or surrounding space, most used first."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT lower(trim(j.value)) AS tag, count(DISTINCT e.id) FROM entry e, json_each(e.tags) j "
        "WHERE trim(j.value) != '' GROUP BY tag ORDER BY 2 DESC, tag")]


def entries_tagged(conn: Any, tag: str) -> list[Any]:
    """root, path and slug of the entries carrying `tag` (normalised), in slug order."""
    return conn.execute(
        "SELECT e.root, e.path, e.slug FROM entry e WHERE EXISTS "
        "(SELECT 1 FROM json_each(e.tags) j WHERE lower(trim(j.value)) = ?) ORDER BY e.slug", (tag,)).fetchall()


# --- supersession and validity ---------------------------------------------------------------------


def same_fact(conn: Any, field: str, value: str, scope: str, exclude_id: str) -> list[Any]:
    """Current entries (not superseded) of `scope` whose frontmatter `field` (key or subject) is `value`."""
    assert field in {"key", "subject"}
    return conn.execute(
        f"SELECT id, root, path, slug FROM entry WHERE scope = ? AND id != ? "
        f"AND lower(trim(json_extract(meta, '$.{field}'))) = lower(trim(?)) "
        f"AND json_extract(meta, '$.superseded_by') IS NULL ORDER BY created, slug",
        (scope, exclude_id, value)).fetchall()


def not_current(conn: Any, entry_ids: Sequence[str], today: str) -> set[str]:
    """Which of these entries left the default results: superseded, or valid only until `today` or before."""
    if not entry_ids:
        return set()
    marks = ",".join("?" * len(entry_ids))
    return {r[0] for r in conn.execute(
        f"SELECT id FROM entry WHERE id IN ({marks}) AND (json_extract(meta, '$.superseded_by') IS NOT NULL "
        f"OR substr(json_extract(meta, '$.valid_until'), 1, 10) <= ?)", (*entry_ids, today))}
