"""A past-session candidate the agent (or a person) saves leaves the list: `brain_save` with `candidate` through the
real `pinky-mcp` process, `pinky-brain save --candidate` at the CLI. An id not on the list is refused before anything
is written, and a candidate settled is not offered again by a later import of the same sessions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import console_script
from mcp_helpers import RawServer
from session_fixtures import CODEX_ID, machine

from pinky.capture.diary import short_session

PINKY = console_script("pinky-brain")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("", encoding="utf-8")
    return root


@pytest.fixture
def env(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    machine(root, home)  # the recorded Claude Code, Codex and Gemini sessions: a correction and a fix to offer
    # the server's PINKY_HOME (tests/support/mcp_helpers.py server_env): the CLI and the server share one candidate list
    return {**os.environ, "PINKY_HOME": str(root / "home"), "PINKY_HASH_EMBED": "1"}


def pinky(root: Path, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PINKY, *args], capture_output=True, text=True, cwd=root, env=env, input=stdin,
                          timeout=300)


def listed(root: Path, env: dict[str, str]) -> list[dict]:
    done = pinky(root, env, "import-sessions", "--candidates", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["candidates"]


def notes(root: Path) -> list[Path]:
    return sorted(p for p in (root / "documentation").rglob("*.md") if "diary" not in p.parts)


def test_brain_save_naming_a_candidate_takes_it_off_the_list(root: Path, env: dict[str, str]) -> None:
    assert pinky(root, env, "import-sessions").returncode == 0
    with RawServer(root) as server:
        server.initialize()
        offered = server.call("brain_briefing", since="1h")["structuredContent"]["candidates"]
        fixed = next(c for c in offered if c["kind"] == "fixed")
        assert fixed["session"] == short_session(f"codex:{CODEX_ID}")
        saved = server.call("brain_save", title="db tests fail until the retry count is fixed", type="gotcha",
                            body="`pytest tests/test_db.py` fails on the retry count in src/db.py.",
                            candidate=fixed["id"])
        assert not saved.get("isError"), saved
        assert f"Candidate {fixed['id']} is settled" in saved["content"][0]["text"]
        left = server.call("brain_briefing", since="1h")
        assert [c["kind"] for c in left["structuredContent"]["candidates"]] == ["correction"]
        assert fixed["id"] not in left["content"][0]["text"]
        assert "brain_save candidate=ID" in left["content"][0]["text"]  # the briefing says how
        written = notes(root)
        again = server.call("brain_save", title="the same again", body="twice", candidate=fixed["id"])
        assert again.get("isError") and f"no open candidate '{fixed['id']}'" in again["content"][0]["text"], again
        assert notes(root) == written  # refused before anything is written
    assert [c["kind"] for c in listed(root, env)] == ["correction"]


def test_the_cli_save_settles_one_too_and_a_new_import_does_not_offer_it_again(root: Path,
                                                                                env: dict[str, str]) -> None:
    assert pinky(root, env, "import-sessions").returncode == 0
    correction = next(c for c in listed(root, env) if c["kind"] == "correction")
    done = pinky(root, env, "save", "-t", "Log with the logging module, never print", "--type", "decision",
                 "--candidate", correction["id"], stdin="Use `logging`, not print.\n")
    assert done.returncode == 0, done.stderr
    assert f"candidate {correction['id']} settled" in done.stdout
    assert [c["kind"] for c in listed(root, env)] == ["fixed"]
    refused = pinky(root, env, "save", "-t", "Nothing", "--candidate", "nope", stdin="x\n")
    assert refused.returncode == 1 and refused.stderr.strip().splitlines() == [
        "Error: no open candidate 'nope': brain_briefing lists them (`pinky-brain import-sessions --candidates`); "
        "nothing was saved"]
    for state in ("imported-sessions.json", "diary-offsets.json"):  # read every session again from the start
        (root / "home" / "state" / state).unlink()
    again = pinky(root, env, "import-sessions")
    assert again.returncode == 0 and "took in 3 of 3 sessions" in again.stdout, again.stdout
    assert [c["kind"] for c in listed(root, env)] == ["fixed"]
