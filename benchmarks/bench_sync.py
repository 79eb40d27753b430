"""`pinky sync` time and peak memory on the cases that used to hurt: many notes, one big file, one big
diary edited on two machines. Each sync runs in a fresh process (as `pinky sync` does); its peak
RSS comes from the kernel (ru_maxrss of the child).

    python benchmarks/bench_sync.py [--notes 2000] [--big-mb 50] [--keep DIR]

Prints seconds and peak MB per case, and the floor: a sync that pulls one small note.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAY = "2026-11-26"
SYNC = "import sys; from pathlib import Path; from pinky.sync.run import sync; sync(Path(sys.argv[1]), *sys.argv[2:])"


def run_sync(brain: Path, remote: str | None = None) -> tuple[float, float]:
    """One sync in a child process: (seconds, that child's own peak RSS in MB, from wait4)."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", SYNC, str(brain), *([remote] if remote else [])])
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"sync of {brain} failed (exit {child.returncode})")
    return seconds, usage.ru_maxrss / 1024


def note(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {path.stem}\ntype: gotcha\n---\n{body}\n", encoding="utf-8")


def diary(root: Path, lines: list[str]) -> None:
    path = root / "diary" / f"{DAY}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else f"---\ntype: diary\ndate: {DAY}\n---\n# Diary\n\n"
    path.write_text(text + "".join(line + "\n" for line in lines), encoding="utf-8")


def fresh_remote(work: Path, name: str) -> str:
    from dulwich import porcelain

    remote = work / f"{name}.git"
    porcelain.init(str(remote), bare=True).close()
    return str(remote)


def case(label: str, figures: tuple[float, float]) -> None:
    print(f"{label:<52} {figures[0]:7.2f} s  {figures[1]:7.0f} MB peak", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--big-mb", type=int, default=50)
    parser.add_argument("--keep", type=Path, help="work here and leave the repositories behind")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="pinky-bench-sync-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        remote = fresh_remote(work, "floor")
        note(work / "floor-a" / "gotcha/one.md", "one small note")
        run_sync(work / "floor-a", remote)
        case("floor: clone a brain of one note", run_sync(work / "floor-b", remote))

        remote = fresh_remote(work, "many")
        for i in range(args.notes):
            note(work / "many-a" / "gotcha" / f"note-{i:05d}.md", f"note {i} " + "word " * 150)
        case(f"push {args.notes} new notes (first sync)", run_sync(work / "many-a", remote))
        case("clone them on a second machine", run_sync(work / "many-b", remote))

        remote = fresh_remote(work, "big")
        big = work / "big-a" / "assets" / "big.bin"
        big.parent.mkdir(parents=True)
        big.write_bytes(os.urandom(args.big_mb << 20))
        case(f"push one {args.big_mb} MB file", run_sync(work / "big-a", remote))
        case("clone it", run_sync(work / "big-b", remote))

        remote = fresh_remote(work, "diary")
        lines = (args.big_mb << 20) // 32
        diary(work / "diary-a", [f"- 07:{i % 60:02d} [aaaaaaaa] line {i}" for i in range(lines)])
        run_sync(work / "diary-a", remote)
        run_sync(work / "diary-b", remote)
        diary(work / "diary-a", ["- 09:00 [aaaaaaaa] added on A"])
        diary(work / "diary-b", ["- 09:30 [bbbbbbbb] added on B"])
        run_sync(work / "diary-a")
        size = (work / "diary-b" / "diary" / f"{DAY}.md").stat().st_size >> 20
        case(f"merge a {size} MB diary edited on both machines", run_sync(work / "diary-b"))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
