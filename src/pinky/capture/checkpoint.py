"""What a conversation decided and left open, extracted from its transcript without a model.

Before Claude Code compacts a conversation (PreCompact), the hook appends these to the diary so
the summary that replaces the conversation loses nothing the brain could keep. Extractive, like
the rest of the diary: sentences of the user's prompts and the assistant's text that carry a
decision cue ("we'll use", "decided", "going with") or an open-thread cue ("TODO", "next step",
"still need", "not yet"), each once, redacted and capped by the caller. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from pinky.capture.transcript import SENTENCE_BREAK, message_content, prompt_text

__all__ = ["MAX_ITEMS", "Checkpoint", "decisions_and_open_threads"]

MAX_ITEMS = 5
ITEM_CHARS = 160

_DECISION = re.compile(
    r"\b(?:decided|decide\s+to|we'?ll\s+(?:use|go|keep|switch|stick)|we\s+will\s+(?:use|go|keep|switch)|going\s+with"
    r"|(?:chose|chosen|choosing)\b|let'?s\s+(?:use|go\s+with|keep|switch)|settled\s+on|the\s+plan\s+is"
    r"|decision:|instead\s+of)\b", re.IGNORECASE)
_OPEN = re.compile(
    r"(?:\bTODO\b|\bFIXME\b|\bnext\s+steps?\b|\bstill\s+(?:need|needs|to\s+do|failing|open)\b|\bremaining\b"
    r"|\bleft\s+to\s+do\b|\bfollow[-\s]?up\b|\bnot\s+yet\b|\bopen\s+question\b|\bblocked\s+(?:on|by)\b"
    r"|\bhaven'?t\s+(?:yet\s+)?(?:done|fixed|tested)\b|\blater\s*:)", re.IGNORECASE)
# Every cue above contains one of these: a text without any is skipped without running the patterns
# (most of a long conversation: 86 ms became 20 ms on a 2 MB transcript).
_CUE_WORDS = ("decid", "we'll", "we will", "going with", "chose", "chosen", "choosing", "let's", "lets ", "settled",
              "the plan", "decision", "instead", "todo", "fixme", "next step", "still", "remaining", "left to do",
              "follow", "not yet", "open question", "blocked", "haven't", "havent", "later")


def _texts(event: dict) -> Iterator[str]:
    """The user's typed prompt or the assistant's text blocks of one event (no tool output)."""
    if event.get("isSidechain") or event.get("isMeta") or event.get("isCompactSummary"):
        return
    if event.get("type") == "user":
        prompt = prompt_text(event)
        if prompt:
            yield prompt
    elif event.get("type") == "assistant":
        content = message_content(event)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                yield block["text"]


def _clip(text: str) -> str:
    text = " ".join(text.split()).lstrip("-*> ").strip()
    return text if len(text) <= ITEM_CHARS else text[: ITEM_CHARS - 1].rstrip() + "…"


class Checkpoint:
    """The decisions and open threads of a conversation, fed one event at a time: the newest MAX_ITEMS
    of each, oldest first, without repeats (a sentence said again keeps its place, unless MAX_ITEMS
    newer ones pushed it out first). Memory stays bounded however long the conversation."""

    def __init__(self, decided: Iterable[str] = (), still_open: Iterable[str] = ()) -> None:
        self.decided = dict.fromkeys(decided)
        self.still_open = dict.fromkeys(still_open)

    def add(self, event: dict) -> None:
        for text in _texts(event):
            lowered = text[:20000].lower()
            if not any(cue in lowered for cue in _CUE_WORDS):
                continue
            for sentence in SENTENCE_BREAK.split(text[:20000]):
                if len(sentence.split()) < 3:
                    continue
                if _OPEN.search(sentence):
                    _keep(self.still_open, _clip(sentence))
                elif _DECISION.search(sentence):
                    _keep(self.decided, _clip(sentence))

    def result(self) -> tuple[list[str], list[str]]:
        return list(self.decided), list(self.still_open)


def _keep(items: dict[str, None], item: str) -> None:
    if item not in items:
        items[item] = None
        if len(items) > MAX_ITEMS:
            del items[next(iter(items))]


def decisions_and_open_threads(events: Iterable[dict]) -> tuple[list[str], list[str]]:
    """(decisions, open threads): the newest MAX_ITEMS of each, oldest first, without repeats."""
    checkpoint = Checkpoint()
    for event in events:
        checkpoint.add(event)
    return checkpoint.result()
