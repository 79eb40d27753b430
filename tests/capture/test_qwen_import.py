"""`pinky-brain import-sessions` on the chat file the real Qwen Code 0.24.4 recorded (tests/fixtures/qwen/chat.jsonl:
a prompt, read_file, edit, then brain_save through tool_search and tool_call), laid out where Qwen Code keeps it: the
diary it writes is the one the Stop hook writes for the same turns at the same moments, byte for byte, naming the
host; a second import, or a later Stop hook, changes nothing; another project's sessions stay out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import HOOKS, hook_env
from session_fixtures import FIXTURES, Session, diary_text, filled, later, munged, turn_end

import pinky.capture.recorder as recorder
from pinky.base.locations import locate
from pinky.capture.diary import short_session
from pinky.hooks.state import StateFiles
from pinky.hooks.stop import offsets_path, stop
from pinky.hosts.catalog import host as find_host

PINKY = console_script("pinky-brain")
QWEN_ID = "0f7df080-3b1f-4e37-b5c8-bbf0ea6dcd08"  # the recorded session's id


def qwen_session(cwd: Path, home: Path, session_id: str = QWEN_ID) -> Session:
    """The recorded chat, then the same turn again a day later (a session resumed with --continue)."""
    recorded = filled((FIXTURES / "qwen" / "chat.jsonl").read_text(encoding="utf-8"), cwd, home)
    recorded = recorded.replace(QWEN_ID, session_id)
    second = later(recorded, timedelta(days=1, hours=2))
    path = home / ".qwen" / "projects" / munged(cwd) / "chats" / f"{session_id}.jsonl"
    return Session("qwen", path, f"qwen:{session_id}", cwd, [recorded.encode(), second.encode()])


def pinky(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*PINKY, "import-sessions", *args], capture_output=True, text=True, cwd=root,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def stop_hook_diary(root: Path, session: Session, monkeypatch: pytest.MonkeyPatch) -> str:
    """The diary Qwen Code's Stop hook writes as each turn ends, at the moment it ended."""
    loc = locate(env=os.environ, start=str(root))
    for k, turn in enumerate(session.turns):
        session.write(upto=k + 1)

        class Clock(datetime):
            moment = turn_end(turn).astimezone()

            @classmethod
            def now(cls, tz: object = None) -> Clock:  # type: ignore[override]
                return cls.moment  # type: ignore[return-value]

        payload = {"session_id": session.session_id, "transcript_path": str(session.path), "cwd": str(root),
                   "hook_event_name": "Stop", "stop_hook_active": False}
        with monkeypatch.context() as patched:
            patched.setattr(recorder, "datetime", Clock)
            assert stop(payload, loc, StateFiles(), translate=find_host("qwen").translator(str(root))) is None
    return diary_text(root)


def days(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")}


def test_the_import_writes_the_diary_the_stop_hook_writes_byte_for_byte(root: Path, home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    session = qwen_session(root, home)
    expected = stop_hook_diary(root, session, monkeypatch)
    shutil.rmtree(root / "documentation" / "diary")
    Path(offsets_path(locate(env=os.environ, start=str(root)))).unlink()
    session.write()
    out = pinky(root).stdout
    assert diary_text(root) == expected
    assert "took in 1 of 1 session" in out and "qwen 1" in out, out
    tag = f"[{short_session(session.session_id)}]"
    assert tag.startswith("[qwen-") and tag in expected
    assert "asked: Why does the db client retry without jitter?" in expected
    assert "brain_save×1" in expected and "Read×1" in expected and "src/db.py" in expected, expected
    assert "learned: saved gotcha/db-retries-need-jitter" in expected, expected  # from the tool_call's answer
    assert "tool_search" not in expected and "tool_call" not in expected  # the bridge is no tool of its own


def test_twice_changes_nothing_and_a_later_stop_hook_adds_nothing(root: Path, home: Path) -> None:
    session = qwen_session(root, home)
    session.write()
    pinky(root)
    first = days(root)
    assert first and "nothing new" in pinky(root).stdout
    assert days(root) == first
    recorded = json.loads(filled((FIXTURES / "qwen" / "hooks" / "Stop.json").read_text(encoding="utf-8"), root,
                                 home))
    recorded["transcript_path"] = str(session.path)  # Qwen Code's own Stop payload, as it fires on a resume
    hook = subprocess.run([*HOOKS, "--host", "qwen", "stop"], input=json.dumps(recorded), capture_output=True,
                          text=True, cwd=root, env=hook_env(root), timeout=60)
    assert hook.returncode == 0 and "pinky-hooks" not in hook.stderr, hook.stderr
    assert days(root) == first


def test_an_import_takes_no_other_project_s_sessions(root: Path, home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "documentation").mkdir(parents=True)
    (other / "pinky.toml").write_text("", encoding="utf-8")
    nested = root / "vendor" / "lib"  # a pinky project of its own inside this one
    (nested / "documentation").mkdir(parents=True)
    (nested / "pinky.toml").write_text("", encoding="utf-8")
    for n, folder in enumerate((other, tmp_path / "plain", nested)):
        qwen_session(folder, home, session_id=f"{n}{QWEN_ID[1:]}").write()
    out = pinky(root).stdout
    assert not (root / "documentation" / "diary").exists() or "qwen" not in diary_text(root), out
    mine = qwen_session(root, home)
    mine.write()
    out = pinky(root).stdout
    assert "took in 1 of 1 session" in out, out
    assert diary_text(root).count("asked: ") == 2  # its two turns, no other project's
