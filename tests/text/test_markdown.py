"""Frontmatter parsing and normalisation: pure, no database."""

from __future__ import annotations

from pinky.text.markdown import first_heading, normalize_value, parse_text, split_frontmatter


def test_full_frontmatter_is_mapped_to_the_data_model() -> None:
    doc = parse_text(
        "---\ntitle: Pool hangs\ntype: Gotcha\ntags: [postgres, pool, postgres]\nproject: api\n"
        "created: 2026-11-20\nlast_verified: 2026-11-21\nfiles: [src/db.py]\n---\n# Heading\n\nBody text.\n",
        "gotcha/pool.md",
    )
    assert doc.title == "Pool hangs"
    assert doc.type == "gotcha"
    assert doc.tags == ("postgres", "pool")
    assert doc.project == "api"
    assert doc.created == "2026-11-20"  # a YAML date comes back as the same string
    assert doc.last_verified == "2026-11-21"
    assert doc.files == ("src/db.py",)
    assert doc.body.startswith("# Heading")
    assert doc.body_line == 10  # the line of "# Heading" in the file
    assert doc.parse_error is None


def test_yaml_scalars_are_normalised_back_to_strings() -> None:
    import datetime as dt

    assert normalize_value(dt.date(2025, 10, 24)) == "2025-10-24"
    assert normalize_value(True) == "true"
    assert normalize_value({"a": [dt.date(2025, 1, 2), False]}) == {"a": ["2025-01-02", "false"]}
    meta, _, _, _ = split_frontmatter("---\nflag: yes\nwhen: 2026-01-02 10:00:00\n---\nx")
    assert meta == {"flag": "true", "when": "2026-01-02T10:00:00"}


def test_title_falls_back_to_first_heading_then_file_name() -> None:
    assert parse_text("intro\n\n## Second level heading\ntext", "a.md").title == "Second level heading"
    assert parse_text("```\n# not a heading\n```\nplain", "notes/my_file-name.md").title == "my file name"
    assert first_heading("text only") is None


def test_malformed_yaml_is_indexed_as_a_plain_note_with_an_error() -> None:
    doc = parse_text("---\ntitle: [unclosed\n---\nStill searchable body.\n", "broken.md")
    assert doc.parse_error and "malformed YAML" in doc.parse_error
    assert doc.body.strip() == "Still searchable body."
    assert doc.title == "broken"
    assert doc.type == "note"


def test_unclosed_and_non_mapping_frontmatter() -> None:
    assert "never closed" in (parse_text("---\ntitle: x\nno end", "a.md").parse_error or "")
    assert "mapping" in (parse_text("---\n- a\n- b\n---\nbody", "a.md").parse_error or "")
    empty = parse_text("---\n---\nbody", "a.md")
    assert empty.parse_error is None and empty.body == "body"


def test_type_comes_from_frontmatter_else_folder_else_note() -> None:
    assert parse_text("x", "decision/use-sqlite.md").type == "decision"
    assert parse_text("x", "gotchas/y.md").type == "gotcha"
    assert parse_text("---\ntype: recipe\n---\nx", "misc/y.md").type == "note"


def test_tags_accept_a_comma_string_and_odd_values() -> None:
    assert parse_text("---\ntags: a, b ,, c\n---\nx", "n.md").tags == ("a", "b", "c")
    assert parse_text("---\ntags: 42\n---\nx", "n.md").tags == ("42",)
    assert parse_text("---\ntags:\n---\nx", "n.md").tags == ()


def test_links_are_extracted_from_wiki_and_markdown_links() -> None:
    doc = parse_text("See [[gotcha/pool]] and [other](../decision/db.md) and [web](https://x.org/a.md).", "n.md")
    assert doc.links == ("gotcha/pool", "../decision/db.md")


def test_content_hash_changes_with_content() -> None:
    assert parse_text("a", "n.md").content_hash != parse_text("b", "n.md").content_hash
    assert parse_text("a", "n.md").content_hash == parse_text("a", "other.md").content_hash


def test_render_writes_a_repeated_value_out_instead_of_a_yaml_alias() -> None:
    from pinky.text.markdown import render

    shared = ["db", "pool"]
    text = render({"title": "T", "tags": shared, "files": shared}, "Body.")
    assert "&id" not in text and "*id" not in text
    assert split_frontmatter(text)[0] == {"title": "T", "tags": shared, "files": shared}


def test_a_frontmatter_of_plain_values_is_written_one_key_a_line() -> None:
    """PyYAML's default flow style wrote `{title: x, type: y}` when no value was a list."""
    from pinky.text.markdown import render

    assert render({"title": "Plain", "type": "note"}, "Text.").startswith("---\ntitle: Plain\ntype: note\n---\n")
    assert "tags: [a, b]" in render({"title": "T", "tags": ["a", "b"]}, "x")  # lists keep their flow style
