"""What a session taught the brain: the notes its brain_save, brain_update and brain_delete calls wrote.

A diary line of tool counts (`mcp__plugin_pinky_pinky__brain_save×1`) says that something was saved, not
what: a week later the diary is read to learn what was learned. So each such call is remembered with the
title it was given, and when its result comes back without an error, the slug and path the server
answered (`Saved gotcha/x → documentation/gotcha/x.md, …`, `Updated …`, `Archived …`) complete it. A call
whose result failed wrote nothing and is left out. Stdlib only (the Stop hook).
"""

from __future__ import annotations

import json
import re

# Every host names an MCP tool its own way (Claude Code mcp__plugin_pinky_pinky__brain_save, Codex
# mcp__pinky__brain_save, Gemini mcp_pinky_brain_save): the part from `brain_` on is pinky's own name.
_BRAIN_TOOL = re.compile(r"(?:^|_)(brain_(?:save|update|delete))$")
_ANSWER = re.compile(r"^(Saved|Updated|Archived) (\S+) → (\S+?)[,;.]?(?:\s|$)")
VERBS = {"Saved": "saved", "Updated": "updated", "Archived": "archived"}
DONE = {"brain_save": "saved", "brain_update": "updated", "brain_delete": "archived"}
MAX_PENDING = 800  # calls whose result never came are forgotten past this many
MAX_TITLE = 80


def short_tool(name: str) -> str:
    """A tool's name as a reader knows it: `brain_save` for mcp__plugin_pinky_pinky__brain_save, the name
    after an MCP prefix (`mcp__<server>__`) for any other server's tool, built-in tools as they are."""
    found = _BRAIN_TOOL.search(name)
    if found:
        return found.group(1)
    if name.startswith("mcp__") and "__" in name[5:]:
        return name[5:].split("__", 1)[1] or name
    return name


class BrainCalls:
    """brain_save/update/delete calls of a stretch of a session, completed by their results."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, str]] = {}  # call id -> (what it does, the title or slug it was given)
        self.notes: dict[str, str] = {}  # "verb slug" -> its diary text, first-seen order

    def use(self, call_id: object, name: str, tool_input: dict) -> None:
        found = _BRAIN_TOOL.search(name)
        if not isinstance(call_id, str) or not found:
            return
        if len(self._pending) >= MAX_PENDING:
            self._pending.clear()
        given = tool_input.get("title") or tool_input.get("slug")
        self._pending[call_id] = (DONE[found.group(1)], " ".join(given.split())[:MAX_TITLE]
                                  if isinstance(given, str) else "")

    def waiting(self) -> bool:
        return bool(self._pending)

    def result(self, call_id: str, failed: bool, text: str | None) -> None:
        """A call's result: a success names the note it wrote; a failure wrote nothing."""
        pending = self._pending.pop(call_id, None)
        if pending is None or failed or not text:
            return
        answer = _ANSWER.match(text.strip())
        if answer:
            verb, slug, path = VERBS[answer.group(1)], answer.group(2), answer.group(3)
        else:  # a host that records the structured result (Codex: "Wall time: …\nOutput:\n{json}")
            named = _structured(text)
            if named is None:
                return
            verb, (slug, path) = pending[0], named
        given = pending[1]
        title = f" “{given}”" if given and given != slug else ""
        where = f" ({path})" if path and verb != "archived" else ""
        self.notes.setdefault(f"{verb} {slug}", f"{verb} {slug}{title}{where}")

    def summary(self) -> tuple[str, ...]:
        return tuple(self.notes.values())


def _structured(text: str) -> tuple[str, str] | None:
    """(slug, path) from a result recorded as the tool's structured output, a JSON object."""
    start = text.find("{")
    try:
        value = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("slug"), str):
        return None
    path = value.get("path")
    return value["slug"], path if isinstance(path, str) else ""
