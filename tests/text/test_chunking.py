"""Structural chunking: pure, no database."""

from __future__ import annotations

from pinky.text.chunking import chunk_markdown


def _words(n: int, word: str = "alpha") -> str:
    return " ".join([word] * n)


def test_short_body_is_one_chunk_starting_at_its_line() -> None:
    chunks = chunk_markdown("Just one paragraph.", first_line=7)
    assert [(c.text, c.line, c.heading) for c in chunks] == [("Just one paragraph.", 7, "")]


def test_headings_split_and_give_heading_paths_and_lines() -> None:
    body = f"# Top\n\n{_words(60)}\n\n## Sub\n\n{_words(60, 'beta')}\n\n# Other\n\n{_words(60, 'gamma')}\n"
    chunks = chunk_markdown(body, target_words=50, first_line=10)
    assert [c.heading for c in chunks] == ["Top", "Top > Sub", "Other"]
    assert [c.line for c in chunks] == [10, 14, 18]
    assert "beta" in chunks[1].text and "alpha" not in chunks[1].text


def test_code_fence_is_never_split_even_when_long() -> None:
    code = "```python\n" + "\n\n".join(f"x{i} = {i}  # " + _words(10) for i in range(40)) + "\n```"
    body = f"Intro.\n\n{code}\n\nAfter."
    chunks = chunk_markdown(body, target_words=30)
    fenced = [c for c in chunks if "```python" in c.text]
    assert len(fenced) == 1
    assert fenced[0].text.count("```") == 2
    assert "x39 = 39" in fenced[0].text


def test_heading_inside_a_fence_is_not_a_heading() -> None:
    body = f"{_words(80)}\n\n```\n# not a heading\n```\n\n{_words(80, 'beta')}"
    chunks = chunk_markdown(body, target_words=60)
    assert all(c.heading == "" for c in chunks)


def test_long_paragraph_is_cut_near_the_target() -> None:
    sentences = " ".join(f"Sentence number {i} says something." for i in range(100))
    chunks = chunk_markdown(sentences, target_words=50)
    assert len(chunks) >= 8
    assert all(len(c.text.split()) <= 60 for c in chunks)
    assert "Sentence number 99" in chunks[-1].text


def test_run_on_text_without_punctuation_is_cut_too() -> None:
    chunks = chunk_markdown(_words(400), target_words=100)
    assert len(chunks) == 4


def test_line_numbers_follow_paragraph_starts() -> None:
    body = "\n".join([_words(40), "", _words(40, "beta"), "", "", _words(40, "gamma")])
    chunks = chunk_markdown(body, target_words=45, first_line=5)
    assert [c.line for c in chunks] == [5, 7, 10]


def test_empty_body_gives_no_chunks() -> None:
    assert chunk_markdown("   \n\n") == []
