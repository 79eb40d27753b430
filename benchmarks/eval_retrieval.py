"""Retrieval quality on the real datasets in ../shared/eval (a script, not a test).

    python benchmarks/eval_retrieval.py [--dataset scifact|cosqa|all] [--workdir DIR] [--queries N] [--context]

Writes each dataset's notes into a brain (kept in --workdir so a re-run only re-checks it), indexes
them with the configured embedder (the default: USE multilingual v3), then prints R@10 and nDCG@10
for BM25 only, vectors only, and hybrid search with each fusion method (`--context`: and with a
context file, see `context_rows`). The data is read from
../shared/eval at run time and never copied into the repository.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"  # replaced by --data


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
    top = ranked[:10]
    recall = len(gold & set(top)) / len(gold)
    dcg = sum(1 / math.log2(i + 2) for i, path in enumerate(top) if path in gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return recall, dcg / ideal


def evaluate(kb, queries: list[dict], mode: str, context=None) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Mean R@10, nDCG@10 and ms per query; `context(query)` names the file each search works on."""
    recall = ndcg = 0.0
    started = time.perf_counter()
    for query in queries:
        hits = kb.search(query["query"][:2000], limit=10, mode=mode,
                         context_file=context(query) if context else None).hits
        ranked = [h.path.split("/", 1)[1] for h in hits]  # "documentation/<path>" -> "<path>"
        r, n = metrics(ranked, set(query["gold"]))
        recall, ndcg = recall + r, ndcg + n
    per_query_ms = (time.perf_counter() - started) * 1000 / len(queries)
    return recall / len(queries), ndcg / len(queries), per_query_ms


def run(dataset: str, workdir: Path, limit: int | None,
        with_context: bool = False) -> list[tuple[str, str, float, float, float]]:
    from pinky.config import FusionSettings, load_config
    from pinky.kb import KnowledgeBase

    base = workdir / dataset
    write_notes(dataset, base / "documentation")
    queries = [json.loads(line) for line in open(EVAL / dataset / "queries.jsonl", encoding="utf-8")]
    queries = queries[:limit] if limit else queries
    config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=workdir / "home")
    rows = []
    with KnowledgeBase(config, cache_vectors=True) as kb:
        started = time.perf_counter()
        report = kb.reindex()
        print(f"{dataset}: indexed in {time.perf_counter() - started:.1f}s "
              f"({report.added} notes added, {report.chunks_embedded} chunks embedded)", file=sys.stderr)
        for mode in ("bm25", "vector"):
            rows.append((dataset, mode, *evaluate(kb, queries, mode)))
        default = config.fusion
        variants = [
            ("hybrid zscore+gate (default)", default),
            ("hybrid zscore, no gate", dataclasses.replace(default, coverage_gate=0.0)),
            ("hybrid minmax 0.75", dataclasses.replace(default, method="score", bm25_weight=0.75,
                                                       vector_weight=0.25)),
            ("hybrid rrf k=60 1:1", dataclasses.replace(default, method="rrf", rrf_k=60, bm25_weight=0.5,
                                                        vector_weight=0.5, coverage_gate=0.0)),
        ]
        for label, fusion in variants:
            kb.config = dataclasses.replace(config, fusion=FusionSettings(**dataclasses.asdict(fusion)))
            rows.append((dataset, label, *evaluate(kb, queries, "hybrid")))
        if with_context:
            kb.config = config
            rows += context_rows(kb, dataset, base, queries)
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
    parser.add_argument("--data", type=Path, default=EVAL, help="Folder holding scifact/ and cosqa/.")
    parser.add_argument("--context", action="store_true", help="Also measure context-aware ranking (context_file).")
    args = parser.parse_args()
    EVAL = args.data.resolve()
    if not all((EVAL / name / "queries.jsonl").is_file() for name in ("scifact", "cosqa")):
        sys.exit(f"no eval data at {EVAL}: it needs scifact/ and cosqa/ with notes.jsonl and queries.jsonl "
                 "(the team's shared/eval folder; pass --data DIR)")
    sys.path.insert(0, str(REPO / "src"))
    datasets = ["scifact", "cosqa"] if args.dataset == "all" else [args.dataset]
    rows = [row for name in datasets for row in run(name, args.workdir, args.queries, args.context)]
    print("| dataset | method | R@10 | nDCG@10 | ms/query |\n|---|---|---:|---:|---:|")
    for dataset, method, recall, ndcg, ms in rows:
        print(f"| {dataset} | {method} | {recall:.3f} | {ndcg:.3f} | {ms:.1f} |")


if __name__ == "__main__":
    main()
