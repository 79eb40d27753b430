"""Markdown roots -> SQLite index: scan, diff by stat and content hash, parse, chunk, embed.

Only changed files are re-parsed, and only chunks whose text is new to the embedding cache are
embedded, so a re-run over an unchanged tree does no embedding at all.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinky.chunking import chunk_markdown
from pinky.markdown import Document, decode, file_names_mentioned, parse_text
from pinky.store import queries as q

log = logging.getLogger("pinky.indexer")

ARCHIVE_DIR = ".archive"
WRITE_BATCH = 200
EMBED_BATCH = 64
Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class SourceFile:
    root: str
    rel: str
    path: Path
    mtime_ns: int
    size: int


@dataclass
class ReindexReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    vectors: str = "ok"  # "ok" | "unavailable: <why>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added, "updated": self.updated, "removed": self.removed,
            "unchanged": self.unchanged, "chunks_embedded": self.chunks_embedded,
            "seconds": round(self.seconds, 3), "errors": self.errors, "vectors": self.vectors,
        }


def entry_id(root: str, rel: str) -> str:
    return hashlib.sha1(f"{root}:{rel}".encode()).hexdigest()[:16]


def slug_for(root: str, rel: str) -> str:
    """Short, stable, derived from the path: 'gotcha/pool-timeout'; global ones say so."""
    stem = rel[:-3] if rel.lower().endswith(".md") else rel
    return stem if root == "project" else f"global/{stem}"


def _skipped(name: str) -> bool:
    # Hidden files and folders (.archive, .git) and `_template.md`-style files are not knowledge.
    return name.startswith((".", "_"))


def scan(roots: dict[str, Path]) -> Iterator[SourceFile]:
    """Every indexable .md file under each root, with its stat."""
    for root_name, root in roots.items():
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
            for name in sorted(filenames):
                if _skipped(name) or not name.lower().endswith(".md"):
                    continue
                path = Path(dirpath) / name
                try:
                    stat = path.stat()
                except OSError:
                    continue
                rel = path.relative_to(root).as_posix()
                yield SourceFile(root_name, rel, path, stat.st_mtime_ns, stat.st_size)


def parse_file(source: SourceFile) -> tuple[Document, bytes]:
    raw = source.path.read_bytes()
    text, decode_error = decode(raw)
    doc = parse_text(text, source.rel, raw)
    if decode_error and not doc.parse_error:
        doc = Document(**{**doc.__dict__, "parse_error": decode_error})
    return doc, raw


def scope_for(root: str, doc: Document, default_project: str) -> tuple[str, str | None]:
    if root == "global":
        return "global", doc.project
    project = doc.project or default_project
    return f"project:{project}", project


def entry_row(source: SourceFile, doc: Document, slug: str, default_project: str) -> dict[str, Any]:
    scope, project = scope_for(source.root, doc, default_project)
    return {
        "id": entry_id(source.root, source.rel),
        "root": source.root,
        "path": source.rel,
        "slug": slug,
        "scope": scope,
        "type": doc.type,
        "project": project,
        "tags": json.dumps(list(doc.tags), ensure_ascii=False),
        "files": json.dumps(list(doc.files), ensure_ascii=False),
        "created": doc.created,
        "last_verified": doc.last_verified,
        "title": doc.title,
        "body": doc.body,
        "meta": json.dumps(doc.meta, ensure_ascii=False, default=str),
        "content_hash": doc.content_hash,
        "mtime_ns": source.mtime_ns,
        "size": source.size,
        "parse_error": doc.parse_error,
        "indexed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def chunk_rows(doc: Document, chunk_words: int) -> list[dict[str, Any]]:
    from pinky.embedding import embed_input

    rows = []
    chunks = chunk_markdown(doc.body, target_words=chunk_words, first_line=doc.body_line)
    if not chunks:  # a note with a title and no body is still findable by its title
        rows.append({"ord": 0, "heading": "", "line": doc.body_line, "text": doc.title,
                     "hash": _chunk_hash(embed_input(doc.title, "", doc.title))})
    for ord_, chunk in enumerate(chunks):
        text_for_vector = embed_input(doc.title, chunk.heading, chunk.text)
        rows.append({"ord": ord_, "heading": chunk.heading, "line": chunk.line, "text": chunk.text,
                     "hash": _chunk_hash(text_for_vector)})
    return rows


def _chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def store_document(conn: Any, source: SourceFile, doc: Document, default_project: str,
                   chunk_words: int, has_vec_table: bool) -> None:
    """Upsert one parsed file (caller holds the write transaction)."""
    eid = entry_id(source.root, source.rel)
    slug = slug_for(source.root, source.rel)
    if q.slug_taken(conn, slug, eid):
        slug = f"{slug}-{eid[:4]}"
    row = entry_row(source, doc, slug, default_project)
    # A diary names every file a session touched: that is history, not knowledge about the file.
    mentions = () if doc.type == "diary" else file_names_mentioned(doc.body)
    q.upsert_entry(conn, row, doc.links, mentions, chunk_rows(doc, chunk_words), has_vec_table)
