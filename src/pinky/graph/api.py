"""`KnowledgeBase.graph`: the knowledge graph's operations, a facade like the KnowledgeBase itself.

Each method delegates to the module that owns it: `links` (one hop), `neighbourhood` (N hops),
`timeline`, `linkedit` (link, unlink), `move` (rename, and finish a rename cut short). Every call runs
through `pinky.indexing.healing`, like the KnowledgeBase's own methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinky.indexing import healing
from pinky.indexing.index import Index


@healing.healed
class KnowledgeGraph:
    """Typed, temporal links between entries and code files, their neighbourhoods and histories."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def related(self, slug: str, *, rels: Sequence[str] | None = None, at: str | None = None,
                limit: int | None = None) -> dict[str, Any]:
        """One hop: outgoing links, backlinks and code of an entry (links that hold on `at`, default today),
        from at most `limit` links each way (default links.MAX_LINKS)."""
        from pinky.graph.links import MAX_LINKS, related

        return related(self.index, slug, rels=rels, at=at, limit=limit or MAX_LINKS)

    def neighbourhood(self, slug: str, *, depth: int = 1, rels: Sequence[str] | None = None,
                      at: str | None = None) -> dict[str, Any]:
        """Nodes and edges within `depth` (1-3) links of an entry, either way, bounded in fan-out."""
        from pinky.graph.neighbourhood import neighbourhood

        return neighbourhood(self.index, slug, depth=depth, rels=rels, at=at)

    def overview(self, *, at: str | None = None) -> dict[str, Any]:
        """Every current entry (diaries aside) and the links between entries that hold on `at` (default today):
        the whole brain, for a picture of it."""
        from pinky.graph.neighbourhood import overview

        return overview(self.index, at=at)

    def read_file(self, root: str, rel: str, *, limit: int = 10 << 20) -> bytes:
        """A file a note links to (an image), read only when it is a regular file inside the knowledge root
        `root`: never hidden, never reached through a link that leads out (`pinky.indexing.sources.read_in_root`)."""
        from pinky.indexing.sources import read_in_root

        return read_in_root(self.index.config.roots(), root, rel, limit)

    def timeline(self, slug: str) -> dict[str, Any]:
        """Created, each change (git), links added and closed, diary lines naming the entry."""
        from pinky.graph.timeline import timeline

        return timeline(self.index, slug)

    def link(self, source: str, target: str, *, rel: str = "relates", since: str | None = None) -> dict[str, Any]:
        """Add a typed link to `source`'s frontmatter, holding from `since` (default today)."""
        from pinky.graph.linkedit import link

        return link(self.index, source, target, rel=rel, since=since)

    def unlink(self, source: str, target: str, *, rel: str | None = None, until: str | None = None) -> dict[str, Any]:
        """Close `source`'s open typed links to `target` (`until` = today): the history stays."""
        from pinky.graph.linkedit import unlink

        return unlink(self.index, source, target, rel=rel, until=until)

    def move(self, old: str, new: str) -> dict[str, Any]:
        """Rename a note and rewrite every link that named it by its old name (notes and code)."""
        from pinky.graph.move import move

        return move(self.index, old, new)

    def finish_moves(self) -> list[dict[str, Any]]:
        """Finish the renames a killed `pinky mv` left half done (their links still on the old name)."""
        from pinky.graph.move import finish_moves

        return finish_moves(self.index)

    def finished_moves(self) -> list[str]:
        """`finish_moves`, one line per rename finished."""
        from pinky.graph.move import finished_moves

        return finished_moves(self.index)

    def pending_moves(self) -> tuple[list[Any], list[str]]:
        """Renames not finished yet, and rename journals that cannot be read."""
        from pinky.graph.move import pending_moves

        return pending_moves(self.index)
