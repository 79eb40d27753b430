"""Running a hook as Claude Code does: one process per event, the contract's JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import console_script

HOOKS = console_script("pinky-hooks")


def run_hook(event: str, payload: dict | str, root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([*HOOKS, event], input=data, capture_output=True, text=True, cwd=root,
                          env=hook_env(root, **env), timeout=30)


def base(root: Path, event: str, **extra: object) -> dict:
    return {"session_id": "f7d3a9c2-1111-2222-3333-444455556666",
            "transcript_path": str(root / "t.jsonl"), "cwd": str(root), "hook_event_name": event, **extra}


def tool(root: Path, name: str, tool_input: dict) -> dict:
    return base(root, "PreToolUse", permission_mode="default", tool_name=name, tool_input=tool_input,
                tool_use_id="toolu_01")


def context_of(result: subprocess.CompletedProcess[str], event: str = "PreToolUse") -> str:
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return out["hookSpecificOutput"]["additionalContext"]


# A small parent for the measured process: the rusage a process gets for its own child counts the
# parent's memory too (after fork or vfork, exec keeps the high-water mark of the memory it leaves),
# so a test or benchmark holding a large transcript would read its own size as the hook's.
_MEASURE = """import os, subprocess, sys, time
report, limit, *command = sys.argv[1:]
child = subprocess.Popen(command)
deadline = time.monotonic() + float(limit)
while not (waited := os.wait4(child.pid, os.WNOHANG))[0]:
    if time.monotonic() > deadline:
        child.kill()
    time.sleep(0.005)
child.returncode = os.waitstatus_to_exitcode(waited[1])
usage = waited[2]
open(report, "w").write(f"{child.returncode} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
"""


def measured(command: list[str], stdin: bytes, cwd: Path, env: dict[str, str],
             timeout: float = 300) -> tuple[int, bytes, bytes, int, float]:
    """Run `command` as its own process: (exit code, stdout, stderr, its peak RSS in KiB, its CPU seconds).
    Past `timeout` seconds it is killed (exit code -9)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "usage"
        done = subprocess.run([sys.executable, "-c", _MEASURE, str(report), str(timeout), *command], input=stdin,
                              capture_output=True, cwd=cwd, env=env, timeout=timeout + 60)
        code, peak, cpu = report.read_text().split()
    return int(code), done.stdout, done.stderr, int(peak), float(cpu)


def hook_env(root: Path, **env: str) -> dict[str, str]:
    """The environment a hook gets: the project Claude Code started in, and no background processes."""
    return {**os.environ, "CLAUDE_PROJECT_DIR": str(root), "PINKY_HOOKS_NO_BACKGROUND": "1", **env}
