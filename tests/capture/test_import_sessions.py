"""`pinky-brain import-sessions` on the sessions the real Claude Code, Codex and Gemini CLIs recorded
(tests/capture/session_fixtures.py): the diary it writes is the one the Stop hook writes for the same turns at the
same moments, byte for byte; a second import, or a later Stop hook, changes nothing; other projects' sessions stay
out; secrets are redacted everywhere they land; what was learned is offered as candidates, never saved."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import console_script
from hook_helpers import HOOKS, hook_env, measured
from mcp_helpers import RawServer
from session_fixtures import (
    CLAUDE_ID,
    CODEX_ID,
    FIXTURES,
    SECRETS,
    Session,
    claude_session,
    codex_session,
    diary_text,
    filled,
    gemini_session,
    machine,
    turn_end,
    write_many_sessions,
)

import pinky.capture.recorder as recorder
from pinky.base.locations import locate
from pinky.capture.diary import short_session
from pinky.hooks.state import StateFiles
from pinky.hooks.stop import offsets_path, stop
from pinky.hosts.catalog import all_hosts
from pinky.hosts.catalog import host as find_host

PINKY = console_script("pinky-brain")


def pinky(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*PINKY, "import-sessions", *args], capture_output=True, text=True, cwd=root,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def stop_hook_diary(root: Path, sessions: list[Session], monkeypatch: pytest.MonkeyPatch) -> str:
    """The diary the Stop hook writes when each session's turns end, one at a time, at the moment they ended."""
    loc = locate(env=os.environ, start=str(root))
    turns = sorted(((turn_end(turn), n, session, k) for n, session in enumerate(sessions)
                    for k, turn in enumerate(session.turns)), key=lambda item: item[:2])
    for at, _, session, k in turns:
        session.write(upto=k + 1)
        class Clock(datetime):
            moment = at.astimezone()

            @classmethod
            def now(cls, tz: object = None) -> Clock:  # type: ignore[override]
                return cls.moment  # type: ignore[return-value]

        payload = {"session_id": session.session_id, "transcript_path": str(session.path), "cwd": str(root),
                   "hook_event_name": "Stop", "stop_hook_active": False}
        host = session.host if session.host != "claude" else None
        with monkeypatch.context() as patched:
            patched.setattr(recorder, "datetime", Clock)
            translate = find_host(host).translator(str(root)) if host else None
            assert stop(payload, loc, StateFiles(), translate=translate) is None
    return diary_text(root)


def forget(root: Path, home: Path) -> None:
    """Back to a machine where pinky never ran: no diary, no offsets."""
    shutil.rmtree(root / "documentation" / "diary")
    Path(offsets_path(locate(env=os.environ, start=str(root)))).unlink()


def test_the_import_writes_the_diary_the_stop_hook_writes_byte_for_byte(root: Path, home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = machine(root, home)
    expected = stop_hook_diary(root, sessions, monkeypatch)
    forget(root, home)
    for session in sessions:
        session.write()
    out = pinky(root).stdout
    assert diary_text(root).splitlines() == expected.splitlines()
    assert diary_text(root) == expected
    assert "took in 3 of 3 sessions (claude 1, codex 1, gemini 1)" in out
    assert "skipped 1 damaged transcript line (counted" in out
    days = sorted(p.name for p in (root / "documentation" / "diary").glob("*.md"))
    assert days == ["2026-11-27.md", "2026-11-28.md", "2026-11-29.md"]  # each turn on its own day
    for session in sessions:  # each host named in the tag, whatever its format (pinky.capture.diary.short_session)
        assert f"[{short_session(session.session_id)}]" in expected
    assert "learned: saved gotcha/retries-need-jitter" in expected
    assert "skipped: 1 unreadable transcript line (not JSON" in expected  # the damaged line, counted


def test_twice_changes_nothing_and_a_later_stop_hook_adds_nothing(root: Path, home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = machine(root, home)
    pinky(root)
    first = {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")}
    assert "nothing new" in pinky(root).stdout
    assert {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")} == first
    loc = locate(env=os.environ, start=str(root))
    for session in sessions:  # the host's Stop hook fires again on each session, as when it is resumed
        payload = {"session_id": session.session_id, "transcript_path": str(session.path), "cwd": str(root),
                   "hook_event_name": "Stop"}
        stop(payload, loc, StateFiles(), translate=find_host(session.host).translator(str(root)))
    assert {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")} == first
    recorded = (FIXTURES / "codex" / "hooks" / "Stop.json").read_text(encoding="utf-8")  # Codex's own Stop payload
    hook = subprocess.run([*HOOKS, "--host", "codex", "stop"], input=filled(recorded, root, home), capture_output=True,
                          text=True, cwd=root, env=hook_env(root), timeout=60)
    assert hook.returncode == 0 and "pinky-hooks" not in hook.stderr, hook.stderr
    assert {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")} == first


def test_a_long_import_shows_its_progress(root: Path, home: Path) -> None:
    machine(root, home)
    done = subprocess.run([*PINKY, "import-sessions"], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PINKY_PROGRESS_SECONDS": "0"}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pinky: reading sessions " in done.stderr and "(100%)" in done.stderr.splitlines()[-1]


def test_a_session_pinky_already_watched_is_taken_in_only_past_where_the_stop_hook_stopped(
        root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = codex_session(root, home)
    session.write(upto=1)  # the first turn ran with pinky's Stop hook installed
    stop({"session_id": session.session_id, "transcript_path": str(session.path), "cwd": str(root),
          "hook_event_name": "Stop"}, locate(env=os.environ, start=str(root)), StateFiles(),
         translate=find_host("codex").translator(str(root)))
    recorded = diary_text(root)
    session.write()
    pinky(root)
    text = diary_text(root)
    assert text.count("asked: fix the retry in src/db.py") == 1 and recorded.strip() in text
    assert "asked: the db tests fail, fix them" in text


def test_an_import_takes_no_other_project_s_sessions(root: Path, home: Path, tmp_path: Path) -> None:
    machine(root, home)
    other = tmp_path / "proj-other"  # Claude Code's folder for it starts with this project's
    other.mkdir()
    nested = root / "vendor" / "lib"  # a project of its own inside this one
    nested.mkdir(parents=True)
    (nested / "pinky.toml").write_text("", encoding="utf-8")
    for folder, sid in ((other, "aaaaaaaa-0000-4000-8000-000000000001"),
                        (nested, "bbbbbbbb-0000-4000-8000-000000000002")):
        claude_session(folder, home, session_id=sid, prompt=f"work in {folder.name}").write()
        codex_session(folder, home, session_id=sid).write()
        gemini_session(folder, home, session_id=sid).write()
    moved = codex_session(root, home, session_id="cccccccc-0000-4000-8000-000000000003", cwd=tmp_path / "gone",
                          remote="git@example.com:team/proj.git")
    moved.write()
    elsewhere = codex_session(root, home, session_id="dddddddd-0000-4000-8000-000000000004", cwd=tmp_path / "gone2",
                              remote="git@example.com:team/other.git")
    elsewhere.write()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://example.com/team/proj"], check=True)
    out = pinky(root).stdout
    text = diary_text(root)
    assert "aaaaaaaa" not in text and "bbbbbbbb" not in text and "work in" not in text
    assert f"[{short_session(moved.session_id)}]" in text  # a moved checkout of the same repository: its remote tells
    assert "dddddddd" not in text
    assert "took in 4 of 4 sessions" in out


def test_secrets_planted_in_the_sessions_are_redacted_everywhere_they_land(root: Path, home: Path) -> None:
    machine(root, home)
    out = pinky(root).stdout + pinky(root, "--candidates").stdout + pinky(root, "--candidates", "--json").stdout
    state = Path(os.environ["PINKY_HOME"]) / "state"
    landed = [diary_text(root), out] + [p.read_text(encoding="utf-8") for p in state.rglob("*.json")]
    assert "REDACTED" in diary_text(root) and "REDACTED" in out
    for secret in SECRETS:
        for text in landed:
            assert secret not in text and secret[-12:] not in text


def test_what_the_sessions_learned_is_offered_and_never_saved(root: Path, home: Path) -> None:
    machine(root, home)
    out = pinky(root).stdout
    assert "2 candidate notes" in out
    listed = json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]
    kinds = sorted(item["kind"] for item in listed)
    assert kinds == ["correction", "fixed"]
    fixed = next(item for item in listed if item["kind"] == "fixed")
    assert "pytest tests/test_db.py" in fixed["evidence"] and "src/db.py" in fixed["evidence"]
    assert fixed["session"] == short_session(f"codex:{CODEX_ID}") and fixed["type"] == "gotcha"
    saved = [p for p in (root / "documentation").rglob("*.md") if "diary" not in p.parts]
    assert saved == []  # nothing enters the notes until someone decides
    assert f"dismissed {fixed['id']}" in pinky(root, "--dismiss", fixed["id"]).stdout
    assert [item["kind"] for item in json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]] == [
        "correction"]
    Path(offsets_path(locate(env=os.environ, start=str(root)))).unlink()
    (Path(os.environ["PINKY_HOME"]) / "state" / "imported-sessions.json").unlink()
    pinky(root)  # read again from the start: a dismissed candidate is not offered again
    assert [item["kind"] for item in json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]] == [
        "correction"]


def test_a_dismissal_of_an_unknown_candidate_is_one_clear_error(root: Path, home: Path) -> None:
    done = subprocess.run([*PINKY, "import-sessions", "--dismiss", "nope"], capture_output=True, text=True, cwd=root,
                          env=dict(os.environ), timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: no open candidate 'nope': `pinky-brain import-sessions --candidates` lists them"]


def test_outside_a_project_the_import_says_init_first(tmp_path: Path, home: Path) -> None:
    done = subprocess.run([*PINKY, "import-sessions"], capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ), timeout=60)
    assert done.returncode == 1 and "pinky-brain init" in done.stderr and "Traceback" not in done.stderr


def test_memory_stays_bounded_however_large_the_sessions(tmp_path: Path) -> None:
    """Four times the transcripts: the import's peak memory does not grow with them (1 GB: the benchmark)."""
    peaks = []
    for size in (8 << 20, 32 << 20):
        folder = tmp_path / f"m{size}"
        root, home = folder / "proj", folder / "home"
        (root / "documentation").mkdir(parents=True)
        (root / "pinky.toml").write_text("", encoding="utf-8")
        write_many_sessions(root, home, size, per_session=size // 2)  # a whole file held would show too
        env = {**os.environ, "HOME": str(home), "PINKY_HOME": str(folder / "pinky-home")}
        code, out, err, peak, _ = measured([*PINKY, "import-sessions"], b"", root, env)
        assert code == 0, err
        assert b"took in" in out
        peaks.append(peak)
    print("peak RSS KiB", peaks)
    assert peaks[1] - peaks[0] < 10 * 1024, peaks  # KiB: 24 MB more transcript, not 10 MB more memory


def test_the_agent_is_offered_the_candidates_in_its_briefing(root: Path, home: Path) -> None:
    machine(root, home)
    env = {**os.environ, "PINKY_HOME": str(root / "home")}  # the server's (tests/support/mcp_helpers.py server_env)
    subprocess.run([*PINKY, "import-sessions"], cwd=root, env=env, check=True, capture_output=True, timeout=300)
    with RawServer(root) as server:
        server.initialize()
        result = server.call("brain_briefing", since="1h")
    assert not result.get("isError"), result
    offered = result["structuredContent"]["candidates"]
    assert sorted(item["kind"] for item in offered) == ["correction", "fixed"]
    text = result["content"][0]["text"]
    assert "Learned in past sessions, not saved (brain_save" in text
    assert "`pytest tests/test_db.py` failed" in text and f"[{short_session(f'codex:{CODEX_ID}')}]" in text
    for secret in SECRETS:
        assert secret not in json.dumps(result)


def test_init_says_once_that_past_sessions_can_be_taken_in(root: Path, home: Path) -> None:
    def init() -> str:
        done = subprocess.run([*PINKY, "init"], capture_output=True, text=True, cwd=root, env=dict(os.environ),
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "past session" not in init()  # a machine without any: nothing said
    machine(root, home)
    said = [line for line in init().splitlines() if "past session" in line]
    assert said == ["next: 3 past sessions of this project on this machine (Claude Code, Codex, Gemini CLI) can be "
                    "taken in: `pinky-brain import-sessions` writes their diary and lists what they learned"]
    pinky(root)
    assert "past session" not in init()  # taken in: nothing left to say


def test_a_second_import_at_the_same_time_is_refused_in_one_line(root: Path, home: Path) -> None:
    from pinky.base import fileio

    machine(root, home)
    state = Path(os.environ["PINKY_HOME"]) / "state"
    state.mkdir(parents=True, exist_ok=True)
    with fileio.file_lock(state / "import-sessions.lock"):  # what a running import holds
        done = subprocess.run([*PINKY, "import-sessions"], capture_output=True, text=True, cwd=root,
                              env=dict(os.environ), timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["Error: another `pinky-brain import-sessions` is running on this "
                                                "machine; run it again when that one is done"]
    assert not (root / "documentation" / "diary").exists()
    pinky(root)
    assert (root / "documentation" / "diary").is_dir()


def test_a_session_that_reached_the_project_through_a_symbolic_link_is_taken_in(root: Path, home: Path,
                                                                                tmp_path: Path) -> None:
    linked = tmp_path / "link-to-proj"
    linked.symlink_to(root)
    claude_session(linked, home).write()  # Claude Code names its folder after the path it was started in
    out = pinky(root).stdout
    assert "took in 1 of 1 sessions (claude 1)" in out
    assert f"[{short_session(CLAUDE_ID)}] asked: tidy the two modules" in diary_text(root)


def test_a_session_its_stop_hook_records_while_the_import_runs_is_left_to_the_hook(
        root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pinky.capture import session_replay
    from pinky.capture.session_import import Places

    codex = codex_session(root, home)
    codex.write()
    loc = locate(env=os.environ, start=str(root))
    reading = session_replay.Spool.in_order

    def hook_fires_meanwhile(spool: session_replay.Spool) -> Any:
        stop({"session_id": codex.session_id, "transcript_path": str(codex.path), "cwd": str(root),
              "hook_event_name": "Stop"}, loc, StateFiles(), translate=find_host("codex").translator(str(root)))
        return reading(spool)

    monkeypatch.setattr(session_replay.Spool, "in_order", hook_fires_meanwhile)
    places = Places(root, root / "documentation", Path(loc.state_dir), all_hosts())
    places.run(places.sessions())
    text = diary_text(root)
    assert text.count("fix the retry in src/db.py") == 1, text  # the hook's lines only (one Stop for both turns)
    assert text.count("the db tests fail, fix them") == 1, text


def test_a_learning_the_session_saved_later_is_not_offered(root: Path, home: Path) -> None:
    recorded = codex_session(root, home)  # its first turn ends with a brain_save
    meta, rest = recorded.turns[0].split(b"\n", 1)
    session = Session("codex", recorded.path, recorded.session_id, root, [meta + b"\n" + recorded.turns[1], rest])
    session.write()
    pinky(root)
    assert json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"] == []
    session.turns.append(recorded.turns[1])  # the session goes on: a fix after the save is offered
    session.write()
    pinky(root)
    assert [c["kind"] for c in json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]] == ["fixed"]


def test_sessions_months_old_are_remembered_by_the_import_alone(root: Path, home: Path) -> None:
    """The Stop hook's offsets expire after 30 days; what an import took in is remembered for good."""
    import time

    sessions = machine(root, home)
    old = time.time() - 90 * 24 * 3600
    for session in sessions:
        os.utime(session.path, (old, old))
    pinky(root)
    first = diary_text(root)
    stored = json.loads(Path(offsets_path(locate(env=os.environ, start=str(root)))).read_text(encoding="utf-8")) \
        if Path(offsets_path(locate(env=os.environ, start=str(root)))).exists() else {}
    assert not any(s.session_id in stored for s in sessions)  # no host resumes these: no Stop-hook offsets added
    assert "nothing new" in pinky(root).stdout
    assert diary_text(root) == first
