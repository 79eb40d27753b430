"""Every pinky-mcp tool result fits the agent's context: at most PINKY_MAX_RESULT_CHARS characters (40,000 by
default), its text and its structuredContent together. A result that would be larger is cut here, the one
place that does it for every tool, and says so in both parts.

- A tool that pages names its lists (or its one long text) in `Pages`: they are cut to the largest page
  that fits, the same number of items from each, and `page.next_offset` is the `offset` argument that gets
  the next page (the text says it in a sentence).
- What still does not fit (one huge item, a tool that cannot page) is shortened: the longest strings and
  lists are halved until it fits, the text block is cut at a line break, and `page.shortened` names what.

Pure functions over the JSON-ready dict of a result (no SDK import): `mcp_common.result` applies them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pinky.base.locations import ENV_MAX_RESULT_CHARS

NOTE_ROOM = 700  # characters kept for the sentence that says what was cut
CUT_MARK = "…[cut]"


@dataclass(frozen=True)
class Pages:
    """How a tool's result is paged: `fields` are the dotted paths of its lists (or of one string, paged by
    characters); `offset` is where this page starts (the tool's `offset` argument); `more` says the source
    held more than this page before any cut (a limit of the core); `tool` is the tool to call again with
    `offset`, or None when it cannot page, and `narrower` then says how to ask for less."""

    fields: tuple[str, ...]
    offset: int = 0
    more: bool = False
    tool: str | None = None
    narrower: str = ""


def size(text: str, data: Any) -> int:
    """Characters of a result: its text and its structuredContent as compact JSON."""
    return len(text) + len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def fit(render: Callable[[dict[str, Any]], str], data: dict[str, Any], limit: int,
        pages: Pages | None = None) -> tuple[str, dict[str, Any]]:
    """(text, structuredContent) of at most `limit` characters together, `render` making the text from the
    data: `data` as it is when it fits, else cut as the module docstring says, with a `page` entry and a
    closing sentence that says what was cut and how to get it."""
    budget = limit - NOTE_ROOM
    text = render(data)
    if size(text, data) <= budget and not (pages and pages.more):
        return text, data
    lengths = {f: len(value) for f in (pages.fields if pages else ()) if isinstance(value := _get(data, f), list | str)}
    kept = max(lengths.values(), default=0)
    if size(text, data) > budget and kept > 1:
        kept = _largest(lambda k: size(*_page(render, data, lengths, k)) <= budget, 1, kept)
        text, data = _page(render, data, lengths, kept)
    left_out = {f: (n, n - kept) for f, n in lengths.items() if n > kept}  # (before, left out)
    shortened: list[str] = []
    if size(text, data) > budget:
        text, data, shortened = _shorten(text, data, budget, set(lengths))
    next_offset = None
    if pages is not None and pages.tool and kept and (left_out or pages.more):
        next_offset = pages.offset + kept
    page = {"offset": pages.offset if pages else 0, "next_offset": next_offset,
            "left_out": {f: cut for f, (_, cut) in left_out.items()}, "shortened": shortened, "limit_chars": limit}
    note = _note(limit, left_out, shortened, pages, next_offset)
    return text.rstrip() + "\n\n" + note, {**data, "page": page}


NOUNS = {"diary": "diary lines", "new": "new entries", "updated": "updated entries", "pulled_paths": "pulled paths",
         "graph.nodes": "graph nodes", "graph.edges": "graph edges"}


def _note(limit: int, left_out: dict[str, tuple[int, int]], shortened: list[str], pages: Pages | None,
          next_offset: int | None) -> str:
    """One sentence for the model: what was cut, and how to get the rest."""
    parts = []
    for field, (before, cut) in left_out.items():
        noun = NOUNS.get(field, field.rsplit(".", 1)[-1])
        parts.append(f"{cut:,} of {before:,} characters of {noun}" if field in _texts(pages) else
                     f"{cut:,} of {before:,} {noun}")
    if shortened:
        parts.append("parts of " + ", ".join(shortened[:6]) + (", …" if len(shortened) > 6 else ""))
    text = (f"[Cut to fit the {limit:,}-character result limit ({ENV_MAX_RESULT_CHARS}): left out {'; '.join(parts)}."
            if parts else "[There is more than this page.")
    if next_offset is not None and pages is not None:
        text += f" Next page: call {pages.tool} again with the same arguments and offset={next_offset}."
    elif pages is not None and pages.narrower:
        text += f" {pages.narrower}"
    return text + "]"


def _texts(pages: Pages | None) -> set[str]:
    return set() if pages is None else {f for f in pages.fields if f.endswith(("body", "jsonl", "text"))}


def _largest(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The largest k in [low, high] for which fits(k) holds (fits is monotonic); `low` when none does."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _page(render: Callable[[dict[str, Any]], str], data: dict[str, Any], lengths: dict[str, int],
          k: int) -> tuple[str, dict[str, Any]]:
    cut = data
    for field, n in lengths.items():
        if n > k:
            cut = _set(cut, field, _get(cut, field)[:k])
    return render(cut), cut


def _get(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `data` with `path` set to `value` (only the dicts on the way are copied)."""
    key, _, rest = path.partition(".")
    return {**data, key: _set(data[key], rest, value) if rest else value}


def _shorten(text: str, data: dict[str, Any], budget: int,
             pageable: set[str]) -> tuple[str, dict[str, Any], list[str]]:
    """Halve the longest strings and lists (never a paged field: its page is as short as it goes) and cut
    the text block at a line break, until both fit `budget`; also the dotted paths shortened."""
    if len(text) > budget // 2:
        cut = text[: budget // 2]
        text = (cut[: cut.rfind("\n")] if "\n" in cut[budget // 4:] else cut) + "\n" + CUT_MARK
    shortened: list[str] = []
    data = json.loads(json.dumps(data))  # a private copy, shortened in place
    for _ in range(1000):
        over = size(text, data) - budget
        found = _longest(data, "", pageable) if over > 0 else None
        if found is None:
            break
        _, path, parent, key = found
        value = parent[key]
        if isinstance(value, str):
            keep = max(0, min(len(value) // 2, len(value) - over - len(CUT_MARK)))
            parent[key] = value[:keep] + CUT_MARK
        else:
            del value[len(value) // 2:]
        if path not in shortened:
            shortened.append(path)
    return text, data, shortened


def _longest(node: Any, path: str, pageable: set[str]) -> tuple[int, str, Any, Any] | None:
    """(weight, dotted path, container, key) of the largest string or list inside `node` worth shortening."""
    best = None
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        where = f"{path}.{key}" if path else str(key)
        weight = 0
        if where not in pageable and isinstance(value, str) and len(value) > 2 * len(CUT_MARK):
            weight = len(value)
        elif where not in pageable and isinstance(value, list) and len(value) > 1:
            weight = len(json.dumps(value, ensure_ascii=False))
        candidates = [(weight, where, node, key)] if weight else []
        if isinstance(value, dict | list):
            inner = _longest(value, where, pageable)
            candidates += [inner] if inner else []
        for candidate in candidates:
            if best is None or candidate[0] > best[0]:
                best = candidate
    return best
