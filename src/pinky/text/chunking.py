"""Split a markdown body into retrieval chunks along its structure.

Headings are the preferred breaks, then blank lines between paragraphs; a code fence is never
split, however long. Every chunk keeps its heading path and the 1-based file line it starts on,
so a hit can point the agent at the exact place.

Linear in the body's length, whatever its shape: a note is chunked while the index waits for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNKER_VERSION = "md-v1"
# Of one heading in a chunk's heading path (every chunk under it stores the path: a 1 MB heading
# line followed by 3 MB of text would have stored it 3,000 times). The heading line itself stays
# whole in the text of its chunk.
MAX_HEADING_CHARS = 300
# `(.+?)[ \t#]*$` retried the tail at every character of a heading with a long run of spaces or `#`
# (quadratic); the closing `#`s are stripped in `heading` instead.
_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


@dataclass(frozen=True)
class Chunk:
    text: str
    heading: str  # "Section > Subsection", '' before the first heading
    line: int  # 1-based line in the file where the chunk starts


@dataclass(frozen=True)
class _Block:
    kind: str  # "heading" | "para" | "code"
    text: str
    line: int
    level: int = 0

    @property
    def words(self) -> int:
        return len(self.text.split())


def heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (`## Setup ##` -> (2, 'Setup')), else None.

    The text is what follows the `#`s and blanks, less any closing blanks and `#`s, but at least one
    character (what `(.+?)[ \t#]*$` captured)."""
    match = _HEADING.match(line)
    if match is None:
        return None
    text = match.group(2)
    return len(match.group(1)), text[: max(1, len(text.rstrip(" \t#")))]


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    """Index one past the closing fence (or the end, for an unclosed fence)."""
    for i in range(start + 1, len(lines)):
        if marker[0] not in lines[i]:  # most lines of a code block: no need to ask the pattern
            continue
        match = _FENCE.match(lines[i])
        if match and match.group(1)[0] == marker[0] and len(match.group(1)) >= len(marker):
            if not lines[i].strip()[len(match.group(1)):].strip():
                return i + 1
    return len(lines)


def _blocks(body: str, first_line: int) -> list[_Block]:
    lines = body.split("\n")
    blocks: list[_Block] = []
    para: list[str] = []
    para_start = 0

    def flush() -> None:
        if para and any(p.strip() for p in para):
            blocks.append(_Block("para", "\n".join(para).strip("\n"), first_line + para_start))
        para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line) if "`" in line or "~" in line else None
        title = heading(line) if not fence and "#" in line else None
        if fence:
            flush()
            end = _fence_end(lines, i, fence.group(1))
            blocks.append(_Block("code", "\n".join(lines[i:end]), first_line + i))
            i = end
            continue
        if title:
            flush()
            blocks.append(_Block("heading", title[1].strip(), first_line + i, title[0]))
        elif not line.strip():
            flush()
        else:
            if not para:
                para_start = i
            para.append(line)
        i += 1
    flush()
    return blocks


def _sentences(text: str, target: int) -> list[str]:
    """Sentences, with any single sentence longer than the target cut into word windows."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        tokens = sentence.split(" ")
        if len(sentence.split()) <= target:
            out.append(sentence)
            continue
        out.extend(" ".join(tokens[i : i + target]) for i in range(0, len(tokens), target))
    return out


def _split_long(block: _Block, target: int) -> list[_Block]:
    """A paragraph far over the target is cut at sentence ends (line numbers follow the cuts)."""
    if block.kind != "para" or block.words <= target * 1.5:
        return [block]
    pieces: list[_Block] = []
    current: list[str] = []
    words = 0  # in `current`, kept as it grows: counting the joined text again was quadratic
    line = block.line
    start_line = line
    for sentence in _sentences(block.text, target):
        count = len(sentence.split())
        if current and words + count > target:
            pieces.append(_Block("para", " ".join(current), start_line))
            current, words, start_line = [], 0, line
        current.append(sentence)
        words += count
        line += sentence.count("\n")
    if current:
        pieces.append(_Block("para", " ".join(current), start_line))
    return pieces


def chunk_markdown(body: str, *, target_words: int = 150, first_line: int = 1) -> list[Chunk]:
    """Chunks of about `target_words` words. `first_line` is the file line where `body` starts."""
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []
    parts: list[str] = []
    words = 0
    chunk_heading, chunk_line = "", first_line

    def emit() -> None:
        nonlocal parts, words
        text = "\n\n".join(parts).strip()
        if text:
            chunks.append(Chunk(text, chunk_heading, chunk_line))
        parts, words = [], 0

    for block in _blocks(body, first_line):
        if block.kind == "heading":
            # Break at a heading unless the open chunk is still too small to stand alone.
            if words >= target_words * 0.3:
                emit()
            path = [(lvl, t) for lvl, t in path if lvl < block.level] + [(block.level, block.text[:MAX_HEADING_CHARS])]
            if not parts:
                chunk_heading, chunk_line = " > ".join(t for _, t in path), block.line
            parts.append("#" * block.level + " " + block.text)
            words += block.words
            continue
        for piece in _split_long(block, target_words):
            if parts and words + piece.words > target_words and words >= target_words * 0.3:
                emit()
            if not parts:
                chunk_heading, chunk_line = " > ".join(t for _, t in path), piece.line
            parts.append(piece.text)
            words += piece.words
    emit()
    return chunks
