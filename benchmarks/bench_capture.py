"""The Stop hook's capture trigger and the robustness of the transcript reading (a script, not a test).

    python benchmarks/bench_capture.py [--only quality,poison,failing,precompact] [--failing 10000,20000,40000]
                                       [--runs 3] [--precompact-mb 200] [--src DIR]

- quality: precision and recall of the capture trigger on real-shaped turns (tests/support/capture_fixtures.py:
  FIXTURES were written together with the rules, HELD_OUT afterwards and never used to change them),
  with every wrong decision named.
- poison: the eight bad transcript lines of tests/support/transcript_fixtures.py, each between turns that must
  all be recorded, through the real Stop and PreCompact hooks: how many cases were recorded whole with
  the skipped line counted in the diary, and whether stdout held anything but the hook's JSON.
- failing: the Stop hook on one turn of N failing commands (the capture's worst case): seconds, CPU seconds
  and peak RSS per N, the best of `--runs`.
- precompact: the PreCompact hook on a transcript of that many MB (built in a temporary folder): seconds,
  peak RSS, and how far its offsets got in one run (the rest waits for the next, PINKY_RECORD_SECONDS).

`--src DIR` runs the hooks from another source tree (e.g. the main checkout's `src`) for before/after figures;
compile its bytecode first (`python -m compileall DIR`), as this script does for its own package.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from capture_fixtures import FIXTURES, HELD_OUT  # noqa: E402
from hook_helpers import hook_env, measured  # noqa: E402
from transcript_fixtures import AFTER, BEFORE, POISON, failing_commands, poisoned, write_long_transcript  # noqa: E402

from pinky.capture.evidence import find_evidence, saved_in  # noqa: E402

SESSION = "bench-capture-0001"


def quality() -> None:
    for label, fixtures in (("written with the rules", FIXTURES), ("held out", HELD_OUT)):
        tp = fp = fn = 0
        wrong = []
        for name, should, events in fixtures:
            asked = bool(find_evidence(events)) and not saved_in(events)
            tp += asked and should
            fp += asked and not should
            fn += should and not asked
            if asked != should:
                wrong.append(f"{'asked' if asked else 'missed'}: {name}")
        precision = tp / max(tp + fp, 1)
        recall = tp / max(tp + fn, 1)
        print(f"{label:<24} turns {len(fixtures):>3}  should ask {tp + fn:>3}  precision {precision:.2f}  "
              f"recall {recall:.2f}")
        for line in wrong:
            print(f"    {line}")


# --- the hooks as Claude Code runs them --------------------------------------------------------------


def project(parent: Path, name: str) -> Path:
    root = parent / name
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("", encoding="utf-8")
    return root


def run_hook(event: str, root: Path, src: Path | None, timeout: float) -> tuple[float, float, int, str, str]:
    """(seconds, CPU seconds, peak RSS in KiB, stdout, stderr) of one hook process; seconds is inf when it
    ran past `timeout`. CPU time is printed too: on a shared machine the wall time varies."""
    env = hook_env(root, PINKY_HOME=str(root / "home"), PINKY_HASH_EMBED="1",
                   **({"PYTHONPATH": str(src)} if src is not None else {}))
    payload = {"session_id": SESSION, "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
               "hook_event_name": "Stop" if event == "stop" else "PreCompact", "stop_hook_active": False,
               "trigger": "auto"}
    started = time.perf_counter()
    code, stdout, stderr, peak, cpu = measured([sys.executable, "-m", "pinky.hooks", event],
                                               json.dumps(payload).encode(), root, env, timeout)
    seconds = time.perf_counter() - started if code != -9 else float("inf")
    return seconds, cpu, peak, stdout.decode(errors="replace"), stderr.decode(errors="replace")


def diary(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace")
                   for p in sorted((root / "documentation" / "diary").glob("*.md")))


def poison(src: Path | None, scratch: Path) -> None:
    for event in ("stop", "pre-compact"):
        recorded = counted = failed = clean = 0
        for name, bad in POISON.items():
            root = project(scratch, f"poison-{event}-{name.replace(' ', '-')}")
            (root / "t.jsonl").write_bytes(poisoned(bad))
            _, _, _, stdout, stderr = run_hook(event, root, src, 120)
            text = diary(root)
            recorded += all(turn in text for turn in BEFORE + AFTER)
            counted += "skipped: 1 unreadable" in text
            failed += bool(stderr.strip())
            clean += stdout.strip() == "" or stdout.lstrip().startswith("{")
            if stderr.strip():
                print(f"    {event} {name}: {stderr.strip()[:150]}")
        print(f"poison lines, {event:<12} of {len(POISON)}: every turn recorded {recorded}, bad line counted in the "
              f"diary {counted}, hook failed {failed}, stdout only protocol JSON {clean}")


def failing(sizes: list[int], runs: int, src: Path | None, scratch: Path, timeout: float) -> None:
    previous = None
    for n in sizes:
        root = project(scratch, f"failing-{n}")
        with (root / "t.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(event) + "\n" for event in failing_commands(n))
        mb = (root / "t.jsonl").stat().st_size / 1e6
        best = (float("inf"), float("inf"), 0, "")
        for _ in range(runs):  # a fresh offset each time: the whole turn is read again
            shutil.rmtree(root / "home", ignore_errors=True)
            seconds, cpu, rss, _, stderr = run_hook("stop", root, src, timeout)
            best = min(best, (cpu, seconds, rss, stderr.strip()))
        cpu, seconds, rss, stderr = best
        ratio = f"  x{cpu / previous:.2f} CPU for x2" if previous and cpu < float("inf") else ""
        print(f"stop, {n:>6,} failing commands ({mb:5.1f} MB): {seconds:6.1f} s ({cpu:6.1f} s CPU)  "
              f"peak RSS {rss / 1024:5.0f} MiB{ratio}{'  ' + stderr[:100] if stderr else ''}")
        previous = cpu


def precompact(mb: int, src: Path | None, scratch: Path, timeout: float) -> None:
    root = project(scratch, f"precompact-{mb}")
    started = time.perf_counter()
    write_long_transcript(root / "t.jsonl", mb * 1024 * 1024)
    size = (root / "t.jsonl").stat().st_size
    print(f"built a {size / 2**20:.0f} MiB transcript in {time.perf_counter() - started:.1f} s")
    for run in (1, 2):
        seconds, cpu, rss, _, stderr = run_hook("pre-compact", root, src, timeout)
        offsets = [_offset(root / "home" / "state" / name) for name in ("diary-offsets.json",
                                                                        "hooks/checkpoint-offsets.json")]
        print(f"pre-compact run {run}: {seconds:6.1f} s ({cpu:5.1f} s CPU)  peak RSS {rss / 1024:5.0f} MiB  "
              f"diary offset {offsets[0] / size:4.0%}  checkpoint offset {offsets[1] / size:4.0%}"
              f"{'  ' + stderr.strip()[:100] if stderr.strip() else ''}")
        if min(offsets) >= size:
            break
    lines = [line for line in diary(root).splitlines() if line.startswith("- ")]
    print(f"diary lines written: {len(lines)} ({sum(' decided: ' in line for line in lines)} decided)")


def _offset(path: Path) -> int:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))[SESSION]["offset"])
    except (OSError, ValueError, KeyError):
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="quality,poison,failing,precompact")
    parser.add_argument("--failing", default="10000,20000,40000", help="numbers of failing commands")
    parser.add_argument("--runs", type=int, default=3, help="runs per size of failing commands (the best is shown)")
    parser.add_argument("--precompact-mb", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a hook is given up on")
    parser.add_argument("--src", type=Path, help="run the hooks from this source tree (before/after figures)")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if args.src is None:  # as installed (pip compiles): a dev tree without .pyc recompiles on every hook call
        import compileall

        import pinky

        compileall.compile_dir(Path(pinky.__file__).parent, quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="pinky-bench-capture-"))
    try:
        if "quality" in parts:
            quality()
        if "poison" in parts:
            poison(args.src, scratch)
        if "failing" in parts:
            failing([int(n) for n in args.failing.split(",")], args.runs, args.src, scratch, args.timeout)
        if "precompact" in parts:
            precompact(args.precompact_mb, args.src, scratch, args.timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
