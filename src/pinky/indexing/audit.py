"""The index against the markdown it is derived from: find rows that damage changed without SQLite noticing.

SQLite's integrity_check proves that pages, b-trees and indexes agree with each other; it cannot tell that
a byte flipped inside a row. Flipping 8 bytes of a brain.db passed integrity_check 7 times in 8 while
the rows changed: 5 vectors, 1 full-text row, 1 chunk text no longer UTF-8. Since every row is derived
from a file, `audit` derives each file's rows again and compares (an entry's title, body and hash; each
chunk's heading, text and hash), checks every vector (its size, finite, unit length as stored, and the
CRC-32 kept with it since it was stored: a flip in a low mantissa bit changes nothing else) and the
full-text index against the chunks (FTS5's own integrity-check), then rebuilds exactly what differs:
the entries by reading their files again, the vectors by embedding again, the full-text index from the
chunks. `pinky-brain doctor --full` runs it (healing.verify); it reads every note, so it takes seconds on a large brain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinky.indexing import indexer, note_rows
from pinky.indexing.index import Index
from pinky.indexing.sources import Skipped, parse_file, source_at
from pinky.store import entries as store_entries
from pinky.store import quality
from pinky.store import vectors as store_vectors
from pinky.store.connect import write_transaction

DIFFERED = "rows did not match the markdown"  # how verify(full=True) words what the audit rebuilt
NORM_TOLERANCE = 1e-4  # stored vectors are unit length to ~1e-7; a flipped byte moves most far past this


@dataclass
class Audit:
    """What the audit found damaged (and rebuilt): entries by display path, vectors by count."""

    entries: list[str] = field(default_factory=list)
    vectors: int = 0
    changed_vectors: int = 0  # well-formed, but no longer the vector stored (their checksum differs)
    second_stage: int = 0
    full_text: bool = False  # the full-text index disagreed with the chunks

    @property
    def damaged(self) -> bool:
        return bool(self.entries or self.vectors or self.changed_vectors or self.second_stage or self.full_text)

    def summary(self) -> str:
        parts = []
        if self.entries:
            parts.append(f"{len(self.entries)} entries differed from their files ({', '.join(self.entries[:5])}"
                         f"{', …' if len(self.entries) > 5 else ''})")
        if self.vectors:
            parts.append(f"{self.vectors} vectors were malformed")
        if self.changed_vectors:
            parts.append(f"{self.changed_vectors} vectors no longer matched the checksum stored with them")
        if self.second_stage:
            parts.append(f"{self.second_stage} second-stage vectors were malformed or no longer matched their "
                         "checksum")
        if self.full_text:
            parts.append("the full-text index disagreed with the chunks")
        return "; ".join(parts)


def audit(index: Index) -> Audit:
    """Compare the index with the files and rebuild what differs; the result says what was damaged."""
    index.follow()
    conn = index.conn
    found = Audit()
    chunks = store_entries.audited_chunks(conn)
    stale = [row for row in store_entries.audited_entries(conn) if _differs(index, row, chunks.get(row[0], []))]
    found.entries = [index.display_path(root, path) for _, root, path, *_ in stale]
    bad, changed, unsummed = _damaged_vectors(conn) if index.vectors_writable() else ([], [], [])
    found.vectors, found.changed_vectors = len(bad), len(changed)
    bad_quality, unsummed_quality = _damaged_quality(conn)
    found.second_stage = len(bad_quality)
    found.full_text = not store_entries.fts_matches_chunks(conn)
    if unsummed or unsummed_quality:
        with write_transaction(conn):  # stored before sums were: from now on they are checked
            store_vectors.record_sums(conn, unsummed)
            quality.record_sums(conn, unsummed_quality)
    if not found.damaged:
        return found
    with write_transaction(conn):
        store_entries.mark_for_reading(conn, [row[0] for row in stale])
        store_vectors.forget_vectors(conn, bad + changed)
        quality.forget(conn, bad_quality)
    indexer.reindex(index)  # reads the marked files again and embeds what lacks a vector
    with write_transaction(conn):
        store_entries.rebuild_fts(conn)  # replacing a damaged chunk removed its terms by the damaged text
    return found


def _text(raw: bytes | str | None) -> str | None:
    """Stored text as str; None when the bytes are not UTF-8 (damaged)."""
    if isinstance(raw, str) or raw is None:
        return raw
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _differs(index: Index, row: tuple[Any, ...], stored: list[tuple[int, bytes, bytes, str]]) -> bool:
    """Whether an entry's rows are not what its file gives today (a file gone or unreadable is the next
    reindex's business, not damage)."""
    _, root, rel, content_hash, title, body = row
    folder = index.config.roots().get(root)
    source = source_at(root, folder, rel, Path(folder) / rel) if folder else None
    if source is None or source.problem:
        return False
    try:
        doc = parse_file(source, index.config.max_note_bytes)
    except (OSError, Skipped):
        return False
    if (doc.content_hash, doc.title, doc.body) != (content_hash, _text(title), _text(body)):
        return True
    rows = note_rows.chunk_rows(doc, index.config.chunk_words, idents=False)
    wanted = [(c["ord"], c["heading"], c["text"], c["hash"]) for c in rows]
    return wanted != [(order, _text(heading), _text(text), digest) for order, heading, text, digest in stored]


def _damaged_vectors(conn: Any) -> tuple[list[int], list[int], list[int]]:
    """(malformed vectors, well-formed ones that differ from their checksum, sound ones stored before
    checksums were kept), by chunk id."""
    bad = _malformed_vectors(conn)
    changed, unsummed = store_vectors.damaged_vectors(conn)
    malformed = set(bad)
    return bad, [i for i in changed if i not in malformed], [i for i in unsummed if i not in malformed]


def _malformed_vectors(conn: Any) -> list[int]:
    """Chunks whose stored vector is not `dims` finite floats of unit length."""
    import numpy as np

    dims = int(store_vectors.get_meta(conn, "dims") or 0)
    bad = []
    for chunk_id, blob in store_vectors.all_vectors(conn):
        vector = np.frombuffer(blob, dtype=np.float32) if len(blob) == dims * 4 else None
        if vector is None or not np.isfinite(vector).all() or abs(float(np.linalg.norm(vector)) - 1) > NORM_TOLERANCE:
            bad.append(chunk_id)
    return bad


def _damaged_quality(conn: Any) -> tuple[list[int], list[int]]:
    """(second-stage vectors malformed or not matching their checksum, sound ones without a checksum yet)."""
    bad = _malformed_quality(conn)
    changed, unsummed = quality.damaged(conn)
    malformed = set(bad)
    return bad + [i for i in changed if i not in malformed], [i for i in unsummed if i not in malformed]


def _malformed_quality(conn: Any) -> list[int]:
    """Chunks whose second-stage vector is not DIMS bytes scaled to ±127 (as quality.quantize writes them;
    a flip in a smaller component goes unseen: the ranking it feeds is only the second stage)."""
    import numpy as np

    bad = []
    for chunk_id, blob in quality.all_vectors(conn):
        if len(blob) != quality.VECTOR_BYTES:
            bad.append(chunk_id)
            continue
        row = np.frombuffer(blob, dtype=np.int8).astype(np.int16)
        if int(np.abs(row).max()) not in (0, 127) or int(row.min()) == -128:
            bad.append(chunk_id)
    return bad
