"""Contradictions in the index: the pairs of current entries worth comparing, and what the detector
(`pinky.hygiene.differences`) finds between them.

`check` finds the pairs in the index: the likely duplicates the save-time warning would name
(`pinky.knowledge.duplicates`) that also share most of their words (`differences.MIN_OVERLAP`), plus same-key and
same-subject entries, and compares them within MAX_CHECK_CHARS.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pinky.hygiene.differences import Difference, contradicts, differences
from pinky.hygiene.similar import likely_duplicate_scores, similar_scores
from pinky.indexing.index import Index
from pinky.store import hygiene_queries

# Text compared in one `check`, both sides of every pair (~0.2 s a MB): the pairs past it are left out
# (`skipped` and a notice say how many), so one check never runs for minutes.
MAX_CHECK_CHARS = 5_000_000


def check(index: Index, slug: str | None = None, *, threshold: float | None = None,
          among: Sequence[str] | None = None) -> dict[str, Any]:
    """Pairs of current entries that may contradict each other (all of them, or those involving `slug`,
    or any of the slugs `among`), each with the reason it was compared and the differing spans."""
    return pairs_to_compare(index, slug, threshold=threshold, among=among).compare()


@dataclass(frozen=True)
class Comparison:
    """The pairs one `check` compares, read from the index: `compare` needs no index, so a long-running
    server compares them without holding the knowledge base (other tool calls go on meanwhile)."""

    checked: int
    pairs: list[tuple[dict[str, str], dict[str, str], str]]  # (a, b, reason); a and b: slug, path, title, body
    notice: str | None

    def compare(self, budget: int = MAX_CHECK_CHARS) -> dict[str, Any]:
        """The pairs with differing values, comparing at most `budget` characters of text (one pair always)."""
        found, used, skipped = [], 0, 0
        for a, b, reason in self.pairs:
            text_a, text_b = f"{a['title']}\n{a['body']}", f"{b['title']}\n{b['body']}"
            if skipped or (used and used + len(text_a) + len(text_b) > budget):
                skipped += 1
                continue
            used += len(text_a) + len(text_b)
            same_fact = reason.startswith("same ")
            diffs = differences(text_a, text_b) if same_fact else contradicts(text_a, text_b)
            if not diffs and same_fact and a["body"].strip() != b["body"].strip():
                diffs = [Difference("differs", _clip(a["body"]), _clip(b["body"]), "", "")]
            if diffs:
                found.append({"a": a["slug"], "b": b["slug"], "a_path": a["path"], "b_path": b["path"],
                              "reason": reason, "differences": [d.as_dict() for d in diffs]})
        notices = [self.notice] if self.notice else []
        if skipped:
            notices.append(f"{skipped} of {len(self.pairs)} pairs were not compared: one check compares at most "
                           f"{budget:,} characters; check an entry at a time (pinky-brain check SLUG)")
        return {"checked": self.checked, "count": len(found), "pairs": found, "skipped": skipped,
                "notice": "; ".join(notices) or None}


def pairs_to_compare(index: Index, slug: str | None = None, *, threshold: float | None = None,
                     among: Sequence[str] | None = None) -> Comparison:
    """What `check` compares: near-duplicates and same-key or same-subject entries, one of them a target."""
    from pinky.knowledge.entries import find

    rows = {r["id"]: r for r in hygiene_queries.current_entries(index.conn)}
    named = [slug] if slug else among
    wanted = [find(index, name)["id"] for name in named] if named is not None else list(rows)
    targets = [rows[entry] for entry in wanted if entry in rows]  # a superseded or diary entry has no pairs
    pairs = _same_fact_pairs(rows, {t["id"] for t in targets})
    _fill_vectors(index)
    usable, why = index.vector_status()
    if usable:
        similar = _similar_pairs(index, targets, rows, threshold)
        for key, reason in similar.items():
            pairs.setdefault(key, reason)

    sides: dict[str, dict[str, str]] = {}  # one per entry, however many pairs it is in

    def side(row: Any) -> dict[str, str]:
        if row["id"] not in sides:
            sides[row["id"]] = {"slug": row["slug"], "path": index.display_path(row["root"], row["path"]),
                                "title": row["title"], "body": row["body"]}
        return sides[row["id"]]

    listed = []
    for (first, second), reason in sorted(pairs.items(), key=lambda kv: sorted(rows[i]["slug"] for i in kv[0])):
        a, b = sorted((rows[first], rows[second]), key=lambda row: row["slug"])
        listed.append((side(a), side(b), reason))
    notice = None if usable else f"vector search unavailable ({why}): only same key and subject were compared"
    return Comparison(len(targets), listed, notice)


def _fill_vectors(index: Index) -> None:
    """Give the chunks still lacking a vector theirs before comparing: a save acknowledged a moment ago
    (pinky-mcp's brain_save leaves its vectors to the background fill) must be in the check that follows.
    Nothing to do, and no model loaded, when every chunk has one."""
    from pinky.indexing.vector_fill import embed_pending
    from pinky.store.vectors import count_pending

    if index.db.vec_available and count_pending(index.conn):
        embed_pending(index)


def _clip(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _same_fact_pairs(rows: dict[str, Any], targets: set[str]) -> dict[tuple[str, str], str]:
    """(id, id) -> 'same key …' for current entries sharing a key or subject, one of them a target."""
    groups: dict[tuple[str, str], list[str]] = {}
    for row in rows.values():
        meta = json.loads(row["meta"])
        for name in ("key", "subject"):
            value = meta.get(name)
            if isinstance(value, str) and value.strip():
                groups.setdefault((name, " ".join(value.lower().split())), []).append(row["id"])
    pairs: dict[tuple[str, str], str] = {}
    for (name, value), ids in groups.items():
        for i, first in enumerate(ids):
            for second in ids[i + 1:]:
                if first in targets or second in targets:
                    pairs.setdefault(_ordered(first, second), f"same {name} {value!r}")
    return pairs


def _similar_pairs(index: Index, targets: list[Any], rows: dict[str, Any],
                   threshold: float | None) -> dict[tuple[str, str], str]:
    """(id, id) -> 'similar (0.93)' for likely duplicates (pinky.knowledge.duplicates; by the cosine alone
    with a `threshold`), one of them a target."""
    scores = (likely_duplicate_scores(index, targets, rows) if threshold is None
              else similar_scores(index, targets, rows, threshold))
    return {key: f"similar ({score:.2f})" for key, score in scores.items()}


def _ordered(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first < second else (second, first)
