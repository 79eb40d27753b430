"""The KnowledgeBase over real SQLite files and real markdown folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.errors import Conflict, IndexUnavailable, InvalidInput, NotFound
from pinky.kb import KnowledgeBase
from pinky.store import vectors as store_vectors

POOL = """---
title: Postgres pool hangs on shutdown
type: gotcha
tags: [postgres, pool]
---
# Postgres pool hangs on shutdown

Call pool.close(timeout=5) before exiting, or the process waits for idle connections.
"""
BREAD = "# Sourdough starter\n\nFeed the starter twice a day with flour and water.\n"


@pytest.fixture
def kb(project: Path) -> KnowledgeBase:
    write_note(project / "documentation", "gotcha/pool.md", POOL)
    write_note(project / "documentation", "note/bread.md", BREAD)
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def slugs(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.slug for h in result.hits]


def test_reindex_counts_and_second_run_embeds_nothing(kb: KnowledgeBase) -> None:
    first = kb.reindex()
    assert (first.added, first.updated, first.removed) == (2, 0, 0)
    assert first.chunks_embedded == 2
    second = kb.reindex()
    assert (second.added, second.updated, second.unchanged, second.chunks_embedded) == (0, 0, 2, 0)


def test_touched_but_unchanged_file_is_not_reparsed_or_embedded(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    path = project / "documentation/gotcha/pool.md"
    path.write_text(path.read_text())  # new mtime, same bytes
    report = kb.reindex()
    assert (report.updated, report.chunks_embedded, report.unchanged) == (0, 0, 2)


def test_changed_file_is_updated_and_only_new_text_embedded(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    path = project / "documentation/gotcha/pool.md"
    path.write_text(POOL + "\n## Also\n\nA brand new paragraph about pgbouncer settings.\n")
    report = kb.reindex()
    assert report.updated == 1
    assert report.chunks_embedded >= 1
    assert slugs(kb.search("pgbouncer")) == ["gotcha/pool"]


def test_changed_fingerprint_re_embeds_everything(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_note(project / "documentation", "gotcha/pool.md", POOL)
    with KnowledgeBase(load_config()) as kb:
        assert kb.reindex().chunks_embedded == 1
    monkeypatch.setenv("PINKY_CHUNK_WORDS", "80")  # a chunker change invalidates every vector
    with KnowledgeBase(load_config()) as kb:
        assert kb.vector_status()[0] is False
        assert "reindex" in kb.vector_status()[1]
        result = kb.search("pool")
        assert result.mode == "bm25" and result.notice  # vectors from another space are not used
        assert kb.reindex().chunks_embedded == 1
        assert kb.vector_status() == (True, "ok")


def test_deleted_file_leaves_no_stale_result(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    (project / "documentation/gotcha/pool.md").unlink()
    assert kb.reindex().removed == 1
    assert "gotcha/pool" not in slugs(kb.search("postgres pool shutdown"))
    assert kb.stats()["chunks"] == 1


def test_renamed_file_keeps_no_stale_rows(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    old = project / "documentation/gotcha/pool.md"
    old.rename(project / "documentation/gotcha/pg-pool.md")
    report = kb.reindex()
    assert (report.added, report.removed, report.chunks_embedded) == (1, 1, 0)  # the vector came from cache
    assert slugs(kb.search("postgres pool shutdown", limit=5))[0] == "gotcha/pg-pool"
    assert "gotcha/pool" not in slugs(kb.search("postgres pool shutdown", limit=5))
    with pytest.raises(NotFound):
        kb.get("gotcha/pool")


def test_fts_only_fallback_when_vectors_cannot_load(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_NO_VEC", "1")
    write_note(project / "documentation", "gotcha/pool.md", POOL)
    with KnowledgeBase(load_config()) as kb:
        report = kb.reindex()
        assert report.added == 1 and report.chunks_embedded == 0
        assert report.vectors.startswith("unavailable")
        result = kb.search("pool shutdown")
        assert result.mode == "bm25"
        assert "full-text only" in (result.notice or "")
        assert slugs(result) == ["gotcha/pool"]


def test_corrupt_db_is_rebuilt_without_touching_markdown(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    kb.close()
    before = {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")}
    db = project / "brain.db"
    db.write_bytes(b"this is not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        (project / f"brain.db{suffix}").unlink(missing_ok=True)
    with KnowledgeBase(load_config()) as fresh:
        report = fresh.reindex()
        assert fresh.rebuilt_reason and "not a readable SQLite database" in fresh.rebuilt_reason
        assert report.added == 2
        assert slugs(fresh.search("pool shutdown"))[0] == "gotcha/pool"
    assert {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")} == before


def test_db_with_unknown_schema_is_rebuilt(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    kb.db.conn.execute("INSERT INTO _pinky_migrations(name, applied_at) VALUES ('m999_from_the_future', 'x')")
    kb.close()
    with KnowledgeBase(load_config()) as fresh:
        assert fresh.reindex().added == 2
        assert "schema" in (fresh.rebuilt_reason or "")


def test_project_and_global_entries_rank_together(kb: KnowledgeBase, isolated_env: Path) -> None:
    write_note(isolated_env / "brain", "gotcha/pg-global.md",
               "---\ntitle: Global postgres pool advice\ntype: gotcha\n---\nPostgres pool shutdown needs a timeout.")
    kb.reindex()
    hits = kb.search("postgres pool shutdown").hits
    scopes = {h.slug: h.scope for h in hits}
    assert scopes["gotcha/pool"] == "project:demo-project"
    assert scopes["global/gotcha/pg-global"] == "global"
    assert hits[0].path.endswith("pool.md") or hits[0].path.endswith("pg-global.md")
    assert [h.slug for h in kb.search("postgres", scope="global").hits] == ["global/gotcha/pg-global"]
    assert "global/gotcha/pg-global" not in slugs(kb.search("postgres", project="demo-project"))


def test_filters_by_type_and_all_tags(kb: KnowledgeBase) -> None:
    kb.reindex()
    assert slugs(kb.search("pool", type="gotcha")) == ["gotcha/pool"]
    assert slugs(kb.search("pool", type="decision")) == []
    assert slugs(kb.search("pool", tags=["postgres", "pool"])) == ["gotcha/pool"]
    assert slugs(kb.search("pool", tags=["postgres", "mysql"])) == []


def test_hit_carries_citation_fields(kb: KnowledgeBase) -> None:
    kb.reindex()
    hit = kb.search("pool.close timeout").hits[0]
    assert hit.slug == "gotcha/pool"
    assert hit.path == "documentation/gotcha/pool.md"
    assert hit.line == 6 and hit.heading == "Postgres pool hangs on shutdown"
    assert hit.type == "gotcha" and hit.tags == ["postgres", "pool"]
    assert "pool.close" in hit.snippet


@pytest.mark.parametrize("query", ['"', "(", "AND", "OR NEAR", "*", "-x", "a:b", "🙂", "x" * 2000, "\\", "'"])
def test_any_query_text_is_safe(kb: KnowledgeBase, query: str) -> None:
    kb.reindex()
    kb.search(query)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"query": "x" * 2001}, "2,001 characters"),
    ({"query": "ok", "limit": 0}, "limit"),
    ({"query": "ok", "limit": 101}, "limit"),
    ({"query": "ok", "type": "recipe"}, "unknown type"),
    ({"query": "ok", "scope": "elsewhere"}, "scope"),
    ({"query": "ok", "tags": "postgres"}, "list of strings"),
    ({"query": "ok", "scope": "global", "project": "x"}, "contradicts"),
])
def test_bad_search_input_is_a_clear_error(kb: KnowledgeBase, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        kb.search(**kwargs)


def test_save_writes_markdown_then_is_searchable(kb: KnowledgeBase, project: Path) -> None:
    entry = kb.save("El pool de PG se cuelga", "Usar pool.close(timeout=…) antes de salir.", type="gotcha",
                    tags=["postgres"])
    path = project / entry.path
    assert path.exists() and entry.slug == "gotcha/el-pool-de-pg-se-cuelga"
    text = path.read_text()
    assert text.startswith("---\ntitle: El pool de PG se cuelga\ntype: gotcha\n")
    assert entry.scope == "project:demo-project"
    assert slugs(kb.search("cuelga"))[0] == entry.slug
    again = kb.save("El pool de PG se cuelga", "second", type="gotcha")
    assert again.slug == "gotcha/el-pool-de-pg-se-cuelga-2"  # never overwrites


def test_global_save_lands_in_the_global_brain(kb: KnowledgeBase, isolated_env: Path) -> None:
    entry = kb.save("Use ripgrep", "rg is fast", scope="global")
    assert entry.scope == "global" and entry.slug == "global/note/use-ripgrep"
    assert (isolated_env / "brain/note/use-ripgrep.md").exists()


@pytest.mark.parametrize("title", ["../../etc/passwd", "/abs/path", "a\x00b", "line\nbreak", "", "   "])
def test_unsafe_titles_never_write_outside_the_save_dir(kb: KnowledgeBase, project: Path, title: str) -> None:
    try:
        entry = kb.save(title, "body")
    except InvalidInput:
        return
    assert (project / entry.path).resolve().is_relative_to((project / "documentation").resolve())


def test_get_update_with_optimistic_concurrency(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    entry = kb.get("pool")  # a unique last part of the slug is enough
    assert entry.slug == "gotcha/pool" and entry.version
    updated = kb.update("gotcha/pool", entry.version, body="New body about pgbouncer.", tags=["pg"])
    assert updated.version != entry.version and updated.tags == ["pg"]
    assert "pgbouncer" in (project / "documentation/gotcha/pool.md").read_text()
    with pytest.raises(Conflict, match="changed"):
        kb.update("gotcha/pool", entry.version, body="lost update")
    assert "lost update" not in (project / "documentation/gotcha/pool.md").read_text()


def test_external_edit_changes_the_version(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    version = kb.get("gotcha/pool").version
    path = project / "documentation/gotcha/pool.md"
    path.write_text(POOL.replace("timeout=5", "timeout=10"))
    with pytest.raises(Conflict):
        kb.update("gotcha/pool", version, body="x")
    assert kb.get("gotcha/pool").version != version


def test_soft_delete_and_restore(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    archived = kb.delete("gotcha/pool", "fixed upstream")
    assert archived.parent == project / "documentation/.archive/gotcha" and archived.name.startswith("pool.")
    assert "archive_reason: fixed upstream" in archived.read_text()
    assert "gotcha/pool" not in slugs(kb.search("pool shutdown"))
    assert kb.reindex().removed == 0  # the archive is not indexed
    restored = kb.restore("gotcha/pool")
    assert restored.slug == "gotcha/pool" and "archive_reason" not in restored.meta
    assert slugs(kb.search("pool shutdown"))[0] == "gotcha/pool"
    with pytest.raises(NotFound):
        kb.restore("gotcha/pool")


def test_malformed_file_is_indexed_and_reported(kb: KnowledgeBase, project: Path) -> None:
    write_note(project / "documentation", "broken.md", "---\ntitle: [oops\n---\nKubernetes ingress notes.\n")
    report = kb.reindex()
    assert report.added == 3 and not report.errors
    assert slugs(kb.search("kubernetes ingress")) == ["broken"]
    assert any("broken.md" in line and "malformed" in line for line in kb.health.malformed())


def test_hidden_and_template_files_are_not_indexed(kb: KnowledgeBase, project: Path) -> None:
    write_note(project / "documentation", "gotcha/_template.md", "template text zebra")
    write_note(project / "documentation", ".hidden/x.md", "hidden zebra")
    kb.reindex()
    assert slugs(kb.search("zebra")) == []


def test_drift_reports_unindexed_changes(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    write_note(project / "documentation", "note/new.md", "new")
    (project / "documentation/note/bread.md").unlink()
    drift = kb.drift()
    assert drift["new"] == ["documentation/note/new.md"]
    assert drift["deleted"] == ["documentation/note/bread.md"]


def test_a_deleted_notes_vectors_are_kept_for_its_return(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    note = project / "documentation/note/bread.md"
    text = note.read_text(encoding="utf-8")
    note.unlink()
    kb.reindex()
    assert kb.stats()["cached_embeddings"] == 1  # bread's vector, kept by its text's hash
    assert kb.gc()["stale_cached_embeddings"] == 0
    note.write_text(text, encoding="utf-8")  # a revert, or the same note under another name
    assert kb.reindex().chunks_embedded == 0
    assert kb.stats()["cached_embeddings"] == 0  # live again: the index holds it


def test_stats_shape(kb: KnowledgeBase) -> None:
    kb.reindex()
    stats = kb.stats()
    assert stats["entries"] == 2 and stats["chunks"] == 2 and stats["vectors"] == 2
    assert stats["embedder"] == "hash-v1" and stats["dims"] == 256
    assert json.dumps(stats)


def test_rare_identifier_ranks_its_only_note_first(project: Path) -> None:
    """One note contains the identifier (BM25 has a single hit); many short notes are vector
    noise (the hashing embedder's buckets collide). The exact match must still come first."""
    import random

    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    for n in range(300):
        write_note(project / "documentation", f"note/n{n}.md", " ".join(rng.choices(words, k=4)))
    write_note(project / "documentation", "gotcha/err.md",
               "Deploy fails with zorblax4711 when " + " ".join(rng.choices(words, k=80)))
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        result = kb.search("zorblax4711", limit=5)
        assert len(result.hits) > 1  # there is vector noise to beat
        assert slugs(result)[0] == "gotcha/err"


def test_outside_a_project_the_index_lives_in_pinky_home(tmp_path: Path, isolated_env: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's server starts in every folder Claude Code opens; it must not litter them."""
    folder = tmp_path / "some-repo"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with KnowledgeBase(load_config()) as kb:
        assert kb.config.db_path == isolated_env / "global.db"
        kb.save("Global only", "saved from a folder without pinky", scope="global")
        assert [h.slug for h in kb.search("folder without pinky").hits] == ["global/note/global-only"]
    assert list(folder.iterdir()) == []
    (folder / "documentation").mkdir()  # a folder of that name alone does not make a pinky project
    assert load_config().db_path == isolated_env / "global.db"
    (folder / "pinky.toml").write_text("")  # `pinky init` does
    assert load_config().db_path == folder / "brain.db"


def test_a_process_without_sqlite_vec_can_still_update_notes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector table made by another process must not break full-text writes where vec0 can't load."""
    write_note(project / "documentation", "gotcha/pool.md", POOL)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    monkeypatch.setenv("PINKY_NO_VEC", "1")
    (project / "documentation/gotcha/pool.md").write_text(POOL + "\nAlso check pgbouncer.\n")
    with KnowledgeBase(load_config()) as kb:
        assert kb.reindex().updated == 1
        assert slugs(kb.search("pgbouncer")) == ["gotcha/pool"]
    monkeypatch.delenv("PINKY_NO_VEC")
    with KnowledgeBase(load_config()) as kb:  # back where vectors load: orphans go, new text is embedded
        report = kb.reindex()
        assert report.chunks_embedded == 1
        stats = kb.stats()
        assert stats["vectors"] == stats["chunks"] == 1
        assert store_vectors.vector_rows(kb.db.conn) == 1


def test_a_note_passed_as_the_index_is_refused_not_rebuilt(kb: KnowledgeBase, project: Path) -> None:
    note = project / "documentation/gotcha/pool.md"
    with KnowledgeBase(load_config(db=note)) as wrong:
        with pytest.raises(IndexUnavailable, match="markdown file"):
            wrong.stats()
    assert note.read_text() == POOL


def test_a_foreign_file_passed_as_the_index_is_refused(project: Path) -> None:
    other = project / "notes.txt"
    other.write_text("my own notes, not a database")
    with KnowledgeBase(load_config(db=other)) as wrong:
        with pytest.raises(IndexUnavailable, match="refusing to replace it"):
            wrong.stats()
    assert other.read_text() == "my own notes, not a database"


def test_similar_finds_a_near_duplicate_but_not_a_different_note(kb: KnowledgeBase) -> None:
    kb.reindex()
    repeat = kb.save("Postgres pool hangs on shutdown", "Call pool.close(timeout=5) before exiting, or the process "
                     "waits for idle connections.", type="gotcha")
    assert [h.slug for h in kb.similar(repeat.slug)] == ["gotcha/pool"]
    other = kb.save("Tabs versus spaces", "We indent Python with four spaces, as PEP 8 says.")
    assert kb.similar(other.slug) == []


def test_freshness_filter_keeps_recently_verified_or_changed_entries(kb: KnowledgeBase, project: Path) -> None:
    import os
    import time

    write_note(project / "documentation", "gotcha/stale.md",
               "---\ntitle: Old pool advice\ntype: gotcha\nlast_verified: 2019-05-01\ncreated: 2019-05-01\n---\n"
               "Restart the pool nightly.\n")
    old = time.time() - 86400 * 400
    for rel in ("gotcha/stale.md", "note/bread.md"):
        os.utime(project / "documentation" / rel, (old, old))
    kb.reindex()
    assert set(slugs(kb.search("pool"))) == {"gotcha/pool", "gotcha/stale"}
    assert slugs(kb.search("pool", since="90d")) == ["gotcha/pool"]  # changed just now
    assert set(slugs(kb.search("pool", since="2019-01-01"))) == {"gotcha/pool", "gotcha/stale"}
    with pytest.raises(InvalidInput, match="ISO-8601"):
        kb.search("pool", since="last summer")


def test_stats_report_entries_no_search_returned_for_months(kb: KnowledgeBase, project: Path) -> None:
    import os
    import time

    old = time.time() - 86400 * 400
    for rel in ("gotcha/pool.md", "note/bread.md"):
        os.utime(project / "documentation" / rel, (old, old))
    kb.reindex()
    assert kb.stats()["unused"] == 2
    kb.search("sourdough starter", record_usage=True)  # bread is retrieved, so it is in use
    stats = kb.stats()
    assert (stats["unused"], stats["unused_sample"]) == (1, ["gotcha/pool"])


def test_the_chunk_count_follows_writes_by_this_and_other_processes(kb: KnowledgeBase, project: Path) -> None:
    kb.reindex()
    before = kb.index.chunk_total()
    assert before == kb.stats()["chunks"] == 2
    with KnowledgeBase(load_config()) as other:  # another connection, as another process has
        write_note(project / "documentation", "note/third.md", "A third note.\n")
        other.reindex()
    assert kb.index.chunk_total() == 3
    (project / "documentation/note/third.md").unlink()
    kb.reindex()  # this connection's own write
    assert kb.index.chunk_total() == 2
