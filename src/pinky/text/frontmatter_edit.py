"""Edit a note's frontmatter in place: the fields that change, and not one other byte of the file.

`markdown.render` writes a whole note from a dict; used for an edit, it dropped the YAML comments,
requoted values, restyled lists, turned CRLF into LF and lost a BOM, so verifying one fact rewrote
the head of a hand-kept note (207 -> 163 bytes for a delete and restore). `rewrite` is what every
edit of an existing note calls instead (update, verify, a tag rename, link/unlink, a rename's typed
links, supersession, delete and restore). It cuts the frontmatter into its top-level keys, each with
the lines that carry its value, and compares each value with the one asked for:

- an unchanged key keeps its lines, and so do comments, blank lines, key order and the body;
- a changed single-line value keeps its key, spacing, quoting style (plain, '...' or "...") and
  trailing comment; a changed block list keeps the items that are still there and writes new ones at
  its indentation;
- a removed key loses its lines; a new key goes after the last key, written as `render` would; a
  frontmatter a note did not have is added, and removed again whole when its last key goes, so
  delete and restore give back the bytes that were deleted.

The result is read back and compared with what was asked: anything this editor cannot place exactly
(a key written twice, a flow list going on at the margin, a changed value that an alias refers to)
falls back to a full render, correct but restyled, as before.

Why not ruamel.yaml, the library that round-trips comments (benchmarks/bench_frontmatter_edit.py,
three fields changed in a 12-key note): it still reindented the block list and respaced `title:   "x"`
(163 of 341 bytes kept, against 226 here: the rest are the changed lines), took 10-20 ms an edit
against ~9 ms here and ~3 ms for a full render, loads in ~50 ms, and would be a new dependency. This
editor uses the PyYAML every write already loads; a tag rename over 625 notes took 14.8 s (21.7 s
before: the fsync and the index dominate). Like `markdown`, the hooks never import it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pinky.text.markdown import normalize_value, plain_dumper, render, split_frontmatter

BOM = "\ufeff"
_LINES = re.compile(r"[^\n]*\n|[^\n]+")  # lines with their ends; only "\n" ends one ("\r" stays in it)
_FENCE = re.compile(r"-{3,}\s*")  # the fence split_frontmatter looks for, as a whole line
# Each match starts where its run of blanks (or of key characters) starts: tried inside a long run,
# these patterns would scan the rest of it again at every offset.
_SEQUENCE_ITEM = re.compile(r"(?<![ \t])[ \t]*-(?:[ \t]|$)")
_COMMENT = re.compile(r"(?<![ \t])[ \t]+#")
_LINE_END = re.compile(r"\r?\n")
_KEY_COLON = re.compile(r":(?=[ \t]|$)")  # a colon that ends a mapping key
# `last_verified:` (no quoting or YAML)
_SIMPLE_KEY = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]*)[ \t]*:(?=[ \t\r\n]|$)")
_WIDE = 1_000_000  # no folding of long values


def rewrite(text: str, meta: dict[str, Any], body: str | None = None) -> str:
    """`text` (a whole note) with its frontmatter changed to `meta` and, when given, its body to `body`.

    Only what differs is written: see the module's docstring. `text` must have well-formed
    frontmatter or none (callers check `split_frontmatter`'s error first)."""
    bom = BOM if text.startswith(BOM) else ""
    source = text[len(bom):]
    old, old_body, _, error = split_frontmatter(source)
    if error:
        raise ValueError(f"cannot edit malformed frontmatter: {error}")
    eol = "\r\n" if source.split("\n", 1)[0].endswith("\r") else "\n"
    head = source[:len(source) - len(old_body)]
    new_body = old_body if body is None else body
    tail = old_body if new_body == old_body else _body_text(new_body, eol)
    edited = _edit_head(head, old, meta, eol)
    if edited is not None:
        if tail and edited and not edited.endswith("\n"):
            edited += eol
        result = edited + tail
        if _reads_as(result, meta, tail):
            return bom + result
    return bom + (render(meta, new_body) if meta else _body_text(new_body, eol))


def _body_text(body: str, eol: str) -> str:
    text = body.rstrip() + "\n"  # as render writes a body
    return _LINE_END.sub("\r\n", text) if eol == "\r\n" else text


def _reads_as(text: str, meta: dict[str, Any], body: str) -> bool:
    """`text` reads back as `meta` and `body` (blank space opening a body is the closing fence's to take)."""
    got, got_body, _, error = split_frontmatter(text)
    return (error is None and got_body.lstrip() == body.lstrip()
            and got == {str(k): normalize_value(v) for k, v in meta.items()})


def _load(text: str) -> Any:
    """A piece of YAML, read as `split_frontmatter` reads a whole frontmatter (whose alias check the
    note passed already: a piece of it cannot expand further)."""
    import yaml

    try:
        return normalize_value(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))  # noqa: S506
    except Exception:  # yaml.YAMLError and friends: not a piece this editor understands
        return _UNREADABLE


_UNREADABLE = object()


# --- the frontmatter's pieces ----------------------------------------------------------------------------


class _Piece:
    """A top-level key with the lines of its value (`key` set), or lines between keys (blank, comments)."""

    def __init__(self, key: str | None, lines: list[str]) -> None:
        self.key = key
        self.lines = lines


def _pieces(lines: list[str], old: dict[str, Any]) -> list[_Piece] | None:
    """The frontmatter's lines as pieces; None when a line fits nowhere this editor understands."""
    pieces: list[_Piece] = []
    held: list[str] = []  # blank and comment lines: the key's only if its value goes on after them
    for line in lines:
        content = line.rstrip("\r\n")
        stripped = content.strip()
        if not stripped or stripped.startswith("#"):
            held.append(line)
        elif content[:1] in (" ", "\t") or _SEQUENCE_ITEM.match(content):
            if not pieces or pieces[-1].key is None:
                return None
            pieces[-1].lines += [*held, line]
            held = []
        else:
            if held:
                pieces.append(_Piece(None, held))
                held = []
            pieces.append(_Piece("", [line]))
    if held:
        pieces.append(_Piece(None, held))
    for piece in pieces:
        simple = _SIMPLE_KEY.match(piece.lines[0]) if piece.key is not None else None
        if simple and simple[1] in old:
            piece.key = simple[1]
        elif piece.key is not None:
            loaded = _load("".join(piece.lines))
            if not isinstance(loaded, dict) or len(loaded) != 1:
                return None
            piece.key = str(next(iter(loaded)))
    return pieces


def _edit_head(head: str, old: dict[str, Any], meta: dict[str, Any], eol: str) -> str | None:
    """The frontmatter block `head` (fences and the lines up to the body) edited to hold `meta`."""
    added = [key for key in meta if key not in old]
    if not head:  # no frontmatter yet
        new = [line for key in added for line in _entry_lines(key, meta[key], eol)]
        return "".join(["---" + eol, *new, "---" + eol]) if new else ""
    lines = _LINES.findall(head)
    close = next((n for n in range(1, len(lines)) if _FENCE.fullmatch(lines[n].rstrip("\n"))), None)
    pieces = None if close is None or not _FENCE.fullmatch(lines[0].rstrip("\n")) else _pieces(lines[1:close], old)
    keys = [piece.key for piece in pieces or () if piece.key is not None]
    if pieces is None or close is None or len(set(keys)) != len(keys) or set(keys) != set(old):
        return None
    out: list[str] = []
    after_last_key = 0
    for piece in pieces:
        if piece.key is None:
            out += piece.lines
            continue
        if piece.key in meta:
            wanted = normalize_value(meta[piece.key])
            out += piece.lines if wanted == old[piece.key] else _changed(piece, meta[piece.key], wanted, eol)
        after_last_key = len(out)
    out[after_last_key:after_last_key] = [line for key in added for line in _entry_lines(key, meta[key], eol)]
    if not out and set(old) - set(meta):  # its last key went: the note had no frontmatter before
        return "".join(lines[close + 1:])
    return "".join([lines[0], *out, *lines[close:]])


# --- writing a changed value -------------------------------------------------------------------------------


def _entry_lines(key: str, value: Any, eol: str) -> list[str]:
    """`key: value` as render writes it: block at the top, nested lists and maps in flow style."""
    import yaml

    nested = isinstance(value, list | dict) and bool(value)
    text = yaml.dump({key: value}, Dumper=plain_dumper(), sort_keys=False, default_flow_style=None if nested else False,
                     width=_WIDE, allow_unicode=True)
    return [line + eol for line in text.split("\n")[:-1]]


def _changed(piece: _Piece, value: Any, wanted: Any, eol: str) -> list[str]:
    """The lines of a key whose value changed: its style kept where the new value allows it."""
    first = piece.lines[0].rstrip("\r\n")
    colon = _key_end(first, piece.key or "")
    if colon is not None:
        rest = first[colon:]
        value_text = rest.lstrip(" \t")
        space = rest[:len(rest) - len(value_text)] or " "
        block_list = len(piece.lines) > 1 and (not value_text or value_text.startswith("#"))
        if block_list and isinstance(value, list) and value:
            items = _list_items(piece, value, wanted, eol)
            if items is not None:
                return items
        elif len(piece.lines) == 1 and value_text[:1] not in ("|", ">", "&", "*", "!"):
            comment = _trailing_comment(first, colon)
            old_text = first[len(first) - len(value_text):len(first) - len(comment)]
            for candidate in _candidates(value, wanted, old_text):
                line = first[:colon] + space + candidate + comment
                if "\n" not in candidate and _load(line) == {piece.key: wanted}:
                    return [line + eol]
    return _entry_lines(piece.key or "", value, eol)


def _key_end(line: str, key: str) -> int | None:
    """Where the key of a `key: value` line ends (just after its colon)."""
    simple = _SIMPLE_KEY.match(line)
    if simple and simple[1] == key:
        return simple.end()
    for found in _KEY_COLON.finditer(line):
        if _load(line[:found.end()]) == {key: None}:
            return found.end()
    return None


def _trailing_comment(line: str, start: int) -> str:
    """A `  # comment` after the value on `line` (with the space before it), or ''."""
    whole = _load(line)
    for found in _COMMENT.finditer(line, start):
        if _load(line[:found.start()]) == whole:
            return line[found.start():]
    return ""


def _candidates(value: Any, wanted: Any, old: str) -> list[str]:
    """Ways to write `value` on one line, the old value's style first (each is checked by reading it back):
    a string keeps its quotes; a flow list keeps the items still in it and its spacing."""
    ways = []
    if isinstance(value, str):
        ways.append({"'": "'" + value.replace("'", "''") + "'", '"': json.dumps(value, ensure_ascii=False)}
                    .get(old[:1], value))
    elif isinstance(value, list) and (split := _flow_split(old)) is not None:
        before, items, separator, after = split
        old_items = [(_load(f"[{item}]"), item.strip()) for item in items]
        if all(isinstance(parsed, list) and len(parsed) == 1 for parsed, _ in old_items):
            kept = _merge([(parsed[0], text) for parsed, text in old_items], value, wanted, _flow)
            ways.append(before + separator.join(kept) + after)
    return [*ways, _flow(value)]


def _merge(old: list[tuple[Any, Any]], value: list[Any], wanted: list[Any], new: Callable[[Any], Any]) -> list[Any]:
    """A list's new items, each the old item's text where it is still there (in order), else `new(item)`."""
    out, start = [], 0
    for item, want in zip(value, wanted, strict=True):
        match = next((n for n in range(start, len(old)) if old[n][0] == want), None)
        if match is None:
            out.append(new(item))
        else:
            out.append(old[match][1])
            start = match + 1
    return out


def _flow_split(text: str) -> tuple[str, list[str], str, str] | None:
    """A one-line flow list `[ a, {b: c} ]` as ('[ ', its items' texts, ', ', ' ]'); None when it is not one."""
    if not text.startswith("["):
        return None
    depth, quote, cuts, n = 0, "", [], 0
    while n < len(text):
        char = text[n]
        if quote:
            if char == "\\" and quote == '"':
                n += 1
            elif char == quote and text[n + 1:n + 2] == "'" == quote:
                n += 1
            elif char == quote:
                quote = ""
        elif char in "'\"" and text[:n].rstrip()[-1:] in ("[", "{", ",", ":"):
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                break
        elif char == "," and depth == 1:
            cuts.append(n)
        n += 1
    if depth or n != len(text) - 1:
        return None
    items = [text[a + 1:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    if len(items) == 1 and not items[0].strip():
        return "[", [], ", ", "]"
    separator = "," + items[1][:len(items[1]) - len(items[1].lstrip())] if len(items) > 1 else ", "
    return ("[" + items[0][:len(items[0]) - len(items[0].lstrip())], items, separator,
            items[-1][len(items[-1].rstrip()):] + "]")


def _flow(value: Any) -> str:
    """`value` in YAML's flow style (`[a, b]`, `{to: x, rel: y}`, `'2026-11-27'`); it may span lines."""
    import yaml

    text = yaml.dump([value], Dumper=plain_dumper(), sort_keys=False, default_flow_style=True, width=_WIDE,
                     allow_unicode=True)
    return text.strip()[1:-1]


def _list_items(piece: _Piece, value: list[Any], wanted: list[Any], eol: str) -> list[str] | None:
    """A block list's lines for its new items: items still there keep their lines, new ones are
    written at the list's indentation; None when the old list is not one this can split."""

    header: list[str] = [piece.lines[0]]
    items: list[tuple[str, list[str]]] = []
    for line in piece.lines[1:]:
        if _SEQUENCE_ITEM.match(line):
            indent = line[:len(line) - len(line.lstrip(" \t"))]
            if not items or indent == items[0][0]:
                items.append((indent, [line]))
                continue
        (items[-1][1] if items else header).append(line)
    if not items:
        return None
    indent = items[0][0]
    old = [_load("".join(text[len(indent):] if text.startswith(indent) else text for text in lines))
           for _, lines in items]
    if any(not isinstance(item, list) or len(item) != 1 for item in old):
        return None
    kept = _merge([(parsed[0], lines) for parsed, (_, lines) in zip(old, items, strict=True)], value, wanted,
                  lambda item: [f"{indent}- {_flow(item)}{eol}"])
    lines = [line for item_lines in kept for line in item_lines]
    return None if any(line.count("\n") > 1 for line in lines) else header + lines
