"""Issue 37's table: what a big global brain costs each search, this checkout beside another install in one run.

Run through `python benchmarks/bench_global_fresh.py --table --before BIN [--keep DIR]` (see there). Rows: a
project of `--project-notes` notes and no global notes; a 50-note project beside each global brain size.
Columns, each before | after: warm `brain_search` p50 (both servers running, asked in turn), a one-shot
`pinky-brain search` p50, the session-start hook p50, the per-prompt hook p50 and its ratio to a bare
`python -c pass` of the same round. Quiet, then with two CPU hogs. The notes are generated once per row and
hard-linked for each side, which indexes them into its own index (one side's schema may be newer).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp  # noqa: E402
from bench_global_fresh import TYPES, WORDS, compile_all, once  # noqa: E402

QUERIES = ["worker queue timeout", "cache index vector", "deploy release build", "session cookie header",
           "parser token schema", "retry lock thread"]  # every note holds these words: the ranking's worst case
SELECTIVE = ["4242", "777", "9001", "1234", "5678", "2468"]  # a note's number: one title holds it (--selective)


def _notes(folder: Path, count: int, prefix: str, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(count):
        kind = TYPES[i % len(TYPES)]
        path = folder / kind / f"{i // 1000:03d}" / f"{prefix}-{i:06d}.md"  # 1,000 notes a folder, as years of them
        path.parent.mkdir(parents=True, exist_ok=True)
        body = " ".join(rng.choice(WORDS) for _ in range(120))
        path.write_text(f"---\ntitle: {prefix} {i} about {rng.choice(WORDS)}\ntype: {kind}\n---\n{body}\n",
                        encoding="utf-8")


def _template(base: Path, row: str, global_notes: int, project_notes: int) -> Path:
    template = base / row / "template"
    if (template / "done").exists():
        return template
    shutil.rmtree(template, ignore_errors=True)
    (template / "home" / "brain").mkdir(parents=True)
    _notes(template / "home" / "brain", global_notes, "global", 11)
    _notes(template / "project" / "documentation", project_notes, "local", 12)
    (template / "project" / "pinky.toml").write_text("# the benchmark's project\n", encoding="utf-8")
    (template / "done").write_text("", encoding="utf-8")
    return template


def environment(world: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env.update(PINKY_HOME=str(world / "home"), PINKY_HASH_EMBED="1", CLAUDE_PROJECT_DIR=str(world / "project"),
               PINKY_HOOKS_NO_BACKGROUND="1", PINKY_QUALITY="off")
    return env


def _world(base: Path, row: str, side: str, template: Path, bin_dir: Path) -> Path:
    """The row's notes, hard-linked, indexed by this side's install."""
    world = base / row / side
    if not (world / "indexed").exists():
        shutil.rmtree(world, ignore_errors=True)
        shutil.copytree(template, world, copy_function=os.link, ignore=shutil.ignore_patterns("done"))
        started = time.perf_counter()
        subprocess.run([str(bin_dir / "pinky-brain"), "reindex"], cwd=world / "project", env=environment(world),
                       check=True, capture_output=True)
        print(f"  {row}, {side}: indexed in {time.perf_counter() - started:.0f} s", flush=True)
        (world / "indexed").write_text("", encoding="utf-8")
    return world


def _payload(world: Path, event: str, session: str) -> bytes:
    extra: dict[str, Any] = ({"source": "startup"} if event == "SessionStart" else
                             {"permission_mode": "default", "prompt": "Why does the worker queue time out on deploy?"})
    return json.dumps({"session_id": session, "transcript_path": str(world / "t.jsonl"), "cwd": str(world / "project"),
                       "hook_event_name": event, **extra}).encode()


def _one_shots(worlds: dict[str, Path], bins: dict[str, Path], runs: int) -> dict[str, dict[str, float]]:
    """p50 wall ms of each one-shot command per side, all in turn, and the prompt hook's ratio to a bare start."""
    kinds = {"search": lambda b: [str(b / "pinky-brain"), "search", "worker queue timeout"],
             "session": lambda b: [str(b / "pinky-hooks"), "session-start"],
             "prompt": lambda b: [str(b / "pinky-hooks"), "user-prompt"]}
    times: dict[tuple[str, str], list[float]] = {}
    bare: list[float] = []
    for run in range(runs + 1):  # the first round warms the page cache and each index's state
        took = once([sys.executable, "-c", "pass"], b"", os.environ.copy(), Path.cwd())[0]
        if run:
            bare.append(took)
        for side, bin_dir in bins.items():
            world = worlds[side]
            for kind, command in kinds.items():
                event = {"session": "SessionStart", "prompt": "UserPromptSubmit"}.get(kind)
                stdin = _payload(world, event, f"bench-{run}-{kind}") if event else b""
                took = once(command(bin_dir), stdin, environment(world), world / "project")[0]
                if run:
                    times.setdefault((side, kind), []).append(took)
    out: dict[str, dict[str, float]] = {}
    for (side, kind), xs in times.items():
        out.setdefault(side, {})[kind] = statistics.median(xs)
        if kind == "prompt":
            out[side]["prompt_ratio"] = statistics.median(x / b for x, b in zip(xs, bare, strict=True))
    return out


def _warm_searches(worlds: dict[str, Path], bins: dict[str, Path], searches: int,
                   queries: list[str] = QUERIES) -> dict[str, float]:
    servers = {}
    try:
        for side, bin_dir in bins.items():
            world = worlds[side]
            servers[side] = bench_mcp.Server(environment(world), world / "project", [str(bin_dir / "pinky-mcp")])
            servers[side].initialize()
        for server in servers.values():
            server.wait_warm()
        took: dict[str, list[float]] = {side: [] for side in servers}
        for n in range(searches + 3):
            for side, server in servers.items():
                started = time.perf_counter()
                reply = server.request("tools/call", {"name": "brain_search",
                                                      "arguments": {"query": queries[n % len(queries)]}})
                assert not reply["result"]["isError"], reply
                if n >= 3:
                    took[side].append((time.perf_counter() - started) * 1000)
        return {side: statistics.median(xs) for side, xs in took.items()}
    finally:
        for server in servers.values():
            server.close()


def _print(rows: list[tuple[str, dict[str, float], dict[str, dict[str, float]]]], label: str) -> None:
    print(f"\n{label}: p50 wall ms, before | after")
    print(f"| {'':<36} | warm brain_search | one-shot search | session start | per-prompt hook (x bare) |")
    print(f"| {'':<36} | before | after | before | after | before | after | before | after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, warm, shots in rows:
        b, a = shots["before"], shots["after"]
        print(f"| {name:<36} | {warm['before']:6.1f} | {warm['after']:6.1f} | {b['search']:5.0f} | {a['search']:5.0f} "
              f"| {b['session']:5.0f} | {a['session']:5.0f} | {b['prompt']:4.0f} ({b['prompt_ratio']:.2f}x) | "
              f"{a['prompt']:4.0f} ({a['prompt_ratio']:.2f}x) |")


def _print_warm(rows: list[tuple[str, dict[str, float], dict[str, float]]]) -> None:
    print("\nwarm brain_search p50 wall ms, before | after: queries every note matches; queries one title holds")
    print(f"| {'':<36} | all match: before | after | selective: before | after |")
    print("|---|---|---|---|---|")
    for name, every, one in rows:
        print(f"| {name:<36} | {every['before']:6.1f} | {every['after']:6.1f} | {one['before']:6.1f} | "
              f"{one['after']:6.1f} |")


def table(args: Any, here: Path) -> None:
    base = args.keep or Path("/tmp/pinky-bench-fresh-table")
    bins = {"before": args.before, "after": here}
    for bin_dir in bins.values():
        compile_all(bin_dir / "python")
    rows = [(f"{args.project_notes:,}-note project, no global notes", 0, args.project_notes)]
    rows += [(f"{int(size):,} global notes (50-note project)", int(size), 50) for size in args.sizes.split(",")]
    worlds = {}
    for name, global_notes, project_notes in rows:
        key = f"g{global_notes}-p{project_notes}"
        template = _template(base, key, global_notes, project_notes)
        worlds[name] = {side: _world(base, key, side, template, bin_dir) for side, bin_dir in bins.items()}
    if args.warm_only:
        _print_warm([(name, _warm_searches(worlds[name], bins, args.searches),
                      _warm_searches(worlds[name], bins, args.searches, SELECTIVE)) for name, _, _ in rows])
        return
    for hogs in (0, 2):
        spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
        try:
            measured = [(name, _warm_searches(worlds[name], bins, args.searches),
                         _one_shots(worlds[name], bins, args.runs)) for name, _, _ in rows]
        finally:
            for hog in spinning:
                hog.kill()
        _print(measured, f"{'quiet' if not hogs else f'{hogs} CPU hogs'}; {args.runs} rounds of one-shots, "
                         f"{args.searches} warm searches per side")
