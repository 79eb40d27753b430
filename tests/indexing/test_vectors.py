"""The in-memory vector copy answers exactly like sqlite-vec and never serves stale vectors."""

from __future__ import annotations

from pathlib import Path

from helpers import write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.store import retrieval

TOPICS = ["postgres pool timeout", "redis eviction policy", "docker layer cache", "python asyncio cancel",
          "git rebase conflict", "kubernetes ingress tls", "css grid layout", "rust borrow checker"]


def _notes(root: Path) -> None:
    for i, topic in enumerate(TOPICS):
        write_note(root, f"note/n{i}.md", f"# {topic}\n\nNotes about {topic} and more {topic.split()[0]}.")


def test_cache_matches_sqlite_vec(project: Path) -> None:
    _notes(project / "documentation")
    with KnowledgeBase(load_config(), cache_vectors=True) as cached, KnowledgeBase(load_config()) as plain:
        cached.reindex()
        for query in ["postgres timeout", "cache layers", "borrow"]:
            vec = plain.embedder.embed([query])[0]
            on_disk = retrieval.vector_hits(plain.db.conn, vec.tobytes(), retrieval.Filters(), 10)
            in_memory = cached.index.vector_cache.hits(cached.db.conn, vec, retrieval.Filters(), 10)
            # Same scores in the same order (entries with tied scores may swap places).
            assert [round(h[1], 4) for h in in_memory] == [round(h[1], 4) for h in on_disk]
            assert in_memory[0][0] == on_disk[0][0]
            assert {(h[0], round(h[1], 4)) for h in in_memory} == {(h[0], round(h[1], 4)) for h in on_disk}
            filtered = retrieval.Filters(type="note", tags=())
            assert cached.index.vector_cache.hits(cached.db.conn, vec, filtered, 1)[0][0] == \
                   retrieval.vector_hits(plain.db.conn, vec.tobytes(), filtered, 1)[0][0]


def test_cache_reloads_after_another_process_changes_vectors(project: Path) -> None:
    _notes(project / "documentation")
    with KnowledgeBase(load_config(), cache_vectors=True) as server, KnowledgeBase(load_config()) as cli:
        cli.reindex()
        assert "note/n0" in [h.slug for h in server.search("postgres pool timeout").hits]
        (project / "documentation/note/n0.md").unlink()
        cli.save("Zebra migration", "zebras migrate across the serengeti")
        cli.reindex()
        slugs = [h.slug for h in server.search("zebra migration serengeti", mode="vector").hits]
        assert slugs[0] == "note/zebra-migration"
        assert "note/n0" not in [h.slug for h in server.search("postgres pool timeout", mode="vector").hits]
