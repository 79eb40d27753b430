"""What the session digest's pick of global notes reads (migration m017): each entry's tags in a table of their own,
the important entries in a partial index, and the entries by root and change time.

Why: the digest shows the few global notes worth seeing in this project (`readonly.global_entries_for`): those
naming it (`project:` or a tag), then the most important, the most retrieved, the newest. Ranked in one ORDER BY,
that parsed every global entry's tags and frontmatter and counted its uses: 160-190 ms of a session start beside
100,000 global notes. The first key, the second and the third hold for few entries, and each of those few is
found through an index here; the newest are walked in order; only those candidates are ranked.

Kept by triggers on `entry`: every insert, tag change and delete, by any writer. Stdlib-light: the hooks import it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` would pull in `re` on the hooks' path; annotations here are never evaluated
if TYPE_CHECKING:
    from sqlite3 import Connection

# The frontmatter's importance as the digest ranks it (0 critical, 1 high, 2 anything else); the partial index and
# the query that reads through it must spell the same expression (SQLite matches the text of the index's WHERE).
IMPORTANCE = ("CASE lower(coalesce(json_extract(meta, '$.importance'), json_extract(meta, '$.priority'), '')) "
              "WHEN 'critical' THEN 0 WHEN 'high' THEN 1 ELSE 2 END")
IMPORTANT = f"json_valid(meta) AND {IMPORTANCE} < 2"
_TAGS = "SELECT DISTINCT lower(value), NEW.id FROM json_each(NEW.tags) WHERE json_valid(NEW.tags) AND value IS NOT NULL"


def create(conn: Connection) -> None:
    """The table, its triggers and the indexes (migration m017), filled from the entries as they are."""
    conn.execute("CREATE TABLE entry_tag(tag TEXT NOT NULL, entry_id TEXT NOT NULL, PRIMARY KEY(tag, entry_id)) "
                 "WITHOUT ROWID")
    conn.execute("CREATE INDEX entry_tag_entry ON entry_tag(entry_id)")
    conn.execute("INSERT OR IGNORE INTO entry_tag(tag, entry_id) SELECT DISTINCT lower(j.value), e.id "
                 "FROM entry e, json_each(e.tags) j WHERE json_valid(e.tags) AND j.value IS NOT NULL")
    conn.execute(f"CREATE TRIGGER entry_tags_added AFTER INSERT ON entry BEGIN "
                 f"INSERT OR IGNORE INTO entry_tag(tag, entry_id) {_TAGS}; END")
    conn.execute(f"CREATE TRIGGER entry_tags_changed AFTER UPDATE OF id, tags ON entry BEGIN "
                 f"DELETE FROM entry_tag WHERE entry_id = OLD.id; "
                 f"INSERT OR IGNORE INTO entry_tag(tag, entry_id) {_TAGS}; END")
    conn.execute("CREATE TRIGGER entry_tags_removed AFTER DELETE ON entry BEGIN "
                 "DELETE FROM entry_tag WHERE entry_id = OLD.id; END")
    conn.execute("CREATE INDEX entry_project ON entry(project) WHERE project IS NOT NULL")
    conn.execute(f"CREATE INDEX entry_important ON entry(root) WHERE {IMPORTANT}")
    conn.execute("CREATE INDEX entry_root_mtime ON entry(root, mtime_ns)")


# The digest's order: naming the project (`project:` or a tag), then importance, then uses, then the newest. ?1 the
# project, ?2 how many.
ORDER = ("(coalesce(project, '') = ?1 OR EXISTS (SELECT 1 FROM json_each(e.tags) WHERE lower(json_each.value) = "
         f"lower(?1))) DESC, {IMPORTANCE}, (SELECT count(*) FROM usage u WHERE u.entry_id = e.id) DESC, mtime_ns DESC")
GLOBAL = "root = 'global' AND type != 'diary'"
# Ranked in that order, only: the entries naming the project, the important, the retrieved, and the newest of the
# rest (an entry of none of the three sets ranks below all of theirs, and among its like by change time alone).
PICKS = (
    "WITH named(id) AS (SELECT id FROM entry WHERE project = ?1 "
    "UNION SELECT id FROM entry WHERE ?1 = '' AND coalesce(project, '') = '' "  # as coalesce(project, '') = ?1
    "UNION SELECT entry_id FROM entry_tag WHERE tag = lower(?1)), "
    f"picked(id) AS (SELECT id FROM named UNION SELECT id FROM entry WHERE {IMPORTANT} "
    "UNION SELECT entry_id FROM usage), "
    f"newest(id) AS (SELECT id FROM entry WHERE {GLOBAL} AND id NOT IN picked ORDER BY mtime_ns DESC LIMIT ?2) "
    "SELECT e.slug, e.type, e.title FROM (SELECT id FROM picked UNION SELECT id FROM newest) c CROSS JOIN entry e "
    f"ON e.id = c.id WHERE e.{GLOBAL.replace(' AND ', ' AND e.')} ORDER BY {ORDER} LIMIT ?2"
)
SCAN = f"SELECT slug, type, title FROM entry e WHERE {GLOBAL} ORDER BY {ORDER} LIMIT ?2"  # an index before m017
