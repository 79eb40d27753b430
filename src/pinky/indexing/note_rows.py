"""What one note becomes in the index, computed before any write transaction: its entry row (`entry_row`, with
the scope it lands in), its chunk rows (`chunk_rows`, each keyed by the hash of what the embedder reads) and the
links and file names it mentions (`prepare_document`). The indexer writes them; the audit compares them."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pinky.base.layout import entry_id, slug_for
from pinky.indexing.sources import SourceFile
from pinky.text.chunking import chunk_markdown
from pinky.text.lexical import identifier_parts
from pinky.text.linkrefs import LinkRef
from pinky.text.markdown import Document, file_names_mentioned
from pinky.text.model_input import embed_input


def scope_for(root: str, doc: Document, default_project: str | None) -> tuple[str, str | None]:
    if root == "global":
        return "global", doc.project
    project = doc.project or default_project or "default"
    return f"project:{project}", project


def entry_row(source: SourceFile, doc: Document, slug: str, default_project: str | None) -> dict[str, Any]:
    scope, project = scope_for(source.root, doc, default_project)
    return {
        "id": entry_id(source.root, source.rel), "root": source.root, "path": source.rel, "slug": slug,
        "scope": scope, "type": doc.type, "project": project,
        "tags": json.dumps(list(doc.tags), ensure_ascii=False),
        "files": json.dumps(list(doc.files), ensure_ascii=False),
        "created": doc.created, "last_verified": doc.last_verified, "title": doc.title, "body": doc.body,
        "meta": json.dumps(doc.meta, ensure_ascii=False, default=str), "content_hash": doc.content_hash,
        "mtime_ns": source.mtime_ns, "size": source.size, "ctime_ns": source.ctime_ns, "inode": source.inode,
        "parse_error": doc.parse_error,
        "indexed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def chunk_rows(doc: Document, chunk_words: int, *, idents: bool = True) -> list[dict[str, Any]]:
    """The chunk rows of a note; `idents=False` leaves out their identifier parts (most of the time spent)."""
    rows = []
    chunks = chunk_markdown(doc.body, target_words=chunk_words, first_line=doc.body_line)
    if not chunks:  # a note with a title and no body is still findable by its title
        rows.append({"ord": 0, "heading": "", "line": doc.body_line, "text": doc.title,
                     "hash": _chunk_hash(embed_input(doc.title, "", doc.title)),
                     "idents": identifier_parts([doc.title]) if idents else ""})
    for ord_, chunk in enumerate(chunks):
        text_for_vector = embed_input(doc.title, chunk.heading, chunk.text)
        rows.append({"ord": ord_, "heading": chunk.heading, "line": chunk.line, "text": chunk.text,
                     "hash": _chunk_hash(text_for_vector),
                     "idents": identifier_parts([doc.title, chunk.heading, chunk.text]) if idents else ""})
    return rows


def _chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class Prepared:
    """One parsed note's rows, computed outside the write transaction (chunking and hashing a big
    note takes time; other processes must not wait for it holding the lock)."""

    row: dict[str, Any]
    links: tuple[LinkRef, ...]
    mentions: tuple[str, ...]
    chunks: list[dict[str, Any]]


def prepare_document(source: SourceFile, doc: Document, default_project: str | None,
                     chunk_words: int) -> Prepared:
    row = entry_row(source, doc, slug_for(source.root, source.rel), default_project)
    # A diary names every file a session touched: that is history, not knowledge about the file.
    mentions = () if doc.type == "diary" else file_names_mentioned(doc.body)
    return Prepared(row, doc.link_refs, mentions, chunk_rows(doc, chunk_words))
