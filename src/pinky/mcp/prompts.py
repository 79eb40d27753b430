"""The MCP prompts of pinky-mcp: ready-made instructions a user can pick in the client.

Plain functions returning text (the SDK turns the docstring into the description and the
parameters into the prompt's arguments); `PROMPTS` lists them with their titles. No SDK import.
No `from __future__ import annotations`: the SDK reads these signatures at runtime.
"""

import inspect
from collections.abc import Callable, Mapping


def save_knowledge() -> str:
    """Guidance for deciding what is worth saving to the brain and how to write it."""
    return (
        "Review what we just did and decide whether something is worth remembering for a future session.\n"
        "Save (brain_save) only what would otherwise be rediscovered the hard way: a non-obvious bug and its "
        "fix (type gotcha), how this codebase does something (pattern), a choice and its reasons (decision), "
        "steps to set something up (guide). Do not save what the code or git log already says.\n"
        "First brain_search for it: if an entry exists, brain_get it and brain_update it with its version "
        "instead of saving a duplicate. A fact that can change (a version, a limit, a port) gets a `key` "
        "such as 'ci.node-version', the current state of something a `subject`: the next save with the same "
        "one supersedes the old entry instead of contradicting it.\n"
        "Write a specific one-line title (the symptom or the rule), a body that states the problem, the fix "
        "and why, with the exact error message if any, 2-5 lowercase tags, and `files` for the code involved."
    )


def session_briefing(since: str = "24h") -> str:
    """Summarise what changed in the brain and the diary since a time (default: the last 24 hours)."""
    return (
        f"Call brain_briefing with since='{since}'. Summarise in a few bullets what was learned (new and "
        "updated entries, with their paths) and what was worked on (the diary), and name the entries it "
        "lists under needs_review (stale or flagged). Then, for the task at hand, brain_search the two or "
        "three most relevant topics and mention any gotcha that applies."
    )


def research_topic(topic: str) -> str:
    """Gather everything the brain knows about a topic, with citations and gaps."""
    return (
        f"Research what the brain knows about: {topic}\n"
        "1. brain_search it with two or three phrasings (keywords, the likely error message, a question).\n"
        "2. brain_get the most relevant hits and brain_related them to follow links and backlinks.\n"
        "3. Answer with what is known, citing each entry's path; point out contradictions (brain_check) and "
        "stale entries.\n"
        "4. List what is missing, and offer to save new findings with brain_save."
    )


# (function, title); the prompt's name is the function's name.
PROMPTS: tuple[tuple[Callable[..., str], str], ...] = (
    (save_knowledge, "When and how to save knowledge"),
    (session_briefing, "Catch up on recent work"),
    (research_topic, "Research a topic across the brain"),
)


def arguments_problem(name: str, arguments: Mapping[str, object] | None) -> str | None:
    """What is wrong with a prompts/get request (an unknown prompt, a missing or unknown argument), in
    one sentence; None when the prompt can be rendered with these arguments."""
    found = {fn.__name__: fn for fn, _ in PROMPTS}
    if name not in found:
        return f"unknown prompt {name[:100]!r}; available prompts: {', '.join(found)}"
    params = inspect.signature(found[name]).parameters
    given = set(arguments or {})
    unknown = sorted(given - set(params))
    missing = [p for p, spec in params.items() if spec.default is inspect.Parameter.empty and p not in given]
    takes = f"{name} takes {', '.join(params) or 'no arguments'}"
    if unknown:
        return f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(repr(u[:60]) for u in unknown)}; {takes}"
    if missing:
        return f"missing required argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}; {takes}"
    return None
