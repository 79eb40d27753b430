"""Spanish and Italian questions against English notes (a script, not a test).

    python benchmarks/eval_crosslingual.py [--json FILE]

Indexes tests/fixtures/crosslingual/notes in a temporary brain with the default embedder and prints
R@1, R@5 and MRR@10 per language and overall for hybrid, vector-only and BM25-only search.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "crosslingual"
MODES = ("hybrid", "vector", "bm25")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures to FILE")
    args = parser.parse_args()
    out = args.json.resolve() if args.json else None  # before the chdir below
    queries = [json.loads(line) for line in (FIXTURE / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]

    with tempfile.TemporaryDirectory(prefix="pinky-xling-") as tmp:
        for name in [n for n in os.environ if n.startswith("PINKY_")]:
            del os.environ[name]  # the real default embedder, no inherited settings
        os.environ["PINKY_HOME"] = str(Path(tmp) / "home")
        project = Path(tmp) / "project"
        shutil.copytree(FIXTURE / "notes", project / "documentation")
        (project / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
        os.chdir(project)

        from pinky.config import load_config
        from pinky.evaluation.metrics import mrr_at, recall_at
        from pinky.kb import KnowledgeBase
        from pinky.search import second_stage
        figures: dict[str, dict[str, dict[str, float]]] = {}
        with KnowledgeBase(load_config()) as kb:
            kb.reindex()
            stages = [("", kb.config)]
            if second_stage.summary(kb.index)["available"]:  # the second stage as a user gets it once filled
                kb.refine_pending()
                stages = [(" (USE only)", dataclasses.replace(kb.config, quality="off")), (" (with e5)", kb.config)]
            for (label, config), mode in [(stage, mode) for stage in stages for mode in MODES]:
                kb.config = config
                mode_label = mode + label
                rows: dict[str, list[tuple[float, float, float]]] = {"es": [], "it": [], "all": []}
                for q in queries:
                    ranked = [h.slug for h in kb.search(q["query"], limit=10, mode=mode).hits]
                    row = (recall_at(ranked, q["expected"], 1), recall_at(ranked, q["expected"], 5),
                           mrr_at(ranked, q["expected"], 10))
                    rows[q["language"]].append(row)
                    rows["all"].append(row)
                figures[mode_label] = {
                    lang: {name: round(sum(r[i] for r in got) / len(got), 4)
                           for i, name in enumerate(("r@1", "r@5", "mrr@10"))} | {"queries": len(got)}
                    for lang, got in rows.items()}

    print(f"{'mode':<20} {'lang':<4} {'n':>3} {'R@1':>6} {'R@5':>6} {'MRR@10':>7}")
    for mode, by_lang in figures.items():
        for lang, f in by_lang.items():
            print(f"{mode:<20} {lang:<4} {f['queries']:>3} {f['r@1']:>6.3f} {f['r@5']:>6.3f} {f['mrr@10']:>7.3f}")
    if out:
        out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
