"""Issue 31 item 14: a rollup of the week not over yet that a user made is refreshed by a later session's
Stop (in the background), not left a snapshot of the week's first days ("Files most touched: none")."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
from pathlib import Path

from helpers import console_script, write_note
from hook_helpers import base, run_hook


def test_a_later_sessions_stop_refreshes_the_current_weeks_rollup(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    today = dt.date.today().isoformat()
    write_note(root, f"documentation/diary/{today}.md", f"---\ntitle: Diary {today}\ntype: diary\ncreated: {today}\n"
               f"tags: [diary]\n---\n\n# Diary {today}\n\n- 08:00 [aaaa1111] asked: plan the cache work\n")
    made = subprocess.run([*console_script("pinky"), "rollup", "--json"], cwd=root, text=True, capture_output=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    weekly = Path(json.loads(made.stdout)["path"])
    assert "- none" in weekly.read_text(encoding="utf-8").split("## Files most touched")[1]
    lines = [{"type": "user", "message": {"role": "user", "content": "shrink the cache"}, "uuid": "u1"},
             {"type": "assistant", "cwd": str(root), "message": {"role": "assistant", "content": [
                 {"type": "tool_use", "id": "tu1", "name": "Edit", "input": {
                     "file_path": str(root / "src/cache.py"), "old_string": "a", "new_string": "b"}}]}}]
    (root / "t.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    payload = base(root, "Stop", stop_hook_active=False, last_assistant_message="Done.")
    stopped = run_hook("stop", payload, root, PINKY_HOOKS_NO_BACKGROUND="")  # the refresh runs detached
    assert (stopped.returncode, stopped.stdout) == (0, ""), stopped.stderr
    deadline = time.monotonic() + 90
    while "`src/cache.py` (1)" not in weekly.read_text(encoding="utf-8") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "`src/cache.py` (1)" in weekly.read_text(encoding="utf-8")
