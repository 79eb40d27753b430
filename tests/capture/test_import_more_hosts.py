"""`pinky-brain import-sessions` on the sessions the real Copilot CLI 1.0.102, OpenCode 1.18.33 and Kilo Code CLI
7.7.9 (OpenCode's fork: each OpenCode test runs on both) recorded offline
(tests/fixtures/<host>/past-sessions, recorded by tests/hosts/record_past_sessions.py): the diary it writes is the
one pinky's real hooks wrote during those sessions, byte for byte; a second import, or the host's Stop hook firing
again, changes nothing; another project's session is not taken; the secrets planted in the prompts and commands are
redacted everywhere they land; what the sessions learned is offered as candidates."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import HOOKS, hook_env
from session_fixtures import FIXTURES, SECRETS, diary_text

import pinky.capture.recorder as recorder
from pinky.hooks.hosted import run_hosted

PINKY = console_script("pinky-brain")
SECRET_NAMES = ("{ANTHROPIC_KEY}", "{GITHUB_TOKEN}", "{AWS_KEY}")  # tests/hosts/record_past_sessions.py
COPILOT = FIXTURES / "copilot" / "past-sessions"
OPENCODE = FIXTURES / "opencode" / "past-sessions"
TABLES = ("project", "session", "message", "part")


@pytest.fixture
def root(root: Path) -> Path:
    (root / "src" / "db.py").write_text("import logging\n\nRETRIES = 3\nprint(RETRIES)\n", encoding="utf-8")
    return root  # the file as the recorded sessions found it


@pytest.fixture
def home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TZ", "UTC")  # the recorded diaries were written in UTC
    return home


def filled(text: str, project: Path, home: Path) -> str:
    text = text.replace("{PROJECT}", str(project)).replace("{HOME}", str(home))
    for secret, name in zip(SECRETS, SECRET_NAMES, strict=True):
        text = text.replace(name, secret)
    return text


def copilot_sessions(project: Path, home: Path, resumed_later: timedelta | None = None) -> list[Path]:
    """The recorded Copilot CLI sessions where Copilot keeps them, as run in `project`; `resumed_later`: the
    resumed session's second prompt that much later (every line's time from its `session.resume` on)."""
    written = []
    for events in sorted((COPILOT / "session-state").glob("*/events.jsonl")):
        target = home / ".copilot" / "session-state" / events.parent.name / "events.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = filled(events.read_text(encoding="utf-8"), project, home).splitlines(keepends=True)
        resumed = next((n for n, line in enumerate(lines) if '"type":"session.resume"' in line), len(lines))
        if resumed_later:
            lines[resumed:] = [later(line, resumed_later) for line in lines[resumed:]]
        target.write_text("".join(lines), encoding="utf-8")
        written.append(target)
    return written


def later(line: str, delta: timedelta) -> str:
    event = json.loads(line)
    moment = datetime.fromisoformat(event["timestamp"]) + delta
    event["timestamp"] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def opencode_database(project: Path, home: Path, prefix: str = "", host: str = "opencode") -> Path:
    """The recorded OpenCode (or Kilo: the same schema, its own kilo.db) sessions in the host's own database, as
    run in `project` (`prefix`: their ids' start, for a second set of sessions)."""
    database = home / ".local" / "share" / host / f"{host}.db"
    database.parent.mkdir(parents=True, exist_ok=True)
    rows = FIXTURES / host / "past-sessions" / f"{host}-db"
    with sqlite3.connect(database) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'session'").fetchone():
            db.executescript((rows / "schema.sql").read_text(encoding="utf-8"))
        for table in TABLES:
            for line in (rows / f"{table}.jsonl").read_text(encoding="utf-8").splitlines():
                row = json.loads(filled(line.replace("ses_", prefix + "ses_").replace("msg_", prefix + "msg_")
                                        .replace("prt_", prefix + "prt_"), project, home))
                names = ", ".join(f'"{name}"' for name in row)
                db.execute(f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(row))})',
                           list(row.values()))
    return database


def pinky(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*PINKY, "import-sessions", *args], capture_output=True, text=True, cwd=root,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def recorded_diary(host_fixtures: Path, root: Path, home: Path) -> str:
    return filled((host_fixtures / "diary.md").read_text(encoding="utf-8"), root, home)


def days(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / "documentation" / "diary").glob("*.md")}


def hook(root: Path, home: Path, host: str, payload: Path) -> None:
    event = payload.stem.split("-", 1)[1]
    done = subprocess.run([*HOOKS, "--host", host, event], input=filled(payload.read_text(encoding="utf-8"), root,
                                                                          home),
                          capture_output=True, text=True, cwd=root, env={**hook_env(root), "HOME": str(home)},
                          timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def at(moment: datetime, monkeypatch: pytest.MonkeyPatch, run: Callable[[], object]) -> None:
    """`run` with the diary's clock at `moment` (the Stop hook's `now`)."""
    class Clock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Clock:  # type: ignore[override]
            return moment.astimezone()  # type: ignore[return-value]

    with monkeypatch.context() as patched:
        patched.setattr(recorder, "datetime", Clock)
        run()


def forget(root: Path) -> None:
    """Back to a machine where pinky never ran: no diary, no offsets, no journals."""
    import shutil

    shutil.rmtree(root / "documentation" / "diary")
    shutil.rmtree(Path(os.environ["PINKY_HOME"]) / "state")


# --- Copilot CLI ---------------------------------------------------------------------------------------------


def copilot_stop_hook_diary(root: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
                            resumed_later: timedelta | None = None) -> str:
    """The diary pinky's agentStop hook writes for the recorded sessions: each stop run on the events file as it
    stood when Copilot started the hook (up to its `hook.start` line, whose input is the hook's payload), at
    that line's time."""
    stops = []
    for path in copilot_sessions(root, home, resumed_later):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for n, line in enumerate(lines):
            event = json.loads(line)
            if event["type"] == "hook.start" and event["data"]["hookType"] == "agentStop":
                stops.append((event["timestamp"], path, "".join(lines[:n + 1]), event["data"]["input"]))
    for stamp, path, text, payload in sorted(stops, key=lambda stop: stop[0]):
        path.write_text(text, encoding="utf-8")
        at(datetime.fromisoformat(stamp), monkeypatch, lambda payload=payload: run_hosted("copilot", "stop", payload))
    return diary_text(root)


def test_copilot_sessions_make_the_diary_its_stop_hook_writes_byte_for_byte(root: Path, home: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    expected = copilot_stop_hook_diary(root, home, monkeypatch)
    forget(root)
    copilot_sessions(root, home)
    out = pinky(root).stdout
    assert "took in 2 of 2 sessions (copilot 2)" in out
    assert diary_text(root) == expected
    # What the real hooks wrote during the recording, but for one count: main's reader took Copilot's failed
    # command (exit code 1, "success": true) for a success, and counted it among the tools
    recorded = recorded_diary(COPILOT, root, home)
    assert recorded.count("tools: Bash×2, Edit×1") == 1
    assert expected == recorded.replace("tools: Bash×2, Edit×1", "tools: Bash×1, Edit×1")


def test_a_copilot_session_resumed_the_next_day_has_each_turn_on_its_own_day(
        root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines between a turn's end and the next prompt (the agentStop hook's run, the shutdown, the resume the
    next day and its hooks) are not the turn's: its Stop fired the day before."""
    expected = copilot_stop_hook_diary(root, home, monkeypatch, resumed_later=timedelta(days=1, hours=2))
    assert sorted(days(root)) == ["2026-12-07.md", "2026-12-08.md"]
    forget(root)
    copilot_sessions(root, home, resumed_later=timedelta(days=1, hours=2))
    pinky(root)
    assert diary_text(root) == expected
    assert "check_db.py" in days(root)["2026-12-07.md"].decode() and "logging module" in days(root)[
        "2026-12-08.md"].decode()


def test_copilot_twice_changes_nothing_nor_does_its_stop_hook_firing_again(root: Path, home: Path) -> None:
    copilot_sessions(root, home)
    pinky(root)
    first = days(root)
    assert "nothing new" in pinky(root).stdout
    for payload in sorted((COPILOT / "hooks").glob("*-stop.json")):  # the recorded agentStop payloads, again
        hook(root, home, "copilot", payload)
    assert days(root) == first


def test_copilot_takes_no_other_project_s_session(root: Path, home: Path, tmp_path: Path) -> None:
    other = tmp_path / "proj-other"
    other.mkdir()
    copilot_sessions(other, home)
    assert "took in" not in pinky(root).stdout
    assert not (root / "documentation" / "diary").exists()


def test_copilot_what_was_learned_is_offered_and_secrets_land_nowhere(root: Path, home: Path) -> None:
    copilot_sessions(root, home)
    out = pinky(root).stdout + pinky(root, "--candidates").stdout
    listed = json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]
    # the fix after the failing check (Copilot marks a failed command by its exit code), the correction after it
    assert sorted(c["kind"] for c in listed) == ["correction", "fixed"], listed
    fixed = next(c for c in listed if c["kind"] == "fixed")
    assert "python3 check_db.py" in fixed["evidence"] and fixed["host"] == "copilot"
    landed = [diary_text(root), out, json.dumps(listed)]
    landed += [p.read_text(encoding="utf-8") for p in (Path(os.environ["PINKY_HOME"]) / "state").rglob("*.json*")]
    for secret in SECRETS:
        assert not [text[:200] for text in landed if secret in text or secret[-12:] in text], secret


# --- OpenCode ------------------------------------------------------------------------------------------------


@pytest.fixture(params=["opencode", "kilo"])
def host(request: pytest.FixtureRequest) -> str:
    """OpenCode, and Kilo Code CLI: its fork, whose sessions pinky reads from kilo.db with the same schema."""
    return str(request.param)


def fixtures(host: str) -> Path:
    return FIXTURES / host / "past-sessions"


def opencode_stops(host: str) -> dict[str, list[datetime]]:
    """When the Stop hook fired for each turn of each recorded session: the moment its last reply completed
    (OpenCode's session.idle), by session id."""
    turns: dict[str, list[list[float]]] = {}
    for line in (fixtures(host) / f"{host}-db" / "message.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        data = json.loads(row["data"])
        if data["role"] == "user":
            turns.setdefault(row["session_id"], []).append([])
        else:
            turns[row["session_id"]][-1].append(data["time"]["completed"])
    return {sid: [datetime.fromtimestamp(max(ends) / 1000).astimezone() for ends in ends_of] for sid, ends_of in
            turns.items()}


def opencode_stop_hook_diary(root: Path, home: Path, monkeypatch: pytest.MonkeyPatch, host: str) -> str:
    """The diary pinky's plugin makes of the recorded sessions: each payload it relayed, in order, through the
    hooks (pinky.hooks.hosted), each stop at the moment its turn ended."""
    stops = opencode_stops(host)
    for payload in sorted((fixtures(host) / "hooks").glob("*.json")):
        event = payload.stem.split("-", 1)[1]
        raw = json.loads(filled(payload.read_text(encoding="utf-8"), root, home))
        if event == "stop":
            at(stops[raw["session_id"]].pop(0), monkeypatch, lambda raw=raw: run_hosted(host, "stop", raw))
        elif event in ("user-prompt", "post-tool"):
            run_hosted(host, event, raw)
    return diary_text(root)


def test_opencode_sessions_make_the_diary_its_plugin_writes_byte_for_byte(root: Path, home: Path, host: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    expected = opencode_stop_hook_diary(root, home, monkeypatch, host)
    assert expected == recorded_diary(fixtures(host), root, home)  # as the real plugin and hooks wrote it
    assert "asked: \"the db check fails" in expected and "tools: Bash×2, Edit×1" in expected
    forget(root)
    opencode_database(root, home, host=host)
    out = pinky(root).stdout
    assert f"took in 2 of 2 sessions ({host} 2)" in out
    assert diary_text(root) == expected


def test_opencode_twice_changes_nothing_nor_does_its_stop_hook_firing_again(root: Path, home: Path,
                                                                            host: str) -> None:
    opencode_database(root, home, host=host)
    pinky(root)
    first = days(root)
    assert first and "nothing new" in pinky(root).stdout
    for payload in sorted((fixtures(host) / "hooks").glob("*-stop.json")):  # session.idle relayed again
        hook(root, home, host, payload)
    assert days(root) == first


def test_opencode_sessions_pinky_s_plugin_recorded_are_not_taken_again(root: Path, home: Path, host: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = opencode_stop_hook_diary(root, home, monkeypatch, host)  # the plugin was installed: hooks wrote it
    opencode_database(root, home, host=host)
    pinky(root)
    assert diary_text(root) == recorded
    assert "nothing new" in pinky(root).stdout


def test_opencode_takes_no_other_project_s_session(root: Path, home: Path, tmp_path: Path, host: str) -> None:
    other = tmp_path / "proj-other"
    other.mkdir()
    opencode_database(other, home, prefix="other", host=host)
    opencode_database(root, home, host=host)
    out = pinky(root).stdout
    assert f"took in 2 of 2 sessions ({host} 2)" in out
    assert diary_text(root) == recorded_diary(fixtures(host), root, home)
    assert "proj-other" not in diary_text(root)


def test_opencode_what_was_learned_is_offered_and_secrets_land_nowhere(root: Path, home: Path, host: str) -> None:
    opencode_database(root, home, host=host)
    out = pinky(root).stdout + pinky(root, "--candidates").stdout
    listed = json.loads(pinky(root, "--candidates", "--json").stdout)["candidates"]
    # the correction; the journal holds no tool results (as the Stop hook's), so no failure is seen fixed
    assert [c["kind"] for c in listed] == ["correction"], listed
    state = Path(os.environ["PINKY_HOME"]) / "state"
    written = list((state / "import" / host).glob("*.jsonl"))
    assert len(written) == 2 and all(p.stat().st_mode & 0o077 == 0 for p in written)
    landed = [diary_text(root), out, json.dumps(listed)]
    landed += [p.read_text(encoding="utf-8") for p in state.rglob("*.json*")]
    assert any("REDACTED" in text for text in landed[3:])
    for secret in SECRETS:
        assert not [text[:200] for text in landed if secret in text or secret[-12:] in text], secret


def first_session(host: str) -> str:
    """The recorded session that was resumed: the fix, then the correction."""
    return str(json.loads((fixtures(host) / f"{host}-db" / "session.jsonl").read_text(encoding="utf-8")
                          .splitlines()[0])["id"])


def test_an_opencode_turn_still_running_waits_for_the_next_import(root: Path, home: Path, host: str) -> None:
    database = opencode_database(root, home, host=host)
    with sqlite3.connect(database) as db:  # the last reply of the resumed session has not completed yet
        mid, data = db.execute("SELECT id, data FROM message WHERE session_id = ? "
                               "ORDER BY time_created DESC LIMIT 1", (first_session(host),)).fetchone()
        running = json.loads(data)
        completed = running["time"].pop("completed")
        db.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(running), mid))
    pinky(root)
    partial = diary_text(root)
    assert "the db check fails" in partial and "logging module" not in partial
    running["time"]["completed"] = completed
    with sqlite3.connect(database) as db:
        db.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(running), mid))
    pinky(root)
    text, expected = diary_text(root), recorded_diary(fixtures(host), root, home)
    assert text.startswith(partial)  # what the first import wrote stays, the finished turn is added after it
    assert sorted(text.splitlines()) == sorted(expected.splitlines())


def test_init_names_both_hosts_while_their_sessions_wait(root: Path, home: Path) -> None:
    copilot_sessions(root, home)
    opencode_database(root, home)

    def init() -> list[str]:
        done = subprocess.run([*PINKY, "init"], capture_output=True, text=True, cwd=root, env=dict(os.environ),
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if "past session" in line]

    assert init() == ["next: 4 past sessions of this project on this machine (GitHub Copilot CLI, OpenCode) can be "
                      "taken in: `pinky-brain import-sessions` writes their diary and lists what they learned"]
    pinky(root)
    assert init() == []
