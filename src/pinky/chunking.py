"""Split a markdown body into retrieval chunks along its structure.

Headings are the preferred breaks, then blank lines between paragraphs; a code fence is never
split, however long. Every chunk keeps its heading path and the 1-based file line it starts on,
so a hit can point the agent at the exact place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNKER_VERSION = "md-v1"
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
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


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    """Index one past the closing fence (or the end, for an unclosed fence)."""
    for i in range(start + 1, len(lines)):
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
        fence = _FENCE.match(line)
        heading = _HEADING.match(line)
        if fence:
            flush()
            end = _fence_end(lines, i, fence.group(1))
            blocks.append(_Block("code", "\n".join(lines[i:end]), first_line + i))
            i = end
            continue
        if heading:
            flush()
            blocks.append(_Block("heading", heading.group(2).strip(), first_line + i, len(heading.group(1))))
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
    line = block.line
    start_line = line
    for sentence in _sentences(block.text, target):
        if current and len(" ".join(current).split()) + len(sentence.split()) > target:
            pieces.append(_Block("para", " ".join(current), start_line))
            current, start_line = [], line
        current.append(sentence)
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
            path = [(lvl, t) for lvl, t in path if lvl < block.level] + [(block.level, block.text)]
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
