"""Parse a markdown note (YAML frontmatter + body) into the brain's data model.

A file with malformed YAML is still a note: we keep its body, record the error for
`pinky doctor`, and never let one bad file abort a reindex.

Every pattern here runs in time linear in the text (a note is parsed while other processes may
wait for it): a match can only start where a token starts (a look-behind), and repeats that can
fail are possessive, so no long run of dashes, letters or brackets makes the engine retry each
position. YAML is loaded with its alias expansion bounded (`_check_expansion`).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from pinky.base.layout import ENTRY_TYPES, folder_type
from pinky.base.shown import plain
from pinky.text.chunking import heading
from pinky.text.linkrefs import LinkRef, body_links, frontmatter_line, typed_links

_FENCE_LINE = re.compile(r"^-{3,}\s*$", re.MULTILINE)
# `src/db/pool.py` (two or more parts joined by `/`) or `pool.py`. Each alternative starts only where
# its token starts (the look-behinds): `[\w.-]+` from every position of a 100,000-character token
# was quadratic (163 s for one save).
_PATH_LIKE = re.compile(r"(?<![\w.-])[\w.-]++(?:/[\w.-]++)+|(?<![\w-])[\w-]++\.[A-Za-z0-9]{1,10}\b")
_SEPARATORS = re.compile(r"[-_]+")  # of the words of a file name
# Aliases may repeat a value, never blow a frontmatter up: a 750-byte "billion laughs" took 37 s and
# 1.87 GB. Values after expansion (counting a scalar's characters) may be at most this, or ten
# times the frontmatter's own size; and nesting at most this deep.
MAX_YAML_EXPANSION = 20_000
MAX_YAML_DEPTH = 64


@dataclass(frozen=True)
class Document:
    """One markdown note, parsed. `path` is relative to its root and uses '/'."""

    path: str
    title: str
    type: str
    project: str | None
    tags: tuple[str, ...]
    created: str | None
    last_verified: str | None
    files: tuple[str, ...]
    links: tuple[str, ...]
    body: str
    body_line: int
    content_hash: str
    meta: dict[str, Any] = field(default_factory=dict)
    parse_error: str | None = None
    link_refs: tuple[LinkRef, ...] = ()  # every link with its kind and line: body, `links:`, `files:`


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def normalize_value(value: Any) -> Any:
    """YAML turns `2025-10-24` into a date and `yes` into True; give them back as strings."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return {str(k): normalize_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [normalize_value(v) for v in value]
    return value


def _string_list(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else [value]
    seen: dict[str, None] = {}
    for item in items:
        text = plain(str(item).strip())  # tags, files: names, one line each
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = plain(str(value).strip())  # a title, project, date: one line, shown as it is written
    return text or None


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, int, str | None]:
    """Return (metadata, body, body_start_line, error). Line numbers are 1-based. A byte order mark
    before the frontmatter is skipped (an editor's UTF-8 BOM; the body never starts with it)."""
    text = text.removeprefix("\ufeff")
    if not _FENCE_LINE.match(text):
        return {}, text, 1, None
    parts = _FENCE_LINE.split(text, 2)
    if len(parts) < 3:
        return {}, text, 1, "frontmatter opened with '---' but never closed"
    raw, body = parts[1], parts[2]
    offset = len(text) - len(body)
    line = text.count("\n", 0, offset) + 1
    if body.startswith("\n"):
        body, line = body[1:], line + 1
    import yaml

    try:
        loaded = yaml.load(raw, Loader=_bounded_loader())  # noqa: S506 - a SafeLoader underneath
    except Exception as exc:  # yaml.YAMLError and friends: report, keep the body
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {}, body, line, f"malformed YAML frontmatter: {first}"
    if loaded is None:
        return {}, body, line, None
    if not isinstance(loaded, dict):
        return {}, body, line, "frontmatter is not a key: value mapping"
    return {str(k): normalize_value(v) for k, v in loaded.items()}, body, line, None


@functools.cache
def _bounded_loader() -> type:
    """PyYAML's safe loader (libyaml's when present) that checks the document before building it."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class BoundedLoader(base):  # type: ignore[valid-type,misc]
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.source_size = len(stream)

        def get_single_data(self) -> Any:
            node = self.get_single_node()
            if node is None:
                return None
            _check_expansion(node, self.source_size)
            return self.construct_document(node)

    return BoundedLoader


def _check_expansion(root: Any, size: int) -> None:
    """Refuse a YAML node graph whose aliases would expand it past the limits, or that holds itself.

    Linear in the distinct nodes: the expanded size of every node is computed once."""
    import yaml

    limit = max(MAX_YAML_EXPANSION, 10 * size)
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            on_path.discard(key)
            own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            sizes[key] = 1 + own + sum(sizes[id(child)] for child in children)
            if sizes[key] > limit:
                raise yaml.YAMLError(f"its aliases expand it past {limit:,} values and characters "
                                     "(an alias bomb?); refused")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise yaml.YAMLError("an alias refers to a value that contains it (a recursive alias); refused")
        if len(on_path) >= MAX_YAML_DEPTH:
            raise yaml.YAMLError(f"values nested more than {MAX_YAML_DEPTH} deep; refused")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children)


def _children(node: Any) -> list[Any]:
    value = node.value
    if not isinstance(value, list):
        return []  # a scalar
    return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]


def render(meta: dict[str, Any], body: str) -> str:
    """A note's text: YAML frontmatter in the order given, a blank line, the body (one trailing newline)."""
    import frontmatter
    from frontmatter.default_handlers import YAMLHandler

    post = frontmatter.Post(body.rstrip())
    post.metadata.update(meta)  # not Post(**meta): a key named `content` or `handler` would collide
    return frontmatter.dumps(post, handler=YAMLHandler(), Dumper=plain_dumper(), sort_keys=False,
                             default_flow_style=None, width=1000) + "\n"


@functools.cache
def plain_dumper() -> type:
    """PyYAML's safe dumper without anchors: a value used twice (the same tag list) is written out twice,
    not as `&id001` / `*id001`, which people editing the note would not understand."""
    import yaml

    class PlainDumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

        def represent(self, data: Any) -> None:
            self._top = id(data)
            super().represent(data)

        def represent_mapping(self, tag: str, mapping: Any, flow_style: Any = None) -> Any:
            node = super().represent_mapping(tag, mapping, flow_style)
            if id(mapping) == getattr(self, "_top", None):  # the frontmatter itself is one key a line, always:
                node.flow_style = False  # default_flow_style=None wrote `{title: x, type: y}` when all were scalars
            return node

    return PlainDumper


def first_heading(body: str) -> str | None:
    in_fence = False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        found = None if in_fence else heading(raw)
        if found:
            return found[1].strip()
    return None


def _type_from(meta_type: Any, rel_path: str) -> tuple[str, str | None]:
    """The entry type (frontmatter, else the folder, else note) and a problem when `type:` is unknown."""
    given = _scalar(meta_type)
    wanted = (given or "").lower()
    if wanted in ENTRY_TYPES:
        return wanted, None
    kind = folder_type(rel_path) or "note"
    if given is None:
        return kind, None
    return kind, f"unknown type {given[:40]!r} (use one of {', '.join(ENTRY_TYPES)}); indexed as {kind}"


def _link_refs(text: str, meta: dict[str, Any], body: str, body_line: int,
               files: tuple[str, ...]) -> tuple[tuple[LinkRef, ...], list[str]]:
    """Typed `links:` first, then the body's links, then `files:` (knowledge -> code), with problems."""
    typed, problems = typed_links(meta.get("links"), frontmatter_line(text, "links")) if "links" in meta else ([], [])
    files_line = frontmatter_line(text, "files") if files else 1
    refs = typed + body_links(body, body_line) + [LinkRef("files", f, files_line) for f in files]
    return tuple(refs), problems


def file_names_mentioned(body: str) -> tuple[str, ...]:
    """Base names of the file paths a note's text names (`src/db/pool.py` -> `pool.py`).

    The hooks use them as a cheap pre-filter: a file whose name no note mentions and no note's
    `files:` lists has no linked knowledge, so its hook can answer without opening the index.
    """
    names = (m.group(0).rstrip(".").rsplit("/", 1)[-1] for m in _PATH_LIKE.finditer(body))
    return tuple(dict.fromkeys(n for n in names if n and len(n) <= 200))


def title_from_path(rel_path: str) -> str:
    stem = PurePosixPath(rel_path).stem
    return _SEPARATORS.sub(" ", stem).strip() or stem


def parse_text(text: str, rel_path: str, raw: bytes | None = None) -> Document:
    meta, body, body_line, error = split_frontmatter(text)
    title = _scalar(meta.get("title")) or first_heading(body) or title_from_path(rel_path)
    kind, type_problem = _type_from(meta.get("type"), rel_path)
    files = _string_list(meta.get("files"))
    refs, link_problems = _link_refs(text, meta, body, body_line, files)
    problem = "; ".join(p for p in (error or type_problem, *link_problems) if p) or None
    return Document(
        path=rel_path,
        title=plain(" ".join(title.split()))[:300],
        type=kind,
        project=_scalar(meta.get("project")),
        tags=_string_list(meta.get("tags")),
        created=_scalar(meta.get("created") or meta.get("date")),
        last_verified=_scalar(meta.get("last_verified")),
        files=files,
        links=tuple(dict.fromkeys(r.target for r in refs if r.kind in ("wiki", "md"))),
        body=body,
        body_line=body_line,
        content_hash=content_hash(raw if raw is not None else text.encode("utf-8")),
        meta=meta,
        parse_error=problem,
        link_refs=refs,
    )


BINARY_PROBE = 8192


def unreadable(raw: bytes) -> str | None:
    """Why a file named .md is not a note at all (binary, not UTF-8), or None when it is text."""
    if b"\0" in raw[:BINARY_PROBE]:
        return "binary file (it contains NUL bytes), not markdown"
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8"
    return None
