"""How well a save's duplicate warning tells a reworded copy from a different fact (a script, not a test).

    python benchmarks/eval_duplicates.py [--pairs benchmarks/data/duplicate_pairs.jsonl]

The labelled set holds pairs of notes as a team writes them: `duplicate` (the same fact in other words,
other abbreviations, another title) and `distinct` (the same subject, a different fact: the hard case),
and every other pair of two notes of the set counts as distinct too (mostly the easy case).
Each note is embedded as the index embeds a note's first chunk, with the default embedder (Universal
Sentence Encoder, unless PINKY_HASH_EMBED=1), and judged by `pinky.knowledge.duplicates.likely_duplicate`
against the old rule (cosine >= 0.80 alone). Prints precision and recall for each, on hard and on all pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "data" / "duplicate_pairs.jsonl")
    args = parser.parse_args()
    import numpy as np

    from pinky.config import load_config
    from pinky.embed.embedding import get_embedder
    from pinky.knowledge.duplicates import likely_duplicate
    from pinky.text.model_input import embed_input

    pairs = load(args.pairs)
    notes = sorted({tuple(side) for pair in pairs for side in (pair["a"], pair["b"])})
    embedder = get_embedder(load_config(home=Path(os.environ.get("TMPDIR", "/tmp")) / "pinky-eval-dup"))
    started = time.perf_counter()
    vectors = embedder.embed([embed_input(title, "", body) for title, body in notes])
    print(f"embedder: {type(embedder).__name__}, {len(notes)} notes embedded in {time.perf_counter() - started:.2f}s")
    vec = {note: np.asarray(v, dtype=np.float32) / max(float(np.linalg.norm(v)), 1e-9)
           for note, v in zip(notes, vectors, strict=True)}
    labelled = {(tuple(p["a"]), tuple(p["b"])): p["label"] == "duplicate" for p in pairs}
    same = {frozenset(key) for key, dup in labelled.items() if dup}
    easy = {(x, y): False for x, y in combinations(notes, 2)
            if (x, y) not in labelled and (y, x) not in labelled and frozenset((x, y)) not in same}
    print(f"pairs: {sum(labelled.values())} duplicate, {len(labelled) - sum(labelled.values())} distinct on the "
          f"same subject, {len(easy)} other distinct pairs\n")
    print("| rule | pairs | precision | recall | false alarms |")
    print("|---|---|---:|---:|---:|")
    def cosine_alone(cosine: float, first: object, second: object) -> bool:
        return cosine >= 0.8  # the rule before: meaning alone

    for name, judge in (("cosine >= 0.80 (before)", cosine_alone), ("likely_duplicate (now)", likely_duplicate)):
        for label, subset in (("labelled (same subject)", labelled), ("all", {**labelled, **easy})):
            said = {key: judge(float(vec[key[0]] @ vec[key[1]]), key[0], key[1]) for key in subset}
            true_pos = sum(1 for key, dup in subset.items() if dup and said[key])
            false_pos = sum(1 for key, dup in subset.items() if not dup and said[key])
            wanted = sum(subset.values())
            precision = true_pos / max(true_pos + false_pos, 1)
            print(f"| {name} | {label} | {precision:.3f} | {true_pos / max(wanted, 1):.3f} | {false_pos} |")
    print("\nmissed or false (now):")
    for key, dup in {**labelled, **easy}.items():
        cosine = float(vec[key[0]] @ vec[key[1]])
        if likely_duplicate(cosine, key[0], key[1]) != dup:
            print(f"  {'missed' if dup else 'false'} cos {cosine:.3f}: {key[0][0]!r} / {key[1][0]!r}")


if __name__ == "__main__":
    main()
