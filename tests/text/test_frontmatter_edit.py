"""pinky.text.frontmatter_edit: a frontmatter edit writes the fields that change and leaves every other byte as it was.

Pure functions, no index: hypothesis builds notes with comments, blank lines, plain / single- / double-quoted
values, flow and block lists at any indentation, CRLF line ends and a BOM, then changes, removes or adds one
key; whatever surrounded that key must come back byte for byte, and the note must read back as asked."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinky.text.frontmatter_edit import rewrite
from pinky.text.markdown import normalize_value, split_frontmatter

KEYS = ("title", "type", "tags", "key", "links", "last_verified", "note", "x-y", "a_b", "files")
WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,12}( [A-Za-z0-9_.-]{1,8}){0,2}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=0, max_size=20)
SCALAR = st.one_of(WORD, TEXT, st.integers(-1000, 1000), st.dates().map(lambda d: d.isoformat()))
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=4),
                  st.lists(st.fixed_dictionaries({"to": WORD, "rel": WORD}), min_size=1, max_size=3))


def _plain_ok(text: str, flow: bool) -> bool:
    import yaml

    try:
        loaded = normalize_value(yaml.safe_load(f"k: [{text}]" if flow else f"k: {text}"))
    except yaml.YAMLError:
        return False
    return bool(loaded == {"k": [text] if flow else text})


@st.composite
def scalar_text(draw: st.DrawFn, value: object, flow: bool = False) -> str:
    """`value` written in one of YAML's one-line styles (those that can stand in a flow list, with `flow`)."""
    if not isinstance(value, str):
        return str(value)
    styles = ["single", "double"] + (["plain"] if value and _plain_ok(value, flow) else [])
    style = draw(st.sampled_from(styles))
    if style == "plain":
        return value
    return "'" + value.replace("'", "''") + "'" if style == "single" else json.dumps(value, ensure_ascii=False)


def _flow_item(draw: st.DrawFn, item: object) -> str:
    if isinstance(item, dict):
        return "{" + ", ".join(f"{k}: {draw(scalar_text(v, True))}" for k, v in item.items()) + "}"
    return draw(scalar_text(item, True))


@st.composite
def entry(draw: st.DrawFn, key: str, value: object, eol: str) -> list[str]:
    """The lines of `key: value`, in a style hypothesis picks, each ending in `eol`."""
    comment = draw(st.sampled_from(["", "  # a comment", "   # it's: odd, [really]"]))
    if isinstance(value, list) and value and draw(st.booleans()):  # a block list
        indent = draw(st.sampled_from(["", "  ", "    "]))
        items = [f"{indent}- {_flow_item(draw, item)}{draw(st.sampled_from(['', '  # item']))}{eol}"
                 for item in value]
        return [f"{key}:{comment}{eol}", *items]
    if isinstance(value, list):
        separator = draw(st.sampled_from([", ", ",", " , "]))
        text = "[" + separator.join(_flow_item(draw, item) for item in value) + "]"
    else:
        text = draw(scalar_text(value))
    return [f"{key}:{draw(st.sampled_from([' ', '   ']))}{text}{comment}{eol}"]


@st.composite
def notes(draw: st.DrawFn) -> tuple[str, dict[str, list[str]], list[str], str]:
    """(text, each key's lines, the keys in order, eol): a note with a styled frontmatter."""
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6, unique=True))
    lines = {key: draw(entry(key, draw(VALUE), eol)) for key in keys}
    between = st.lists(st.sampled_from(["", "# note kept by hand", "#", "  # indented comment"]), max_size=2)
    head = [line + eol for line in draw(between)]
    for key in keys:
        head += lines[key] + [line + eol for line in draw(between) if line.strip()]  # blank lines separate keys
    body = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\r"),
                        max_size=60)).replace("\n", eol)
    bom = draw(st.sampled_from(["", "\ufeff"]))
    text = bom + "---" + eol + "".join(head) + "---" + eol + draw(st.sampled_from(["", eol])) + body
    return text, lines, keys, eol


def _edited(text: str, change: dict[str, object], remove: tuple[str, ...] = ()) -> tuple[str, dict[str, object]]:
    meta = split_frontmatter(text)[0]
    meta.update(change)
    for key in remove:
        del meta[key]
    return rewrite(text, meta), meta


def _reads_back(text: str, meta: dict[str, object]) -> None:
    got = split_frontmatter(text)[0]
    assert got == {k: normalize_value(v) for k, v in meta.items()}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note=notes(), data=st.data())
def test_changing_one_key_leaves_every_other_byte(note: tuple[str, dict[str, list[str]], list[str], str],
                                                  data: st.DataObject) -> None:
    text, lines, keys, _ = note
    key = data.draw(st.sampled_from(keys))
    value = data.draw(VALUE)
    old_value = split_frontmatter(text)[0].get(key)
    result, meta = _edited(text, {key: value})
    _reads_back(result, meta)
    start = text.index("".join(lines[key]))
    before, after = text[:start], text[start + len("".join(lines[key])):]
    assert result.startswith(before) and result.endswith(after)
    if normalize_value(value) == old_value:
        assert result == text


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note=notes(), data=st.data())
def test_removing_a_key_takes_out_its_lines_only(note: tuple[str, dict[str, list[str]], list[str], str],
                                                  data: st.DataObject) -> None:
    text, lines, keys, eol = note
    key = data.draw(st.sampled_from(keys))
    result, meta = _edited(text, {}, remove=(key,))
    _reads_back(result, meta)
    expected = text.replace("".join(lines[key]), "", 1)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    if expected.startswith(f"{bom}---{eol}---{eol}"):  # its last line gone: the frontmatter goes whole
        expected = bom + expected[len(bom) + 2 * len(f"---{eol}"):]
    assert result == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note=notes(), value=VALUE, reason=TEXT)
def test_adding_keys_and_taking_them_out_again_gives_back_the_note(
        note: tuple[str, dict[str, list[str]], list[str], str], value: object, reason: str) -> None:
    """What delete and restore do with archived_at / archive_reason, and supersession with superseded_by."""
    text, lines, keys, eol = note
    added, meta = _edited(text, {"archived_at": "2026-11-27T10:15:00+00:00", "archive_reason": reason,
                                 "superseded_by": value})
    _reads_back(added, meta)
    assert added.startswith(text[:text.index("".join(lines[keys[-1]]))])  # after the last key
    assert eol == "\n" or "\n" not in added.replace("\r\n", "")  # a CRLF note gets CRLF lines
    assert _edited(added, {}, remove=("archived_at", "archive_reason", "superseded_by"))[0] == text


@pytest.mark.parametrize("text", ["# Title\n\nno frontmatter\n", "\ufeffplain\r\nbody\r\n", "\n\nstarts blank\n", ""])
def test_a_note_without_frontmatter_gets_one_and_loses_it_whole(text: str) -> None:
    added, meta = _edited(text, {"archived_at": "2026-11-27T10:15:00+00:00", "archive_reason": "gone"})
    _reads_back(added, meta)
    assert added.lstrip("\ufeff").startswith("---")
    assert _edited(added, {}, remove=("archived_at", "archive_reason"))[0] == text


def test_what_cannot_be_placed_exactly_falls_back_to_a_full_render() -> None:
    text = "---\n# c\ntags: [a,\nb]\ntitle: t\n---\nbody\n"  # a flow list going on at the margin
    result, meta = _edited(text, {"title": "new"})
    _reads_back(result, meta)
    assert result == "---\ntags: [a, b]\ntitle: new\n---\n\nbody\n"


def test_an_alias_between_keys_survives_an_edit_of_another_key() -> None:
    text = "---\nbase: &b {rel: x}\nlinks: [*b]\ntitle: t\n---\nbody\n"
    result, meta = _edited(text, {"title": "new"})
    _reads_back(result, meta)
    assert result == text.replace("title: t", "title: new")


def test_an_unchanged_meta_returns_the_text_itself_and_a_new_body_keeps_the_head() -> None:
    text = "---\r\ntitle: 'x'  # c\r\n---\r\n\r\nold  \r\n"
    assert rewrite(text, split_frontmatter(text)[0]) == text
    new = rewrite(text, split_frontmatter(text)[0], "new\nbody")
    assert new == "---\r\ntitle: 'x'  # c\r\n---\r\n\r\nnew\r\nbody\r\n"
