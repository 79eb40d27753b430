"""Retrieval quality on real datasets, SciFact and CoSQA (a script, not a test).

    python benchmarks/eval_retrieval.py --data DIR [--dataset scifact|cosqa|all] [--workdir DIR] [--queries N]
        [--context] [--lexical] [--weights NAME=W,...]... [--proximity W]... [--feedback W]... [--questions]
        [--modes bm25,vector,hybrid] [--quality-weight W]... [--quality-use-share S]... [--quality-vectors DIR]

Writes each dataset's notes into a brain (kept in --workdir so a re-run only re-checks it), indexes
them with the configured embedder (the default: USE multilingual v3), then prints R@10 and nDCG@10
for BM25 only, vectors only, and hybrid search with each fusion method (`--context`: and with a
context file, see `context_rows`). The data is read from `--data DIR` at run time (DIR/scifact/ and DIR/cosqa/, each
`notes.jsonl` and `queries.jsonl`, the lines `write_notes` and `run` read) and never copied into the repository.

The lexical side (documentation/RANKING.md, "Measurements behind the defaults"):
`--lexical` adds BM25 and hybrid rows with the full-text features taken away one at a time (the
pre-m011 ranking: every field weighing 1, no identifier parts), and `--weights title=2,text=1`
(repeatable) one pair of rows per set of field weights; `--proximity W` and `--feedback W` (repeatable)
the same for a proximity pass and pseudo-relevance feedback of that weight. `--questions` attaches the even-numbered
queries to their gold notes as frontmatter `questions:`, reindexes, and measures the odd-numbered
queries with and without them (and with each --weights/--proximity/--feedback variant; the notes are
restored by the next run).
`--modes` limits which of BM25, vector and hybrid rows are printed.

Second stage (pinky.search.second_stage): with the default embedder, the rows above rank with USE alone; then every
chunk gets its multilingual-e5-small vector (~5 chunks/s on 2 cores: ~25 minutes for SciFact, kept in
the workdir's index for the next run; `--quality-vectors DIR` takes vectors made earlier, a
`<dataset>.jsonl` of `<chunk text hash>\t<float32 hex>` lines) and "vector e5" and "hybrid e5" rows
follow, at each `--quality-weight` (full-text share) and `--quality-use-share` (USE's share of the
vector side). PINKY_QUALITY=off skips them.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = Path()  # the --data folder


def write_notes(dataset: str, docs: Path) -> None:
    docs.mkdir(parents=True, exist_ok=True)
    with open(EVAL / dataset / "notes.jsonl", encoding="utf-8") as handle:
        for line in handle:
            note = json.loads(line)
            path = docs / note["path"]
            if not path.exists() or path.read_text(encoding="utf-8") != note["markdown"]:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(note["markdown"], encoding="utf-8")


def metrics(ranked: list[str], gold: set[str]) -> tuple[float, float]:
    from pinky.evaluation.metrics import ndcg_at, recall_at  # the same figures `pinky eval` reports

    return recall_at(ranked, gold, 10), ndcg_at(ranked, gold, 10)


def evaluate(kb, queries: list[dict], mode: str, context=None) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Mean R@10, nDCG@10 and the median ms per query; `context(query)` names the file each search works on."""
    recall = ndcg = 0.0
    times = []
    for query in queries:
        started = time.perf_counter()
        hits = kb.search(query["query"][:2000], limit=10, mode=mode,
                         context_file=context(query) if context else None).hits
        times.append((time.perf_counter() - started) * 1000)
        ranked = [h.path.split("/", 1)[1] for h in hits]  # "documentation/<path>" -> "<path>"
        r, n = metrics(ranked, set(query["gold"]))
        recall, ndcg = recall + r, ndcg + n
    return recall / len(queries), ndcg / len(queries), statistics.median(times)


Row = tuple[str, str, float, float, float]
FEATURES_OFF = {"questions": 0.0, "idents": 0.0}


def parse_weights(text: str) -> dict[str, float]:
    """`title=2,heading=1.5` -> {"title": 2.0, "heading": 1.5}."""
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    return {name.strip(): float(value) for name, value in pairs}


def run(dataset: str, workdir: Path, limit: int | None, args: argparse.Namespace) -> list[Row]:
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    base = workdir / dataset
    write_notes(dataset, base / "documentation")
    queries = [json.loads(line) for line in open(EVAL / dataset / "queries.jsonl", encoding="utf-8")]
    queries = queries[:limit] if limit else queries
    config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=workdir / "home")
    with KnowledgeBase(config, cache_vectors=True) as kb:
        started = time.perf_counter()
        report = kb.reindex()
        print(f"{dataset}: indexed in {time.perf_counter() - started:.1f}s "
              f"({report.added} notes added, {report.updated} updated, {report.chunks_embedded} chunks embedded)",
              file=sys.stderr)
        if args.questions:
            return question_rows(kb, dataset, base, queries, args)
        second_stage = config.quality != "off"
        config = dataclasses.replace(config, quality="off")  # the default embedder's rows first
        kb.config = config
        rows = [(dataset, mode, *evaluate(kb, queries, mode)) for mode in ("bm25", "vector") if mode in args.modes]
        if "hybrid" in args.modes:
            rows += [(dataset, label, *evaluate(kb, queries, "hybrid")) for label in fusion_variants(kb, config)]
        for label, fusion in lexical_variants(config.fusion, args):
            kb.config = dataclasses.replace(config, fusion=fusion)
            rows += [(dataset, f"{mode} {label}", *evaluate(kb, queries, mode))
                     for mode in ("bm25", "hybrid") if mode in args.modes]
        kb.config = config
        if args.context:
            rows += context_rows(kb, dataset, base, queries)
        if second_stage:
            rows += quality_rows(kb, dataset, queries, args)
    return rows


def quality_rows(kb, dataset: str, queries: list[dict], args: argparse.Namespace) -> list[Row]:  # type: ignore[no-untyped-def]
    """Rows with the second-stage vectors (pinky.search.second_stage): filled first (from --quality-vectors where they
    match, the rest on all cores), then vector-only and hybrid at each --quality-weight and share."""
    config = dataclasses.replace(kb.config, quality="e5")
    kb.config = config
    from pinky.search import second_stage as second_stage_retriever
    second_stage_retriever.prepare(kb.index)
    if args.quality_vectors:
        prefill(kb, args.quality_vectors, dataset)
    started = time.perf_counter()
    made = kb.refine_pending(progress=lambda done, total: print(f"\r{dataset}: e5 {done}/{total}", end="",
                                                                file=sys.stderr),
                             threads=second_stage_retriever.all_cores())
    if made:
        print(f"\n{dataset}: e5 vectors for {made} chunks in {time.perf_counter() - started:.0f}s "
              f"({made / (time.perf_counter() - started):.1f}/s)", file=sys.stderr)
    rows = [(dataset, "vector e5", *evaluate(kb, queries, "vector"))] if "vector" in args.modes else []
    default = config.fusion
    for weight in args.quality_weight or [default.quality_bm25_weight]:
        for share in args.quality_use_share or [default.quality_use_share]:
            fusion = dataclasses.replace(default, quality_bm25_weight=weight, quality_use_share=share)
            kb.config = dataclasses.replace(config, fusion=fusion)
            label = f"hybrid e5, bm25 {weight:g}, USE share {share:g}"
            if fusion == default:
                label += " (default)"
            rows.append((dataset, label, *evaluate(kb, queries, "hybrid")))
    kb.config = config
    return rows


def prefill(kb, folder: Path, dataset: str) -> None:  # type: ignore[no-untyped-def]
    """Second-stage vectors made earlier by the same model, for the chunks whose input they match:
    `<dataset>.jsonl` holds `<chunk text hash>\t<float32 hex>` lines (chunk inputs, for notes longer than
    the model's window), `<dataset>.notes.jsonl` `<note path>\t<float32 hex>` (whole notes, for the rest)."""
    import numpy as np

    from pinky.store import quality as store_quality
    from pinky.store.connect import write_transaction
    from pinky.text.model_input import QUALITY_WINDOW_WORDS, embed_input, quality_input, text_hash

    by_chunk, by_note = (load_quality_vectors(folder / f"{dataset}{suffix}.jsonl") for suffix in ("", ".notes"))
    rows = kb.index.conn.execute("SELECT c.id, c.hash, e.path, e.title, c.heading, c.text, e.body FROM chunk c "
                                 "JOIN entry e ON e.id = c.entry_id").fetchall()
    known = []
    for chunk_id, chunk_hash, path, title, heading, text, body in rows:
        passage = quality_input(title, heading, text, body)
        whole = len(body.split()) <= QUALITY_WINDOW_WORDS
        vector = by_note.get(path) if whole else by_chunk.get(chunk_hash)
        if vector is not None and (whole or passage == embed_input(title, heading, text)):
            known.append((chunk_id, chunk_hash, text_hash(passage), vector))
    if known:
        blobs = store_quality.quantize(np.vstack([np.frombuffer(v, dtype=np.float32) for *_, v in known]))
        with write_transaction(kb.index.conn):
            store_quality.store(kb.index.conn, [(*row[:3], blob) for row, blob in zip(known, blobs, strict=True)])
    print(f"{dataset}: {len(known)} of {len(rows)} second-stage vectors from {folder}", file=sys.stderr)


def load_quality_vectors(path: Path) -> dict[str, bytes]:
    """key -> vector made earlier by the same model (lines `<key>\t<hex float32>`)."""
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8") as handle:
        return {h: bytes.fromhex(v.strip()) for h, v in (line.split("\t", 1) for line in handle if "\t" in line)}


def fusion_variants(kb, config):  # type: ignore[no-untyped-def]
    """Set each fusion method on `kb` in turn and yield its label."""
    default = config.fusion
    variants = [
        ("hybrid zscore+gate (default)", default),
        ("hybrid zscore, no gate", dataclasses.replace(default, coverage_gate=0.0)),
        ("hybrid minmax 0.75", dataclasses.replace(default, method="score", bm25_weight=0.75, vector_weight=0.25)),
        ("hybrid rrf k=60 1:1", dataclasses.replace(default, method="rrf", rrf_k=60, bm25_weight=0.5,
                                                    vector_weight=0.5, coverage_gate=0.0)),
    ]
    for label, fusion in variants:
        kb.config = dataclasses.replace(config, fusion=fusion)
        yield label
    kb.config = config


def lexical_variants(default, args: argparse.Namespace) -> list[tuple[str, object]]:  # type: ignore[no-untyped-def]
    """(label, FusionSettings) of the lexical rows asked for: --lexical and each --weights."""
    from pinky.text.lexical import FTS_COLUMNS, field_weights

    variants = []
    if args.lexical:
        plain = field_weights(dict.fromkeys(("title", "heading", "text"), 1.0) | FEATURES_OFF)
        variants += [
            ("pre-m011 (fields 1:1:1, no identifier parts)",
             dataclasses.replace(default, field_weights=plain, split_identifiers=False)),
            ("without identifier parts (idents weight 0, none asked)", dataclasses.replace(
                default, split_identifiers=False, field_weights=field_weights({"idents": 0.0}))),
            ("without query identifier parts", dataclasses.replace(default, split_identifiers=False)),
            ("every field weight 1", dataclasses.replace(
                default, field_weights=field_weights(dict.fromkeys(FTS_COLUMNS, 1.0)))),
        ]
    for text in args.weights or []:
        variants.append((f"weights {text}", dataclasses.replace(default, field_weights=field_weights(
            parse_weights(text)))))
    for weight in args.proximity or []:
        variants.append((f"proximity {weight}", dataclasses.replace(default, proximity=weight)))
    for weight in args.feedback or []:
        variants.append((f"feedback {weight}", dataclasses.replace(default, feedback=weight)))
    return variants


def question_rows(kb, dataset: str, base: Path, queries: list[dict], args: argparse.Namespace) -> list[Row]:  # type: ignore[no-untyped-def]
    """Document expansion by the host model, simulated: the even-numbered queries are written into their gold
    notes' frontmatter as `questions:`; the odd-numbered ones are measured before and after."""
    from pinky.text.markdown import render, split_frontmatter

    asked, held_out, modes = queries[0::2], queries[1::2], args.modes
    rows = [(dataset, f"{mode} held-out half, no questions", *evaluate(kb, held_out, mode))
            for mode in ("bm25", "hybrid") if mode in modes]
    attached: dict[str, list[str]] = {}
    for query in asked:
        for gold in query["gold"]:
            attached.setdefault(gold, []).append(query["query"][:300])
    for rel, questions in attached.items():
        path = base / "documentation" / rel
        meta, body, _, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        path.write_text(render({**meta, "questions": questions[:20]}, body), encoding="utf-8")
    report = kb.reindex()
    print(f"{dataset}: questions attached to {len(attached)} notes ({report.updated} reindexed)", file=sys.stderr)
    rows += [(dataset, f"{mode} held-out half, questions on the other half's gold notes", *evaluate(kb, held_out, mode))
             for mode in ("bm25", "hybrid") if mode in modes]
    config = kb.config
    for label, fusion in lexical_variants(config.fusion, args):
        kb.config = dataclasses.replace(config, fusion=fusion)
        rows += [(dataset, f"{mode} held-out half, questions, {label}", *evaluate(kb, held_out, mode))
                 for mode in ("bm25", "hybrid") if mode in modes]
    kb.config = config
    return rows


def context_rows(kb, dataset: str, base: Path, queries: list[dict]) -> list[tuple[str, str, float, float, float]]:  # type: ignore[no-untyped-def]
    """Context-aware ranking (`context_file`), measured with code files whose `Brain:` breadcrumbs
    name notes, as a project's code does: one file naming 20 random notes given as the context of
    every query (unrelated context: what a boost must not spoil), and one file per query naming its
    gold notes (the context an agent working on the right file has: what a boost may gain)."""
    import random

    slugs = sorted(path.stem for path in (base / "documentation").glob("*.md"))
    src = base / "src"
    (src / "gold").mkdir(parents=True, exist_ok=True)
    unrelated = random.Random(13).sample(slugs, 20)
    (src / "unrelated.py").write_text("".join(f"# Brain: {slug}\n" for slug in unrelated), encoding="utf-8")
    for query in queries:
        crumbs = "".join(f"# Brain: {gold.removesuffix('.md')}\n" for gold in query["gold"])
        (src / "gold" / f"{query['id']}.py").write_text(crumbs, encoding="utf-8")
    kb.reindex()  # the code scan reads the breadcrumbs
    unrelated_context = evaluate(kb, queries, "hybrid", lambda q: "src/unrelated.py")
    gold_context = evaluate(kb, queries, "hybrid", lambda q: f"src/gold/{q['id']}.py")
    return [(dataset, "hybrid + unrelated context file", *unrelated_context),
            (dataset, "hybrid + the gold notes' file", *gold_context)]


def main() -> None:
    global EVAL
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=["scifact", "cosqa", "all"], default="all")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pinky-eval")
    parser.add_argument("--queries", type=int, default=None, help="Only the first N queries of each set.")
    parser.add_argument("--data", type=Path, required=True, metavar="DIR",
                        help="the retrieval sets: DIR/scifact/ and DIR/cosqa/, "
                        "each with notes.jsonl and queries.jsonl")
    parser.add_argument("--context", action="store_true", help="Also measure context-aware ranking (context_file).")
    parser.add_argument("--lexical", action="store_true", help="Also measure the lexical features one at a time.")
    parser.add_argument("--weights", action="append", metavar="NAME=W,...",
                        help="Also measure these full-text field weights (repeatable).")
    parser.add_argument("--proximity", action="append", type=float, metavar="W",
                        help="Also measure a proximity pass of this weight (repeatable).")
    parser.add_argument("--feedback", action="append", type=float, metavar="W",
                        help="Also measure pseudo-relevance feedback of this weight (repeatable).")
    parser.add_argument("--questions", action="store_true",
                        help="Measure `questions:` frontmatter (half the queries attached, the other half measured).")
    parser.add_argument("--modes", default="bm25,vector,hybrid", help="Which rows: bm25, vector, hybrid.")
    parser.add_argument("--quality-weight", action="append", type=float, metavar="W",
                        help="Hybrid rows with second-stage vectors at this full-text share (repeatable).")
    parser.add_argument("--quality-use-share", action="append", type=float, metavar="S",
                        help="... and with the default embedder keeping this share of the vector side (repeatable).")
    parser.add_argument("--quality-vectors", type=Path, metavar="DIR",
                        help="Second-stage vectors made earlier, <dataset>.jsonl of `<text hash>\\t<hex>` lines.")
    args = parser.parse_args()
    EVAL = args.data.resolve()
    if not all((EVAL / name / "queries.jsonl").is_file() for name in ("scifact", "cosqa")):
        sys.exit(f"no eval data at {EVAL}: it needs scifact/ and cosqa/ with notes.jsonl and queries.jsonl "
                 "(pass the folder that holds them with --data DIR)")
    sys.path.insert(0, str(REPO / "src"))
    datasets = ["scifact", "cosqa"] if args.dataset == "all" else [args.dataset]
    rows = [row for name in datasets for row in run(name, args.workdir, args.queries, args)]
    print("| dataset | method | R@10 | nDCG@10 | p50 ms |\n|---|---|---:|---:|---:|")
    for dataset, method, recall, ndcg, ms in rows:
        print(f"| {dataset} | {method} | {recall:.3f} | {ndcg:.3f} | {ms:.1f} |")


if __name__ == "__main__":
    main()
