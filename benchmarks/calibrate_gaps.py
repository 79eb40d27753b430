"""Where "a weak best hit" starts: calibrates pinky.search.gaps on the retrieval sets (a script, not a test).

    python benchmarks/calibrate_gaps.py [--workdir DIR] [--queries N]

Every eval query has an answer in its own dataset's brain and none in the other's (SciFact's claims about
biomedicine are not answered by CoSQA's Python functions, and the other way round). For each query run
against both brains it takes the two absolute signals `pinky.search.hybrid.match_strength` gives (the share of
query words the best lexical chunk holds, and the best cosine similarity) and prints, for a grid of
thresholds, how many answerable searches would be recorded as gaps (false gaps) and how many
unanswerable ones would (found gaps). Uses the brains benchmarks/eval_retrieval.py builds in --workdir.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def signals(kb, queries: list[str]) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    from pinky.search.hybrid import lexical_hits, match_strength, semantic_hits
    from pinky.store.retrieval import Filters

    out = []
    for query in queries:
        lexical = lexical_hits(kb.index, query, Filters())
        vector = semantic_hits(kb.index, query, Filters())
        out.append(match_strength(kb.index, query, lexical, vector))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pinky-eval")
    parser.add_argument("--queries", type=int, default=300, help="Queries of each set (default 300).")
    parser.add_argument("--data", type=Path, required=True, metavar="DIR",
                        help="the retrieval sets: DIR/scifact/ and DIR/cosqa/, "
                        "each with notes.jsonl and queries.jsonl")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase
    from pinky.search.gaps import WEAK_COVERAGE, WEAK_SIMILARITY

    names = ("scifact", "cosqa")
    queries = {name: [json.loads(line)["query"][:2000] for line in open(args.data / name / "queries.jsonl",
                                                                       encoding="utf-8")][: args.queries]
               for name in names}
    answerable: list[tuple[float, float]] = []
    unanswerable: list[tuple[float, float]] = []
    for brain in names:
        base = args.workdir / brain
        if not (base / "brain.db").exists():
            sys.exit(f"no brain at {base}: run benchmarks/eval_retrieval.py --workdir {args.workdir} first")
        config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=args.workdir / "home")
        with KnowledgeBase(config) as kb:
            for name in names:
                (answerable if name == brain else unanswerable).extend(signals(kb, queries[name]))
    print(f"{len(answerable)} answerable and {len(unanswerable)} unanswerable searches\n")
    print("| coverage < | similarity < | false gaps (answerable) | found gaps (unanswerable) |\n|---:|---:|---:|---:|")
    for coverage in (0.4, 0.5, 0.6, 0.7, 0.8):
        for similarity in (0.25, 0.3, 0.35, 0.4):
            false = sum(c < coverage and s < similarity for c, s in answerable) / len(answerable)
            found = sum(c < coverage and s < similarity for c, s in unanswerable) / len(unanswerable)
            mark = "  ← pinky.search.gaps" if (coverage, similarity) == (WEAK_COVERAGE, WEAK_SIMILARITY) else ""
            print(f"| {coverage} | {similarity} | {false:.1%} | {found:.1%} |{mark}")


if __name__ == "__main__":
    main()
