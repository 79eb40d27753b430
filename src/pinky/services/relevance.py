"""How relevant each search hit is, for the people reading a search (the CLI, the page): the prompt hook's own
gate and floor (`pinky.search.recall.judge`), one definition for all three."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pinky.kb import KnowledgeBase


def relevance(kb: KnowledgeBase, query: str, slugs: list[str]) -> dict[str, tuple[float | None, str]]:
    """slug -> (score, band) of these entries to `query`: `strong`, `relevant` or `weak` (under the floor)."""
    from pinky.search.recall import judge

    return judge(kb.index.conn, query, slugs)
