"""Every diary line names its host and a tag that differs between sessions, and older tags are still read.

Codex ids are UUIDv7s, whose first 8 characters are a timestamp: two sessions a minute apart were both tagged
`[codex-01a25167]`, and the second one's digest took the first one's lines for its own ("Diary since the last
session" went missing). Claude Code's lines named no host (`[73520480] asked:`). Driven through real
`pinky-hooks` processes fed the hosts' payloads (tests/fixtures/<host>/).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note
from hook_helpers import base, run_hook
from host_fixtures import diary_text, make_brain, output, payload, run_host, transcript

FIRST = "01a25167-4f8b-7992-93b8-3e7bf8edf397"
SECOND = "01a25167-9c21-7d04-a3e5-5f0c2b6e81d4"  # begun within the same minute: the same 8 first characters
TAG = re.compile(r"^- \d\d:\d\d \[([^\]]+)\] ", re.MULTILINE)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_brain(tmp_path / "proj")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def digest(root: Path, home: Path, session: str) -> str:
    out = output(run_host("codex", "session-start", payload("codex", "SessionStart", root, home, session_id=session),
                          root))
    return out["hookSpecificOutput"]["additionalContext"]


def codex_turn(root: Path, home: Path, session: str) -> None:
    stop = payload("codex", "Stop", root, home, session_id=session,
                   transcript_path=str(home / ".codex" / "sessions" / f"rollout-{session}.jsonl"))
    transcript("codex", "rollout.jsonl", root, home, stop["transcript_path"])
    output(run_host("codex", "stop", stop, root))


def test_two_codex_sessions_a_minute_apart_get_tags_of_their_own(root: Path, home: Path) -> None:
    digest(root, home, FIRST)
    codex_turn(root, home, FIRST)
    later = digest(root, home, SECOND)
    assert "Diary since the last session" in later and "asked: fix the retry in src/db.py" in later
    codex_turn(root, home, SECOND)
    tags = set(TAG.findall(diary_text(root)))
    assert len(tags) == 2 and all(tag.startswith("codex-") for tag in tags), tags


def test_claude_code_s_lines_name_their_host(root: Path) -> None:
    (root / "t.jsonl").write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi there"}})
                                  + "\n", encoding="utf-8")
    result = run_hook("stop", base(root, "Stop", stop_hook_active=False), root)
    assert result.returncode == 0, result.stderr
    (tag,) = set(TAG.findall(diary_text(root)))
    assert re.fullmatch(r"claude-[0-9a-f]{8}", tag), tag


def test_older_tags_are_still_read_in_the_digest_and_the_rollup(root: Path) -> None:
    """A diary written by an older pinky: `[<8 of the id>]` for Claude Code, `[codex-<8 of the id>]`."""
    own = "f7d3a9c2-1111-2222-3333-444455556666"  # the session that starts below, in the older tag too
    first = run_hook("session-start", base(root, "SessionStart", source="startup", session_id="a" * 36), root)
    assert first.returncode == 0, first.stderr
    now = dt.datetime.now()
    write_note(root, f"documentation/diary/{now.date()}.md",
               f"---\ntype: diary\n---\n- {now:%H:%M} [73520480] asked: an older claude session\n"
               f"- {now:%H:%M} [codex-01a25167] asked: an older codex session\n"
               f"- {now:%H:%M} [f7d3a9c2] asked: my own line\n")
    started = run_hook("session-start", base(root, "SessionStart", source="startup", session_id=own), root)
    shown = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[73520480] asked: an older claude session" in shown and "[codex-01a25167] asked:" in shown
    assert "my own line" not in shown
    made = subprocess.run([*console_script("pinky-brain"), "rollup"], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    (rollup,) = (root / "documentation" / "diary" / "weekly").glob("*.md")
    assert "- Sessions: 3 (claude 2, codex 1)\n" in rollup.read_text(encoding="utf-8")
