"""The links a note writes, as data: `[[wikilinks]]`, relative `.md` links, typed frontmatter `links:`.

Pure functions (no database): the indexer stores what they return in the `link` table, and
`pinky link` / `pinky unlink` / `pinky mv` use them to edit a note's links.

    [[gotcha/pool-timeout]]  [[pool-timeout|the pool trap]]  [[Pool timeout#Fix]]   (Obsidian style)
    [the fix](../gotcha/pool-timeout.md#fix)
    links: [{to: decision/use-wal, rel: depends_on, since: 2026-01-10, until: 2026-11-01}]

Every pattern is linear in its input (notes are parsed while other processes may wait).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pinky.base.dates import parse_day

# `[[slug]]`, `[[slug|shown]]`, `[[slug#part]]`. Neither part holds `[`, so the scans that start at
# two `[[` never overlap: linear however many brackets a note has.
WIKI_LINK = re.compile(r"\[\[([^\[\]|#\n]{1,200}+)(?:[#|][^\[\]\n]*+)?\]\]")
# `](other.md)`, `](../x.md#part)`; a target holds no `]` (where the next link starts).
MD_LINK = re.compile(r"\]\(([^)\]\s]{1,300}?\.md)(?:#[^)\]\s]*+)?\)")
RELATIONS: tuple[str, ...] = ("relates", "depends_on", "supersedes", "contradicts", "caused_by", "fixed_by")
# Other relations are welcome (the list is extensible) as long as they read like these.
_RELATION = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_TYPED_LINKS = 200


class LinkRef(NamedTuple):
    """One link as a note writes it. `kind`: wiki, md, typed or files; `line`: 1-based in the file."""

    kind: str
    target: str
    line: int
    rel: str = "relates"
    since: str | None = None
    until: str | None = None


def body_links(body: str, first_line: int = 1) -> list[LinkRef]:
    """Wikilinks and relative .md links in a note's body, in order, each with the file line it is on.

    `first_line`: the file line the body starts on (after the frontmatter)."""
    found = [(m.start(), "wiki", m.group(1).strip()) for m in WIKI_LINK.finditer(body)]
    found += [(m.start(), "md", m.group(1)) for m in MD_LINK.finditer(body) if "://" not in m.group(1)]
    found.sort()
    refs: list[LinkRef] = []
    line, counted = first_line, 0
    for offset, kind, target in found:
        line += body.count("\n", counted, offset)
        counted = offset
        if target:
            refs.append(LinkRef(kind, target, line))
    return refs


def valid_relation(rel: Any) -> str | None:
    """The relation name, lowercased, or None when it cannot be one (`depends on` -> None)."""
    text = str(rel).strip().lower() if rel is not None else "relates"
    return text if _RELATION.fullmatch(text) else None


def typed_links(value: Any, line: int = 1) -> tuple[list[LinkRef], list[str]]:
    """Frontmatter `links:` as LinkRefs, and a problem for each item that is not a link.

    `line`: the file line of the `links:` key (every typed link reports it)."""
    if value in (None, "", []):
        return [], []
    items = value if isinstance(value, list) else [value]
    refs: list[LinkRef] = []
    problems: list[str] = []
    for n, item in enumerate(items[:MAX_TYPED_LINKS], start=1):
        ref, problem = _typed_link(item, line)
        if ref is not None:
            refs.append(ref)
        if problem:
            problems.append(f"links item {n}: {problem}")
    if len(items) > MAX_TYPED_LINKS:
        problems.append(f"links: only the first {MAX_TYPED_LINKS} are read")
    return refs, problems


def _typed_link(item: Any, line: int) -> tuple[LinkRef | None, str | None]:
    if isinstance(item, str):  # `links: [decision/wal]`: a plain `relates` link
        item = {"to": item}
    if not isinstance(item, dict) or not str(item.get("to") or "").strip():
        return None, "needs `to: <slug>`"
    rel = valid_relation(item.get("rel"))
    if rel is None:
        return None, f"rel {str(item.get('rel'))[:40]!r} is not a relation name (e.g. {', '.join(RELATIONS)})"
    dates: dict[str, str | None] = {}
    for key in ("since", "until"):
        raw = item.get(key)
        day = parse_day(raw) if raw not in (None, "") else None
        if raw not in (None, "") and day is None:
            return None, f"{key} {str(raw)[:40]!r} is not a date (YYYY-MM-DD)"
        dates[key] = day.isoformat() if day else None
    return LinkRef("typed", str(item["to"]).strip(), line, rel, dates["since"], dates["until"]), None


def frontmatter_line(text: str, key: str) -> int:
    """The 1-based line of `key:` at the top level of a note's frontmatter (1 when not found)."""
    end = text.find("\n---", 3) if text.startswith("---") else -1
    if end < 0:
        return 1
    at = text.find(f"\n{key}", 0, end)
    while at >= 0 and text[at + 1 + len(key) : at + 2 + len(key)].strip() not in (":", ""):
        at = text.find(f"\n{key}", at + 1, end)  # `linksfoo:` is another key
    return text.count("\n", 0, at + 1) + 1 if at >= 0 else 1


def target_key(target: str) -> str:
    """The name that decides which entries a link may resolve to: its last path part, without `.md`
    and `#heading`, lowercased (`../gotcha/Pool.md#fix` -> `pool`; a title stays whole)."""
    bare = target.strip().split("#", 1)[0].rstrip("/")
    bare = bare[:-3] if bare.lower().endswith(".md") else bare
    return bare.rsplit("/", 1)[-1].strip().lower()


def entry_keys(slug: str, path: str, title: str) -> set[str]:
    """Every target_key that may name this entry: its file stem, its slug's last part, its title."""
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    return {stem.lower(), slug.rsplit("/", 1)[-1].lower(), title.strip().lower()} - {""}


def code_path(written: str) -> str:
    """A `files:` entry as the code scan names files: relative to the project, '/' separated."""
    path = written.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def link_row(ref: LinkRef, target_id: str | None = None) -> tuple[str, str, str, str, str | None, int, str | None,
                                                                  str | None, str | None]:
    """A link as the link table stores it: kind, rel, target, target_key, target_file, line, since,
    until, target_id (the entry it resolves to, when the caller knows)."""
    target_file = code_path(ref.target) if ref.kind == "files" else None
    return (ref.kind, ref.rel, ref.target, target_key(ref.target), target_file, ref.line, ref.since, ref.until,
            target_id)


def valid_on(ref: LinkRef, day: str) -> bool:
    """Whether a link holds on `day` (ISO): from `since` (inclusive) until `until` (exclusive)."""
    return (ref.since is None or ref.since <= day) and (ref.until is None or day < ref.until)


def rewrite_body_target(line: str, kind: str, old: str, new: str) -> str:
    """One body line with the link `old` (as written) pointing at `new` instead; alias and heading kept."""
    if kind == "wiki":
        pattern = re.compile(r"\[\[(\s*)" + re.escape(old) + r"(\s*)(?=[#|\]])")
        return pattern.sub(lambda m: f"[[{m.group(1)}{new}{m.group(2)}", line)
    pattern = re.compile(r"\]\(" + re.escape(old) + r"(?=[#)])")
    return pattern.sub(lambda _m: f"]({new}", line)
