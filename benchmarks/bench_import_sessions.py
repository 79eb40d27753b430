"""`pinky-brain import-sessions` on a large transcript folder (a script, not a test): seconds and peak RSS.

    python benchmarks/bench_import_sessions.py [--mb 1024,256] [--session-mb 64]

For each size, a temporary HOME gets Codex sessions of a project holding about that many MB (the recorded Codex
rollout's first line, then turns that fail, patch and pass with ~20 KB outputs: tests/capture/session_fixtures.py),
and `pinky-brain import-sessions` runs on them as its own process (tests/support/hook_helpers.py `measured`): wall
seconds,
CPU seconds, peak RSS, MB/s, diary lines written. Then a second run on the same folder, which must read nothing:
its seconds are the cost of finding the sessions and checking their offsets. The peak RSS should not grow with the
size: the sessions are streamed line by line and the turns spooled on disk.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "capture"))

from helpers import console_script  # noqa: E402
from hook_helpers import measured  # noqa: E402
from session_fixtures import write_many_sessions  # noqa: E402


def run(mb: int, session_mb: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-import-") as scratch:
        folder = Path(scratch)
        root, home = folder / "proj", folder / "home"
        (root / "documentation").mkdir(parents=True)
        (root / "pinky.toml").write_text("", encoding="utf-8")
        made = write_many_sessions(root, home, mb << 20, per_session=session_mb << 20)
        env = {**os.environ, "HOME": str(home), "PINKY_HOME": str(folder / "pinky-home"), "PINKY_HASH_EMBED": "1"}
        command = [*console_script("pinky-brain"), "import-sessions"]
        for label in ("first run", "second run"):
            started = time.perf_counter()
            code, out, err, peak, cpu = measured(command, b"", root, env, timeout=3600)
            seconds = time.perf_counter() - started
            if code != 0:
                raise SystemExit(f"import failed: {err.decode()}")
            lines = sum(1 for p in (root / "documentation" / "diary").glob("*.md")
                        for line in p.open(encoding="utf-8") if line.startswith("- "))
            files = len(list(home.rglob("rollout-*.jsonl")))
            print(f"{made / 2**20:,.0f} MB in {files} sessions, {label}: {seconds:.1f} s "
                  f"({cpu:.1f} s CPU, {made / 2**20 / seconds:.0f} MB/s), peak RSS {peak / 1024:.1f} MB, "
                  f"{lines:,} diary lines; {out.decode().strip().splitlines()[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", default="1024,256", help="transcript folder sizes in MB, comma-separated")
    parser.add_argument("--session-mb", type=int, default=64, help="MB per session file")
    args = parser.parse_args()
    for mb in sorted(int(size) for size in args.mb.split(",")):
        run(mb, args.session_mb)


if __name__ == "__main__":
    main()
