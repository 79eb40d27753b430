"""Markdown roots -> SQLite index: scan, diff by stat and content hash, parse, chunk, embed.

Only changed files are re-parsed, and only chunks whose text is new to the embedding cache are
embedded, so a re-run over an unchanged tree does no embedding at all. Parsing happens outside
write transactions, so other readers and writers keep going while a big brain is indexed: a file
is parsed, chunked, hashed and its mentions found before `BEGIN IMMEDIATE`, and the transaction
only writes the rows. Which files are notes, and reading them safely, is `pinky.indexing.sources`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinky.base.declare import specified
from pinky.base.fileio import atomic_write, ensure_inside, file_lock, read_regular
from pinky.base.global_signature import Tally
from pinky.base.layout import entry_id
from pinky.base.locations import FILE_INDEX_HEADER, file_index_path
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.indexing.linkresolve import NoteLinks, keys_of, resolve_links, write_note_links
from pinky.indexing.note_rows import Prepared, prepare_document
from pinky.indexing.sources import (
    Skipped,
    SourceFile,
    file_hash,
    parse_file,
    scan,
    scan_folders,
    source_at,
    unreadable_prefix,
)
from pinky.indexing.vector_fill import Progress, embed_pending
from pinky.store import entries as store_entries
from pinky.store import link_queries, term_counts
from pinky.store import vectors as store_vectors
from pinky.store.connect import bulk_writes, write_transaction
from pinky.text.markdown import Document

log = logging.getLogger("pinky.indexing.indexer")

WRITE_BATCH = 1000
BULK_WRITE_BATCH = 10_000  # notes per transaction in a large rebuild (100,000 notes wrote 2.8 GB at 1,000, 1.3 at this)
BULK_FILES = 500  # from this many changed files on, write for volume (store.connect.bulk_writes)


@dataclass
class ReindexReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list, metadata=specified(
        doc="Files not indexed, and why (binary, not UTF-8)."))
    warnings: list[str] = field(default_factory=list, metadata=specified(
        doc="Files indexed despite a problem (malformed YAML, an unknown type)."))
    vectors: str = "ok"  # "ok" | "unavailable: <why>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added, "updated": self.updated, "removed": self.removed,
            "unchanged": self.unchanged, "chunks_embedded": self.chunks_embedded,
            "seconds": round(self.seconds, 3), "errors": self.errors, "warnings": self.warnings,
            "vectors": self.vectors,
        }


# --- one note's rows ---------------------------------------------------------------------------------


def _skip_message(index: Index, root: str, rel: str, reason: str) -> str:
    return f"{index.display_path(root, rel)}: skipped: {reason}"  # display_path is plain: one line


def store_document(conn: Any, prepared: Prepared, has_vec_table: bool, *, links: bool = True) -> None:
    """Upsert one prepared file (caller holds the write transaction); `links=False` leaves its links to the caller."""
    row = prepared.row
    if store_entries.slug_taken(conn, row["slug"], row["id"]):
        row = {**row, "slug": f"{row['slug']}-{row['id'][:4]}"}
    store_entries.upsert_entry(conn, row, prepared.links if links else None, prepared.mentions, prepared.chunks,
                               has_vec_table)


# --- bringing the index up to date ---------------------------------------------------------------------


def reindex(index: Index, *, full: bool = False, progress: Progress | None = None,
            embed: bool = True, only: str | None = None, tally: Tally | None = None) -> ReindexReport:
    """Bring the index up to date with every markdown root (`only`: that root alone, no code scan);
    `full` rebuilds it from scratch. `tally`: told the global root's folders and files as the scan meets them."""
    started = time.perf_counter()
    report = ReindexReport()
    if full:
        index.drop()
    db = index.db
    has_vec = index.prepare_vectors() if embed else index.vectors_writable()
    mine = (lambda kept: {k: v for k, v in kept.items() if k[0] == only}) if only else (lambda kept: kept)
    known, skipped = mine(store_entries.indexed_files(db.conn)), mine(store_entries.skipped_files(db.conn))
    pending = store_entries.links_pending(db.conn)  # stored by a reindex killed before it wrote their links
    roots = index.config.roots()
    changed, seen = _triage(index, scan({only: roots[only]} if only else roots, {"global": tally} if tally else None),
                            known, skipped, pending, report)
    removed = [known[k] for k in known.keys() - seen]
    gone = skipped.keys() - seen
    if gone:  # a write transaction only when there is something to write: a no-op reindex takes no lock
        with write_transaction(db.conn):
            for key in gone:
                store_entries.forget_skipped(db.conn, *key)
    bulk = len(changed) >= BULK_FILES
    with bulk_writes(db.conn, empty=not known) if bulk else contextlib.nullcontext():
        with term_counts.deferred(db.conn) if bulk else contextlib.nullcontext():
            _apply_changes(index, changed, removed, known, report, has_vec, progress,
                           BULK_WRITE_BATCH if bulk else WRITE_BATCH, force=pending)
        term_counts.catch_up(db.conn)
        if not only:
            scan_code(index)
        if report.added or report.updated or report.removed or not os.path.exists(_file_index(index)):
            refresh_file_index(index)
        if embed and has_vec:
            if store_vectors.vector_rows(db.conn) != store_entries.counts(db.conn)["vectors"]:
                with write_transaction(db.conn):
                    store_vectors.drop_orphan_vectors(db.conn)
            report.chunks_embedded = embed_pending(index, progress)
        elif not db.vec_available:
            report.vectors = f"unavailable: {db.vec_error}"
    report.seconds = time.perf_counter() - started
    return report


def reindex_folders(index: Index, root: str, moved: dict[str, bool], known_folders: set[str]) -> tuple[
        ReindexReport, list[str]]:
    """Bring the entries of `root` in the folders that changed up to date, no others read or stat'ed (`moved`,
    `known_folders`: sources.scan_folders'); returns the report and the listed folders' lines (for the record)."""
    report = ReindexReport()
    found, listed = scan_folders(root, index.root_dir(root), moved, known_folders)
    listed_rels = {line.split(" ", 2)[2] for line in listed}
    whole = tuple(rel for rel, replaced in moved.items() if replaced)
    known: dict[tuple[str, str], store_entries.IndexedFile] = {}
    for prefix in {*listed_rels, *whole}:  # a folder's own entries, or all below a replaced or vanished one
        known.update({k: v for k, v in store_entries.indexed_files_under(index.conn, root, prefix).items()
                      if k[1].startswith(whole) or k[1][: k[1].rfind("/") + 1] in listed_rels})
    skipped = {k: v for k, v in store_entries.skipped_files(index.conn).items()
               if k[0] == root and (k[1].startswith(whole) or k[1][: k[1].rfind("/") + 1] in listed_rels)}
    pending = store_entries.links_pending(index.conn)
    changed, seen = _triage(index, found, known, skipped, pending, report)
    gone = list(skipped.keys() - seen)
    if gone:
        with write_transaction(index.conn):
            for key in gone:
                store_entries.forget_skipped(index.conn, *key)
    _apply_changes(index, changed, [known[k] for k in known.keys() - seen], known, report, index.vectors_writable(),
                   None, force=pending)
    term_counts.catch_up(index.conn)
    if report.added or report.updated or report.removed:
        refresh_file_index(index)
    return report, listed


def _triage(index: Index, sources: Iterable[SourceFile], known: dict[tuple[str, str], store_entries.IndexedFile],
            skipped: dict[tuple[str, str], store_entries.SkippedFile], pending: set[tuple[str, str]],
            report: ReindexReport) -> tuple[list[SourceFile], set[tuple[str, str]]]:
    """(the files to read, every (root, path) seen) of a scan: a file whose stamp is the one recorded is unchanged."""
    seen: set[tuple[str, str]] = set()
    changed: list[SourceFile] = []
    unreadable: list[tuple[str, str]] = []
    for source in sources:
        key = (source.root, source.rel)
        seen.add(key)
        if (prefix := unreadable_prefix(source)) is not None:
            unreadable.append((source.root, prefix))
        old = known.get(key) or skipped.get(key)
        if old and old.stamp == source.stamp and key not in pending \
                and not (source.problem and key in known):  # indexed before its name was refused
            if key in skipped:  # still the same unreadable file: say so again, without reading it
                report.errors.append(_skip_message(index, *key, skipped[key].reason))
            else:
                report.unchanged += 1
        else:
            changed.append(source)
    return changed, seen | _kept_under_unreadable(known, unreadable)


def _kept_under_unreadable(known: dict[tuple[str, str], store_entries.IndexedFile],
                           prefixes: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """Entries inside a folder the scan could not list: not seen, but not gone either (a permission slip)."""
    return {key for key in known for root, prefix in prefixes if key[0] == root and key[1].startswith(prefix)}


def _apply_changes(index: Index, changed: list[SourceFile], removed: list[store_entries.IndexedFile],
                   known: dict[tuple[str, str], store_entries.IndexedFile], report: ReindexReport,
                   has_vec: bool, progress: Progress | None, batch: int = WRITE_BATCH,
                   force: Collection[tuple[str, str]] = ()) -> None:
    """Store the changed files a batch (one transaction) at a time, then every stored note's links in one
    more: a link may name a note of a later batch. The notes stored are listed in `link_pending` in their
    batch's transaction and leave it with their links, so a reindex killed in between leaves the list to
    the next one (`force`: notes to store again though their text did not change)."""
    conn = index.conn
    keys: set[str] = set()  # names of entries that came, went or changed: links naming them resolve again
    touched: list[str] = []
    written: dict[str, NoteLinks] = {}  # notes stored without their links: written resolved at the end
    if removed:
        with write_transaction(conn):
            keys |= keys_of(conn, [old.id for old in removed])
            for old in removed:
                store_entries.delete_entry(conn, old.id, has_vec)
            report.removed += len(removed)
    total = len(changed)
    for start in range(0, total, batch):
        step = (lambda n, at=start: progress("parse", at + n, total)) if progress else None
        parsed = _parse_batch(index, changed[start : start + batch], known, report, force, step)
        with write_transaction(conn):  # only rows are written here: everything slow was done above
            ids = [entry_id(source.root, source.rel) for source, doc, prepared in parsed
                   if prepared is not None or isinstance(doc, Skipped)]
            keys |= keys_of(conn, ids)
            touched += ids
            for source, doc, prepared in parsed:
                before = known.get((source.root, source.rel))
                if isinstance(doc, Skipped):
                    _store_skipped(index, source, str(doc), before, has_vec)
                else:
                    _store_changed(index, source, doc, prepared, before, report, has_vec)
                    if prepared is not None:
                        row = prepared.row
                        written[row["id"]] = (row["root"], row["path"], row["content_hash"], prepared.links)
            store_entries.mark_links_pending(conn, [eid for eid in ids if eid in written], True)
        if progress:
            progress("parse", min(start + batch, total), total)
    if keys or touched:  # once, after every batch: a link may name a note of a later batch
        with write_transaction(conn):
            write_note_links(conn, written, keys | keys_of(conn, touched))
            store_entries.mark_links_pending(conn, list(written), False)


Parsed = tuple[SourceFile, Document | Skipped, Prepared | None]


def _parse_batch(index: Index, batch: list[SourceFile], known: dict[tuple[str, str], store_entries.IndexedFile],
                 report: ReindexReport, force: Collection[tuple[str, str]],
                 step: Callable[[int], None] | None = None) -> list[Parsed]:
    """Parse, chunk and hash a batch outside any transaction: readers and writers keep going.
    `step(n)` before the n-th file: a bar moves while a big batch is read, not once at its end."""
    config = index.config
    parsed: list[Parsed] = []
    for number, source in enumerate(batch):
        if step:
            step(number)
        try:
            doc = parse_file(source, config.max_note_bytes)
        except Skipped as why:
            parsed.append((source, why, None))
            report.errors.append(_skip_message(index, source.root, source.rel, str(why)))
            continue
        except OSError as exc:
            report.errors.append(f"{source.path}: {exc.strerror or exc}")
            continue
        before = known.get((source.root, source.rel))
        unchanged = (before is not None and before.content_hash == doc.content_hash
                     and (source.root, source.rel) not in force)
        prepared = None if unchanged else prepare_document(source, doc, config.project, config.chunk_words)
        parsed.append((source, doc, prepared))
    return parsed


def _store_skipped(index: Index, source: SourceFile, reason: str, old: store_entries.IndexedFile | None,
                   has_vec: bool) -> None:
    """Record why the file is not indexed; an entry it used to be leaves the index (caller holds the transaction)."""
    if old is not None:
        store_entries.delete_entry(index.conn, old.id, has_vec)
    store_entries.record_skipped(index.conn, store_entries.SkippedFile(
        source.root, source.rel, source.mtime_ns, source.size, reason, source.ctime_ns, source.inode))


def _store_changed(index: Index, source: SourceFile, doc: Document, prepared: Prepared | None,
                   old: store_entries.IndexedFile | None, report: ReindexReport, has_vec: bool) -> None:
    store_entries.forget_skipped(index.conn, source.root, source.rel)
    if prepared is not None and old is None and store_entries.holds(index.conn, prepared.row["id"],
                                                                    prepared.row["content_hash"]):
        prepared = None  # new to this reindex, but a save stored these bytes meanwhile: its chunks keep their ids
    if prepared is None:  # the same bytes as indexed (seen in _parse_batch): only the stat changed
        store_entries.touch_entry(index.conn, entry_id(source.root, source.rel), source.stamp)
        report.unchanged += 1
        return
    store_document(index.conn, prepared, has_vec, links=False)
    if doc.parse_error:
        report.warnings.append(f"{index.display_path(source.root, source.rel)}: {doc.parse_error}")
    if old:
        report.updated += 1
    else:
        report.added += 1


def index_files(index: Index, paths: list[Path]) -> ReindexReport:
    """Index these markdown files (under either root) in a few transactions, without embedding: many
    notes rewritten at once (a rename's links) cost one write per batch instead of one per note."""
    report = ReindexReport()
    changed = []
    for path in paths:
        root, folder = index.locate(path.parent)
        rel = path.name if folder == "." else f"{folder}/{path.name}"
        source = source_at(root, index.root_dir(root), rel, path)
        if source is not None:
            changed.append(source)
    known = {(s.root, s.rel): old for s in changed
             if (old := store_entries.indexed_files_by_id(index.conn, entry_id(s.root, s.rel))) is not None}
    _apply_changes(index, changed, [], known, report, index.vectors_writable(), None)
    if report.added or report.updated:
        refresh_file_index(index)
    return report


def index_file(index: Index, path: Path, *, embed: bool = True) -> str | None:
    """Index one markdown file under either root right away; returns its slug (None if gone).

    Its folder must lie inside a root; the file itself follows the scan's rules (a special file or
    a link out of the root is recorded as skipped, never read)."""
    root, folder = index.locate(path.parent)
    rel = path.name if folder == "." else f"{folder}/{path.name}"
    conn = index.conn
    has_vec = index.prepare_vectors() if embed else index.vectors_writable()
    eid = entry_id(root, rel)
    linked_before = link_queries.linked_file_names(conn, eid)
    source = source_at(root, index.root_dir(root), rel, path)
    if source is None:
        with write_transaction(conn):
            keys = keys_of(conn, [eid])
            store_entries.delete_entry(conn, eid, has_vec)
            resolve_links(conn, keys=keys)
        if linked_before:
            refresh_file_index(index)
        return None
    try:
        doc = parse_file(source, index.config.max_note_bytes)
    except Skipped as why:
        with write_transaction(conn):
            keys = keys_of(conn, [eid])
            _store_skipped(index, source, str(why), store_entries.indexed_files_by_id(conn, eid), has_vec)
            resolve_links(conn, keys=keys)
        return None
    known = store_entries.entry_by(conn, "id", eid)
    if known is not None and known["content_hash"] == doc.content_hash:
        # Already indexed (e.g. a watcher reporting our own save): keep chunks and vectors.
        with write_transaction(conn):
            store_entries.touch_entry(conn, eid, source.stamp)
        return str(known["slug"])
    prepared = prepare_document(source, doc, index.config.project, index.config.chunk_words)
    with write_transaction(conn):
        keys = keys_of(conn, [eid])
        store_entries.forget_skipped(conn, root, rel)
        store_document(conn, prepared, has_vec)
        resolve_links(conn, sources=[eid], keys=keys | keys_of(conn, [eid]))
    if doc.parse_error:
        log.warning("%s: %s", index.display_path(root, rel), doc.parse_error)
    # The hooks' list of linked file names changes only if this entry's names did (a diary
    # line or an edited paragraph usually leaves them alone): skip the rewrite otherwise.
    if link_queries.linked_file_names(conn, eid) != linked_before or not os.path.exists(_file_index(index)):
        refresh_file_index(index)
    if embed and has_vec:
        embed_pending(index)
    row = store_entries.entry_by(conn, "id", eid)
    return str(row["slug"]) if row else None


def scan_code(index: Index) -> None:
    """Breadcrumbs in the project's code (inside an initialised project only)."""
    config = index.config
    if config.save_dir is None or config.project_root is None or not config.save_dir.is_dir():
        return
    from pinky.indexing.codescan import scan_code as scan

    try:
        scan(index.conn, config.project_root, [config.save_dir, config.global_dir, config.home],
             skip_prefix=config.db_path.name)
    except OSError as exc:  # unreadable folders: the notes matter more than the code links
        log.warning("scanning the code for breadcrumbs failed: %s", exc)


def _file_index(index: Index) -> str:
    return file_index_path(str(index.config.db_path))


def refresh_file_index(index: Index) -> None:
    """Rewrite `<db>-files`, the names of files some entry links to (the hooks' pre-filter).

    Under a lock, each writer reads the index as committed at that moment, so the last
    one to write always has every change. A derived file: when its name (or its lock's) is a link out
    of the index's folder, nothing is written and a warning says why."""
    path = _file_index(index)
    try:
        for name in (path, path + ".lock"):
            ensure_inside(name, os.path.dirname(path))
    except InvalidInput as exc:
        log.warning("%s", exc)
        return
    with file_lock(path + ".lock"):
        text = FILE_INDEX_HEADER + "\n" + "".join(f"{n}\n" for n in sorted(link_queries.linked_file_names(index.conn)))
        try:
            if read_regular(path).decode("utf-8", errors="replace") == text:
                return
        except OSError:
            pass
        atomic_write(path, text)


def drift(index: Index) -> dict[str, list[str]]:
    """Markdown files the index does not reflect yet (new, changed, or deleted)."""
    known = store_entries.indexed_files(index.conn)
    skipped = store_entries.skipped_files(index.conn)
    out: dict[str, list[str]] = {"new": [], "changed": [], "deleted": []}
    seen = set()
    for source in scan(index.config.roots()):
        key = (source.root, source.rel)
        seen.add(key)
        old = known.get(key)
        if source.problem or (key in skipped and skipped[key].stamp == source.stamp):
            if old is not None:  # a note turned into a link out, a FIFO: the next reindex drops it
                out["changed"].append(index.display_path(*key))
            continue  # never read, or unchanged since it was found not to be a note: the errors name it
        if old is None:
            out["new"].append(index.display_path(*key))
        elif old.stamp != source.stamp:
            try:
                digest = file_hash(source)
            except (OSError, Skipped):
                continue
            if digest != old.content_hash:
                out["changed"].append(index.display_path(*key))
    out["deleted"] = [index.display_path(*k) for k in sorted(known.keys() - seen)]
    return out
