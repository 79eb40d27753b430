"""Which hits a person's search shows as relevant, and when it says "nothing relevant" (a script, not a test).

    python benchmarks/calibrate_relevance.py --data DIR [--workdir DIR] [--queries N] [--json FILE]

`--data` is a folder holding the SciFact and CoSQA tuning sets in the brain's note format
(`scifact/{notes,queries}.jsonl`, `cosqa/{notes,queries}.jsonl`). Four brains are built with the default
embedder (the second stage off: it is filled later in the background): SciFact, CoSQA, the Spanish/Italian
cross-lingual notes of tests/fixtures/crosslingual and the demo's examples/sample-notes. Each set's queries run
against their own brain (answerable) and against a brain of another subject (unanswerable: SciFact's claims
against CoSQA's Python functions and the sample notes, CoSQA's questions against SciFact, the cross-lingual
questions against SciFact and CoSQA). Printed for the band rule before and after (pinky.services.relevance):

- shown relevant: of the answerable queries whose top hit is right, how many show that hit as relevant;
- says nothing relevant: of the unanswerable queries, how many show no hit as relevant;

and the same over a grid of similarity floors, for choosing `SIMILAR_FLOOR`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
XLING = REPO / "tests" / "fixtures" / "crosslingual"
SAMPLE = REPO / "examples" / "sample-notes"
DEMO_QUERIES = ["timeout al cerrar el pool de postgres", "retry flaky API calls with exponential backoff",
                "come rilasciare in produzione", "csv decimal"]


def build(name: str, workdir: Path, data: Path) -> Path:
    """The brain's folder (notes written once, then indexed: a re-run only re-checks it)."""
    base = workdir / name
    docs = base / "documentation"
    if name in ("scifact", "cosqa"):
        docs.mkdir(parents=True, exist_ok=True)
        for line in open(data / name / "notes.jsonl", encoding="utf-8"):
            note = json.loads(line)
            path = docs / note["path"]
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(note["markdown"], encoding="utf-8")
    elif not docs.exists():
        shutil.copytree(XLING / "notes" if name == "xling" else SAMPLE, docs)
    return base


def queries_of(name: str, data: Path, limit: int) -> list[tuple[str, set[str]]]:
    """(query, the slugs or paths of its right notes)."""
    if name == "xling":
        rows = [json.loads(line) for line in (XLING / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
        return [(row["query"], set(row["expected"])) for row in rows][:limit]
    rows = [json.loads(line) for line in open(data / name / "queries.jsonl", encoding="utf-8")][:limit]
    return [(row["query"][:2000], set(row["gold"])) for row in rows]


def observe(kb, queries: list[tuple[str, set[str]]]) -> list[dict]:  # type: ignore[no-untyped-def]
    """Per query: whether the top hit is right, and per hit its band before (words, the prompt hook's measure) and
    after (pinky.services.relevance), with the raw signals the grid below varies."""
    from pinky.search.recall import coverage
    from pinky.search.request import SearchRequest
    from pinky.services.relevance import lexical_bands, relevance, similarities

    seen = []
    for query, gold in queries:
        hits = kb.search(SearchRequest(query, limit=10, explain=True)).hits
        slugs = [hit.slug for hit in hits]
        before, after = lexical_bands(kb, query, slugs), relevance(kb, query, hits)
        close, held = similarities(hits), coverage(kb.index.conn, query, slugs)
        seen.append({"right": bool(hits) and (hits[0].slug in gold or any(hits[0].path.endswith(g) for g in gold)),
                     "hits": [{"before": before[slug][1], "after": after[slug][1], "similarity": close.get(slug),
                               "held": held[slug]} for slug in slugs]})
    return seen


def figures(answerable: list[dict], unanswerable: list[dict], shown) -> tuple[float, float, int, int]:  # type: ignore[no-untyped-def]
    right = [q for q in answerable if q["right"]]
    relevant = sum(shown(q, q["hits"][0]) for q in right) / max(1, len(right))
    nothing = sum(not any(shown(q, h) for h in q["hits"]) for q in unanswerable) / max(1, len(unanswerable))
    return relevant, nothing, len(right), len(unanswerable)


def grid_rule(similar: float, held: float, standout: float):  # type: ignore[no-untyped-def]
    """The after rule with other thresholds, from the recorded signals."""
    def shown(query: dict, hit: dict) -> bool:
        if hit["before"] != "weak" or hit["held"] >= held:
            return True
        close = [h["similarity"] for h in query["hits"] if h["similarity"] is not None]
        if hit["similarity"] is None:
            return False
        if hit["similarity"] >= similar:
            return True
        rest = sorted(close, reverse=True)[1:]
        return (len(close) >= 3 and hit["similarity"] == max(close)
                and hit["similarity"] - statistics.median(rest) >= standout)
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="The folder holding scifact/ and cosqa/.")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pinky-relevance")
    parser.add_argument("--queries", type=int, default=300, help="Queries of each tuning set (default 300).")
    parser.add_argument("--json", type=Path, help="Also write what was observed to this file.")
    args = parser.parse_args()
    for name in [n for n in os.environ if n.startswith("PINKY_")]:
        del os.environ[name]  # the real default embedder, no inherited settings
    os.environ["PINKY_QUALITY"] = "off"
    sys.path.insert(0, str(REPO / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase
    from pinky.services.relevance import HELD_SHARE, SIMILAR_FLOOR, STANDOUT

    against = {"scifact": ["cosqa", "sample"], "cosqa": ["scifact"], "xling": ["scifact", "cosqa"], "sample": []}
    names = ["scifact", "cosqa", "xling", "sample"]
    queries = {name: queries_of(name, args.data, args.queries) for name in names if name != "sample"}
    observed: dict[str, dict[str, list[dict]]] = {name: {"answerable": [], "unanswerable": []} for name in names}
    for brain in names:
        base = build(brain, args.workdir, args.data)
        config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=args.workdir / "home")
        with KnowledgeBase(config, cache_vectors=True) as kb:
            started = time.perf_counter()
            kb.reindex()
            print(f"{brain}: indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            if brain == "sample":
                for query, seen in zip(DEMO_QUERIES, observe(kb, [(q, set()) for q in DEMO_QUERIES]), strict=True):
                    top = seen["hits"][0]
                    print(f"demo {query!r}: top hit {top['before']} before, {top['after']} after (similarity "
                          f"{top['similarity']}, words held {top['held']:.0%})")
            for name, asked in queries.items():
                if name == brain:
                    observed[name]["answerable"] += observe(kb, asked)
                elif name in against and brain in against[name]:
                    observed[name]["unanswerable"] += observe(kb, asked)
    every = {kind: [q for name in observed for q in observed[name][kind]] for kind in ("answerable", "unanswerable")}
    print("\n| set | rule | right top hits shown relevant | unanswerable saying nothing relevant |")
    print("|---|---|---:|---:|")
    for name, seen in [*observed.items(), ("all", every)]:
        if not seen["answerable"] and not seen["unanswerable"]:
            continue
        for label in ("before", "after"):
            relevant, nothing, right, unanswerable = figures(seen["answerable"], seen["unanswerable"],
                                                             lambda q, h, label=label: h[label] != "weak")
            print(f"| {name} | {label} | {relevant:.1%} of {right} | {nothing:.1%} of {unanswerable} |")
    print(f"\n(after: SIMILAR_FLOOR {SIMILAR_FLOOR}, HELD_SHARE {HELD_SHARE}, STANDOUT {STANDOUT})")
    print("| similarity floor | words held | standout | right top hits shown relevant | unanswerable saying nothing |")
    print("|---:|---:|---:|---:|---:|")
    for similar in (0.3, 0.33, 0.35, 0.4):
        for held in (0.7, 0.75, 0.8):
            for standout in (0.05, 0.06, 0.08, 1.0):
                relevant, nothing, _, _ = figures(every["answerable"], every["unanswerable"],
                                                  grid_rule(similar, held, standout))
                print(f"| {similar} | {held} | {standout} | {relevant:.1%} | {nothing:.1%} |")
    if args.json:
        args.json.write_text(json.dumps(observed) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
