"""What seeing the global brain as it is on disk costs: a project beside a 10,000-note global brain.

    python benchmarks/bench_global_fresh.py [--notes 10000] [--runs 15] --before BIN
                                            [--keep DIR] [--corpus soup|eval] [--data DIR] [--hogs N]
                                            [--hooks-only]
    python benchmarks/bench_global_fresh.py --table [--before BIN] [--keep DIR] [--sizes 10000,100000]
                                            [--project-notes 10000] [--runs 15] [--searches 30] [--warm-only]

Times, as whole processes and in turn (one run of each, then the next round, so the machine's load
falls on all alike), a bare `python -c pass`, the per-prompt hook (`pinky-hooks user-prompt`, the
exact JSON Claude Code sends) and a one-shot `pinky-brain search`, each with this checkout (after)
and with the interpreter of `--before` (a checkout without the change, e.g. the main branch's
.venv), on the same brain. Prints medians and each one's ratio to the bare start, pair by pair.
Then the one-off cost after a change: a note added to the global brain, and the first hook (after)
that takes it in. The hashing embedder: the walk's cost does not depend on the model.

`--table` prints issue 37's table, this checkout beside `--before` in one run, quiet and then with two CPU
hogs: warm `brain_search` p50 through a running `pinky-mcp` (both servers up side by side, asked in turn),
a one-shot `pinky-brain search`, the session-start hook and the per-prompt hook (p50, and its ratio to a bare
interpreter start), for a 50-note project beside each global brain size of `--sizes`, and for a project of
`--project-notes` notes with no global notes. Each side indexes the same notes (hard links) into its own index.
See bench_fresh_table.py.

`--corpus soup` (the default) writes notes of 120 words drawn from 25: every word of the prompt is in
nearly every note, the worst case for the hook's word counts. `--corpus eval` takes the global brain from
real text instead (SciFact abstracts and CoSQA functions from `--data DIR`, 11,450 notes at most) and
cycles the prompt through real queries of both sets and everyday asks, one per round. `--hogs N`: N processes
spin on the CPU meanwhile (a busy machine: two hogs on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(sys.executable).parent
TYPES = ("gotcha", "decision", "pattern", "bug", "guide", "note")
WORDS = ("pool timeout retry cache index vector query schema migration lock thread socket parser token "
         "config deploy build release worker queue session cookie header proxy encoder").split()


EVERYDAY = ["run the tests and fix whatever fails", "commit this with a good message", "why is the CI red?",
            "add logging to the retry loop", "migrate the config to TOML", "is this thread safe?"]


def eval_notes(data: Path) -> list[dict[str, str]]:
    """Both sets' notes, each under a folder named after its set (their file names overlap)."""
    return [{**note, "path": f"{name}/{note['path']}"} for name in ("scifact", "cosqa")
            for note in map(json.loads, (data / name / "notes.jsonl").read_text(encoding="utf-8").splitlines())]


def eval_prompts(data: Path, count: int = 24) -> list[str]:
    queries = [[json.loads(line)["query"] for line in (data / name / "queries.jsonl").read_text(
        encoding="utf-8").splitlines()[:count // 3] if line.strip()] for name in ("scifact", "cosqa")]
    return [q for trio in zip(queries[0], queries[1], EVERYDAY * count, strict=False) for q in trio]


def build(root: Path, notes: int, corpus: str, data: Path) -> None:
    rng = random.Random(11)
    brain = root / "home" / "brain"
    for note in eval_notes(data)[:notes] if corpus == "eval" else []:
        path = brain / note["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note["markdown"], encoding="utf-8")
    for i in range(notes if corpus == "soup" else 0):
        kind = TYPES[i % len(TYPES)]
        path = brain / kind / f"global-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = " ".join(rng.choice(WORDS) for _ in range(120))
        path.write_text(f"---\ntitle: Global {i} about {rng.choice(WORDS)}\ntype: {kind}\n---\n{body}\n",
                        encoding="utf-8")
    project = root / "project"
    for i in range(50):
        path = project / "documentation" / TYPES[i % len(TYPES)] / f"local-{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Local {i}\n\n" + " ".join(rng.choice(WORDS) for _ in range(80)) + "\n", encoding="utf-8")
    (project / "pinky.toml").write_text("# the benchmark's project\n", encoding="utf-8")
    subprocess.run([str(HERE / "pinky-brain"), "reindex"], cwd=project, env=environment(root), check=True,
                   capture_output=True)


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env.update(PINKY_HOME=str(root / "home"), PINKY_HASH_EMBED="1", CLAUDE_PROJECT_DIR=str(root / "project"),
               PINKY_HOOKS_NO_BACKGROUND="1")
    return env


def once(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms of the process): on a busy machine the CPU time says more than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd)
    took = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    if done.returncode != 0 or b"Error" in done.stderr or b"Traceback" in done.stderr:
        raise SystemExit(f"{cmd} failed: {done.stderr.decode(errors='replace')[:400]}")
    return took, cpu


def compile_all(python: Path) -> None:
    """Installed packages ship bytecode: compile both checkouts so neither pays for it per process."""
    subprocess.run([str(python), "-c", "import compileall, pathlib, pinky; "
                    "compileall.compile_dir(pathlib.Path(pinky.__file__).parent, quiet=1)"], check=True)


def timed_rounds(runs: int, commands: dict[str, list[str]], asks: list[str], prompt: Any,
                 times: dict[str, list[tuple[float, float]]], env: dict[str, str], project: Path) -> None:
    """Every command once a round, in turn; a session of its own per hook and round: each recalls what it finds."""
    for run in range(runs):
        for name, cmd in commands.items():
            stdin = prompt(f"bench-{run}-{name}", asks[run % len(asks)]) if "hook" in name else b""
            times[name].append(once(cmd, stdin, env, project))


def report(runs: int, hogs: int, times: dict[str, list[tuple[float, float]]]) -> None:
    bare = times["python -c pass"]
    print(f"\n{runs} rounds, in turn, {hogs} CPU hog(s) running; medians; ratio = median of (command / the bare "
          "start of its round)")
    print(f"{'':<32} {'wall':>8}        {'ratio':>5}    {'CPU':>8}        {'ratio':>5}")
    for name, xs in times.items():
        cells = []
        for side in (0, 1):
            ratio = statistics.median(x[side] / max(b[side], 0.1) for x, b in zip(xs, bare, strict=True))
            cells.append(f"{statistics.median(x[side] for x in xs):8.1f} ms   {ratio:5.2f}x")
        print(f"{name:<32} {'   '.join(cells)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, required=True,
                        help="the bin folder of an install without the change")
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brain in this folder")
    parser.add_argument("--corpus", choices=("soup", "eval"), default="soup")
    parser.add_argument("--hogs", type=int, default=0, help="CPU hogs running while the commands are timed")
    parser.add_argument("--hooks-only", action="store_true",
                        help="time the hooks only (a `--before` that cannot read this index's schema rebuilds "
                             "its own on every search)")
    parser.add_argument("--data", type=Path, metavar="DIR",
                        help="with --corpus eval: the retrieval sets, DIR/scifact/ and DIR/cosqa/, "
                        "each with notes.jsonl and queries.jsonl")
    parser.add_argument("--table", action="store_true", help="issue 37's table (bench_fresh_table.py)")
    parser.add_argument("--sizes", default="10000,100000", help="--table: global brain sizes")
    parser.add_argument("--project-notes", type=int, default=10_000, help="--table: the project-only row's notes")
    parser.add_argument("--searches", type=int, default=30, help="--table: warm brain_search calls per side")
    parser.add_argument("--warm-only", action="store_true",
                        help="--table: warm brain_search alone, with queries every note matches and selective ones")
    args = parser.parse_args()
    if args.corpus == "eval" and args.data is None:
        parser.error("--corpus eval needs --data DIR")
    if args.table:
        from bench_fresh_table import table

        table(args, HERE)
        return
    root = args.keep or Path(tempfile.mkdtemp(prefix="pinky-bench-fresh-"))
    env = environment(root)
    project = root / "project"
    if not (project / "brain.db").exists():
        started = time.perf_counter()
        build(root, args.notes, args.corpus, args.data)
        print(f"built a project beside a {args.notes:,}-note global brain ({args.corpus}) in "
              f"{time.perf_counter() - started:.0f} s")
    for folder in (HERE, args.before):
        compile_all(folder / "python")
    asks = eval_prompts(args.data) if args.corpus == "eval" else ["Why does the worker queue time out on deploy?"]

    def prompt(session: str, ask: str) -> bytes:
        return json.dumps({"session_id": session, "transcript_path": str(root / "t.jsonl"), "cwd": str(project),
                           "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
                           "prompt": ask}).encode()

    commands = {"python -c pass": [sys.executable, "-c", "pass"]}
    for label, folder in (("before", args.before), ("after", HERE)):
        commands[f"hook user-prompt, {label}"] = [str(folder / "pinky-hooks"), "user-prompt"]
        if not args.hooks_only:
            commands[f"pinky-brain search, {label}"] = [str(folder / "pinky-brain"), "search", "worker queue timeout"]
    for name, cmd in commands.items():  # warm the page cache and the index's state once
        once(cmd, prompt("warm", asks[0]) if "hook" in name else b"", env, project)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        timed_rounds(args.runs, commands, asks, prompt, times, env, project)
    finally:
        for hog in hogs:
            hog.kill()
    report(args.runs, args.hogs, times)
    hook_cmd = commands["hook user-prompt, after"]
    first = []
    for n in range(min(5, args.runs)):
        note = root / "home" / "brain" / "note" / f"added-{time.time_ns()}-{n}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# Added {n}\n\nA note added between two prompts.\n", encoding="utf-8")
        first.append(once(hook_cmd, prompt(f"added-{n}", asks[0]), env, project))
    wall, cpu = (statistics.median(x[side] for x in first) for side in (0, 1))
    print(f"first hook after a global note was added: wall {wall:.1f} ms, CPU {cpu:.1f} ms "
          f"(median of {len(first)}: it takes the change in, once)")


if __name__ == "__main__":
    main()
