"""Ordered, named migrations. Each runs in one transaction together with the row recording it.

Migrations are history: a released one is never edited; a change is a new migration.
The vector table is not a migration: its dimension depends on the embedder, so it is created
(and re-created when the embedder fingerprint changes) by `vectors.reset_vector_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pinky.errors import IndexUnavailable
from pinky.store import entries, global_picks, quality, term_counts
from pinky.store import vectors as store_vectors

Migration = Callable[[Any], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_entries_and_chunks(conn: Any) -> None:
    conn.execute(
        """CREATE TABLE entry(
            id            TEXT PRIMARY KEY,      -- stable hash of root + path
            root          TEXT NOT NULL,         -- 'project' | 'global'
            path          TEXT NOT NULL,         -- relative to its root, '/' separated
            slug          TEXT NOT NULL UNIQUE,  -- short handle derived from the path
            scope         TEXT NOT NULL,         -- 'project:<name>' | 'global'
            type          TEXT NOT NULL,
            project       TEXT,
            tags          TEXT NOT NULL DEFAULT '[]',
            files         TEXT NOT NULL DEFAULT '[]',
            created       TEXT,
            last_verified TEXT,
            title         TEXT NOT NULL,
            body          TEXT NOT NULL,
            meta          TEXT NOT NULL DEFAULT '{}',
            content_hash  TEXT NOT NULL,
            mtime_ns      INTEGER NOT NULL DEFAULT 0,
            size          INTEGER NOT NULL DEFAULT 0,
            parse_error   TEXT,
            indexed_at    TEXT NOT NULL,
            UNIQUE(root, path)
        )"""
    )
    conn.execute("CREATE INDEX entry_scope ON entry(scope)")
    conn.execute("CREATE INDEX entry_type ON entry(type)")
    conn.execute(
        """CREATE TABLE chunk(
            id        INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector row can't
            entry_id  TEXT NOT NULL REFERENCES entry(id) ON DELETE CASCADE,  -- attach to a new chunk
            ord       INTEGER NOT NULL,
            heading   TEXT NOT NULL DEFAULT '',
            line      INTEGER NOT NULL,
            text      TEXT NOT NULL,
            hash      TEXT NOT NULL,           -- hash of the text the embedder sees
            has_vector INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute("CREATE INDEX chunk_entry ON chunk(entry_id)")
    conn.execute("CREATE INDEX chunk_hash ON chunk(hash)")
    conn.execute("CREATE INDEX chunk_pending ON chunk(has_vector) WHERE has_vector = 0")
    conn.execute(
        "CREATE VIRTUAL TABLE chunk_fts USING fts5(title, heading, text, tokenize='porter unicode61')"
    )
    conn.execute(
        """CREATE TABLE embedding_cache(
            hash        TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            vector      BLOB NOT NULL,
            PRIMARY KEY(hash, fingerprint)
        ) WITHOUT ROWID"""
    )
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migration
def m002_graph_and_usage(conn: Any) -> None:
    conn.execute(
        """CREATE TABLE backlink(           -- code -> knowledge, from `Brain: <slug>` breadcrumbs
            entry_id  TEXT NOT NULL REFERENCES entry(id) ON DELETE CASCADE,
            file_path TEXT NOT NULL,
            line      INTEGER,
            repo      TEXT
        )"""
    )
    conn.execute("CREATE INDEX backlink_file ON backlink(file_path)")
    conn.execute(
        """CREATE TABLE entry_file(         -- knowledge -> code, from frontmatter `files:`
            entry_id TEXT NOT NULL REFERENCES entry(id) ON DELETE CASCADE,
            path     TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX entry_file_path ON entry_file(path)")
    conn.execute(
        """CREATE TABLE entry_link(         -- knowledge -> knowledge, from [[slug]] and .md links
            entry_id TEXT NOT NULL REFERENCES entry(id) ON DELETE CASCADE,
            target   TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX entry_link_target ON entry_link(target)")
    conn.execute(
        """CREATE TABLE usage(              -- telemetry: which entries searches actually return
            entry_id     TEXT NOT NULL,
            retrieved_at TEXT NOT NULL,
            query        TEXT NOT NULL,
            was_useful   INTEGER
        )"""
    )
    conn.execute("CREATE INDEX usage_entry ON usage(entry_id)")


@migration
def m003_file_mentions(conn: Any) -> None:
    conn.execute(
        """CREATE TABLE entry_mention(      -- base names of files a note's text names (hook pre-filter)
            entry_id TEXT NOT NULL REFERENCES entry(id) ON DELETE CASCADE,
            name     TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX entry_mention_entry ON entry_mention(entry_id)")


@migration
def m004_code_breadcrumbs(conn: Any) -> None:
    conn.execute(
        """CREATE TABLE code_file(          -- project files scanned for breadcrumbs, by stat
            path     TEXT PRIMARY KEY,      -- relative to the project root
            mtime_ns INTEGER NOT NULL,
            size     INTEGER NOT NULL
        ) WITHOUT ROWID"""
    )
    conn.execute(
        """CREATE TABLE breadcrumb(         -- `Brain: <slug>` in code, kept as written (resolved when read)
            file_path TEXT NOT NULL REFERENCES code_file(path) ON DELETE CASCADE,
            line      INTEGER NOT NULL,
            slug      TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX breadcrumb_slug ON breadcrumb(slug)")
    conn.execute("CREATE INDEX breadcrumb_file ON breadcrumb(file_path)")


@migration
def m005_drop_unused_backlink_and_was_useful(conn: Any) -> None:
    # m002's `backlink` table was never filled: breadcrumbs are kept as written in `breadcrumb`
    # and resolved when read, so code written before its note still links up.
    conn.execute("DROP TABLE IF EXISTS backlink")
    # usage.was_useful was never written. Rebuilt rather than ALTER ... DROP COLUMN, which needs
    # SQLite 3.35 and some Pythons still ship older.
    conn.execute("CREATE TABLE usage_new(entry_id TEXT NOT NULL, retrieved_at TEXT NOT NULL, query TEXT NOT NULL)")
    conn.execute("INSERT INTO usage_new SELECT entry_id, retrieved_at, query FROM usage")
    conn.execute("DROP TABLE usage")
    conn.execute("ALTER TABLE usage_new RENAME TO usage")
    conn.execute("CREATE INDEX usage_entry ON usage(entry_id)")


@migration
def m006_skipped_files(conn: Any) -> None:
    conn.execute(
        """CREATE TABLE skipped_file(       -- .md files that are not notes (binary, not UTF-8): reported, never indexed
            root     TEXT NOT NULL,
            path     TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,      -- the stat they were judged by: unchanged files are not read again
            size     INTEGER NOT NULL,
            reason   TEXT NOT NULL,
            PRIMARY KEY(root, path)
        ) WITHOUT ROWID"""
    )


@migration
def m007_fts_reads_chunk_text(conn: Any) -> None:
    """The full-text index keeps no copy of the text: an external-content FTS5 table over a view of the
    chunks and their entry's title. The copy was a sixth of the index. FTS5 reads the view only to
    delete a chunk's terms (a chunk's FTS row is deleted before the chunk and its entry change) and to
    rebuild; MATCH and bm25() use the index alone."""
    conn.execute("DROP TABLE IF EXISTS chunk_fts")
    conn.execute("DROP VIEW IF EXISTS chunk_fts_source")
    conn.execute("CREATE VIEW chunk_fts_source AS SELECT c.id AS id, e.title AS title, c.heading AS heading, "
                 "c.text AS text FROM chunk c JOIN entry e ON e.id = c.entry_id")
    conn.execute("CREATE VIRTUAL TABLE chunk_fts USING fts5(title, heading, text, content='chunk_fts_source', "
                 "content_rowid='id', tokenize='porter unicode61')")
    conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('rebuild')")


@migration
def m008_one_link_table(conn: Any) -> None:
    """Every link as data, resolved when written: note -> note (`[[wiki]]`, `.md`, typed `links:`),
    note -> code (`files:`) and code -> note (breadcrumbs)."""
    conn.execute(
        """CREATE TABLE link(
            id          INTEGER PRIMARY KEY,
            source_id   TEXT REFERENCES entry(id) ON DELETE CASCADE,          -- the note that writes it
            source_file TEXT REFERENCES code_file(path) ON DELETE CASCADE,    -- or the code file (breadcrumb)
            kind        TEXT NOT NULL,      -- wiki | md | typed | files | breadcrumb
            rel         TEXT NOT NULL DEFAULT 'relates',
            target      TEXT NOT NULL,      -- as written
            target_key  TEXT NOT NULL,      -- last part, lowercased: which entries may resolve it
            target_id   TEXT REFERENCES entry(id) ON DELETE SET NULL,        -- NULL: unresolved (or code)
            target_file TEXT,               -- the code file a `files:` link names
            line        INTEGER,
            since       TEXT,               -- typed links: valid from (inclusive) ...
            until       TEXT                -- ... until (exclusive); NULL: open
        )"""
    )
    conn.execute("CREATE INDEX link_source ON link(source_id)")
    conn.execute("CREATE INDEX link_source_file ON link(source_file) WHERE source_file IS NOT NULL")
    conn.execute("CREATE INDEX link_target ON link(target_id) WHERE target_id IS NOT NULL")
    conn.execute("CREATE INDEX link_key ON link(target_key)")
    conn.execute("CREATE INDEX link_target_file ON link(target_file) WHERE target_file IS NOT NULL")
    # Both old tables are replaced by `link`. Their rows carry no lines, so every note is parsed
    # again by the next reindex (only its rows are rewritten: vectors come from the cache) and
    # every code file is read again.
    conn.execute("DROP TABLE entry_link")
    conn.execute("DROP TABLE breadcrumb")
    conn.execute("DELETE FROM code_file")
    conn.execute("UPDATE entry SET content_hash = '', mtime_ns = -1")


NOT_CURRENT_WHERE = ("json_extract(meta, '$.superseded_by') IS NOT NULL "
                     "OR json_extract(meta, '$.valid_until') IS NOT NULL")


@migration
def m009_feedback_and_gaps(conn: Any) -> None:
    # Telemetry like `usage` (m005 dropped its never-written was_useful column): what agents and people
    # said about a hit, and the searches that found nothing good. Losing it loses nothing written.
    conn.execute(
        """CREATE TABLE feedback(           -- `pinky feedback` / brain_feedback: was this hit any good?
            entry_id TEXT NOT NULL,
            verdict  TEXT NOT NULL,         -- useful | wrong | outdated
            query    TEXT,                  -- the search that returned it, when known
            at       TEXT NOT NULL,         -- ISO time (UTC)
            at_ns    INTEGER NOT NULL       -- the same in ns: an edit of the note after it settles a flag
        )"""
    )
    conn.execute("CREATE INDEX feedback_entry ON feedback(entry_id)")
    conn.execute(
        """CREATE TABLE gap(                -- searches whose best hit was weak: knowledge the brain lacks
            query_hash TEXT PRIMARY KEY,    -- of the normalised query; the text only when queries are logged
            query      TEXT,
            terms      TEXT NOT NULL,       -- JSON list of hashed query words: a later save that holds
            count      INTEGER NOT NULL,    -- them closes the gap without the text being kept
            best_score REAL,
            first_seen TEXT NOT NULL,
            last_seen  TEXT NOT NULL,
            closed_by  TEXT,                -- the slug of the note that answered it
            closed_at  TEXT
        ) WITHOUT ROWID"""
    )
    # The few entries that may have left the default results (superseded, or valid until a day): a search
    # reads them through this partial index instead of parsing the frontmatter of every candidate.
    conn.execute(f"CREATE INDEX entry_not_current ON entry(id) WHERE {NOT_CURRENT_WHERE}")


@migration
def m010_opened(conn: Any) -> None:
    # Telemetry like `usage`: which entries an agent read whole (brain_get) and when. A search whose hit
    # was then opened is a golden query candidate (`pinky eval --from-usage`). Losing it loses nothing written.
    conn.execute(
        """CREATE TABLE opened(             -- brain_get: an entry read whole
            entry_id TEXT NOT NULL,
            at       TEXT NOT NULL          -- ISO time (UTC), as usage.retrieved_at
        )"""
    )
    conn.execute("CREATE INDEX opened_entry ON opened(entry_id)")


@migration
def m011_weighted_fields(conn: Any) -> None:
    """Full-text fields of their own, so bm25() can weigh them: `questions` (the questions the note answers,
    from its frontmatter) beside title, heading and text, and `idents`, the parts of the chunk's camelCase
    identifiers (`pinky.text.lexical`). Built from the rows already indexed: no reindex. (Tags are not indexed:
    FTS5 computes one IDF over all columns, so a tag most notes carry made its word worthless in the text
    too; measured in documentation/RANKING.md.)"""
    from pinky.text.lexical import identifier_parts

    conn.execute("ALTER TABLE chunk ADD COLUMN idents TEXT NOT NULL DEFAULT ''")
    rows = conn.execute("SELECT c.id, e.title, c.heading, c.text FROM chunk c JOIN entry e ON e.id = c.entry_id")
    conn.executemany("UPDATE chunk SET idents = ? WHERE id = ?",
                     [(identifier_parts(texts), chunk_id) for chunk_id, *texts in rows.fetchall()])
    conn.execute("DROP TABLE IF EXISTS chunk_fts")
    conn.execute("DROP VIEW IF EXISTS chunk_fts_source")
    conn.execute("CREATE VIEW chunk_fts_source AS SELECT c.id AS id, e.title AS title, c.heading AS heading, "
                 "c.text AS text, coalesce(json_extract(e.meta, '$.questions'), '') AS questions, "
                 "c.idents AS idents FROM chunk c JOIN entry e ON e.id = c.entry_id")
    conn.execute("CREATE VIRTUAL TABLE chunk_fts USING fts5(title, heading, text, questions, idents, "
                 "content='chunk_fts_source', content_rowid='id', tokenize='porter unicode61')")
    conn.execute("INSERT INTO chunk_fts(chunk_fts) VALUES ('rebuild')")


@migration
def m012_quality_vectors(conn: Any) -> None:
    """The second-stage vectors (`pinky.search.second_stage`): a retrieval-trained model's vector for each
    chunk, filled in the background after the default embedder's. A plain table scored in numpy: no
    extension needed, and a chunk's row goes with it (chunk ids are never reused)."""
    conn.execute(
        """CREATE TABLE chunk_quality(
            chunk_id INTEGER PRIMARY KEY REFERENCES chunk(id) ON DELETE CASCADE,
            passage  TEXT NOT NULL,         -- hash of the text the model saw (pinky.embed.embedding.quality_input)
            vector   BLOB NOT NULL          -- DIMS signed bytes (pinky.store.quality.quantize)
        )"""
    )
    conn.execute("CREATE INDEX chunk_quality_passage ON chunk_quality(passage)")
    # What a full rebuild emptied (reset keeps the rows here): the next fill takes them back instead of
    # spending an hour of cores on a large brain again; emptied once every chunk has its vector.
    conn.execute("CREATE TABLE quality_stash(passage TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID")


@migration
def m013_links_pending(conn: Any) -> None:
    """Notes a reindex stored whose links it writes later, in one pass once every batch is in (a link may
    name a note of a later batch). Filled in the batch's own transaction and emptied with the links: a
    reindex killed between the two leaves the list here, and the next one writes those notes' links
    (their rows are current, so no stat or hash would show them stale)."""
    conn.execute("CREATE TABLE link_pending(entry_id TEXT PRIMARY KEY) WITHOUT ROWID")


@migration
def m014_term_counts(conn: Any) -> None:
    """How many chunks hold each full-text term (`pinky.store.term_counts`), kept by the writer, so a term
    weight reads one row instead of walking the word's doclist. Filled from the index as it is."""
    term_counts.create(conn)


@migration
def m015_vector_sums(conn: Any) -> None:
    """A CRC-32 of each stored vector, written with it (`vectors.store_vectors`, `stash_vectors`, `quality`): a flipped
    low mantissa bit keeps a vector finite and of unit length, and only its sum tells (`doctor --full`,
    and every reuse of a stored vector). NULL for a vector stored before: `doctor --full` records its sum."""
    conn.execute("ALTER TABLE chunk ADD COLUMN vector_sum INTEGER")
    conn.execute("ALTER TABLE embedding_cache ADD COLUMN sum INTEGER")
    conn.execute(f"ALTER TABLE {quality.TABLE} ADD COLUMN sum INTEGER")  # the second stage's (`quality.store`)
    conn.execute(f"ALTER TABLE {quality.STASH} ADD COLUMN sum INTEGER")


@migration
def m016_file_identity(conn: Any) -> None:
    """The change time and inode of each file beside its size and mtime: `cp -p`, `rsync -t`, `tar`, `touch -r`
    and a swap of two same-size notes by rename restore size and mtime, but not these two (the kernel sets
    the change time, a rename brings another inode). 0 until the next reindex stats the file: then it
    differs, the file is hashed once, and equal bytes only record the new stat."""
    for table in ("entry", "skipped_file", "code_file"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN inode INTEGER NOT NULL DEFAULT 0")


@migration
def m017_lookup_indexes(conn: Any) -> None:
    """Each entry's tags in a table, its importance and change time in indexes (`pinky.store.global_picks`): the
    session digest ranks a few candidate global notes instead of every one. And each file's stamp beside its key
    (`entries.indexed_files`): a reindex compares 100,000 of them without reading every row's body. Filled now."""
    global_picks.create(conn)
    conn.execute(f"CREATE INDEX entry_stamp ON entry(root, path, id, content_hash, {entries.STAMPED})")


KNOWN = [name for name, _ in MIGRATIONS]


def applied(conn: Any) -> list[str]:
    conn.execute("CREATE TABLE IF NOT EXISTS _pinky_migrations(name TEXT PRIMARY KEY, applied_at TEXT)")
    return [r[0] for r in conn.execute("SELECT name FROM _pinky_migrations ORDER BY rowid")]


def is_unknown_schema(conn: Any) -> bool:
    """True when the file was written by a newer pinky (or something else entirely)."""
    done = applied(conn)
    return any(name not in KNOWN for name in done) or done != KNOWN[: len(done)]


def check_readable(conn: Any) -> None:
    """Read the main table once: a damaged file fails here, at open, not on the first search."""
    conn.execute("SELECT count(*) FROM entry").fetchone()


def reset(conn: Any) -> None:
    """Empty the index in place: every table dropped and the schema built again in one transaction,
    so other connections see the old index or the new empty one, never half of either, and keep
    working on the same file. The vector generation moves on, so in-memory copies reload, and the
    index is marked as waiting for its rebuild (`vectors.REBUILD_PENDING`) until a reindex completes.

    Dropping the vector table needs sqlite-vec loaded on this connection."""
    conn.execute("PRAGMA foreign_keys=OFF")  # no cascading deletes row by row: the tables go whole
    conn.execute("BEGIN IMMEDIATE")
    try:
        generation = int(store_vectors.vector_generation(conn))
        refined = quality.for_rebuild(conn)  # the second stage's vectors outlive the rebuild (hours of work)
        # Views first: a view naming a column the tables are rebuilt without fails every later ALTER TABLE.
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
            conn.execute(f'DROP VIEW "{name}"')
        for kind in ("virtual", "plain"):  # virtual tables first: they drop their own shadow tables
            where = "sql LIKE 'CREATE VIRTUAL TABLE%'" if kind == "virtual" else "name NOT LIKE 'sqlite_%'"
            names = [r[0] for r in conn.execute(f"SELECT name FROM sqlite_master WHERE type = 'table' AND {where}")]
            for name in names:
                conn.execute(f'DROP TABLE "{name}"')
        applied(conn)
        for name, fn in MIGRATIONS:
            fn(conn)
            conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES (?, datetime('now'))", (name,))
        store_vectors.set_meta(conn, "vector_generation", str(generation + 1))
        store_vectors.set_meta(conn, store_vectors.REBUILD_PENDING, "1")
        quality.after_rebuild(conn, *refined)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.execute("PRAGMA foreign_keys=ON")


def built_at(conn: Any) -> str | None:
    """When this index was built (created, or emptied for a full rebuild), UTC, `YYYY-MM-DD HH:MM:SS`:
    its telemetry (usage, feedback) covers only the time since."""
    row = conn.execute("SELECT min(applied_at) FROM _pinky_migrations").fetchone()
    return row[0] if row else None


def migrate(conn: Any) -> list[str]:
    """Apply pending migrations in order; returns their names."""
    done = set(applied(conn))
    ran = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if name in {r[0] for r in conn.execute("SELECT name FROM _pinky_migrations")}:
                conn.execute("ROLLBACK")  # another process applied it while we waited
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO _pinky_migrations(name, applied_at) VALUES (?, datetime('now'))", (name,)
            )
            conn.execute("COMMIT")
        except Exception as exc:
            conn.execute("ROLLBACK")
            raise IndexUnavailable(f"migration {name} failed: {exc}") from exc
        ran.append(name)
    return ran
