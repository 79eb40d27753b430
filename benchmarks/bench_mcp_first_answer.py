"""How soon after the spawn an MCP client has pinky's tools: quiet, and with the CPU busy.

    python benchmarks/bench_mcp_first_answer.py [--runs 10] [--hogs 0 2]

Spawns the server the way Claude Code does and times, from the spawn, the answers to `initialize` and to the
first `tools/list` (sent as soon as `initialize` is answered), for:

- `pinky-mcp`: the console script, whose front answers both from its cache before the MCP SDK is imported
  (pinky.mcp.front; the cache is warmed by one start first);
- `python -m pinky.mcp.server`: the real server alone, which is what `pinky-mcp` was before the front;
- the plugin: `sh plugin/runtime/run mcp` with a ready runtime (a venv whose site-packages point at this
  interpreter's, as tests/test_plugin_runtime.py makes one), which runs the same front.

`--hogs 2` runs two `while 1: pass` processes meanwhile (stopped afterwards): the busy 2-core machine of issue 25,
where `claude -p`, which waits about 5 s for its MCP servers, started without pinky's tools.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plugin_first_start import Hogs  # noqa: E402
from figures import record  # noqa: E402
from figures import write as write_figures  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def first_answers(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds from the spawn to the initialize answer and to the tools/list answer."""
    started = time.monotonic()
    server = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        server.stdin.flush()
        server.stdout.readline()
        initialized = time.monotonic() - started
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                           b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        server.stdin.flush()
        line = server.stdout.readline()
        listed = time.monotonic() - started
        assert b"brain_search" in line, line[:200]
        return initialized, listed
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def linked_runtime(data: Path) -> None:
    """A ready plugin runtime for this checkout's plugin, made in a fraction of a second."""
    env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "PINKY_PYTHON": BASE_PYTHON}
    found = json.loads(subprocess.run(["sh", str(REPO / "plugin" / "runtime" / "run"), "info"], check=True,
                                      capture_output=True, text=True, env=env).stdout)
    venv = Path(found["runtime"])
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "pinky-dev.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    (venv / "pinky-ready").write_text(f"key {found['key']}\nseconds 1.0\n")
    (data / "runtime" / "python").write_text(str(venv / "bin" / "python") + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pinky-bench-mcp-"))
    (root / "documentation").mkdir()
    (root / "pinky.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env |= {"PINKY_HOME": str(root / "home"), "PINKY_HASH_EMBED": "1", "CLAUDE_PLUGIN_DATA": str(root / "data")}
    linked_runtime(root / "data")
    bin_dir = Path(sys.executable).parent
    servers = {"pinky-mcp (front)": [str(bin_dir / "pinky-mcp")],
               "real server alone": [sys.executable, "-m", "pinky.mcp.server"],
               "plugin, ready runtime": ["sh", str(REPO / "plugin" / "runtime" / "run"), "mcp"]}
    for command in servers.values():
        first_answers(command, env, root)  # warms the front's cache and the page cache
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; median (max) of {args.runs} starts, "
          "in ms from the spawn")
    for hogs in args.hogs:
        with Hogs(hogs):
            for name, command in servers.items():
                times = [first_answers(command, env, root) for _ in range(args.runs)]
                init, listed = [t[0] * 1000 for t in times], [t[1] * 1000 for t in times]
                print(f"{hogs} CPU hogs  {name:22s} initialize {statistics.median(init):6.0f} ({max(init):5.0f})   "
                      f"tools/list {statistics.median(listed):6.0f} ({max(listed):5.0f})")
                label = name.split(" (")[0].split(",")[0].replace(" ", "_").replace("-", "_")
                record(f"mcp_tools_listed_ms_{label}_{hogs}_hogs", statistics.median(listed))
    shutil.rmtree(root, ignore_errors=True)
    write_figures(args.json)


if __name__ == "__main__":
    main()
