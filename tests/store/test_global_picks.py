"""pinky.store.global_picks (migration m017): the session digest's global notes from a few candidates, the same
answer as ranking every global entry, on real SQLite files: an index written before m017 and migrated, and one
changed afterwards (tags edited, entries deleted, uses recorded) through the triggers."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import add_entry, migrated_database

from pinky.store import global_picks
from pinky.store import migrations as store_migrations
from pinky.store import readonly as store_readonly
from pinky.store.connect import open_database
from pinky.store.entries import STAMPED

# The digest's query before m017, as it was written then: every global entry ranked in one ORDER BY.
OLD_SCAN = (
    "SELECT slug, type, title FROM entry e WHERE root = 'global' AND type != 'diary' "
    "ORDER BY (coalesce(project, '') = ?1 OR EXISTS (SELECT 1 FROM json_each(e.tags) "
    "WHERE lower(json_each.value) = lower(?1))) DESC, "
    "CASE lower(coalesce(json_extract(meta, '$.importance'), json_extract(meta, '$.priority'), '')) "
    "WHEN 'critical' THEN 0 WHEN 'high' THEN 1 ELSE 2 END, "
    "(SELECT count(*) FROM usage u WHERE u.entry_id = e.id) DESC, mtime_ns DESC LIMIT ?2")
PROJECTS = ["shop", "Shop", "billing", "pool", "none-of-them", ""]
TYPES = ["gotcha", "decision", "note", "diary", "pattern"]


def insert(conn: Any, n: int, rng: random.Random) -> str:
    """An entry as any pinky since m001 writes it (plain SQL: the same on the old schema and the new)."""
    root = "global" if rng.random() < 0.85 else "project"
    project = rng.choice([None, None, None, "shop", "billing", ""])
    tags = rng.sample(["Shop", "pool", "SHOP", "billing", "cache", "wal"], rng.randint(0, 3))
    meta = rng.choice([{"importance": "critical"}, {"importance": "High"}, {"priority": "high"}, {"importance": "low"},
                       {"superseded_by": "x"}] + [{}] * 40)  # few important ones: the uses and the newest count too
    eid = f"e{n:04d}"
    conn.execute("INSERT INTO entry(id, root, path, slug, scope, type, project, tags, title, body, meta, "
                 "content_hash, mtime_ns, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, 'h', ?, 'now')",
                 (eid, root, f"n{n}.md", f"{root}/n{n}", root, rng.choice(TYPES), project, json.dumps(tags),
                  f"Note {n}", json.dumps(meta), rng.randrange(10**12) * 1000 + n))  # no two alike: one order
    return eid


def fill(conn: Any, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    ids = [insert(conn, n, rng) for n in range(count)]
    for eid in rng.sample(ids, count // 5):  # searches that returned these, some several times
        conn.executemany("INSERT INTO usage(entry_id, retrieved_at, query) VALUES (?, 'now', 'q')",
                         [(eid,)] * rng.randint(1, 4))
    return ids


def answers(path: Path) -> dict[tuple[str, int], tuple[list[tuple], list[tuple]]]:
    """(project, limit) -> (what the digest reads now, what the old scan read), read-only as the hooks read."""
    conn = store_readonly.connect_ro(str(path))
    assert conn is not None
    try:
        return {(project, limit): (store_readonly.global_entries_for(conn, project, limit),
                                   conn.execute(OLD_SCAN, (project, limit)).fetchall())
                for project in PROJECTS for limit in (1, 4, 25, 80)}
    finally:
        conn.close()


def assert_same(path: Path) -> None:
    for (project, limit), (now, old) in answers(path).items():
        assert now == old, (project, limit)
        assert len(now) == limit


def test_an_index_written_before_m017_migrates_and_answers_as_the_old_scan(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    db = open_database(path)
    before = store_migrations.KNOWN.index("m017_lookup_indexes")
    store_migrations.applied(db.conn)
    for name, fn in store_migrations.MIGRATIONS[:before]:  # what the previous pinky wrote
        fn(db.conn)
        db.conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES (?, datetime('now'))", (name,))
    fill(db.conn, 400, seed=1)
    db.conn.commit()
    db.close()
    assert_same(path)  # the hooks read an index no writer migrated yet: the old scan, the same answer

    db = open_database(path)
    assert store_migrations.migrate(db.conn) == ["m017_lookup_indexes"]
    tagged = db.conn.execute("SELECT count(*) FROM entry_tag WHERE tag = 'shop'").fetchone()[0]
    db.close()
    assert tagged == sum("shop" in [t.lower() for t in ts] for ts in _tags(path))  # 'Shop' and 'SHOP' are one
    assert_same(path)
    conn = store_readonly.connect_ro(str(path))
    assert conn is not None
    plan = " ".join(str(r) for r in conn.execute("EXPLAIN QUERY PLAN " + global_picks.PICKS, ("shop", 4)))
    conn.close()
    assert "entry_tag" in plan and "entry_root_mtime" in plan and "entry_important" in plan
    conn = store_readonly.connect_ro(str(path))
    assert conn is not None
    stamps = conn.execute(f"SELECT id, root, path, content_hash, {STAMPED} FROM entry").fetchall()
    plan = " ".join(str(r) for r in conn.execute(f"EXPLAIN QUERY PLAN SELECT id, root, path, content_hash, {STAMPED} "
                                                 "FROM entry"))
    conn.close()
    assert "COVERING INDEX entry_stamp" in plan and len(stamps) == 400  # a reindex's stamps, without the bodies


def _tags(path: Path) -> list[list[str]]:
    conn = store_readonly.connect_ro(str(path))
    assert conn is not None
    try:
        return [json.loads(t) for (t,) in conn.execute("SELECT tags FROM entry")]
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [2, 3])
def test_edits_after_the_migration_keep_the_same_answer(tmp_path: Path, seed: int) -> None:
    """The triggers: tags changed, entries deleted and replaced, uses recorded, by plain SQL and by the writer."""
    path = tmp_path / "brain.db"
    db = migrated_database(path)
    rng = random.Random(seed)
    ids = fill(db.conn, 300, seed)
    for eid in rng.sample(ids, 60):
        tags = json.dumps(rng.sample(["shop", "Pool", "x"], 2))
        db.conn.execute("UPDATE entry SET tags = ? WHERE id = ?", (tags, eid))
    for eid in rng.sample(ids, 40):
        db.conn.execute("DELETE FROM entry WHERE id = ?", (eid,))
    db.conn.execute("UPDATE entry SET tags = 'not json' WHERE id = (SELECT min(id) FROM entry)")
    db.conn.execute("UPDATE entry SET tags = '[]' WHERE id = (SELECT min(id) FROM entry)")
    for n in range(5):  # through the indexer's own upsert, twice each: the second is an update
        for title in ("first", "second"):
            add_entry(db.conn, f"global/shop-{n}", root="global", tags=("SHOP", "shop") if n % 2 else ("wal",),
                      title=title, mtime_ns=10**16 + n, meta={"importance": "high"} if n == 3 else {})
    db.conn.commit()
    kept = db.conn.execute("SELECT e.slug, t.tag FROM entry_tag t LEFT JOIN entry e ON e.id = t.entry_id "
                           "WHERE e.slug IS NULL OR e.slug LIKE 'global/shop-%' ORDER BY 1, 2").fetchall()
    db.close()
    assert [tuple(r) for r in kept] == [(f"global/shop-{n}", "shop" if n % 2 else "wal") for n in range(5)]
    assert_same(path)
