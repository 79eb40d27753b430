"""Contradictions without an LLM: two entries that say nearly the same thing but differ in a number, a
version, a port, a flag or a negation; and current entries with the same key or subject that differ.

The detector is pure (`differences`): it aligns the two texts word by word (difflib) and keeps only
the changed spans that carry a value: a number replaced by another (a version when it has dots or
follows 'version'/'v', a port after 'port' or ':'), an on/off word replaced by its opposite, a
negation present on one side only. A reworded sentence or an added detail is not a contradiction.
Code blocks are left out and a changed span of more than MAX_SPAN_WORDS is rewording. `check` finds
the pairs in the index: the near-duplicates the save-time dedup would propose (cosine >=
`entries.DUPLICATE_SIMILARITY`) that also share most of their words (MIN_OVERLAP), plus same-key and
same-subject entries.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pinky.index import Index
from pinky.store import hygiene as hq

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
# Near-duplicates by meaning are compared only when they also share most of their words (difflib's
# ratio over words): two abstracts on one topic are close in vector space (cosine 0.8 with USE) but
# share a fifth of their words, and aligning them found "differences" everywhere (SciFact: 104 pairs).
MIN_OVERLAP = 0.6
# A contradiction changes a value, not a sentence: a changed span longer than this on either side is
# rewording (CoSQA's near-identical functions: 178 pairs of "negations" like 'Creates a' vs 'Create
# directories if they do not exist').
MAX_SPAN_WORDS = 4
# Code is compared as code elsewhere: fenced blocks are left out (two functions that differ in a
# status code are two functions, not a contradiction).
MAX_COMPARED_WORDS = 5000
MATRIX_BLOCK = 64  # queries a block: 64 x 100,000 chunks of scores is 25 MB


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


def prose(text: str) -> str:
    """The text without its fenced code blocks (one pass over the lines: linear in any input)."""
    kept, fence = [], ""
    for line in text.splitlines():
        mark = line.lstrip()[:3]
        if not fence and mark in ("```", "~~~"):
            fence = mark
        elif fence and mark == fence:
            fence = ""
        elif not fence:
            kept.append(line)
    return "\n".join(kept)


def differences(text_a: str, text_b: str) -> list[Difference]:
    """The value-carrying spans in which two (similar) texts differ, in reading order (code blocks aside)."""
    ta, tb = tokens(prose(text_a)), tokens(prose(text_b))
    la, lb = [t.lower() for t in ta], [t.lower() for t in tb]
    found: list[Difference] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        if op == "equal" or a1 - a0 > MAX_SPAN_WORDS or b1 - b0 > MAX_SPAN_WORDS:
            continue
        kind = _kind(ta[a0:a1], tb[b0:b1], ta[max(0, a0 - 3):a0])
        if kind is None:
            continue
        found.append(Difference(kind, " ".join(ta[a0:a1]), " ".join(tb[b0:b1]),
                                " ".join(ta[max(0, a0 - CONTEXT_WORDS):a1 + CONTEXT_WORDS]),
                                " ".join(tb[max(0, b0 - CONTEXT_WORDS):b1 + CONTEXT_WORDS])))
    return found


def overlap(text_a: str, text_b: str) -> float:
    """The share of words two texts have in common, in order (difflib's ratio, 0..1)."""
    ta = [t.lower() for t in tokens(prose(text_a))[:MAX_COMPARED_WORDS]]
    tb = [t.lower() for t in tokens(prose(text_b))[:MAX_COMPARED_WORDS]]
    matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if matcher.real_quick_ratio() < MIN_OVERLAP or matcher.quick_ratio() < MIN_OVERLAP:
        return matcher.quick_ratio()
    return matcher.ratio()


def contradicts(text_a: str, text_b: str) -> list[Difference]:
    """The differing values of two texts that say nearly the same thing (MIN_OVERLAP of their words);
    nothing for texts that merely share a topic."""
    return differences(text_a, text_b) if overlap(text_a, text_b) >= MIN_OVERLAP else []


# --- finding the pairs in the index -----------------------------------------------------------------

def check(index: Index, slug: str | None = None, *, threshold: float | None = None,
          among: Sequence[str] | None = None) -> dict[str, Any]:
    """Pairs of current entries that may contradict each other (all of them, or those involving `slug`,
    or any of the slugs `among`), each with the reason it was compared and the differing spans."""
    from pinky.entries import DUPLICATE_SIMILARITY, find

    rows = {r["id"]: r for r in hq.current_entries(index.conn)}
    named = [slug] if slug else among
    wanted = [find(index, name)["id"] for name in named] if named is not None else list(rows)
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
        text_a, text_b = f"{a['title']}\n{a['body']}", f"{b['title']}\n{b['body']}"
        same_fact = reason.startswith("same ")
        diffs = differences(text_a, text_b) if same_fact else contradicts(text_a, text_b)
        if not diffs and same_fact and a["body"].strip() != b["body"].strip():
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

    Each target's first chunk, as the indexer embedded it, against every chunk of the current
    entries, in one matrix product per block: nothing is embedded again, and a brain of 5,000 notes
    is checked in about a second instead of one nearest-neighbour search per entry."""
    import numpy as np

    stored = hq.chunk_vectors(index.conn)
    if not stored:
        return {}
    owners = np.array([entry for entry, _, _ in stored])
    matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in stored])
    wanted = {row["id"] for row in targets}
    firsts = [n for n, (entry, order, _) in enumerate(stored) if order == 0 and entry in wanted]
    pairs: dict[tuple[str, str], float] = {}
    for start in range(0, len(firsts), MATRIX_BLOCK):
        block = firsts[start:start + MATRIX_BLOCK]
        scores = matrix[block] @ matrix.T  # vectors are L2-normalised: dot = cosine
        for query, chunk in zip(*np.nonzero(scores >= threshold), strict=True):
            first, other = str(owners[block[query]]), str(owners[chunk])
            if first != other and other in rows:
                key = _ordered(first, other)
                pairs[key] = max(pairs.get(key, 0.0), float(scores[query, chunk]))
    return {key: f"similar ({score:.2f})" for key, score in pairs.items()}


def _ordered(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first < second else (second, first)
