"""KnowledgeBase: the one API every front end (CLI, MCP server, hooks, sync) calls.

Markdown under the two roots is the truth; brain.db is a derived index that this class creates,
migrates, repairs and rebuilds as needed. Writes go to markdown first (atomically), then to the index.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pinky import notes
from pinky.config import ENTRY_TYPES, Config, load_config
from pinky.errors import Conflict, IndexUnavailable, InvalidInput, NotFound, PinkyError
from pinky.indexer import (
    ARCHIVE_DIR,
    EMBED_BATCH,
    WRITE_BATCH,
    Progress,
    ReindexReport,
    SourceFile,
    entry_id,
    parse_file,
    scan,
    slug_for,
    store_document,
)
from pinky.markdown import content_hash, render, split_frontmatter
from pinky.search import (
    gated_weight,
    informative_terms,
    match_expression,
    query_terms,
    rrf,
    score_fusion,
    snippet,
    zscore_fusion,
)
from pinky.store import Database, open_database
from pinky.store import migrations as mig
from pinky.store import queries as q

log = logging.getLogger("pinky")

MAX_QUERY_CHARS = 2000
MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 100_000
MAX_TAGS = 32
MAX_TAG_CHARS = 100
SEARCH_MODES = ("hybrid", "bm25", "vector")
# Cosine similarity above which a new note most likely repeats an existing one (USE: paraphrases of
# one fact score ~0.8-0.95, notes on merely related topics ~0.4-0.7).
DUPLICATE_SIMILARITY = 0.8
# An entry no search has returned for this long (and not changed since) is reported as unused:
# knowledge nobody retrieves is a candidate for pruning (usage telemetry, plan §8.6).
UNUSED_DAYS = 180
FILE_INDEX_HEADER = "pinky: names of files linked to brain entries, v1"  # read by pinky.hooks.files


def file_index_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + "-files")


_CORRUPT_MARKERS = ("file is not a database", "malformed", "unsupported file format", "not a database")


@dataclass(frozen=True)
class Hit:
    slug: str
    path: str
    title: str
    type: str
    scope: str
    project: str | None
    tags: list[str]
    score: float
    snippet: str
    heading: str
    line: int
    last_verified: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    mode: str  # what actually ran: hybrid | bm25 | vector
    notice: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"hits": [h.as_dict() for h in self.hits], "mode": self.mode, "notice": self.notice}


@dataclass(frozen=True)
class Entry:
    slug: str
    path: str
    title: str
    type: str
    scope: str
    project: str | None
    tags: list[str]
    created: str | None
    last_verified: str | None
    files: list[str]
    body: str
    version: str
    meta: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | error
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _looks_like_an_index(path: Path) -> bool:
    """Only files that are (or are named like) a SQLite database are ever moved aside."""
    if path.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
        return True
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return True  # missing: nothing to protect
    return header in (b"", b"SQLite format 3\x00")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _clean_text(value: Any, name: str, limit: int, *, required: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    if required and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value


def _clean_title(value: Any) -> str:
    title = _clean_text(value, "title", MAX_TITLE_CHARS)
    if any(ord(c) < 32 for c in title):
        raise InvalidInput("title must be one line without control characters")
    return title.strip()


def validate_type(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in ENTRY_TYPES:
        raise InvalidInput(f"unknown type {value!r}; use one of: {', '.join(ENTRY_TYPES)}")
    return value.strip().lower()


def validate_tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput("tags must be a list of strings")
    if len(value) > MAX_TAGS:
        raise InvalidInput(f"{len(value)} tags given; at most {MAX_TAGS} are allowed")
    tags: list[str] = []
    for tag in value:
        if not isinstance(tag, str):
            raise InvalidInput(f"tag {tag!r} is not a string")
        cleaned = tag.strip()
        if not cleaned or len(cleaned) > MAX_TAG_CHARS or any(ord(c) < 32 for c in cleaned):
            raise InvalidInput(f"tag {tag[:40]!r} must be 1-{MAX_TAG_CHARS} printable characters")
        if cleaned not in tags:
            tags.append(cleaned)
    return tags


def validate_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
        raise InvalidInput(f"limit must be a whole number from 1 to 100, got {value!r}")
    return value


class KnowledgeBase:
    """The brain: two markdown roots and the SQLite index derived from them."""

    def __init__(self, config: Config | None = None, *, cache_vectors: bool = False) -> None:
        """`cache_vectors`: keep vectors in memory between searches (long-running processes)."""
        self.config = config or load_config()
        self._db: Database | None = None
        self._vector_cache = None
        if cache_vectors:
            from pinky.vectors import VectorCache

            self._vector_cache = VectorCache()
        self.rebuilt_reason: str | None = None  # set when a corrupt/unknown index was replaced

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = self._open()
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> Database:
        path = self.config.db_path
        if path.suffix.lower() in (".md", ".markdown"):
            # A corrupt index is moved aside and rebuilt; a note passed by mistake must never be.
            raise IndexUnavailable(f"{path} is a markdown file, not an index; pass a path like brain.db")
        try:
            db = open_database(path)
        except Exception as exc:
            if not self._is_corruption(exc):
                raise IndexUnavailable(f"cannot open the index {path}: {exc}") from exc
            return self._rebuild_index_file(f"{path.name} was not a readable SQLite database ({exc})")
        try:
            if mig.is_unknown_schema(db.conn):
                db.close()
                return self._rebuild_index_file(f"{path.name} has a schema this pinky does not know")
            mig.migrate(db.conn)
            db.conn.execute("SELECT count(*) FROM entry").fetchone()
        except Exception as exc:
            db.close()
            if isinstance(exc, PinkyError) or not self._is_corruption(exc):
                raise IndexUnavailable(f"cannot use the index {path}: {exc}") from exc
            return self._rebuild_index_file(f"{path.name} is corrupt ({exc})")
        return db

    @staticmethod
    def _is_corruption(exc: Exception) -> bool:
        return any(marker in str(exc).lower() for marker in _CORRUPT_MARKERS)

    def _rebuild_index_file(self, reason: str) -> Database:
        """The index is disposable: move the bad file aside and start a fresh one."""
        path = self.config.db_path
        if not _looks_like_an_index(path):
            raise IndexUnavailable(f"{path} is not a SQLite index and not named like one (.db); "
                                   "refusing to replace it: pass a path like brain.db")
        log.warning("%s; rebuilding it from the markdown", reason)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        if path.exists():
            path.replace(path.with_name(path.name + ".corrupt"))
        db = open_database(path)
        mig.migrate(db.conn)
        self.rebuilt_reason = reason
        return db

    # --- paths ---------------------------------------------------------------------------------

    def root_dir(self, root: str) -> Path:
        return self.config.roots()[root]

    def display_path(self, root: str, rel: str) -> str:
        """Project notes relative to the repository (citable); global notes absolute."""
        if root == "project":
            base = self.config.save_dir
            return (Path(base.name) / rel).as_posix()
        return (self.config.global_dir / rel).as_posix()

    # --- indexing ------------------------------------------------------------------------------

    @property
    def embedder(self):  # type: ignore[no-untyped-def]
        from pinky.embedding import get_embedder

        return get_embedder(self.config)

    def fingerprint(self) -> str:
        from pinky.embedding import fingerprint

        embedder = self.embedder
        return fingerprint(embedder.name, embedder.dims, self.config.chunk_words)

    def vector_status(self) -> tuple[bool, str]:
        """Whether vector search can run now, and why not."""
        db = self.db
        if not db.vec_available:
            return False, db.vec_error or "sqlite-vec is not loaded"
        stored = q.get_meta(db.conn, "fingerprint")
        if not q.vector_table_exists(db.conn) or stored is None:
            return False, "no vectors yet: run `pinky reindex`"
        if stored != self.fingerprint():
            return False, "the embedder or chunker changed since the vectors were built: run `pinky reindex`"
        return True, "ok"

    def _prepare_vectors(self) -> bool:
        db = self.db
        if not db.vec_available:
            return False
        current = self.fingerprint()
        if q.vector_table_exists(db.conn) and q.get_meta(db.conn, "fingerprint") == current:
            return True
        with q.write_transaction(db.conn):
            if not (q.vector_table_exists(db.conn) and q.get_meta(db.conn, "fingerprint") == current):
                embedder = self.embedder
                q.reset_vector_table(db.conn, embedder.dims, current, embedder.name)
        return True

    def _vectors_writable(self) -> bool:
        """Vector rows of changed chunks must be dropped too, which needs sqlite-vec loaded here."""
        return self.db.vec_available and q.vector_table_exists(self.db.conn)

    def reindex(self, *, full: bool = False, progress: Progress | None = None, embed: bool = True) -> ReindexReport:
        """Bring the index up to date with both markdown roots; `full` rebuilds from scratch."""
        started = time.perf_counter()
        report = ReindexReport()
        if full:
            self._drop_index()
        db = self.db
        has_vec = self._prepare_vectors() if embed else self._vectors_writable()
        known = q.indexed_files(db.conn)
        seen: set[tuple[str, str]] = set()
        changed: list[SourceFile] = []
        for source in scan(self.config.roots()):
            key = (source.root, source.rel)
            seen.add(key)
            old = known.get(key)
            if old and old.mtime_ns == source.mtime_ns and old.size == source.size:
                report.unchanged += 1
            else:
                changed.append(source)
        removed = [known[k] for k in known.keys() - seen]
        self._apply_changes(changed, removed, known, report, has_vec, progress)
        self._scan_code()
        if report.added or report.updated or report.removed or not file_index_path(self.config.db_path).exists():
            self._refresh_file_index()
        if embed and has_vec:
            if q.vector_rows(db.conn) != q.counts(db.conn)["vectors"]:
                with q.write_transaction(db.conn):
                    q.drop_orphan_vectors(db.conn)
            report.chunks_embedded = self.embed_pending(progress)
        elif not db.vec_available:
            report.vectors = f"unavailable: {db.vec_error}"
        report.seconds = time.perf_counter() - started
        return report

    def _drop_index(self) -> None:
        self.close()
        path = self.config.db_path
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)

    def _apply_changes(self, changed: list[SourceFile], removed: list[q.IndexedFile],
                       known: dict[tuple[str, str], q.IndexedFile], report: ReindexReport,
                       has_vec: bool, progress: Progress | None) -> None:
        conn = self.db.conn
        with q.write_transaction(conn):
            for old in removed:
                q.delete_entry(conn, old.id, has_vec)
                report.removed += 1
        total = len(changed)
        for start in range(0, total, WRITE_BATCH):
            batch = changed[start : start + WRITE_BATCH]
            parsed = []
            for source in batch:  # parse outside the transaction: readers and writers keep going
                try:
                    parsed.append((source, *parse_file(source)))
                except OSError as exc:
                    report.errors.append(f"{source.path}: {exc.strerror or exc}")
            with q.write_transaction(conn):
                for source, doc, _raw in parsed:
                    old = known.get((source.root, source.rel))
                    if old and old.content_hash == doc.content_hash:
                        q.touch_entry(conn, old.id, source.mtime_ns, source.size)
                        report.unchanged += 1
                        continue
                    store_document(conn, source, doc, self.config.project, self.config.chunk_words, has_vec)
                    if old:
                        report.updated += 1
                    else:
                        report.added += 1
            if progress:
                progress("parse", min(start + WRITE_BATCH, total), total)

    def embed_pending(self, progress: Progress | None = None) -> int:
        """Give every chunk lacking a vector one, from the cache when its text was seen before.

        Returns how many chunks the model actually embedded (cache hits are free).
        """
        import numpy as np

        if not self._prepare_vectors():
            return 0
        conn = self.db.conn
        fingerprint = self.fingerprint()
        embedded = 0
        total = q.count_pending(conn)
        done = 0
        for _ in range(1_000_000):
            rows = q.pending_chunks(conn, 512)
            if not rows:
                break
            cached = q.cached_vectors(conn, (r[1] for r in rows), fingerprint)
            missing: dict[str, str] = {}
            for _cid, chash, title, heading, text in rows:
                if chash not in cached and chash not in missing:
                    from pinky.embedding import embed_input

                    missing[chash] = embed_input(title, heading, text)
            new: dict[str, bytes] = {}
            keys = list(missing)
            for i in range(0, len(keys), EMBED_BATCH):
                part = keys[i : i + EMBED_BATCH]
                vectors = self.embedder.embed([missing[k] for k in part])
                for key, vector in zip(part, np.asarray(vectors, dtype=np.float32), strict=True):
                    new[key] = vector.tobytes()
            embedded += len(new)
            with q.write_transaction(conn):
                q.cache_vectors(conn, new.items(), fingerprint)
                stored = q.store_vectors(conn, [(r[0], new.get(r[1]) or cached[r[1]]) for r in rows])
            done += len(rows)
            if progress:
                progress("embed", min(done, total), max(total, done))
            if stored == 0:
                break  # another process is filling the same chunks; it will finish them
        return embedded

    def index_file(self, path: Path, *, embed: bool = True) -> str | None:
        """Index one markdown file under either root right away; returns its slug (None if gone)."""
        root, rel = self._locate(path)
        conn = self.db.conn
        has_vec = self._prepare_vectors() if embed else self._vectors_writable()
        eid = entry_id(root, rel)
        linked_before = q.linked_file_names(conn, eid)
        if not path.exists():
            with q.write_transaction(conn):
                q.delete_entry(conn, eid, has_vec)
            if linked_before:
                self._refresh_file_index()
            return None
        stat = path.stat()
        source = SourceFile(root, rel, path, stat.st_mtime_ns, stat.st_size)
        doc, _ = parse_file(source)
        known = q.entry_by(conn, "id", eid)
        if known is not None and known["content_hash"] == doc.content_hash:
            # Already indexed (e.g. a watcher reporting our own save): keep chunks and vectors.
            with q.write_transaction(conn):
                q.touch_entry(conn, eid, source.mtime_ns, source.size)
            return known["slug"]
        with q.write_transaction(conn):
            store_document(conn, source, doc, self.config.project, self.config.chunk_words, has_vec)
        # The hooks' list of linked file names changes only if this entry's names did (a diary
        # line or an edited paragraph usually leaves them alone): skip the rewrite otherwise.
        if q.linked_file_names(conn, eid) != linked_before or not file_index_path(self.config.db_path).exists():
            self._refresh_file_index()
        if embed and has_vec:
            self.embed_pending()
        row = q.entry_by(conn, "id", eid)
        return row["slug"] if row else None

    def _scan_code(self) -> None:
        """Breadcrumbs in the project's code (a pinky project only: its save dir exists)."""
        save_dir = self.config.save_dir
        if not save_dir.is_dir():
            return
        from pinky.codescan import scan_code

        try:
            scan_code(self.db.conn, save_dir.parent, [save_dir, self.config.global_dir, self.config.home],
                      skip_prefix=self.config.db_path.name)
        except OSError as exc:  # unreadable folders: the notes matter more than the code links
            log.warning("scanning the code for breadcrumbs failed: %s", exc)

    def _refresh_file_index(self) -> None:
        """Rewrite `<db>-files`, the names of files some entry links to (the hooks' pre-filter).

        Under a lock, each writer reads the index as committed at that moment, so the last
        one to write always has every change."""
        path = file_index_path(self.config.db_path)
        with notes.file_lock(path.with_name(path.name + ".lock")):
            text = FILE_INDEX_HEADER + "\n" + "".join(f"{n}\n" for n in sorted(q.linked_file_names(self.db.conn)))
            try:
                if path.read_text(encoding="utf-8") == text:
                    return
            except OSError:
                pass
            notes.replace_file(path, text)

    def _locate(self, path: Path) -> tuple[str, str]:
        resolved = path.resolve()
        for root, base in self.config.roots().items():
            if resolved.is_relative_to(base):
                return root, resolved.relative_to(base).as_posix()
        raise InvalidInput(f"{path} is not inside {self.config.save_dir} or {self.config.global_dir}")

    # --- search --------------------------------------------------------------------------------

    def resolve_scope(self, scope: str | None, project: str | None) -> str | None:
        if project is not None:
            if not isinstance(project, str) or not project.strip() or any(ord(c) < 32 for c in project):
                raise InvalidInput("project must be a non-empty name")
            wanted = f"project:{project.strip()}"
            if scope not in (None, wanted):
                raise InvalidInput(f"scope {scope!r} contradicts project {project!r}")
            return wanted
        if scope is None or scope == "":
            return None
        if not isinstance(scope, str):
            raise InvalidInput("scope must be a string")
        if scope == "global":
            return scope
        if scope == "project":
            return f"project:{self.config.project}"
        if scope.startswith("project:") and scope[8:].strip():
            return f"project:{scope[8:].strip()}"
        raise InvalidInput(f"scope {scope!r} must be 'global' or 'project:<name>'")

    def search(self, query: str, *, limit: int = 10, scope: str | None = None, project: str | None = None,
               type: str | None = None, tags: list[str] | tuple[str, ...] | None = None,
               since: str | None = None, mode: str = "hybrid", record_usage: bool = False) -> SearchResult:
        """Hybrid search over both roots in one ranking; filters narrow before ranking.

        `since` (ISO date/time or a span like 30d) keeps only fresh entries: verified, created or
        changed since then."""
        query = _clean_text(query, "query", MAX_QUERY_CHARS)
        limit = validate_limit(limit)
        if mode not in SEARCH_MODES:
            raise InvalidInput(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}")
        filters = q.Filters(
            scope=self.resolve_scope(scope, project),
            type=validate_type(type) if type else None,
            tags=tuple(validate_tags(tags)),
            fresh_since=self._freshness(since),
        )
        settings = self.config.fusion
        lexical = self._lexical_hits(query, filters) if mode != "vector" else []
        vector: list[tuple[str, float, int]] = []
        notice = None
        ran = mode
        if mode != "bm25":
            usable, why = self.vector_status()
            if usable:
                qvec = self.embedder.embed([query])[0].astype("float32")
                # A query with no embeddable content (e.g. only punctuation) has no direction.
                vector = [] if not qvec.any() else [hit for hit in self._vector_hits(qvec, filters)
                                                    if hit[1] >= settings.min_similarity]
            else:
                notice = f"vector search unavailable ({why}); results are full-text only"
                ran = "bm25"
        hits = self._fuse(query, lexical, vector, limit)
        if record_usage and hits:
            self._record_usage(hits, query)
        return SearchResult(hits, ran, notice)

    @staticmethod
    def _freshness(since: str | None) -> tuple[str, int] | None:
        if since is None or since == "":
            return None
        from pinky.briefing import parse_since

        moment = parse_since(since)
        return moment.date().isoformat(), int(moment.timestamp() * 1_000_000_000)

    def _lexical_hits(self, query: str, filters: q.Filters) -> list[tuple[str, float, int]]:
        conn = self.db.conn
        terms = query_terms(query)
        if len(terms) > 1:
            terms = informative_terms(q.term_chunk_counts(conn, terms), q.chunk_count(conn))
        match = match_expression(terms)
        return q.fts_hits(conn, match, filters, self.config.fusion.depth) if match else []

    def _vector_hits(self, qvec: Any, filters: q.Filters) -> list[tuple[str, float, int]]:
        depth = self.config.fusion.depth
        if self._vector_cache is not None:
            return self._vector_cache.hits(self.db.conn, qvec, filters, depth)
        return q.vector_hits(self.db.conn, qvec.tobytes(), filters, depth)

    def _fuse(self, query: str, lexical: list[tuple[str, float, int]],
              vector: list[tuple[str, float, int]], limit: int) -> list[Hit]:
        settings = self.config.fusion
        best_chunk = {e: c for e, _, c in vector}
        best_chunk.update({e: c for e, _, c in lexical})  # a lexical match shows where the words are
        lists = [[(e, s) for e, s, _ in lexical], [(e, s) for e, s, _ in vector]]
        if not vector or not lexical:
            fused = [pair for ranked in lists for pair in ranked]
        else:
            alpha = settings.bm25_weight / (settings.bm25_weight + settings.vector_weight)
            terms = query_terms(query)
            coverage = q.terms_matching_chunk(self.db.conn, lexical[0][2], terms) / max(1, len(terms))
            alpha = gated_weight(alpha, coverage, settings.coverage_gate)
            weights = [alpha, 1.0 - alpha]
            if settings.method == "rrf":
                fused = rrf(lists, weights, settings.rrf_k)
            elif settings.method == "score":
                fused = score_fusion(lists, weights)
            else:
                fused = zscore_fusion(lists, weights, settings.depth)
        return self._hits([(best_chunk[e], round(float(score), 6)) for e, score in fused[:limit]], query)

    def _hits(self, scored_chunks: list[tuple[int, float]], query: str) -> list[Hit]:
        """Hits for (best chunk id, score) pairs, in that order; the snippet centres on `query`."""
        rows = q.hit_rows(self.db.conn, [chunk for chunk, _ in scored_chunks])
        return [Hit(slug=r["slug"], path=self.display_path(r["root"], r["path"]), title=r["title"], type=r["type"],
                    scope=r["scope"], project=r["project"], tags=json.loads(r["tags"]), score=score,
                    snippet=snippet(r["text"], query), heading=r["heading"], line=r["line"],
                    last_verified=r["last_verified"])
                for chunk, score in scored_chunks if (r := rows.get(chunk)) is not None]

    def _record_usage(self, hits: list[Hit], query: str) -> None:
        ids = [r["id"] for r in (q.entry_by(self.db.conn, "slug", h.slug) for h in hits) if r]
        try:
            with q.write_transaction(self.db.conn):
                q.record_usage(self.db.conn, ids, query, _now().isoformat())
        except Exception as exc:  # telemetry must never break a search
            log.warning("could not record usage: %s", exc)

    # --- entries -------------------------------------------------------------------------------

    def save(self, title: str, body: str, *, type: str = "note", tags: list[str] | None = None,
             scope: str = "project", project: str | None = None, files: list[str] | None = None,
             embed: bool = True) -> Entry:
        """Write a new note atomically into the right root, then index it at once."""
        title = _clean_title(title)
        body = _clean_text(body, "body", MAX_BODY_CHARS, required=False)
        kind = validate_type(type)
        tag_list = validate_tags(tags)
        resolved = self.resolve_scope(scope, project) or f"project:{self.config.project}"
        root = "global" if resolved == "global" else "project"
        today = _now()
        meta: dict[str, Any] = {"title": title, "type": kind, "tags": tag_list}
        if root == "project":
            meta["project"] = resolved.split(":", 1)[1]
        elif project:
            meta["project"] = project
        meta["created"] = today.isoformat()
        meta["last_verified"] = today.date().isoformat()
        if files:
            meta["files"] = validate_tags(files)
        directory = self.root_dir(root) / kind
        path = notes.write_new(directory, notes.slugify(title), render(meta, body))
        self.index_file(path, embed=embed)
        return self.get(slug_for(root, path.relative_to(self.root_dir(root)).as_posix()))

    def similar(self, slug: str, *, threshold: float = DUPLICATE_SIMILARITY, limit: int = 3) -> list[Hit]:
        """Entries whose text is nearly the same as this one's: likely duplicates to merge.

        Compares the entry's title and body (as the embedder sees a note) with every chunk
        vector; empty when vectors are unavailable. Cheap enough to run on every save.
        """
        row = self._row_for(slug)
        if not self.vector_status()[0]:
            return []
        from pinky.embedding import embed_input

        query = self.embedder.embed([embed_input(row["title"], "", row["body"][:4000])])[0].astype("float32")
        if not query.any():
            return []
        matches = [(e, s, c) for e, s, c in self._vector_hits(query, q.Filters())
                   if e != row["id"] and s >= threshold][:limit]
        return self._hits([(chunk, round(score, 4)) for _, score, chunk in matches], row["title"])

    def _row_for(self, slug: str) -> Any:
        if not isinstance(slug, str) or not slug.strip():
            raise InvalidInput("slug must be a non-empty string")
        slug = slug.strip()
        conn = self.db.conn
        row = q.entry_by(conn, "slug", slug)
        if row is None:
            candidates = q.slugs_ending(conn, slug.removesuffix(".md"))
            if len(candidates) == 1:
                row = q.entry_by(conn, "slug", candidates[0])
            elif len(candidates) > 1:
                raise NotFound(f"slug {slug!r} is ambiguous: {', '.join(candidates[:5])}")
        if row is None:
            raise NotFound(f"no entry with slug {slug!r}; search for it first (brain_search, or pinky search)")
        return row

    def _file_of(self, row: Any) -> Path:
        return self.root_dir(row["root"]) / row["path"]

    def get(self, slug: str) -> Entry:
        """A whole entry, read fresh from its markdown file (the version is its content hash)."""
        row = self._row_for(slug)
        path = self._file_of(row)
        if not path.exists():
            self.index_file(path, embed=False)
            raise NotFound(f"entry {slug!r} was removed from disk")
        raw = path.read_bytes()
        if content_hash(raw) != row["content_hash"]:
            self.index_file(path, embed=False)
            row = q.entry_by(self.db.conn, "id", row["id"])
        meta = json.loads(row["meta"])
        return Entry(
            slug=row["slug"], path=self.display_path(row["root"], row["path"]), title=row["title"],
            type=row["type"], scope=row["scope"], project=row["project"], tags=json.loads(row["tags"]),
            created=row["created"], last_verified=row["last_verified"], files=json.loads(row["files"]),
            body=row["body"], version=row["content_hash"], meta=meta,
        )

    def update(self, slug: str, expected_version: str, *, title: str | None = None, body: str | None = None,
               tags: list[str] | None = None, type: str | None = None,
               last_verified: str | None = None) -> Entry:
        """Change an entry only if nobody changed it since `expected_version` (its content hash)."""
        if not isinstance(expected_version, str) or not expected_version.strip():
            raise InvalidInput("expected_version is required: take it from brain_get / pinky get")
        row = self._row_for(slug)
        path = self._file_of(row)
        with notes.file_lock(self.config.state_dir / "locks" / f"{row['id']}.lock"):
            raw = path.read_bytes()
            current = content_hash(raw)
            if current != expected_version.strip():
                raise Conflict(f"entry {row['slug']!r} changed: its version is {current}, not "
                               f"{expected_version}; read it again and reapply your change")
            meta, old_body, _, error = split_frontmatter(raw.decode("utf-8", errors="replace"))
            if error:
                raise InvalidInput(f"{path} has malformed frontmatter ({error}); fix it by hand first")
            if title is not None:
                meta["title"] = _clean_title(title)
            if type is not None:
                meta["type"] = validate_type(type)
            if tags is not None:
                meta["tags"] = validate_tags(tags)
            if last_verified is not None:
                meta["last_verified"] = self._valid_date(last_verified)
            new_body = old_body if body is None else _clean_text(body, "body", MAX_BODY_CHARS, required=False)
            notes.replace_file(path, render(meta, new_body))
        self.index_file(path)
        return self.get(row["slug"])

    @staticmethod
    def _valid_date(value: str) -> str:
        try:
            return dt.date.fromisoformat(value.strip()[:10]).isoformat()
        except (ValueError, AttributeError):
            raise InvalidInput(f"last_verified={value!r} is not a date like 2026-11-25") from None

    def delete(self, slug: str, reason: str) -> Path:
        """Soft delete: move the note into the root's .archive/ with the reason; it leaves search."""
        reason = _clean_text(reason, "reason", 2000)
        row = self._row_for(slug)
        path = self._file_of(row)
        archived = self.root_dir(row["root"]) / ARCHIVE_DIR / row["path"]
        archived.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8", errors="replace")
        meta, body, _, error = split_frontmatter(text)
        if not error:
            meta.update({"archived_at": _now().isoformat(), "archive_reason": " ".join(reason.split())})
            text = render(meta, body)
        notes.replace_file(archived, text)
        path.unlink()
        self.index_file(path, embed=False)
        return archived

    def restore(self, slug: str) -> Entry:
        """Bring a soft-deleted note back to where it was."""
        for root, base in self.config.roots().items():
            archive = base / ARCHIVE_DIR
            for path in sorted(archive.rglob("*.md")) if archive.is_dir() else []:
                rel = path.relative_to(archive).as_posix()
                if slug in (slug_for(root, rel), rel, rel.removesuffix(".md")) or \
                        slug_for(root, rel).endswith("/" + slug):
                    target = base / rel
                    if target.exists():
                        raise Conflict(f"{target} exists again; move or rename it before restoring")
                    meta, body, _, error = split_frontmatter(path.read_text(encoding="utf-8"))
                    meta.pop("archived_at", None)
                    meta.pop("archive_reason", None)
                    text = path.read_text(encoding="utf-8") if error else render(meta, body)
                    notes.replace_file(target, text)
                    path.unlink()
                    self.index_file(target)
                    return self.get(slug_for(root, rel))
        raise NotFound(f"no archived entry {slug!r}")

    # --- overview ------------------------------------------------------------------------------

    def briefing(self, since: str, *, compact: bool = True) -> dict[str, Any]:
        """New and updated entries since `since`, and the diary lines written since then."""
        from pinky.briefing import briefing

        return briefing(self, since, compact=compact)

    def related(self, slug: str) -> dict[str, Any]:
        """An entry's outgoing links, backlinks and the code it is about."""
        from pinky.briefing import related

        return related(self, slug)

    def entry_summaries(self, limit: int = 5000) -> list[dict[str, Any]]:
        """Slug, title, type, scope and citable path of every indexed entry, newest first."""
        return [{"slug": r["slug"], "title": r["title"], "type": r["type"], "scope": r["scope"],
                 "path": self.display_path(r["root"], r["path"])}
                for r in q.recent_entries(self.db.conn, limit)]


    def stats(self) -> dict[str, Any]:
        conn = self.db.conn
        data: dict[str, Any] = q.counts(conn)
        data["by_type"] = q.grouped(conn, "type")
        data["by_scope"] = q.grouped(conn, "scope")
        data["embedder"] = q.get_meta(conn, "embedder") or self.config.embedder
        data["dims"] = int(q.get_meta(conn, "dims") or 0)
        data["fingerprint"] = q.get_meta(conn, "fingerprint")
        data["vectors_available"] = self.db.vec_available
        cutoff = _now() - dt.timedelta(days=UNUSED_DAYS)
        data["unused"], data["unused_sample"] = q.unused_entries(
            conn, cutoff.isoformat(), int(cutoff.timestamp() * 1_000_000_000))
        data["unused_days"] = UNUSED_DAYS
        data["db_path"] = str(self.config.db_path)
        data["db_bytes"] = self.config.db_path.stat().st_size if self.config.db_path.exists() else 0
        return data

    def gc(self) -> dict[str, int]:
        conn = self.db.conn
        has_vec = self.db.vec_available and q.vector_table_exists(conn)
        fingerprint = q.get_meta(conn, "fingerprint")
        with q.write_transaction(conn):
            removed = q.collect_garbage(conn, fingerprint, has_vec)
        conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('optimize')")
        before = self.config.db_path.stat().st_size
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        removed["bytes_reclaimed"] = max(0, before - self.config.db_path.stat().st_size)
        return removed

    def drift(self) -> dict[str, list[str]]:
        """Markdown files the index does not reflect yet (new, changed, or deleted)."""
        known = q.indexed_files(self.db.conn)
        out: dict[str, list[str]] = {"new": [], "changed": [], "deleted": []}
        seen = set()
        for source in scan(self.config.roots()):
            key = (source.root, source.rel)
            seen.add(key)
            old = known.get(key)
            if old is None:
                out["new"].append(self.display_path(*key))
            elif (old.mtime_ns, old.size) != (source.mtime_ns, source.size):
                if content_hash(source.path.read_bytes()) != old.content_hash:
                    out["changed"].append(self.display_path(*key))
        out["deleted"] = [self.display_path(*k) for k in sorted(known.keys() - seen)]
        return out

    def malformed(self) -> list[str]:
        return [f"{self.display_path(r, p)}: {e}" for r, p, e in q.parse_errors(self.db.conn)]
