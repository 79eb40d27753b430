"""The first session after an install or update: how soon `pinky-mcp` lists its tools when no session has written
its cache yet, with and without the answers shipped in the package (pinky.mcp.answers), quiet and with two CPU hogs.

    python benchmarks/bench_first_session.py [--runs 5] [--hogs 0 2]

Before the shipped answers, such a start relayed the real server's own start (importing the MCP SDK and
pydantic): 7-16 s on a busy 2-core machine, while Codex CLI and Claude Code wait about 5 s and then run the
session without the brain's tools (issue 36 item 3). Each run deletes the front's cache first (a first start),
then spawns the front from a copy of the package without answers.json ("relayed", what pinky did before) and one
from a copy with it ("shipped"), in turn, so the machine's load falls on both alike. From the spawn to the answer
to `tools/list` (sent as soon as `initialize` is answered); medians and maxima in ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp_first_answer import first_answers  # noqa: E402
from bench_plugin_first_start import Hogs  # noqa: E402
from figures import record, write  # noqa: E402

import pinky  # noqa: E402

RUN_FRONT = "import sys; sys.path.insert(0, {folder!r}); from pinky.mcp.front import main; sys.exit(main())"


def package_copies(root: Path) -> dict[str, list[str]]:
    """The front's command for a copy of the package with and without its shipped answers."""
    commands = {}
    for name in ("relayed", "shipped"):
        folder = root / name
        shutil.copytree(Path(pinky.__file__).parent, folder / "pinky", ignore=shutil.ignore_patterns("__pycache__"))
        if name == "relayed":
            (folder / "pinky" / "mcp" / "answers.json").unlink()
        commands[name] = [sys.executable, "-c", RUN_FRONT.format(folder=str(folder))]
    return commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pinky-bench-first-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
        env |= {"PINKY_HOME": str(root / "home"), "PINKY_HASH_EMBED": "1"}
        commands = package_copies(root)
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}")
        print(f"spawn -> tools/list answered on a first start (no cache), median of {args.runs} (ms)")
        for hogs in args.hogs:
            times: dict[str, list[float]] = {name: [] for name in commands}
            with Hogs(hogs):
                for _ in range(args.runs):
                    for name, command in commands.items():
                        shutil.rmtree(root / "home" / "cache", ignore_errors=True)
                        times[name].append(first_answers(command, env, root)[1] * 1000)
            line = []
            for name, values in times.items():
                record(f"first_session_tools_listed_ms_{name}_{hogs}_hogs", statistics.median(values))
                line.append(f"{name} {statistics.median(values):6.0f} (max {max(values):6.0f})")
            print(f"   {hogs} CPU hogs: " + "   ".join(line))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write(args.json)


if __name__ == "__main__":
    main()
