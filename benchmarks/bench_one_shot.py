"""One-shot `pinky-brain search` and `pinky-brain save` as whole processes, beside a bare interpreter start
(a script, not a test): prints medians and the ratio to `python -c pass`, measured in one run.

    python benchmarks/bench_one_shot.py [--notes 1000] [--runs 15] [--keep DIR] [--quality] [--src DIR]

Builds a brain of N generated notes with the default embedder (or reuses --keep DIR: the layout of
bench_core.py, so `--keep` can point at its brain), then runs `python -c pass`, a search and a save in
turn, each a fresh process timed from start to exit, and takes each ratio pair by pair (the machine's
speed drifts; a pair shares it). The first round is not counted: it writes the model cache and the
bytecode. What a user gets: pinky's modules are byte-compiled first (pip, pipx and uv compile at install
time; a checkout run under PYTHONDONTWRITEBYTECODE=1 would compile every module in every process, about
a third more). `--quality` first fills the second-stage vectors, so the search runs both stages. `--src DIR` runs
another checkout's code (its `src/`) for before-and-after figures, on the same brain.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_core import make_notes  # noqa: E402
from figures import record, write  # noqa: E402

QUERY = "pool shutdown timeout during deploy"


def timed(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()[:400]}")
    return elapsed


def build(base: Path, notes: int, env: dict[str, str], exe: str, quality: bool) -> Path:
    project = base / "project"
    if not (project / "documentation").is_dir():
        make_notes(project / "documentation", notes)
        (project / "pinky.toml").write_text("# the benchmark's project\n", encoding="utf-8")
    started = time.perf_counter()
    subprocess.run([exe, "reindex", *(["--quality"] if quality else [])], cwd=project, env=env, check=True,
                   capture_output=True)
    print(f"brain: {notes:,} notes in {project} (reindex {time.perf_counter() - started:.1f} s)")
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brain in this folder")
    parser.add_argument("--quality", action="store_true", help="fill the second-stage vectors first")
    parser.add_argument("--src", type=Path, help="run the code of this src/ folder (another checkout's)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench_all.py)")
    args = parser.parse_args()
    if args.src:
        os.environ["PYTHONPATH"] = str(args.src.resolve())
        sys.path.insert(0, str(args.src.resolve()))
    base = args.keep or Path(tempfile.mkdtemp(prefix="pinky-bench-one-shot-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PINKY_HASH_EMBED", "PYTHONDONTWRITEBYTECODE")}
    env["PINKY_HOME"] = str(base / "home")
    exe = str(Path(sys.executable).parent / "pinky-brain")
    project = build(base, args.notes, env, exe, args.quality)
    import pinky

    compileall.compile_dir(Path(pinky.__file__).parent, quiet=1)
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], ""),
        "pinky-brain search": ([exe, "search", QUERY], ""),
        "pinky-brain save": ([exe, "save", "-t", "one-shot bench {n}", "--type", "note"],
                             "A note saved by the benchmark, number {n}, about pool timeouts at shutdown."),
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(args.runs + 1):
        for name, (cmd, stdin) in commands.items():
            took = timed([part.replace("{n}", str(run)) for part in cmd], project, env, stdin.replace("{n}", str(run)))
            if run:  # the first round writes the model cache and the bytecode
                times[name].append(took)
    bare = times["python -c pass"]
    print(f"code: {Path(pinky.__file__).parent}; python {sys.version.split()[0]}; {args.runs} rounds, each "
          "command a fresh process, start to exit")
    print(f"{'':<22} {'median ms':>10} {'min':>7} {'max':>7} {'x bare (median of pairs)':>26}")
    for name, values in times.items():
        ratio = statistics.median(v / b for v, b in zip(values, bare, strict=True))
        print(f"{name:<22} {statistics.median(values):10.1f} {min(values):7.1f} {max(values):7.1f} {ratio:26.1f}")
        key = name.split()[-1].replace("pass", "bare")
        record(f"one_shot_{key}_p50_ms", statistics.median(values))
        record(f"one_shot_{key}_x_bare", ratio)
    write(args.json)


if __name__ == "__main__":
    main()
