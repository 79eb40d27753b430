"""A query whose every word is in more than half the chunks: BM25 has no evidence (FTS5 clamps each word's IDF
to 1e-6), so the vector side ranks it alone instead of BM25 scoring every chunk; any other query is ranked as
before. Real SQLite, the hashing embedder, an index above lexical.PRUNE_FROM_CHUNKS."""

from __future__ import annotations

from pathlib import Path

from helpers import write_note

from pinky.config import load_config
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.search import hybrid
from pinky.search.request import SearchRequest
from pinky.store.retrieval import Filters
from pinky.text.lexical import PRUNE_FROM_CHUNKS


def _brain(docs: Path, count: int) -> None:
    """Every note holds `alpha` and `omega` once among as many words as every other note: BM25 over every match
    cannot tell them apart, which is what a word in more than half the chunks says. `rare` is in ten notes."""
    for i in range(count):
        words = [f"w{i}x{j}" for j in range(6)]
        if i % 120 == 7:
            words[0] = "rare"
        write_note(docs, f"note/n{i:04d}.md", f"---\ntitle: n{i:04d}\n---\n\nalpha omega {' '.join(words)}\n")


def test_every_note_matching_is_ranked_by_the_vectors_with_the_same_top_results(project: Path) -> None:
    _brain(project / "documentation", PRUNE_FROM_CHUNKS + 200)
    index = Index(load_config())
    try:
        indexer.reindex(index, embed=True)
        assert index.chunk_total() >= PRUNE_FROM_CHUNKS
        filters, query = Filters(), "omega alpha"
        vector = hybrid.semantic_hits(index, query, filters)
        full = hybrid.lexical_hits(index, query, filters)  # BM25 over every chunk, as before
        assert len(full) == index.config.fusion.depth and vector
        assert hybrid.lexical_hits(index, query, filters, vector_led=True) == []  # no chunk scored
        expected = [entry for entry, _, _ in hybrid.fuse(index, query, full, vector, 10)]
        found = hybrid.search(index, SearchRequest(query, limit=10, record_usage=False)).hits
        slug_of = dict(index.conn.execute("SELECT id, slug FROM entry").fetchall())
        cosine = {slug_of[entry]: score for entry, score, _ in vector}
        shown, wanted = [hit.slug for hit in found], [slug_of[entry] for entry in expected]
        # The same notes at every rank, up to the order of equal cosines (the vectors' ties are broken by id)
        assert [cosine[slug] for slug in shown] == [cosine[slug] for slug in wanted]
        cut = cosine[shown[-1]]
        assert {s for s in shown if cosine[s] > cut} == {s for s in wanted if cosine[s] > cut}
        assert len(set(shown)) == 10 and cosine[shown[0]] > cosine[shown[-1]]
        # The gap log's coverage (pinky.search.gaps) reads the vectors' best chunk then: it holds every word
        assert hybrid.match_strength(index, query, [], vector, vector) == hybrid.match_strength(
            index, query, full, vector) == (1.0, vector[0][1])
        # One selective word (in 10 of 1,200 notes) and the full-text side is what it always was.
        for selective in ("rare alpha omega", "rare"):
            kept = hybrid.lexical_hits(index, selective, filters, vector_led=True)
            assert kept == hybrid.lexical_hits(index, selective, filters) and len(kept) == 10
        assert hybrid.search(index, SearchRequest("rare", record_usage=False)).hits[0].slug in {
            f"note/n{i:04d}" for i in range(7, 1200, 120)}
        # Keyword mode has no vector side to lead: BM25 ranks every match, as before.
        assert len(hybrid.search(index, SearchRequest(query, mode="bm25", limit=50, record_usage=False)).hits) == 50
    finally:
        index.close()


def test_when_every_note_the_vectors_found_is_superseded_the_words_still_find_the_current_ones(project: Path) -> None:
    """The vector side leads a common-words query, but what it found may all have left the default results: then
    the full-text side ranks the current notes as it did before, rather than the search answering nothing."""
    _brain(project / "documentation", PRUNE_FROM_CHUNKS + 200)
    index = Index(load_config())
    try:
        indexer.reindex(index, embed=True)
        query = "omega alpha"
        found = {entry for entry, _, _ in hybrid.semantic_hits(index, query, Filters())}
        assert found
        with index.conn:  # what a supersession writes into the index (the vector side's every candidate)
            index.conn.executemany("UPDATE entry SET meta = json_set(meta, '$.superseded_by', 'note/newer') "
                                   "WHERE id = ?", [(entry,) for entry in found])
        slug_of = dict(index.conn.execute("SELECT id, slug FROM entry").fetchall())
        hits = hybrid.search(index, SearchRequest(query, limit=10, record_usage=False)).hits
        assert len(hits) == 10
        assert not {hit.slug for hit in hits} & {slug_of[entry] for entry in found}
    finally:
        index.close()
