"""The contradiction detector, pure: two texts that say nearly the same thing but differ in a number, a
version, a port, a flag or a negation (no index, no LLM; `pinky.hygiene.contradictions` finds the pairs to
give it).

It aligns the two texts word by word and keeps only
the changed spans that carry a value: a number replaced by another (a version when it has dots or
follows 'version'/'v', a port after 'port' or ':'), an on/off word replaced by its opposite, a
negation present on one side only. A reworded sentence or an added detail is not a contradiction.
Code blocks are left out and a changed span of more than MAX_SPAN_WORDS is rewording. The alignment is
difflib's for texts of up to EXACT_TOKENS words; longer ones are cut at words they share once each (in
O(n log n)): two 115 KB near-duplicates take 0.05 s, not a minute.
"""

from __future__ import annotations

import bisect
import difflib
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pinky.base.declare import specified

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
# Aligning two texts word by word: difflib's SequenceMatcher (which costs up to the product of their
# lengths: 43 s for two 115 KB notes of a small vocabulary) aligns stretches of at most this many words
# a side; a longer stretch is first cut at runs of ANCHOR_WORDS words that occur once on each side, in
# order (a longest increasing subsequence), and the pieces between are aligned the same way.
EXACT_TOKENS = 300
ANCHOR_WORDS = (3, 8, 24)  # tried in turn: longer runs are unique even in a text of a few repeated words
MAX_ALIGN_DEPTH = 8  # cuts within cuts; a stretch still longer is one replaced span (rewording)


@dataclass(frozen=True)
class Difference:
    kind: str = field(metadata=specified(doc="number | version | port | flag | negation | differs (same key, "
                                             "other text)"))
    a: str = field(metadata=specified(doc="The span in the first entry ('' when it has none there)."))
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


Opcode = tuple[str, int, int, int, int]  # difflib's: (tag, a0, a1, b0, b1)


def align(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """difflib-style opcodes ('equal' and 'replace' spans, in order) aligning two word lists; difflib's own
    for short ones, O(n log n) words for long ones (see EXACT_TOKENS)."""
    ops: list[Opcode] = []
    _align(a, b, 0, len(a), 0, len(b), 0, ops)
    merged: list[Opcode] = []
    for op in ops:  # a delete next to an insert is one replaced span, as difflib reports it
        if op[1] == op[2] and op[3] == op[4]:
            continue
        tag = "equal" if op[0] == "equal" else "replace"
        if merged and merged[-1][0] == tag:
            last = merged[-1]
            merged[-1] = (tag, last[1], op[2], last[3], op[4])
        else:
            merged.append((tag, *op[1:]))
    return merged


def _align(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, depth: int,
           ops: list[Opcode]) -> None:
    """Append the opcodes of a[alo:ahi] against b[blo:bhi]: the shared head and tail, then the middle."""
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    tail = 0
    while ahi - tail > alo + head and bhi - tail > blo + head and a[ahi - tail - 1] == b[bhi - tail - 1]:
        tail += 1
    ops.append(("equal", alo, alo + head, blo, blo + head))
    _middle(a, b, alo + head, ahi - tail, blo + head, bhi - tail, depth, ops)
    ops.append(("equal", ahi - tail, ahi, bhi - tail, bhi))


def _breathe() -> None:
    """Let other threads run now. A long comparison on a server's worker thread holds the GIL between
    its switches (5 ms): a search beside it, which lets the GIL go at every SQLite call and waits up to
    5 ms to get it back each time, took 1.7 s instead of 13 ms. `sleep(0)` hands it over at once."""
    time.sleep(0)


def _middle(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, depth: int,
            ops: list[Opcode]) -> None:
    _breathe()
    if alo == ahi or blo == bhi:
        ops.append(("replace", alo, ahi, blo, bhi))
        return
    if ahi - alo <= EXACT_TOKENS and bhi - blo <= EXACT_TOKENS:
        matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
        ops.extend((tag, alo + i0, alo + i1, blo + j0, blo + j1) for tag, i0, i1, j0, j1 in matcher.get_opcodes())
        return
    anchors = _anchors(a, b, alo, ahi, blo, bhi) if depth < MAX_ALIGN_DEPTH else []
    if not anchors:
        if ahi - alo == bhi - blo:  # values changed in place, nothing added: word against word
            ops.extend(("equal" if a[alo + i] == b[blo + i] else "replace", alo + i, alo + i + 1, blo + i, blo + i + 1)
                       for i in range(ahi - alo))
        else:
            ops.append(("replace", alo, ahi, blo, bhi))
        return
    at_a, at_b = alo, blo
    for ia, ib in anchors:
        if ia < at_a or ib < at_b:
            continue  # inside the run of an earlier anchor
        _align(a, b, at_a, ia, at_b, ib, depth + 1, ops)
        run = 0
        while ia + run < ahi and ib + run < bhi and a[ia + run] == b[ib + run]:
            run += 1
        ops.append(("equal", ia, ia + run, ib, ib + run))
        at_a, at_b = ia + run, ib + run
    _align(a, b, at_a, ahi, at_b, bhi, depth + 1, ops)


def _anchors(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """(i, j) where the same run of words starts, once in a[alo:ahi] and once in b[blo:bhi], the longest
    chain of them in order on both sides; the shortest run length in ANCHOR_WORDS that gives any."""
    for size in ANCHOR_WORDS:
        once_a, once_b = _once(a, alo, ahi, size), _once(b, blo, bhi, size)
        pairs = sorted((i, once_b[run]) for run, i in once_a.items() if i >= 0 and once_b.get(run, -1) >= 0)
        if pairs:
            return _increasing(pairs)
    return []


def _once(words: Sequence[str], lo: int, hi: int, size: int) -> dict[tuple[str, ...], int]:
    """Each run of `size` words in words[lo:hi] -> where it starts, or -1 when it occurs more than once."""
    seen: dict[tuple[str, ...], int] = {}
    for i in range(lo, hi - size + 1):
        run = tuple(words[i:i + size])
        seen[run] = -1 if run in seen else i
        if not i & 511:
            _breathe()
    return seen


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest chain of (i, j) pairs (sorted by i) whose j increase too (patience sorting, n log n)."""
    tops: list[int] = []  # tops[k]: the smallest j ending a chain of k + 1 pairs
    ends: list[int] = []  # ends[k]: the index in `pairs` of that pair
    before = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
        before[n] = ends[k - 1] if k else -1
    chain, n = [], ends[-1] if ends else -1
    while n >= 0:
        chain.append(pairs[n])
        n = before[n]
    return chain[::-1]


def _words(text: str) -> tuple[list[str], list[str]]:
    """The words of a text's prose, and the same lower-cased (what is compared)."""
    found = tokens(prose(text))
    return found, [t.lower() for t in found]


def differences(text_a: str, text_b: str) -> list[Difference]:
    """The value-carrying spans in which two (similar) texts differ, in reading order (code blocks aside)."""
    (ta, la), (tb, lb) = _words(text_a), _words(text_b)
    return _differences(ta, tb, align(la, lb))


def _differences(ta: list[str], tb: list[str], ops: list[Opcode]) -> list[Difference]:
    found: list[Difference] = []
    for op, a0, a1, b0, b1 in ops:
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
    """The share of words two texts have in common, in order (as difflib's ratio, 0..1)."""
    return _overlap(_words(text_a)[1], _words(text_b)[1])[0]


def _overlap(la: list[str], lb: list[str]) -> tuple[float, list[Opcode]]:
    """(overlap, the alignment behind it); no alignment when the words alone rule a near-duplicate out."""
    total = len(la) + len(lb)
    if not total:
        return 1.0, []
    shared = 2.0 * sum((Counter(la) & Counter(lb)).values()) / total  # in any order: an upper bound
    if shared < MIN_OVERLAP:
        return shared, []
    ops = align(la, lb)
    return 2.0 * sum(a1 - a0 for op, a0, a1, _, _ in ops if op == "equal") / total, ops


def contradicts(text_a: str, text_b: str) -> list[Difference]:
    """The differing values of two texts that say nearly the same thing (MIN_OVERLAP of their words);
    nothing for texts that merely share a topic."""
    (ta, la), (tb, lb) = _words(text_a), _words(text_b)
    share, ops = _overlap(la, lb)
    return _differences(ta, tb, ops) if share >= MIN_OVERLAP else []
