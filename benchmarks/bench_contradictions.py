"""Precision and recall of the contradiction check on a labelled fixture (a script, not a test).

    python benchmarks/bench_contradictions.py [--hash]

benchmarks/contradiction_pairs.jsonl holds pairs of short notes, each labelled a contradiction (a
number, version, port, flag or negation changed) or not (a paraphrase, an added detail, the same
values reworded, a related note); the last ten, marked "hard", were written after the detector to
find where it breaks (values in words, reordered sentences, different periods). A pair is reported,
as `pinky check` would, when the two texts are near-duplicates (cosine of the whole texts >=
duplicates.DUPLICATE_SIMILARITY with the configured embedder, or the hashing one with --hash; `pinky
check` compares stored chunk vectors) and `differences.contradicts` finds a value-carrying span
in two texts that share most of their words. Prints precision, recall,
the kind found for each positive, and the detector alone (without the similarity gate).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "benchmarks" / "contradiction_pairs.jsonl"


def scores(predicted: list[bool], truth: list[bool]) -> tuple[float, float]:
    true_pos = sum(p and t for p, t in zip(predicted, truth, strict=True))
    precision = true_pos / max(1, sum(predicted))
    recall = true_pos / max(1, sum(truth))
    return precision, recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hash", action="store_true", help="Use the hashing embedder (no model).")
    args = parser.parse_args()
    if args.hash:
        os.environ["PINKY_HASH_EMBED"] = "1"
    sys.path.insert(0, str(REPO / "src"))
    import numpy as np

    from pinky.config import load_config
    from pinky.embed.embedding import get_embedder
    from pinky.hygiene.differences import contradicts, differences
    from pinky.knowledge.duplicates import DUPLICATE_SIMILARITY

    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder = get_embedder(load_config())
    vectors = embedder.embed([text for pair in pairs for text in (pair["a"], pair["b"])]).astype("float32")
    truth = [pair["contradiction"] for pair in pairs]
    found = [contradicts(pair["a"], pair["b"]) for pair in pairs]
    cosines = [float(np.dot(vectors[2 * n], vectors[2 * n + 1])) for n in range(len(pairs))]
    gated = [bool(diff) and cos >= DUPLICATE_SIMILARITY for diff, cos in zip(found, cosines, strict=True)]
    alone = [bool(differences(pair["a"], pair["b"])) for pair in pairs]
    print(f"{len(pairs)} pairs ({sum(truth)} contradictions), embedder {embedder.name}, "
          f"similarity gate {DUPLICATE_SIMILARITY}\n")
    print("| check | precision | recall |\n|---|---:|---:|")
    hard = [n for n, pair in enumerate(pairs) if pair.get("hard")]
    rows = [("pinky check (similar in meaning and words + differing value)", gated, truth),
            ("differing value alone (no similarity gate)", alone, truth),
            (f"pinky check, the {len(hard)} hard cases only", [gated[n] for n in hard], [truth[n] for n in hard])]
    for label, predicted, labels in rows:
        precision, recall = scores(predicted, labels)
        print(f"| {label} | {precision:.3f} | {recall:.3f} |")
    kinds = Counter((pair["kind"], diff[0].kind if diff else "-") for pair, diff in zip(pairs, found, strict=True)
                    if pair["contradiction"])
    print("\nlabelled kind -> first kind found: " + ", ".join(f"{a}->{b} {n}" for (a, b), n in sorted(kinds.items())))
    for pair, diff, cos, hit in zip(pairs, found, cosines, gated, strict=True):
        if hit != pair["contradiction"]:
            what = "; ".join(f"{d.kind} {d.a!r}/{d.b!r}" for d in diff) or "nothing found"
            print(f"  miss #{pair['id']} ({pair['kind']}, cosine {cos:.2f}): {what}")


if __name__ == "__main__":
    main()
