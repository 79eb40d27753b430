"""The evergreen CLAUDE.md rule: flag facts that go stale the moment the code changes.

Why: CLAUDE.md is loaded into every session, so a line count, a line number, a
test count or a "currently ..." sentence keeps misleading the agent long after
it stopped being true. The PreToolUse hook calls `check_claude_md_write` on
writes to CLAUDE.md and tells the agent how to phrase the fact instead. The
patterns prefer missing a case to nagging about ordinary prose ("the current
directory", "line endings", "HTTP 404"). Stdlib only: it runs inside a hook.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["Finding", "check_claude_md_write", "find_volatile"]


@dataclass(frozen=True)
class Finding:
    """One volatile fact: what kind it is, the text around it, and how to say it so it stays true."""

    kind: str
    excerpt: str
    advice: str


ADVICE = {
    "line-count": "Sizes change with every edit; say what the file or module is for, not how long it is.",
    "line-number": "Line numbers shift with every edit; name the function, class or section instead.",
    "time-relative": (
        "'currently' / 'as of' / 'right now' go stale silently; state the rule or fact so it holds "
        "without a date, or keep dated status in the diary rather than CLAUDE.md."
    ),
    "dated-status": (
        "A dated status is history; state what is true in general, and leave the date to git log "
        "or the diary."
    ),
    "commit-hash": (
        "Commit hashes are history, not guidance; describe the change or decision, and let git keep the hash."
    ),
    "test-count": (
        "Test counts change with every commit; give the command that runs the tests and what must pass, "
        "not how many there are."
    ),
}

_CODE_EXT = (
    r"py|pyi|ipynb|js|mjs|cjs|jsx|ts|tsx|vue|svelte|rs|go|java|kt|kts|scala|swift|m|mm|c|h|cc|cpp|cxx|hpp|hh|"
    r"cs|fs|rb|php|pl|pm|lua|ex|exs|erl|hs|ml|clj|dart|r|jl|sh|bash|zsh|ps1|sql|html|css|scss|sass|less|"
    r"md|rst|txt|toml|yaml|yml|json|jsonc|ini|cfg|conf|xml|gradle|tf|proto|graphql|cmake|mk"
)
# A limit ("keep functions under 50 lines", "at least 3 tests") is a rule, not a stale fact.
_LIMIT_BEFORE = re.compile(
    r"(?:under|over|below|above|less than|more than|fewer than|at most|at least|no more than|up to|within|"
    r"max(?:imum)?|min(?:imum)?|exceed(?:s|ing)?|limit(?:ed)? to|than|[<>≤≥]=?)\s*~?\s*$",
    re.IGNORECASE,
)
_NUMBER = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?"
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE = (
    r"\d{4}-\d{2}(?:-\d{2})?|\d{1,2}/\d{1,2}/\d{2,4}|q[1-4]\s+\d{4}"
    rf"|(?:\d{{1,2}}\s+)?(?:{_MONTHS})\.?(?:\s+\d{{1,2}},?)?\s+\d{{4}}"
)

# (kind, pattern, whether a preceding limit word cancels the finding)
_PATTERNS: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    (
        "line-count",
        re.compile(
            rf"(?<![\w.])(?:{_NUMBER})\s*[kK]?\+?\s*"
            r"(?:lines of code|LOC\b|SLOC\b|lines\b(?!\s+of\s+(?!code)))",
            re.IGNORECASE,
        ),
        True,
    ),
    (
        "line-number",
        re.compile(rf"(?<![\w./\-])[\w./\-]+\.(?:{_CODE_EXT}):\d+(?::\d+)?\b", re.IGNORECASE),
        False,
    ),
    (
        "line-number",
        re.compile(r"\blines?\s+\d+(?:\s*(?:-|–|to|and|through)\s*\d+)?\b", re.IGNORECASE),
        False,
    ),
    ("line-number", re.compile(r"(?:#L\d+(?:-L?\d+)?\b|(?<![\w#/.-])L\d{2,}(?:-L?\d+)?\b)"), False),
    (
        "dated-status",
        re.compile(
            r"\b(?:as of|as at|updated(?: on| at)?|last updated:?|last checked:?|last verified:?)"
            rf"\s+(?:{_DATE})\b",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        "time-relative",
        re.compile(
            r"\b(?:currently|right now|at the moment|at present|at the time of writing|as of (?:now|today|"
            r"this writing|writing|this week|this month|yesterday|the latest)|as it stands)\b",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        "commit-hash",
        re.compile(r"(?<![\w#./\-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/\-])"),
        False,
    ),
    (
        "test-count",
        re.compile(
            rf"(?<![\w.])(?:{_NUMBER})\s+(?:(?:unit|integration|e2e|end-to-end|passing|failing|green|python|js)\s+)?"
            r"(?:tests?|specs?|test cases?)\b(?!\s+per\b)"
            rf"|(?<![\w.])(?:{_NUMBER})\s+(?:passed|failed|passing|failing|skipped|xfailed|errors?)\b",
            re.IGNORECASE,
        ),
        True,
    ),
)


def find_volatile(text: str) -> list[Finding]:
    """Every volatile fact in `text`, in order of appearance; an identical repeat is reported once."""
    return _findings(dict.fromkeys(_scan(text)))


def _scan(text: str) -> Iterator[tuple[str, str, str]]:
    """Yield (kind, matched text normalised, excerpt) for every hit, ordered by position."""
    hits = []
    for kind, pattern, limit_cancels in _PATTERNS:
        for match in pattern.finditer(text):
            if limit_cancels and _LIMIT_BEFORE.search(text, max(0, match.start() - 30), match.start()):
                continue
            hits.append((match.start(), kind, match))
    covered_to = 0
    for start, kind, match in sorted(hits, key=lambda h: (h[0], -len(h[2].group(0)))):
        if start < covered_to:
            continue  # "as of 2026-11-25" is one dated-status, not also a time-relative
        covered_to = match.end()
        yield kind, _normalise(match.group(0)), _excerpt(text, match.start(), match.end())


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _excerpt(text: str, start: int, end: int, width: int = 30) -> str:
    """The match with a little context from its own line, for a message the agent can act on. Only
    `width` characters each side are read (finding the whole line was quadratic on a long one)."""
    before = text.rfind("\n", max(0, start - width), start)
    left = before + 1 if before >= 0 else max(0, start - width)
    after = text.find("\n", end, end + width)
    right = after if after >= 0 else min(len(text), end + width)
    snippet = " ".join(text[left:right].split())
    cut_left = left > 0 and text[left - 1] != "\n"
    cut_right = right < len(text) and text[right] != "\n"
    return ("…" if cut_left else "") + snippet + ("…" if cut_right else "")


def check_claude_md_write(tool_name: str, tool_input: dict, existing_text: str | None) -> list[Finding]:
    """Volatile facts that a Write/Edit/MultiEdit would add to a CLAUDE.md; [] for any other file or tool.

    Only additions count: a fact already in the edited `old_string` (or, for a
    whole-file Write, already in `existing_text`) was not put there by this call.
    """
    if not isinstance(tool_input, dict) or not _is_claude_md(tool_input.get("file_path")):
        return []
    if tool_name == "Write":
        return _added(_str(tool_input.get("content")), _str(existing_text))
    if tool_name == "Edit":
        return _added(_str(tool_input.get("new_string")), _str(tool_input.get("old_string")))
    if tool_name == "MultiEdit":
        edits = tool_input.get("edits")
        pairs = [
            (_str(e.get("new_string")), _str(e.get("old_string")))
            for e in (edits if isinstance(edits, list) else [])
            if isinstance(e, dict)
        ]
        return list(dict.fromkeys(f for new, old in pairs for f in _added(new, old)))
    return []


def _is_claude_md(path: object) -> bool:
    """True when the base name is CLAUDE.md in any case, with either path separator."""
    return isinstance(path, str) and path.replace("\\", "/").rsplit("/", 1)[-1].lower() == "claude.md"


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _added(new: str, old: str) -> list[Finding]:
    """Findings in `new` whose matched text does not already appear, as the same kind, in `old`."""
    before = {(kind, norm) for kind, norm, _ in _scan(old)} if old else set()
    return _findings(hit for hit in dict.fromkeys(_scan(new)) if hit[:2] not in before)


def _findings(hits: Iterable[tuple[str, str, str]]) -> list[Finding]:
    return [Finding(kind=kind, excerpt=excerpt, advice=ADVICE[kind]) for kind, _, excerpt in hits]
