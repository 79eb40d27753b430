"""Hygiene: the operations that keep the brain true, as one healed facade (`KnowledgeBase.hygiene`).

Tags as a vocabulary, supersession chains, verification, feedback and pruning, knowledge gaps,
contradictions, export and import. Each method is one line into the module that owns it; like
KnowledgeBase, each runs through `pinky.indexing.healing`, so a replaced or damaged index is followed or
repaired and the call runs again. documentation/HYGIENE.md says what each does and how to turn it off.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinky.base.operations import Selection
from pinky.indexing import healing
from pinky.indexing.index import Index
from pinky.knowledge.entries import Entry

if TYPE_CHECKING:
    from pinky.hygiene.contradictions import Comparison
    from pinky.indexing.indexer import Progress
    from pinky.knowledge.archive import ArchivedCopy


@healing.healed
class Hygiene:
    def __init__(self, index: Index) -> None:
        self.index = index

    # --- tags ----------------------------------------------------------------------------------------

    def tags(self) -> list[dict[str, Any]]:
        """Every tag with how many entries carry it, most used first."""
        from pinky.hygiene.tags import list_tags

        return list_tags(self.index)

    def rename_tag(self, old: str, new: str) -> dict[str, Any]:
        """Rewrite every note tagged `old` to carry `new`; returns the slugs renamed and skipped."""
        from pinky.hygiene.tags import rename_tag

        return rename_tag(self.index, old, new)

    # --- supersession ----------------------------------------------------------------------------------

    def chain(self, slug: str) -> list[dict[str, Any]]:
        """Every version of the fact or status `slug` belongs to, oldest first (the last one is current)."""
        from pinky.knowledge.supersession import chain

        return chain(self.index, slug)

    # --- review ----------------------------------------------------------------------------------------

    def verify_entry(self, slug: str) -> Entry:
        """Set the entry's last_verified to today (it was checked and still holds)."""
        from pinky.hygiene.review import verify

        return verify(self.index, slug)

    def feedback(self, slug: str, verdict: str, query: str | None = None) -> dict[str, Any]:
        """Record useful / wrong / outdated for a hit, against the search that returned it."""
        from pinky.hygiene.review import feedback

        return feedback(self.index, slug, verdict, query)

    def opened(self, slug: str) -> bool:
        """Record that an agent read the entry whole (brain_get); telemetry for `pinky eval --from-usage`."""
        from pinky.hygiene.review import opened

        return opened(self.index, slug)

    def prune(self, months: int = 6, *, apply: bool = False) -> dict[str, Any]:
        """Entries nobody retrieved or marked useful in `months`; `apply` archives them (pinky restore undoes)."""
        from pinky.hygiene.review import prune

        return prune(self.index, months, apply=apply)

    def archived(self, slug: str | None = None, *, scope: str | None = None,
                 type: str | None = None) -> list[ArchivedCopy]:
        """Archived copies (of the entry `slug` names, or all), by entry, oldest first, numbered per entry."""
        from pinky.knowledge.archive import versions

        return versions(self.index, slug, scope=scope, type=type)

    def restore_command(self, archived: Path) -> str:
        """The command that brings back the archived copy at `archived` (with `--version N` when needed)."""
        from pinky.knowledge.archive import restore_command

        return restore_command(self.index, archived)

    def needs_review(self, limit: int = 10) -> dict[str, Any]:
        """Stale entries and entries flagged wrong or outdated: what to check before relying on it."""
        from pinky.hygiene.review import needs_review

        return needs_review(self.index, limit)

    def feedback_counts(self, slug: str) -> dict[str, int]:
        """How often the entry was marked useful, wrong and outdated."""
        from pinky.hygiene.review import feedback_counts

        return feedback_counts(self.index, slug)

    # --- curation (pinky view's review actions, and their undo) ---------------------------------------

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        """Mark `old` superseded by `new` in both files; the result is what `unsupersede` takes to undo it."""
        from pinky.hygiene.curation import supersede

        return supersede(self.index, old, new)

    def unsupersede(self, done: dict[str, Any]) -> dict[str, Any]:
        from pinky.hygiene.curation import unsupersede

        return unsupersede(self.index, done)

    def merge(self, keep: str, other: str) -> dict[str, Any]:
        """Append `other`'s text and tags to `keep` and archive `other`; the result is what `unmerge` takes."""
        from pinky.hygiene.curation import merge

        return merge(self.index, keep, other)

    def unmerge(self, done: dict[str, Any]) -> dict[str, Any]:
        from pinky.hygiene.curation import unmerge

        return unmerge(self.index, done)

    def duplicates(self, limit: int = 50) -> dict[str, Any]:
        """Pairs of current entries nearly the same in meaning (the save-time dedup similarity), closest first."""
        from pinky.hygiene.curation import near_duplicates

        return near_duplicates(self.index, limit=limit)

    # --- knowledge gaps --------------------------------------------------------------------------------

    def gaps(self, *, include_closed: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        """Searches whose best hit was weak, most frequent first (open ones, or all)."""
        from pinky.search.gaps import list_gaps

        return list_gaps(self.index, include_closed=include_closed, limit=limit)

    # --- contradictions --------------------------------------------------------------------------------

    def check(self, slug: str | None = None) -> dict[str, Any]:
        """Pairs of current entries that may contradict each other (all, or those involving `slug`)."""
        from pinky.hygiene.contradictions import check

        return check(self.index, slug)

    def pairs_to_compare(self, slug: str | None = None) -> Comparison:
        """What `check` compares, read from the index; its `compare()` needs no index (nor the lock of a
        server: other calls go on while it runs)."""
        from pinky.hygiene.contradictions import pairs_to_compare

        return pairs_to_compare(self.index, slug)

    # --- export and import -------------------------------------------------------------------------------

    def export(self, selection: Selection | None = None) -> list[dict[str, Any]]:
        """One record per entry the selection keeps (superseded ones always included), each file's text
        exactly."""
        from dataclasses import replace

        from pinky.hygiene.transfer import export_records
        from pinky.search.request import filters_for

        chosen = replace(selection or Selection(), include_superseded=True)
        return list(export_records(self.index, filters_for(self.index, chosen)))

    def import_lines(self, lines: Iterable[str], *, root: str | None = None, embed: bool = True) -> dict[str, Any]:
        """Write every exported record not already in the brain, never over another note; then index them."""
        from pinky.hygiene.transfer import import_lines

        return import_lines(self.index, lines, root=root, embed=embed)

    def import_file(self, file: str, *, root: str | None = None, embed: bool = True,
                    pipes: bool = False, progress: Progress | None = None) -> dict[str, Any]:
        """Import an export file: a regular file under PINKY_MAX_IMPORT_BYTES (with `pipes`, also a pipe,
        and `-` for standard input); each bad record refused with its line number, the rest imported."""
        from pinky.hygiene.transfer import import_file

        return import_file(self.index, file, root=root, embed=embed, pipes=pipes, progress=progress)
