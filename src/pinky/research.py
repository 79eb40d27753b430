"""A research dossier on a topic for the calling agent to synthesise (brain_research, `pinky research`).

No model of ours runs: the dossier gathers what the brain holds about a topic — the best entries with
an excerpt of each, their links and backlinks, open contradictions that involve them, open knowledge
gaps whose words the topic holds, and diary lines that mention the topic or one of the entries — and
packs it, most important first, into a token budget (about 4 characters a token). What did not fit is
counted in `cut`, section by section, so the agent knows to look further (brain_get, brain_related).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pinky.base.validate import MAX_QUERY_CHARS, clean_text
from pinky.capture.diary import read_diary
from pinky.errors import InvalidInput, PinkyError
from pinky.graph import links
from pinky.hygiene import contradictions
from pinky.indexing.index import Index
from pinky.knowledge import entries
from pinky.search import gaps
from pinky.search import hybrid as search
from pinky.search.request import SearchRequest
from pinky.store import hygiene_queries

CHARS_PER_TOKEN = 4
DEFAULT_TOKENS = 2000
MIN_TOKENS, MAX_TOKENS = 200, 20_000
TOP_ENTRIES = 8
EXCERPT_CHARS = 1200  # of each entry's body
DIARY_DAYS = 90  # how far back diary lines are read
SECTIONS = ("entries", "contradictions", "links", "gaps", "diary")


def validate_budget(max_tokens: Any) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise InvalidInput(f"max_tokens must be a whole number from {MIN_TOKENS} to {MAX_TOKENS:,}, got {max_tokens!r}")
    return max_tokens


def dossier(index: Index, topic: str, *, max_tokens: int = DEFAULT_TOKENS) -> dict[str, Any]:
    """Everything the brain holds about `topic`, packed into `max_tokens` (see the module docstring)."""
    topic = clean_text(topic, "topic", MAX_QUERY_CHARS).strip()
    budget = validate_budget(max_tokens) * CHARS_PER_TOKEN
    found = search.search(index, SearchRequest(topic, limit=TOP_ENTRIES))
    top = [_entry(index, hit) for hit in found.hits]
    slugs = {item["slug"] for item in top}
    candidates = {"entries": top, "contradictions": _contradictions(index, slugs),
                  "links": _links(index, [item["slug"] for item in top], slugs), "gaps": _gaps(index, topic),
                  "diary": _diary(index, topic, top)}
    packed, cut, used = _pack(candidates, budget)
    notice = found.notice
    if any(cut.values()):
        left = ", ".join(f"{n} {'shortened excerpts' if name == 'excerpts' else name}" for name, n in cut.items() if n)
        notice = " ".join(filter(None, [notice, f"cut to fit {max_tokens:,} tokens: {left} "
                                                 "(read entries whole with brain_get, links with brain_related)"]))
    return {"topic": topic, "max_tokens": max_tokens, "used_tokens": -(-used // CHARS_PER_TOKEN), "mode": found.mode,
            **packed, "cut": cut, "notice": notice}


def _entry(index: Index, hit: search.Hit) -> dict[str, Any]:
    try:
        body = entries.get(index, hit.slug).body.strip()
    except PinkyError:
        body = hit.snippet
    excerpt = body if len(body) <= EXCERPT_CHARS else body[:EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"
    return {"slug": hit.slug, "title": hit.title, "type": hit.type, "path": hit.path, "score": hit.score,
            "tags": hit.tags, "stale": hit.stale, "excerpt": excerpt, "excerpt_cut": False}


def _links(index: Index, ordered: list[str], slugs: set[str]) -> list[dict[str, Any]]:
    """Each top entry's resolved links and backlinks, once per pair and relation."""
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for slug in ordered:
        about = links.related(index, slug)
        mine = about["title"]
        pairs = [(slug, mine, link["slug"], link["title"], link["rel"]) for link in about["links"] if link["slug"]]
        pairs += [(back["slug"], back["title"], slug, mine, back["rel"]) for back in about["backlinks"]]
        for source, source_title, target, target_title, rel in pairs:
            if (source, target, rel) not in seen:
                seen.add((source, target, rel))
                found.append({"from": source, "to": target, "rel": rel, "from_title": source_title,
                              "to_title": target_title, "both_in_top": source in slugs and target in slugs})
    return found


def _contradictions(index: Index, slugs: set[str]) -> list[dict[str, Any]]:
    if not slugs:
        return []
    # one check over all of them: each check reads every current entry and chunk vector; it compares
    # a tenth of a check's text at most, as the dossier is built with the knowledge base held
    compared = contradictions.pairs_to_compare(index, among=sorted(slugs)).compare(contradictions.MAX_CHECK_CHARS // 10)
    return [{key: pair[key] for key in ("a", "b", "reason", "differences")} for pair in compared["pairs"]]


def _gaps(index: Index, topic: str) -> list[dict[str, Any]]:
    """Open gaps (searches that found nothing good) made mostly of the topic's words."""
    words = gaps.word_hashes(topic)
    return [{"query": row["query"], "count": row["count"], "last_seen": row["last_seen"]}
            for row in hygiene_queries.open_gap_terms(index.conn) if gaps.answers(json.loads(row["terms"]), words)]


def _diary(index: Index, topic: str, top: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recent diary lines naming a top entry, or holding half the topic's words or more; newest first."""
    words = gaps.word_hashes(topic)
    since = dt.datetime.now() - dt.timedelta(days=DIARY_DAYS)
    names = [item["slug"] for item in top] + [item["title"].lower() for item in top]
    found = []
    for root in index.config.roots().values():
        for line in read_diary(root, since=since):
            text = line.text.lower()
            if any(name in text for name in names) or 2 * len(words & gaps.word_hashes(line.text)) >= len(words) > 0:
                found.append({"date": line.date_text, "time": f"{line.time.hour:02d}:{line.time.minute:02d}",
                              "kind": line.kind, "text": line.text})
    return sorted(found, key=lambda item: (item["date"], item["time"]), reverse=True)


def _pack(candidates: dict[str, list[dict[str, Any]]], budget: int) -> tuple[dict[str, list[Any]], dict[str, int], int]:
    """Take items section by section, in SECTIONS order, while they fit; count what does not."""
    packed: dict[str, list[Any]] = {name: [] for name in SECTIONS}
    cut = dict.fromkeys((*SECTIONS, "excerpts"), 0)  # excerpts: entries kept with a shortened excerpt
    used = 0
    for name in SECTIONS:
        for item in candidates[name]:
            size = len(json.dumps(item, ensure_ascii=False))
            if used + size > budget and name == "entries":
                item, size = _shortened(item, budget - used)
                cut["excerpts"] += size <= budget - used
            if used + size <= budget:
                packed[name].append(item)
                used += size
            else:
                cut[name] += 1
    return packed, cut, used


def _shortened(entry: dict[str, Any], room: int) -> tuple[dict[str, Any], int]:
    """The entry with its excerpt cut to fit `room` characters (or as short as it gets)."""
    bare = {**entry, "excerpt": "", "excerpt_cut": True}
    spare = room - len(json.dumps(bare, ensure_ascii=False)) - 2
    if spare > 0:
        bare["excerpt"] = entry["excerpt"][:spare].rsplit(" ", 1)[0] + " …"
    return bare, len(json.dumps(bare, ensure_ascii=False))


def dossier_text(found: dict[str, Any]) -> str:
    """The dossier as markdown, for a reader (the CLI) or an MCP client that shows text only."""
    lines = [f"# Research: {found['topic']}", f"({found['used_tokens']:,} of {found['max_tokens']:,} tokens)"]
    if found["notice"]:
        lines.append(f"({found['notice']})")
    if not found["entries"]:
        lines.append("\nNothing in the brain about this yet.")
    for item in found["entries"]:
        stale = " (stale: check it still holds)" if item["stale"] else ""
        lines += [f"\n## {item['title']}  [{item['type']}] {item['slug']}{stale}", f"{item['path']}", item["excerpt"]]
    sections = [("Contradictions", [f"- {c['a']} vs {c['b']} ({c['reason']})" for c in found["contradictions"]]),
                ("Links", [f"- {link['from']} --{link['rel']}--> {link['to']}" for link in found["links"]]),
                ("Open gaps (searches that found nothing good)",
                 [f"- {g['query'] or '(query text not logged)'} ×{g['count']}" for g in found["gaps"]]),
                ("Diary", [f"- {d['date']} {d['time']} {d['kind'] + ': ' if d['kind'] else ''}{d['text']}"
                           for d in found["diary"]])]
    for title, rows in sections:
        if rows:
            lines += [f"\n## {title}", *rows]
    return "\n".join(lines)
