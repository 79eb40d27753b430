"""What a model reads of one chunk (`embed_input` for the embedders, `quality_input` for the second stage) and
the hash that keys a vector to that text (`text_hash`). Pure text, so the store (which keys kept vectors by it),
the indexer and the embedders reach one definition.
"""

from __future__ import annotations

import hashlib
import itertools
import re

# What the embedder sees of one chunk at most. Chunks are ~150 words (2,000 at most: ~15,000
# characters); only a huge code fence or a long unbroken token is longer, and USE spends ~40 ms per
# 1,000 characters of it (a 4 MB token: minutes). Its start says what it is about.
MAX_EMBED_CHARS = 20_000


def embed_input(title: str, heading: str, text: str) -> str:
    """What the embedder sees for a chunk: the note's title gives a short chunk its subject."""
    lead = title if not heading or heading == title else f"{title} — {heading}"
    return (f"{lead}\n\n{text[:MAX_EMBED_CHARS]}" if lead else text)[:MAX_EMBED_CHARS]


# The second stage's model (pinky.search.second_stage) reads 512 tokens at a time: ~350 English words.
QUALITY_WINDOW_WORDS = 350


def quality_input(title: str, heading: str, text: str, body: str, window: int = QUALITY_WINDOW_WORDS) -> str:
    """What the second-stage model sees for a chunk: the whole note when it fits the model's window (every
    chunk of a short note then shares one vector, made once), else the chunk as the first stage sees it."""
    if window and _words_at_most(body, window):
        return embed_input(title, "", body.strip())
    return embed_input(title, heading, text)


_NON_SPACE = re.compile(r"\S+")


def _words_at_most(text: str, limit: int) -> bool:
    """len(text.split()) <= limit, reading no further than word limit + 1: it runs for every chunk of a
    note, and a 4 MB note has thousands of chunks."""
    return sum(1 for _ in itertools.islice(_NON_SPACE.finditer(text), limit + 1)) <= limit


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
