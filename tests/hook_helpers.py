"""Running a hook as Claude Code does: one process per event, the contract's JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers import console_script

HOOKS = console_script("pinky-hooks")


def run_hook(event: str, payload: dict | str, root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    full_env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root), "PINKY_HOOKS_NO_BACKGROUND": "1", **env}
    return subprocess.run([*HOOKS, event], input=data, capture_output=True, text=True, cwd=root,
                          env=full_env, timeout=30)


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
