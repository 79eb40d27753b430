"""Hybrid search: BM25 and vector candidates, fused into one ranking of entries.

The top half is pure (modes, snippets; rank fusion and the coverage gate are in `pinky.search.fusion`) and is
tested without a database; the bottom half runs a search over an `Index` through `pinky.store`.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from pinky.base import usage
from pinky.base.dates import now_utc
from pinky.base.declare import declared, specified
from pinky.base.operations import EntryHead
from pinky.base.redact import redact
from pinky.base.shown import shown
from pinky.base.staleness import age_days, is_stale
from pinky.base.validate import (
    MAX_HYPOTHETICAL_CHARS,
    MAX_QUERY_CHARS,
    clean_text,
    validate_limit,
)
from pinky.embed.embedding import combined_vector
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.search import context_rank, gaps
from pinky.search import second_stage as second_stage_retriever
from pinky.search.fusion import (
    Standardised,
    blend_vector_sides,
    explain_parts,
    fuse_standardised,
    gated_weight,
    mix_standardised,
    rrf,
    score_fusion,
    zscores,
)
from pinky.search.history import asks_for_history, history_last
from pinky.search.request import SearchRequest, filters_for
from pinky.store import corpus, hygiene_queries, retrieval
from pinky.store import quality as store_quality
from pinky.store import vectors as store_vectors
from pinky.store.connect import read_snapshot, write_transaction
from pinky.text.lexical import (
    FEEDBACK_DOCS,
    add_scores,
    feedback_candidates,
    feedback_terms,
    informative_terms,
    lexical_terms,
    match_expression,
    near_expression,
    only_common,
    query_terms,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

log = logging.getLogger("pinky.search.hybrid")
SEARCH_MODES = ("hybrid", "bm25", "vector")
MODE_ALIASES = {"keyword": "bm25", "semantic": "vector"}  # the names brain_search's `mode` uses

_WORD = re.compile(r"\w+", re.UNICODE)

def canonical_mode(mode: Any) -> str:
    """A search mode by either of its names: hybrid, bm25 (= keyword) or vector (= semantic)."""
    if not isinstance(mode, str) or MODE_ALIASES.get(mode, mode) not in SEARCH_MODES:
        names = ", ".join(f"{m} ({a})" if (a := next((k for k, v in MODE_ALIASES.items() if v == m), None)) else m
                          for m in SEARCH_MODES)
        raise InvalidInput(f"unknown search mode {mode!r}; use one of {names}")
    return MODE_ALIASES.get(mode, mode)


def snippet(text: str, query: str, width: int = 240) -> str:
    """A window of `text` around the first query word it contains, on one line, secrets redacted.

    The window holds whole words only, so a cut never leaves half a key that the redactor could
    no longer recognise, and it is redacted knowing the words just before it ("password is").
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return redact(flat)
    lower = flat.lower()
    positions = [lower.find(w.lower()) for w in _WORD.findall(query) if len(w) > 2]
    hits = [p for p in positions if p >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    end = min(len(flat), start + width)
    return ("…" if start else "") + _redacted_window(flat, start, end) + ("…" if end < len(flat) else "")


SNIPPET_CONTEXT = 80  # characters before a snippet that its redaction takes into account


def _redacted_window(flat: str, start: int, end: int) -> str:
    """`flat[start:end]` without a partial word at either end, redacted with the words before it."""
    if start and flat[start - 1] != " ":
        space = flat.find(" ", start, end)
        start = space + 1 if space >= 0 else start
    if end < len(flat) and flat[end] != " ":
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    window = flat[start:end].rstrip()
    if not start:
        return redact(window)
    context = flat[flat.rfind(" ", 0, max(0, start - SNIPPET_CONTEXT)) + 1 : start]
    both, before = redact(context + window), redact(context)
    return both[len(before) :] if both.startswith(before) else both


# --- running a search over the index --------------------------------------------------------------------

Candidate = tuple[str, float, int]  # (entry id, score where higher is better, best chunk id)


@dataclass(frozen=True)
class Hit(EntryHead):
    """One search result: the entry's head (`EntryHead`), its score and best passage, and how current it is.
    Each field's one line is what brain_search's output schema says of it (pinky.mcp.search_tools)."""

    score: float
    snippet: str = field(metadata=specified(doc="The best-matching passage."))
    heading: str = field(metadata=specified(doc="Section of the passage."))
    line: int = field(metadata=specified(doc="Line in the file where the passage starts."))
    last_verified: str | None
    superseded_by: str | None = declared(None, doc=(
        "Set when a newer entry replaced this one (seen only with include_superseded or at): rely on that one "
        "instead."))
    valid_until: str | None = None
    age_days: int | None = declared(None, doc="Days since it was last verified (else created).")
    stale: bool = declared(False, doc=(  # age past its type's threshold (pinky.base.staleness)
        "Older than its type allows (HYGIENE.md): check it still holds before relying on it, then "
        "brain_update verified=true."))
    why: str | None = declared(None, doc=(  # set when the context file lifted it (pinky.search.context_rank)
        "Why it ranks higher: linked to the context_file, or one link from it."))
    parts: dict[str, Any] | None = None  # with `explain`: each side's score and rank (fusion.explain_parts)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["parts"] is None:  # only an explained search carries it
            del data["parts"]
        return data


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    mode: str = field(metadata=specified(doc=(  # what actually ran
        "What ran: hybrid, bm25 (keyword) or vector (semantic); bm25 when vectors are unavailable.")))
    notice: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"hits": [h.as_dict() for h in self.hits], "mode": self.mode, "notice": self.notice}


def search(index: Index, request: SearchRequest) -> SearchResult:
    """Hybrid search over both roots in one ranking; the request's selection narrows before ranking.
    `context_file`: the file the caller works on; entries linked to it rank a little higher
    (pinky.search.context_rank). `hypothetical`: a draft answer written by the caller (HyDE); the vector
    side searches with it (see semantic_hits), full text with the query alone. `explain`: each hit carries
    `parts`, what each side scored it (pinky.search.fusion.explain_parts).

    Every read runs in one snapshot: re-storing a note gives its chunks new ids, and a note another
    connection re-stored between the ranking and the reading of its rows would otherwise be lost."""
    query = clean_text(request.query, "query", MAX_QUERY_CHARS)
    with read_snapshot(index.conn):
        found = _find(index, request, query)
    if request.record_usage and index.config.telemetry:
        if found.ranked:
            _record_usage(index, found.ranked, query)
        if gaps.is_weak(*found.strength):
            gaps.record(index, query, max(found.strength))
    return SearchResult(found.hits, found.mode, found.notice)


@dataclass(frozen=True)
class _Found:
    hits: list[Hit]
    mode: str
    notice: str | None
    ranked: list[str]  # the entries ranked, best first
    strength: tuple[float, float]  # match_strength, for the gap log


def _find(index: Index, request: SearchRequest, query: str) -> _Found:
    filters = filters_for(index, request)
    hypothetical = request.hypothetical
    if hypothetical is not None:  # the request as asked; the draft as checked
        hypothetical = clean_text(hypothetical, "hypothetical", MAX_HYPOTHETICAL_CHARS)
    limit = validate_limit(request.limit)
    mode = canonical_mode(request.mode)
    second_stage = mode != "bm25" and _second_stage_ready(index)
    # A one-shot search starts the second stage's query now, on one core: loading the model and its first
    # query (~60 ms, mostly page faults on the weights) run beside the full-text and first-stage work. A
    # warm server embeds it on every core when needed: run beside, it slowed them (p95 28 -> 39 ms at 10k).
    one_shot = second_stage and index.vector_cache is None
    started = second_stage_retriever.encoder().query_soon(query, cores=1) if one_shot else None
    vector: list[Candidate] = []
    refined: list[Candidate] | None = None
    notice, ran = None, mode
    usable, why = index.vector_status() if mode != "bm25" else (False, "")
    if usable:
        vector = semantic_hits(index, query, filters, hypothetical)
        notice = pending_notice(index)
    lexical = lexical_hits(index, query, filters, vector_led=bool(vector)) if mode != "vector" else []
    if mode != "bm25":
        refined = second_stage_hits(index, query, filters, hypothetical, started) if second_stage else None
        if not usable and refined is None:
            notice, ran = f"vector search unavailable ({why}); results are full-text only", "bm25"
    if hypothetical is not None and ran == "bm25":
        notice = " ".join(filter(None, [notice, "hypothetical is used by the vector side only; it was not used"]))
    if filters.current_on and not filters.active:  # the fast path did not filter: drop what is no longer current
        led_by_vectors = bool(vector) and not lexical
        lexical, vector, refined = _current(index, filters, lexical, vector, refined)
        if led_by_vectors and not vector and mode != "vector":  # every vector candidate was superseded: the words
            lexical = _current(index, filters, lexical_hits(index, query, filters), [], None)[0]
    boosts = context_rank.boosts_for(index, request.context_file) if request.context_file else {}
    ranked = fuse(index, query, lexical, vector, limit, boosts, refined)
    whys = {chunk: boosts[entry].why for entry, _, chunk in ranked if entry in boosts}
    parts = explain_parts(lexical, vector, refined, boosts) if request.explain else {}
    hits = hits_for(index, [(chunk, score) for _, score, chunk in ranked], query, whys,
                    {chunk: parts[entry] for entry, _, chunk in ranked if entry in parts})
    wanted = request.record_usage and index.config.telemetry
    led = vector if mode != "vector" and not lexical else []  # no word matched, or every one too common to rank
    strength = match_strength(index, query, lexical, vector, led) if wanted else (1.0, 1.0)
    return _Found(hits, ran, notice, [entry for entry, _, _ in ranked], strength)


def _current(index: Index, filters: retrieval.Filters, lexical: list[Candidate], vector: list[Candidate],
             refined: list[Candidate] | None) -> tuple[list[Candidate], list[Candidate], list[Candidate] | None]:
    """The candidates without the entries no longer current (superseded, or past their validity)."""
    gone = hygiene_queries.not_current(index.conn, list({e for e, _, _ in lexical + vector + (refined or [])}),
                                       filters.current_on or "")
    lexical, vector = [c for c in lexical if c[0] not in gone], [c for c in vector if c[0] not in gone]
    return lexical, vector, None if refined is None else [c for c in refined if c[0] not in gone]


def match_strength(index: Index, query: str, lexical: list[Candidate], vector: list[Candidate],
                   led: list[Candidate] | None = None) -> tuple[float, float]:
    """How well the best candidates answer a query: the share of its words the best lexical chunk holds,
    and the best cosine similarity (0 below the noise floor). Absolute, unlike fused scores. `led`: the
    vector candidates when the full-text side found none; their best chunk holds no query word unless
    every word was too common to rank by (lexical_hits), and then it is asked which it holds."""
    terms = query_terms(query)
    if not lexical and led and terms:  # tokenised once: asking FTS5 walks a common word's whole doclist
        chunk = led[0][2]
        holding = corpus.chunks_holding(index.conn, terms, [chunk])
        return sum(chunk in chunks for chunks in holding.values()) / len(terms), max(s for _, s, _ in vector)
    coverage = retrieval.terms_matching_chunk(index.conn, lexical[0][2],
                                              terms) / len(terms) if lexical and terms else 0.0
    return coverage, max((score for _, score, _ in vector), default=0.0)


def pending_notice(index: Index) -> str | None:
    """Say so when some chunks have no vector yet (a reindex still embedding, or stopped early):
    those are found by full text only, and a semantic question may miss them."""
    pending = store_vectors.count_pending(index.conn)
    if not pending:
        return None
    which = "1 chunk has" if pending == 1 else f"{pending:,} chunks have"
    return (f"{which} no vector yet (embedding in progress, or run `pinky-brain reindex`); until then "
            f"{'it is' if pending == 1 else 'they are'} found by full text only")


def lexical_hits(index: Index, query: str, filters: retrieval.Filters, vector_led: bool = False) -> list[Candidate]:
    """Full-text candidates. `vector_led`: the vector side found candidates, so a query whose every word
    is in more than half the chunks (lexical.only_common: BM25 has no evidence then) has none and the
    vector side ranks alone, instead of BM25 scoring nearly every chunk; any other query is ranked as ever."""
    conn = index.conn
    settings = index.config.fusion
    terms = lexical_terms(query, settings.split_identifiers)
    if len(terms) > 1 or vector_led:
        counts = corpus.term_chunk_counts(conn, terms)
        if vector_led and only_common(counts, index.chunk_total()):
            return []
        if len(terms) > 1:
            terms = informative_terms(counts, index.chunk_total())
    match = match_expression(terms)
    if not match:
        return []
    hits = retrieval.fts_hits(conn, match, filters, settings.depth, settings.field_weights)
    near = near_expression(terms) if settings.proximity > 0 else None
    if near and hits:
        hits = add_scores(hits, retrieval.fts_hits(conn, near, filters, settings.depth, settings.field_weights),
                          settings.proximity)
    if settings.feedback > 0 and hits:
        hits = _with_feedback(index, hits, terms, filters)
    return hits


def _with_feedback(index: Index, hits: list[Candidate], terms: list[str],
                   filters: retrieval.Filters) -> list[Candidate]:
    """Pseudo-relevance feedback: the words the top chunks share (and the index at large does not) asked for
    in a second pass, whose score adds to the first's."""
    settings = index.config.fusion
    texts = retrieval.chunk_texts(index.conn, [chunk for _, _, chunk in hits[:FEEDBACK_DOCS]])
    candidates = feedback_candidates(texts, set(terms))
    common = [word for word, count in candidates.items() if count >= 2]
    counts = dict(corpus.term_chunk_counts(index.conn, common))
    expansion = match_expression(feedback_terms(candidates, counts, index.chunk_total()))
    if not expansion:
        return hits
    return add_scores(hits, retrieval.fts_hits(index.conn, expansion, filters, settings.depth, settings.field_weights),
                      settings.feedback)


def semantic_hits(index: Index, query: str, filters: retrieval.Filters,
                  hypothetical: str | None = None) -> list[Candidate]:
    """Vector candidates above the noise floor; none for a query with no embeddable content. With a
    `hypothetical` answer, the search vector is the normalised sum of the query's and the answer's
    (each unit length): the answer brings the vocabulary of the notes, the query keeps its intent."""
    vectors = index.embedder.embed([query] if hypothetical is None else [query, hypothetical]).astype("float32")
    qvec = combined_vector(vectors)
    if not qvec.any():
        return []
    floor = index.config.fusion.min_similarity
    return [hit for hit in vector_hits(index, qvec, filters) if hit[1] >= floor]


def _second_stage_ready(index: Index) -> bool:
    """Whether the second stage (pinky.search.second_stage) ranks this search."""
    try:
        return second_stage_retriever.ready(index)
    except Exception as exc:  # a broken install costs the search its better vectors, never the search
        log.warning("second-stage vectors not used: %s", exc)
        return False


def second_stage_hits(index: Index, query: str, filters: retrieval.Filters, hypothetical: str | None = None,
                      started: Future[Any] | None = None) -> list[Candidate] | None:
    """The second-stage model's candidates (pinky.search.second_stage), once _second_stage_ready said it ranks (from the
    query embedding `started` earlier, if one was); None when the model fails (a broken install, say):
    that costs the search its better vectors, never the search itself."""
    try:
        return second_stage_retriever.hits(index, query, filters, hypothetical, started)
    except Exception as exc:
        log.warning("second-stage vectors not used: %s", exc)
        return None


def vector_hits(index: Index, qvec: Any, filters: retrieval.Filters) -> list[Candidate]:
    depth = index.config.fusion.depth
    if index.vector_cache is not None:
        return list(index.vector_cache.hits(index.conn, qvec, filters, depth))
    return retrieval.vector_hits(index.conn, qvec.tobytes(), filters, depth)


def fuse(index: Index, query: str, lexical: list[Candidate], vector: list[Candidate],
         limit: int, boosts: dict[str, context_rank.Boost] | None = None,
         refined: list[Candidate] | None = None) -> list[Candidate]:
    """The top `limit` entries of one ranking, with the best chunk of each (a lexical match shows where
    the words are). `refined`: the second stage's candidates, which take over the vector side entry by
    entry (blend_vector_sides)."""
    settings = index.config.fusion
    best_chunk = {e: c for e, _, c in vector}
    best_chunk.update({e: c for e, _, c in refined or []})
    best_chunk.update({e: c for e, _, c in lexical})
    text_side = [(e, s) for e, s, _ in lexical]
    vector_side = _vector_side(index, vector, refined)
    if not lexical or vector_side is None or not vector_side[0]:  # one side only (the other is empty)
        if refined is None or vector_side is None:
            fused = text_side + [(e, s) for e, s, _ in vector]  # cosines, as the default embedder scores them
        else:
            fused = text_side + sorted(vector_side[0].items(), key=lambda kv: (-kv[1], kv[0]))
    else:
        alpha = (settings.quality_bm25_weight if refined is not None
                 else settings.bm25_weight / (settings.bm25_weight + settings.vector_weight))
        terms = query_terms(query)
        coverage = retrieval.terms_matching_chunk(index.conn, lexical[0][2], terms) / max(1, len(terms))
        alpha = gated_weight(alpha, coverage, settings.coverage_gate)
        weights = [alpha, 1.0 - alpha]
        if settings.method == "zscore":
            fused = fuse_standardised([zscores(text_side, settings.depth), vector_side], weights)
        else:
            lists = [text_side, sorted(vector_side[0].items(), key=lambda kv: (-kv[1], kv[0]))]
            fused = rrf(lists, weights, settings.rrf_k) if settings.method == "rrf" else score_fusion(lists, weights)
    fused = context_rank.boosted(fused, boosts or {})
    if not asks_for_history(query):  # diaries after knowledge (pinky.search.history)
        fused = history_last(fused, retrieval.diary_entries(index.conn, [e for e, _ in fused]))
    return [(e, round(float(score), 6), best_chunk[e]) for e, score in fused[:limit]]


def _vector_side(index: Index, vector: list[Candidate], refined: list[Candidate] | None) -> Standardised | None:
    """The vector side standardised: the default embedder's alone, or blended with the second stage's."""
    depth = index.config.fusion.depth
    if refined is None:
        return zscores([(e, s) for e, s, _ in vector], depth) if vector else None
    candidates = list(dict.fromkeys([e for e, _, _ in refined] + [e for e, _, _ in vector]))
    lacking = store_quality.entries_lacking(index.conn, candidates)
    first = [(e, s) for e, s, _ in vector]
    blended = blend_vector_sides([(e, s) for e, s, _ in refined], first, lacking, depth)
    share = index.config.fusion.quality_use_share  # the default embedder keeps a say beside the second stage
    if not (share and first and blended[0]):
        return blended
    return mix_standardised([blended, zscores(first, depth)], [1.0 - share, share])


def hits_for(index: Index, scored_chunks: list[tuple[int, float]], query: str,
             whys: dict[int, str] | None = None, parts: dict[int, dict[str, Any]] | None = None) -> list[Hit]:
    """Hits for (best chunk id, score) pairs, in that order; the snippet centres on `query`."""
    rows = retrieval.hit_rows(index.conn, [chunk for chunk, _ in scored_chunks])
    today = now_utc().date()
    hits = [Hit(slug=r["slug"], path=index.display_path(r["root"], r["path"]), title=shown(r["title"]), type=r["type"],
                scope=r["scope"], project=r["project"], tags=json.loads(r["tags"]), score=score,
                snippet=snippet(r["text"], query), heading=r["heading"], line=r["line"],
                last_verified=r["last_verified"], **_validity(r["meta"]),
                age_days=(age := age_days(r["last_verified"], r["created"], today)),
                stale=is_stale(r["type"], age, index.config.stale_days), why=(whys or {}).get(chunk),
                parts=(parts or {}).get(chunk))
            for chunk, score in scored_chunks if (r := rows.get(chunk)) is not None]
    # Equal scores side by side (the same text twice, say) go to the fresher entry; nothing else moves
    # (HYGIENE.md): not a diary ranked after knowledge with a higher score (pinky.search.history) either.
    runs = itertools.accumulate(n > 0 and hit.score != hits[n - 1].score for n, hit in enumerate(hits))
    return [hit for _, _, hit in sorted(zip(runs, (h.age_days or 0 for h in hits), hits, strict=True),
                                        key=lambda item: item[:2])]


def _validity(meta_json: str) -> dict[str, Any]:
    meta = json.loads(meta_json or "{}")
    return {name: str(meta[name]) if meta.get(name) else None for name in ("superseded_by", "valid_until")}


def _record_usage(index: Index, entry_ids: list[str], query: str) -> None:
    """In the index (every hit, with the query) and in the roots' usage ledgers (a hit's first use of the
    day: what `pinky prune` must still know after the index is rebuilt)."""
    try:
        now = now_utc()
        with write_transaction(index.conn):
            first = retrieval.unused_since(index.conn, entry_ids, now.date().isoformat()) if entry_ids else []
            retrieval.record_usage(index.conn, entry_ids, query, now.isoformat())
        usage.note_use(index.config.roots(), first, "retrieved", now)
    except Exception as exc:  # telemetry must never break a search
        log.warning("could not record usage: %s", exc)
