"""Auto-classification on save: a type and tags suggested for a note that came without them.

Two sources, no model of ours: simple rules on the words of the note (an error message or a stack
trace makes a bug, "decided" a decision, "how to" and numbered steps a guide, "gotcha" or "beware" a
gotcha, "convention" a pattern), and the entries nearest to it (the brain's full-text search on the
title and body; hits sharing two informative words with it), whose types vote by rank
and whose tags are kept when two neighbours share them or the note names them. Tags — suggested or
given — are mapped onto the existing vocabulary when they differ only by case, plural, or
hyphen/underscore/space (`tag_key`).
The pure half is tested without a database; `suggest` runs the search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pinky.base.declare import declared, specified
from pinky.search.gaps import word_hashes
from pinky.search.request import SearchRequest

RULES: dict[str, tuple[str, ...]] = {  # type -> patterns (lower-case text); the title counts twice
    "bug": (r"traceback \(most recent call last\)", r"\b\w+(error|exception)\b", r"\berror:", r"\bstack trace\b",
            r"\bcrash(es|ed)?\b", r"\bsegfault\b", r"\broot cause\b", r"\bregression\b", r"\bfails? with\b"),
    "decision": (r"\bdecided\b", r"\bdecision\b", r"\bwe chose\b", r"\bchose\b", r"\balternatives?\b",
                 r"\btrade-?offs?\b", r"\bin favou?r of\b"),
    "guide": (r"\bhow to\b", r"\bstep \d\b", r"\bsteps\b", r"^[ \t]*+\d++\.\s", r"\binstall(ation)?\b", r"\bset ?up\b"),
    "gotcha": (r"\bgotcha\b", r"\bbeware\b", r"\bwatch out\b", r"\bpitfall\b", r"\btrap\b", r"\bcareful\b",
               r"\bcaveat\b", r"\bsurpris(e|ing)\b", r"\bsilently\b"),
    "pattern": (r"\bpattern\b", r"\bconvention\b", r"\balways use\b", r"\bwe use\b", r"\bprefer\b", r"\bidiom\b"),
}
# Every rule runs on each save without a type or tags, over the whole body: a numbered step starts a
# line after blanks and tabs only (`^\s*` crossed lines, and a body of 100,000 newlines took 150 s).
_COMPILED = {kind: [re.compile(p, re.MULTILINE) for p in patterns] for kind, patterns in RULES.items()}
_WORD = re.compile(r"[\w+#.-]+", re.UNICODE)
_TAG_BREAK = re.compile(r"[\s_-]+")
MAX_SUGGESTED_TAGS = 5
NEIGHBOURS = 5
SHARED_WORDS = 2  # informative words a hit must share with the note to count as a neighbour (any ranking
#                   returns something, even for a note about nothing the brain holds)


def rule_type(title: str, body: str) -> str | None:
    """The type the note's own words point to (the most matching rules; the title counts twice), or None."""
    head, text = title.lower(), body.lower()
    scores = {kind: sum(2 * bool(p.search(head)) + bool(p.search(text)) for p in patterns)
              for kind, patterns in _COMPILED.items()}
    best = max(scores.items(), key=lambda kv: (kv[1], -list(RULES).index(kv[0])))
    return best[0] if best[1] > 0 else None


def neighbour_type(types: Sequence[str]) -> str | None:
    """The type the nearest entries agree on (best first; rank-weighted votes), when at least two share it."""
    votes: dict[str, float] = {}
    for rank, kind in enumerate(types, 1):
        if kind not in ("diary", "status"):
            votes[kind] = votes.get(kind, 0.0) + 1.0 / rank
    agreed = [kind for kind in votes if sum(1 for t in types if t == kind) >= 2]
    return max(agreed, key=lambda kind: (votes[kind], kind)) if agreed else None


def tag_key(tag: str) -> str:
    """What makes two tags the same: case, spaces/underscores/hyphens, and a plural ending ignored."""
    words = _TAG_BREAK.split(tag.strip().lower())
    last = words[-1]
    for suffix, keep in (("ies", "y"), ("ses", "s"), ("s", "")):
        if last.endswith(suffix) and len(last) - len(suffix) >= 3 and not last.endswith("ss"):
            last = last[: -len(suffix)] + keep
            break
    return "-".join([*words[:-1], last])


def normalise_tags(tags: Iterable[str], vocabulary: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """`tags` with each one that matches an existing tag by `tag_key` replaced by it; and what was replaced."""
    known: dict[str, str] = {}
    for existing in vocabulary:
        known.setdefault(tag_key(existing), existing)
    out: list[str] = []
    renamed: dict[str, str] = {}
    for tag in tags:
        target = known.get(tag_key(tag), tag)
        if target != tag:
            renamed[tag] = target
        if target not in out:
            out.append(target)
    return out, renamed


def neighbour_tags(neighbours: Sequence[Sequence[str]], text: str, vocabulary: Iterable[str]) -> list[str]:
    """Tags shared by two or more neighbours, then neighbours' tags and existing tags the note names."""
    words = {tag_key(w) for w in _WORD.findall(text.lower())}
    counts: dict[str, int] = {}
    for tags in neighbours:
        for tag in dict.fromkeys(tags):
            counts[tag] = counts.get(tag, 0) + 1
    shared = [tag for tag, n in counts.items() if n >= 2]
    named = [tag for tag in [*counts, *vocabulary] if tag_key(tag) in words]
    return list(dict.fromkeys(shared + named))[:MAX_SUGGESTED_TAGS]


@dataclass(frozen=True)
class Suggestion:
    """What a save suggested and applied; each field's line is what brain_save's output schema says of it."""

    suggested_type: str | None = declared(None, doc=(
        "When no type was given: the type the note's words and its nearest entries point to (null: none)."))
    suggested_tags: list[str] = field(default_factory=list, metadata=specified(doc=(
        "When no type or no tags were given: tags from the nearest entries and the existing vocabulary.")))
    type_applied: bool = declared(False, doc="True when the suggested type was written (no type was given).")
    tags_applied: bool = declared(False, doc="True when the suggested tags were written (no tags were given).")
    renamed_tags: dict[str, str] = field(default_factory=dict, metadata=specified(doc=(  # given tag -> existing tag
        "Given tags written as the existing tag they match (case, plural, hyphen/underscore/space).")))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def suggest(index: Any, title: str, body: str, vocabulary: Sequence[str]) -> tuple[str | None, list[str]]:
    """A type (rules first, then the neighbours' vote) and tags for a note, from the nearest entries."""
    from pinky.base.validate import MAX_QUERY_CHARS
    from pinky.search import hybrid as search

    query = f"{title}\n{body}"[:MAX_QUERY_CHARS]
    mine = word_hashes(query)
    # full text only: a neighbour must share words with the note anyway (SHARED_WORDS), and skipping the
    # vector side keeps a one-shot `pinky save` from scanning every vector twice (`similar` runs after)
    found = search.search(index, SearchRequest(query, limit=NEIGHBOURS, mode="bm25"))
    hits = [hit for hit in found.hits
            if len(mine & word_hashes(f"{hit.title} {hit.snippet} {' '.join(hit.tags)}")) >= SHARED_WORDS]
    kind = rule_type(title, body) or neighbour_type([hit.type for hit in hits])
    return kind, neighbour_tags([hit.tags for hit in hits], f"{title}\n{body}", vocabulary)


def for_save(index: Any, title: str, body: str, type: str | None, tags: Sequence[str] | None,
             subject: str | None) -> tuple[str, list[str], Suggestion]:
    """The type and tags a save writes, and the suggestion behind them: the given tags mapped onto the
    vocabulary; a missing type or missing tags suggested (a `subject` still makes a status)."""
    from pinky.base.validate import normalise_tag, validate_tags
    from pinky.store.hygiene_queries import tag_counts

    vocabulary = [tag for tag, _ in tag_counts(index.conn)]
    given, renamed = normalise_tags(validate_tags(list(tags or [])), vocabulary)  # not lower-cased: redaction first
    renamed = {tag: target for tag, target in renamed.items() if normalise_tag(tag) != target}
    if type is not None and given:
        return type, given, Suggestion(renamed_tags=renamed)
    kind, suggested = suggest(index, title, body, vocabulary)
    suggested, _ = normalise_tags(suggested, vocabulary)
    type_applied = type is None and subject is None and kind is not None
    final = type if type is not None else "status" if subject is not None else kind or "note"
    return final, given or suggested, Suggestion(kind, suggested, type_applied, not given and bool(suggested), renamed)
