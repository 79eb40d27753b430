"""Contradictions without an LLM: two entries that say nearly the same thing but differ in a number, a
version, a port, a flag or a negation; and current entries with the same key or subject that differ.

The detector is pure (`differences`): it aligns the two texts word by word (difflib) and keeps only
the changed spans that carry a value: a number replaced by another (a version when it has dots or
follows 'version'/'v', a port after 'port' or ':'), an on/off word replaced by its opposite, a
negation present on one side only. A reworded sentence or an added detail is not a contradiction.
`check` finds the pairs in the index: the near-duplicates the save-time dedup would propose (cosine
>= `entries.DUPLICATE_SIMILARITY`) plus same-key and same-subject entries.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from pinky import search
from pinky.index import Index
from pinky.store import hygiene as hq
from pinky.store import retrieval as rq

_TOKEN = re.compile(r"v?\d+(?:[.,]\d+)*%?|[^\W\d_][\w'’]*|\S", re.UNICODE)
NEGATIONS = frozenset({"not", "never", "no", "cannot", "without", "nor", "none", "nothing", "neither",
                       "unsupported", "unsafe", "disallowed"})
FLAG_ON = frozenset({"true", "on", "enabled", "enable", "yes", "allowed", "allow", "required", "must", "always",
                     "supported", "safe", "works", "do"})
FLAG_OFF = frozenset({"false", "off", "disabled", "disable", "no", "denied", "deny", "optional", "never",
                      "unsupported", "unsafe", "fails", "breaks", "avoid"})
VERSION_WORDS = frozenset({"version", "versions", "v", "release", "node", "python", "java", "go", "ruby", "php",
                           "postgres", "postgresql", "mysql", "redis", "django", "rails", "react", "npm", "pip",
                           "upgrade", "upgraded", "pin", "pinned", "requires", "runtime"})
PORT_WORDS = frozenset({"port", "ports", "listens", "listen", "localhost"})
CONTEXT_WORDS = 6


@dataclass(frozen=True)
class Difference:
    kind: str  # number | version | port | flag | negation
    a: str  # the span in the first text ('' when it has none there)
    b: str
    context_a: str
    context_b: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _is_number(token: str) -> bool:
    return token[:1].isdigit() or (token[:1] in "vV" and token[1:2].isdigit())


def _negative(token: str) -> bool:
    low = token.lower().replace("’", "'")
    return low in NEGATIONS or low.endswith("n't")


def _polarity(words: list[str]) -> set[str]:
    low = {w.lower().replace("’", "'") for w in words}
    found = set()
    if low & FLAG_ON:
        found.add("on")
    if low & FLAG_OFF or any(_negative(w) for w in words):
        found.add("off")
    return found


def _number_kind(span_a: list[str], span_b: list[str], before: list[str]) -> str:
    near = {w.lower() for w in before[-3:]}
    if near & PORT_WORDS or (before and before[-1] == ":"):
        return "port"
    if near & VERSION_WORDS or any("." in t or t[:1] in "vV" for t in span_a + span_b):
        return "version"
    return "number"


def _kind(span_a: list[str], span_b: list[str], before: list[str]) -> str | None:
    """What a changed span changes, or None when it is only wording."""
    neg_a, neg_b = sum(map(_negative, span_a)), sum(map(_negative, span_b))
    if neg_a != neg_b:
        return "negation"
    nums_a, nums_b = [t for t in span_a if _is_number(t)], [t for t in span_b if _is_number(t)]
    if nums_a and nums_b and [n.lower() for n in nums_a] != [n.lower() for n in nums_b]:
        return _number_kind(span_a, span_b, before)
    pol_a, pol_b = _polarity(span_a), _polarity(span_b)
    if span_a and span_b and pol_a and pol_b and pol_a != pol_b and len(pol_a) == len(pol_b) == 1:
        return "flag"
    return None


def differences(text_a: str, text_b: str) -> list[Difference]:
    """The value-carrying spans in which two (similar) texts differ, in reading order."""
    ta, tb = tokens(text_a), tokens(text_b)
    la, lb = [t.lower() for t in ta], [t.lower() for t in tb]
    found: list[Difference] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        kind = _kind(ta[a0:a1], tb[b0:b1], ta[max(0, a0 - 3):a0])
        if kind is None:
            continue
        found.append(Difference(kind, " ".join(ta[a0:a1]), " ".join(tb[b0:b1]),
                                " ".join(ta[max(0, a0 - CONTEXT_WORDS):a1 + CONTEXT_WORDS]),
                                " ".join(tb[max(0, b0 - CONTEXT_WORDS):b1 + CONTEXT_WORDS])))
    return found


# --- finding the pairs in the index -----------------------------------------------------------------

def check(index: Index, slug: str | None = None, *, threshold: float | None = None) -> dict[str, Any]:
    """Pairs of current entries that may contradict each other (all of them, or those involving `slug`),
    each with the reason it was compared and the differing spans."""
    from pinky.entries import DUPLICATE_SIMILARITY, find

    rows = {r["id"]: r for r in hq.current_entries(index.conn)}
    wanted = [find(index, slug)["id"]] if slug else list(rows)
    targets = [rows[entry] for entry in wanted if entry in rows]  # a superseded or diary entry has no pairs
    pairs = _same_fact_pairs(rows, {t["id"] for t in targets})
    usable, why = index.vector_status()
    if usable:
        similar = _similar_pairs(index, targets, rows, DUPLICATE_SIMILARITY if threshold is None else threshold)
        for key, reason in similar.items():
            pairs.setdefault(key, reason)
    found = []
    for (first, second), reason in sorted(pairs.items(), key=lambda kv: sorted(rows[i]["slug"] for i in kv[0])):
        a, b = sorted((rows[first], rows[second]), key=lambda row: row["slug"])
        diffs = differences(f"{a['title']}\n{a['body']}", f"{b['title']}\n{b['body']}")
        if not diffs and reason.startswith("same ") and a["body"].strip() != b["body"].strip():
            diffs = [Difference("differs", _clip(a["body"]), _clip(b["body"]), "", "")]
        if diffs:
            found.append({"a": a["slug"], "b": b["slug"], "a_path": index.display_path(a["root"], a["path"]),
                          "b_path": index.display_path(b["root"], b["path"]), "reason": reason,
                          "differences": [d.as_dict() for d in diffs]})
    notice = None if usable else f"vector search unavailable ({why}): only same key and subject were compared"
    return {"checked": len(targets), "count": len(found), "pairs": found, "notice": notice}


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
                   threshold: float) -> dict[tuple[str, str], str]:
    """(id, id) -> 'similar (0.93)' for near-duplicates (the dedup similarity), one of them a target.

    Each target's first chunk vector, as stored by the indexer, is the query: nothing is embedded, so
    checking a brain costs one nearest-neighbour search per entry."""
    import numpy as np

    pairs: dict[tuple[str, str], str] = {}
    stored = hq.first_chunk_vectors(index.conn, [row["id"] for row in targets])
    for row in targets:
        blob = stored.get(row["id"])
        if blob is None:
            continue  # not embedded yet: the next check sees it
        vector = np.frombuffer(blob, dtype="float32")
        for entry, score, _ in search.vector_hits(index, vector, rq.Filters()):
            if entry != row["id"] and entry in rows and score >= threshold:
                pairs.setdefault(_ordered(row["id"], entry), f"similar ({score:.2f})")
    return pairs


def _ordered(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first < second else (second, first)
