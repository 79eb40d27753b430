"""How long the hygiene operations take on a generated brain (a script, not a test).

    python benchmarks/bench_hygiene.py [--notes N]

Writes N notes (default 5,000): tags, a key of its own on every tenth, and every fiftieth a copy of
the one before with another port (a planted contradiction). Indexes them with the hashing embedder,
then times: pinky tags, a tag rename that rewrites about a third of the notes, pinky check (all),
needs_review (stale and flagged), prune (listing), export, and import of that export into an empty
brain (the round trip compared byte for byte).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = fn()
    print(f"| {label} | {time.perf_counter() - started:.2f} s |")
    return result


def write_brain(docs: Path, count: int) -> None:
    rng = random.Random(5)
    words = "pool cache retry deploy docker token auth session search vector queue kafka redis nginx".split()
    for n in range(count):
        tags = rng.sample(["db", "ci", "ops", "perf", "auth", "legacy"], 2)
        key = f"key: svc{n}.port\n" if n % 10 == 0 else ""
        body = " ".join(f"{rng.choice(words)}{rng.randint(0, 99)}" for _ in range(120))
        port = 8000 + (n % 50 == 1)
        path = docs / "note" / f"n{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = (f"---\ntitle: Note {n // 50 * 50 if n % 50 == 1 else n}\ntags: [{', '.join(tags)}]\n{key}"
                f"last_verified: 2025-0{1 + n % 9}-01\n---\nThe service listens on port {port}. {body}\n")
        if n % 50 == 1:  # a near-duplicate of note n-1, differing in its port
            text = (docs / "note" / f"n{n - 1}.md").read_text(encoding="utf-8").replace("port 8000", "port 8001")
        path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=5000)
    args = parser.parse_args()
    os.environ["PINKY_HASH_EMBED"] = "1"
    sys.path.insert(0, str(REPO / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    root = Path(tempfile.mkdtemp(prefix="pinky-hygiene-"))
    source_root, target_root = root / "a" / "demo", root / "b" / "demo"
    for folder in (source_root, target_root):
        (folder / "documentation").mkdir(parents=True)
    write_brain(source_root / "documentation", args.notes)

    def open_kb(folder: Path) -> KnowledgeBase:
        return KnowledgeBase(load_config(home=folder / "home", db=folder / "brain.db",
                                         save_dir=folder / "documentation"))

    print(f"{args.notes:,} notes, hashing embedder\n\n| operation | time |\n|---|---:|")
    with open_kb(source_root) as kb:
        timed("reindex (for reference)", kb.reindex)
        timed("tags", kb.hygiene.tags)
        renamed = timed("tags rename (rewrites the notes tagged `legacy`)",
                        lambda: kb.hygiene.rename_tag("legacy", "old"))
        found = timed("check (all entries)", kb.hygiene.check)
        timed("needs_review", kb.hygiene.needs_review)
        timed("prune, listing", lambda: kb.hygiene.prune(6))
        records = timed("export", kb.hygiene.export)
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        before = {r["path"]: r["text"] for r in records}
    with open_kb(target_root) as target:
        report = timed("import into an empty brain (and index it)", lambda: target.hygiene.import_lines(lines))
        after = {p.relative_to(target_root / "documentation").as_posix(): p.read_text(encoding="utf-8")
                 for p in (target_root / "documentation").rglob("*.md") if ".pinky" not in p.parts}
    print(f"\n{len(renamed['renamed'])} notes renamed a tag; check found {found['count']} pairs "
          f"(planted: {args.notes // 50}); imported {len(report['imported'])}, byte for byte: {before == after}")


if __name__ == "__main__":
    main()
