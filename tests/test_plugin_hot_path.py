"""A hook through the plugin's launcher in its common case (issue 37 item 4: 1.5-1.67x a bare interpreter start,
goal <= 1.5x): it imports the launcher's lookup module alone, and takes the runtime key checked in the last
KEY_TRUSTED seconds without stat'ing every source file again, as long as the runtime it names is ready. The
figures: benchmarks/bench_hooks.py --launcher. Real launcher processes, a runtime made the quick way."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import test_plugin_runtime
from test_plugin_runtime import (
    SH,
    env_for,
    linked_runtime,
    lookup,
    plugin_copy,
    preparation_lock,
)
from test_plugin_updates import update

project = test_plugin_runtime.project  # the fixture: an initialised project with one indexed note


def pre_read(env: dict[str, str], copy: Path, project: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Read",
               "tool_input": {"file_path": str(project / "src" / "db.py")}, "transcript_path": "t.jsonl"}
    return subprocess.run([SH, str(copy / "runtime" / "run"), "hooks", "pre-read"], input=json.dumps(payload),
                          capture_output=True, text=True, env={**env, **extra}, cwd=project, timeout=120)


def cached_key(data: Path, copy: Path) -> str:
    return Path(lookup.key_cache(str(data), str(copy))).read_text().split("\n")[2]


def test_a_hook_imports_the_lookup_module_alone(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    linked_runtime(env, copy)
    hook = pre_read(env, copy, project, PYTHONPROFILEIMPORTTIME="1")
    assert hook.returncode == 0 and "gotcha/pg-pool" in hook.stdout, hook.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in hook.stderr.splitlines() if line.startswith("import time")}
    assert "pinky_runtime_lookup" in imported and "pinky.hooks.dispatch" in imported
    assert "pinky_launcher" not in imported


def test_a_hook_takes_the_key_checked_moments_ago_and_checks_it_again_later(tmp_path: Path, project: Path) -> None:
    """An edit in place (the clone, --plugin-dir) is noticed by the first hook after KEY_TRUSTED seconds: until
    then hooks run on the runtime they ran on, which is ready; nothing is stat'ed or hashed meanwhile."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    old = linked_runtime(env, copy)
    assert pre_read(env, copy, project).returncode == 0
    update(copy)
    hook = pre_read(env, copy, project)
    assert hook.returncode == 0 and "gotcha/pg-pool" in hook.stdout and hook.stderr == "", hook.stderr
    assert cached_key(data, copy) == old.name  # taken as it was: the source was not walked
    cache = lookup.key_cache(str(data), str(copy))
    long_ago = time.time() - lookup.KEY_TRUSTED - 5
    os.utime(cache, (long_ago, long_ago))
    with preparation_lock(data):  # the new runtime's preparation is under way
        hook = pre_read(env, copy, project)
    assert hook.returncode == 0 and "gotcha/pg-pool" in hook.stdout  # the previous runtime serves meanwhile
    assert cached_key(data, copy) != old.name  # checked again: the edit needs a new runtime


def test_a_trusted_key_whose_runtime_is_gone_is_checked_again(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    old = linked_runtime(env, copy)
    assert pre_read(env, copy, project).returncode == 0
    update(copy)
    new = linked_runtime(env, copy)  # `info` checks the key in full: the new one is cached
    (new / lookup.READY).unlink()  # and its runtime is not ready after all
    with preparation_lock(data):
        hook = pre_read(env, copy, project)
    assert hook.returncode == 0 and "gotcha/pg-pool" in hook.stdout, hook.stderr  # served by the previous one
    assert old.exists()
