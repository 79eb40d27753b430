"""A plugin user's first session: how long until the brain_* tools are there, quiet and with the CPU busy.

    python benchmarks/bench_plugin_first_start.py --wheelhouse DIR [--hogs 0 2] [--runs 1]

Starts the plugin's MCP server (`sh plugin/runtime/run mcp`) with a fresh plugin data folder, the way Claude Code
does on the first session after installing the plugin, and times what the client sees: `initialize` answered
(the stand-in), then `notifications/tools/list_changed` once the runtime is prepared and the real server took
over. brain_status is called every 10 s; its answers are printed, next to the steps' durations the preparation
recorded (runtime/last-preparation). pip reads only the wheelhouse (PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR); make one
with `python -m pip download --dest DIR . hatchling`. `--hogs 2` runs two `while 1: pass` processes meanwhile
(stopped afterwards), the busy machine of issue 25.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import record  # noqa: E402
from figures import write as write_figures  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "plugin" / "runtime" / "run"
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


class Hogs:
    """`count` processes spinning on a core each, for the duration of a `with`."""

    def __init__(self, count: int) -> None:
        self.count, self.processes = count, []

    def __enter__(self) -> Hogs:
        self.processes = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(self.count)]
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


def lines_of(process: subprocess.Popen[bytes]) -> queue.Queue[tuple[float, dict]]:
    found: queue.Queue[tuple[float, dict]] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            found.put((time.monotonic(), json.loads(line)))

    threading.Thread(target=read, daemon=True).start()
    return found


def first_session(wheelhouse: Path, project: Path, timeout: float) -> dict:
    data = Path(tempfile.mkdtemp(prefix="pinky-bench-data-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PINKY_", "CLAUDE"))}
    env |= {"CLAUDE_PLUGIN_DATA": str(data), "PINKY_PYTHON": BASE_PYTHON, "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PINKY_HOME": str(data / "home"),
            "PINKY_HASH_EMBED": "1"}
    started = time.monotonic()
    server = subprocess.Popen(["sh", str(RUN), "mcp"], env=env, cwd=project, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    messages = lines_of(server)
    assert server.stdin is not None
    next_id, statuses, result = 0, [], {}

    def send(method: str, **params: object) -> int:
        nonlocal next_id
        next_id += 1
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}).encode()
                           + b"\n")
        server.stdin.flush()
        return next_id

    try:
        init_id = send("initialize", **INITIALIZE)
        status_due = started
        while time.monotonic() - started < timeout:
            if time.monotonic() >= status_due and "initialized" in result:
                send("tools/call", name="brain_status", arguments={})
                status_due = time.monotonic() + 10
            try:
                when, message = messages.get(timeout=0.5)
            except queue.Empty:
                continue
            if message.get("id") == init_id:
                result["initialized"] = when - started
            elif message.get("method") == "notifications/tools/list_changed":
                result["tools"] = when - started
                break
            elif "result" in message and message["result"].get("content"):
                statuses.append((when - started, message["result"]["content"][0]["text"]))
        last = data / "runtime" / "last-preparation"
        result["steps"] = json.loads(last.read_text())["steps"] if last.exists() else {}
        result["statuses"] = statuses
        return result
    finally:
        server.stdin.close()
        server.kill()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheelhouse", type=Path, required=True)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 2], help="CPU hogs per condition (0 2)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="pinky-bench-project-"))
    (project / "pinky.toml").write_text("")
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} before")
    for hogs in args.hogs:
        for run in range(args.runs):
            with Hogs(hogs):
                found = first_session(args.wheelhouse, project, args.timeout)
            steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in found["steps"].items())
            print(f"{hogs} CPU hogs, run {run + 1}: initialize answered after {found.get('initialized', -1):.2f} s, "
                  f"brain_* tools after {found.get('tools', -1):.1f} s (load average {os.getloadavg()[0]:.1f})\n"
                  f"  steps: {steps}")
            for when, text in found["statuses"]:
                print(f"  brain_status at {when:5.1f} s: {text}")
            record(f"plugin_first_tools_s_{hogs}_hogs", found.get("tools", -1))
    shutil.rmtree(project, ignore_errors=True)
    write_figures(args.json)


if __name__ == "__main__":
    main()
