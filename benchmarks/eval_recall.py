"""How well the UserPromptSubmit recall stays quiet and finds the right note (a script, not a test).

    python benchmarks/eval_recall.py --data DIR [--workdir DIR] [--threshold T]

Two brains, each one retrieval set of `--data DIR` (SciFact: scientific claims; CoSQA: Python
functions), indexed as the hook sees them (full text; hashing vectors, unused here). For each brain:
- relevant prompts: its own queries; recall is right when a gold note is among the injected ones;
- irrelevant prompts: the other dataset's queries and a list of everyday prompts to a coding agent
  (below); recall is right when it injects nothing.
The threshold is tuned on the even-numbered prompts (best right-entry rate with >= 90 % silence on
irrelevant prompts, both brains at once) and reported on the odd-numbered ones, which the tuning
never saw. "Of those BM25's top 3 holds" divides by what the hook could find at all: it injects at
most three entries, chosen by full-text search alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import eval_retrieval
from eval_retrieval import write_notes

EVERYDAY_PROMPTS = [
    "run the tests and fix whatever fails", "commit this with a good message", "push the branch",
    "what does this function do?", "rename the variable to something clearer", "add a --verbose flag",
    "can you explain the last error?", "format the code", "update the changelog for the release",
    "make the README shorter", "split this function into two", "why is the CI red?",
    "add type hints to the module", "write a unit test for the new endpoint", "remove the dead code",
    "bump the version to 2.3.0", "check the lint warnings", "open a pull request",
    "summarise what we did today", "revert the last commit", "the build is slow, look into it",
    "add logging to the retry loop", "translate the error messages", "review my changes",
    "continue", "yes go ahead", "looks good, thanks", "undo that", "try again", "what next?",
    "show me the diff", "install the dependencies", "start the dev server", "clean up the imports",
    "document the public API", "is this thread safe?", "migrate the config to TOML",
    "add pagination to the list view", "why does the login page redirect twice?", "refactor the parser",
]


# The bundled sample brain (examples/, 7 notes in three languages): what a new user's brain looks like.
SAMPLE_PROMPTS = [
    ("the worker's memory keeps growing until the container gets killed", "bug/memory-leak-in-cache.md"),
    ("the HTTP response cache leaks memory", "bug/memory-leak-in-cache.md"),
    ("why is sqlite our search index and not a search server?", "decision/sqlite-as-the-index.md"),
    ("float('3,14') raises ValueError when reading the Excel CSV", "gotcha/locale-decimal-comma.md"),
    ("the postgres pool hangs when the app shuts down", "gotcha/postgres-pool-hangs-on-shutdown.md"),
    ("tests hang at exit because the connection pool is never closed", "gotcha/postgres-pool-hangs-on-shutdown.md"),
    ("comparing datetime.now() with the database timestamp breaks the nightly report",
     "gotcha/timezone-naive-datetimes.md"),
    ("come pubblicare una nuova versione in produzione?", "guide/deploy-con-docker.md"),
    ("reintentar la API cuando devuelve 503", "pattern/retry-con-backoff.md"),
    ("naive datetimes in the report", "gotcha/timezone-naive-datetimes.md"),
]


# Everyday second asks that ride along with a question about the brain ("... Also shrink the cache.").
SECOND_ASKS = [
    "Also shrink the cache.", "Then run the tests again.", "And please update the changelog afterwards.",
    "After that, rename the helper to something clearer.", "Also add type hints while you are there.",
    "Then open a pull request with the fix.", "Also check the lint warnings.", "Make the README shorter too.",
]


def multi_part(prompts: list[tuple[str, set[str]]], seed: int) -> list[tuple[str, set[str]]]:
    """Two-ask prompts: each prompt joined to an everyday ask (before or after it, in turn). Relevant stays
    relevant (one ask is about a note); irrelevant stays irrelevant (neither ask is)."""
    out = []
    for i, (prompt, gold) in enumerate(prompts):
        first = prompt.rstrip().rstrip(".?!") + ("?" if prompt.rstrip().endswith("?") else ".")
        other = SECOND_ASKS[(i + seed) % len(SECOND_ASKS)] if i % 3 else EVERYDAY_PROMPTS[(i * 7 + seed) % len(
            EVERYDAY_PROMPTS)].capitalize() + "."
        out.append((f"{first} {other}" if i % 2 == 0 else f"{other} {first}", gold))
    return out


def print_multi_part(dbs: dict[str, Path], sets: dict[str, list[dict]], sample_db: Path, threshold: float) -> None:
    """Two-ask prompts judged on the whole prompt (before) and per clause (now), side by side."""
    print("\nmulti-part prompts (one ask about the brain + one everyday ask; irrelevant: two unrelated asks),"
          f" threshold {threshold:.2f}")
    print("| brain | judged | right entry injected | irrelevant kept silent |")
    print("|---|---|---:|---:|")
    brains = dict(dbs, **{"examples (7 notes)": sample_db})
    for name, db in brains.items():
        if name in sets:
            other = "cosqa" if name == "scifact" else "scifact"
            relevant = [(q["query"], set(q["gold"])) for q in sets[name]][1::2]
            unrelated = [(q["query"], set()) for q in sets[other]][1::2][:400] + [(p, set()) for p in EVERYDAY_PROMPTS]
        else:
            relevant = [(p, {gold}) for p, gold in SAMPLE_PROMPTS]
            unrelated = [(p, set()) for p in EVERYDAY_PROMPTS]
        prompts = multi_part(relevant, 1) + multi_part(unrelated, 2)
        for label, whole in (("whole prompt (before)", True), ("per clause (now)", False)):
            right, silent = rates(score_prompts(db, prompts, whole=whole), threshold)
            print(f"| {name} | {label} | {right:.3f} | {silent:.3f} |")


def build_sample(workdir: Path) -> Path:
    import shutil

    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    base = workdir / "examples"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "sample-notes", base / "documentation",
                    dirs_exist_ok=True)
    config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=workdir / "home")
    with KnowledgeBase(config) as kb:
        kb.reindex()
    return base / "brain.db"


def build(dataset: str, workdir: Path) -> Path:
    """Write and index one dataset's notes (kept in workdir: a re-run only re-checks them)."""
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    base = workdir / dataset
    write_notes(dataset, base / "documentation")
    config = load_config(db=base / "brain.db", save_dir=base / "documentation", home=workdir / "home")
    with KnowledgeBase(config) as kb:
        started = time.perf_counter()
        report = kb.reindex()
        print(f"{dataset}: index checked in {time.perf_counter() - started:.1f}s ({report.added} added)",
              file=sys.stderr)
    return base / "brain.db"


def queries(dataset: str) -> list[dict]:
    return [json.loads(line) for line in open(eval_retrieval.EVAL / dataset / "queries.jsonl", encoding="utf-8")]


def score_prompts(db: Path, prompts: list[tuple[str, set[str]]], *, whole: bool = False) -> list[tuple[list, set[str]]]:
    """For each (prompt, gold paths): its candidates as (relevance score, path), in the order the hook takes
    them: judged per clause as the hook does, or (`whole`) on the whole prompt only, as it did before."""
    from pinky.search.recall import candidates, relevance
    from pinky.store.readonly import connect_ro

    conn = connect_ro(str(db))
    assert conn is not None
    paths = dict(sqlite3.connect(db).execute("SELECT id, path FROM entry").fetchall())
    judge = candidates if whole else relevance
    out = []
    for prompt, gold in prompts:
        found = judge(conn, prompt)
        out.append(([(c.score, paths[c.entry_id]) for c in found], gold))
    return out


def rates(scored: list[tuple[list, set[str]]], threshold: float, shown: int = 3) -> tuple[float, float]:
    """(share of relevant prompts whose injection holds a gold note, share of irrelevant ones kept silent)."""
    right = silent = relevant = irrelevant = 0
    for found, gold in scored:
        injected = [path for score, path in found if score >= threshold][:shown]
        if gold:
            relevant += 1
            right += bool(gold & set(injected))
        else:
            irrelevant += 1
            silent += not injected
    return right / max(relevant, 1), silent / max(irrelevant, 1)


def tune(scored: dict[str, list], grid: list[float]) -> float:
    """The threshold that finds the most (relative to what BM25's top 3 can find) on the even prompts
    of both brains while keeping >= 90 % of their irrelevant even prompts silent."""
    best = (-1.0, grid[-1])
    for t in grid:
        found = [rates(data[0::2], t) for data in scored.values()]
        ceilings = [rates(data[0::2], -1e9)[0] for data in scored.values()]
        if all(silent >= 0.9 for _, silent in found):
            best = max(best, (sum(r / max(c, 1e-9) for (r, _), c in zip(found, ceilings, strict=True)), t))
    return best[1]


def main() -> None:
    from pinky.search.recall import DEFAULT_THRESHOLD

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, metavar="DIR",
                        help="the retrieval sets: DIR/scifact/ and DIR/cosqa/, "
                        "each with notes.jsonl and queries.jsonl")
    parser.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pinky-eval-recall")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    args = parser.parse_args()
    os.environ.setdefault("PINKY_HASH_EMBED", "1")  # the hook is full-text only; vectors are not used
    eval_retrieval.EVAL = args.data.resolve()
    sets = {name: queries(name) for name in ("scifact", "cosqa")}
    dbs = {name: build(name, args.workdir) for name in sets}
    scored, per_ms = {}, {}
    for name, db in dbs.items():
        other = "cosqa" if name == "scifact" else "scifact"
        prompts = [(q["query"], set(q["gold"])) for q in sets[name]]
        prompts += [(q["query"], set()) for q in sets[other]] + [(p, set()) for p in EVERYDAY_PROMPTS]
        started = time.perf_counter()
        scored[name] = score_prompts(db, prompts)
        per_ms[name] = (time.perf_counter() - started) * 1000 / len(prompts)
    tuned = tune(scored, [t / 100 for t in range(20, 121, 2)])
    sample = [(p, {gold}) for p, gold in SAMPLE_PROMPTS] + [(p, set()) for p in EVERYDAY_PROMPTS]
    sample_db = build_sample(args.workdir)
    scored["examples (7 notes)"] = score_prompts(sample_db, sample)
    per_ms["examples (7 notes)"] = 0.0
    print(f"threshold tuned on the even prompts: {tuned:.2f}; evaluated: {args.threshold:.2f} (pinky's default "
          f"{DEFAULT_THRESHOLD:.2f})\n")
    print("| brain | prompts | right entry injected | of those BM25's top 3 holds | irrelevant kept silent | "
          "mean ms/prompt |")
    print("|---|---|---:|---:|---:|---:|")
    for name, data in scored.items():
        for label, part in (("odd (held out)", data[1::2]), ("all", data))[name.startswith("examples"):]:
            right, silent = rates(part, args.threshold)
            ceiling = rates(part, -1e9)[0]
            print(f"| {name} | {label} | {right:.3f} | {right / max(ceiling, 1e-9):.3f} (top 3: {ceiling:.3f}) | "
                  f"{silent:.3f} | {per_ms[name]:.1f} |")
    print("\ntrade-off on all prompts (threshold: right entry injected / irrelevant kept silent)")
    for t in (0.4, 0.5, 0.6, 0.68, 0.8, 1.0):
        print(f"  {t:.2f}: " + "  ".join(f"{name} {r:.3f}/{s:.3f}" for name, (r, s) in
                                         ((n, rates(d, t)) for n, d in scored.items())))
    print_multi_part(dbs, sets, sample_db, args.threshold)


if __name__ == "__main__":
    main()
