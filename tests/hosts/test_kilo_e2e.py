"""Kilo Code CLI (@kilocode/cli, pinned in tests/support/host_support.py with the platform package npm has, see BESIDE
there),
headless and offline: an OpenCode fork, with an OpenAI-compatible provider in the user's kilo.json pointing at
tests/support/model_stand_in.py. A fresh HOME, the documented `pinky-brain setup kilo` (OpenCode's plugin, in Kilo's
config
folder, speaking `--host kilo`), then one `kilo run` session that saves a note and a second one that asks about it
and reads a file linked to it: the digest and the recall must reach the system prompt, the file's notes the read's
output, and the diary must name the host."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing

import pytest
from host_support import World, brain_tools, diary_today, find_cli, new_world
from host_worlds import (
    KNOWN,
    OPENCODE_ENV,
    PROMPT,
    SAVE,
    kilo_command,
    saving_world,
    setup_round_trip,
    write_user_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(7)]
SLUG = "pg-pool-hangs-on-shutdown"
ASK = "Why does the pool hang on shutdown?"


@pytest.fixture(scope="module")
def kilo(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "kilo")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, kilo: str) -> World:
    world = saving_world(tmp_path_factory, request, "kilo")
    (world.project / "db.py").write_text(f"import psycopg\n\n# Brain: {SLUG}\ndef close(pool):\n"
                                         "    pool.close(timeout=5)\n", encoding="utf-8")
    world.session("ask", [{"tool": "read", "input": {"filePath": str(world.project / "db.py")}}],
                  kilo_command(kilo, ASK), OPENCODE_ENV)
    return world


def system_of(body: dict) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")


def test_kilo_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    offered = {(tool.get("function") or {}).get("name", "") for r in session.main for tool in r["body"]["tools"]}
    assert sorted(name for name in offered if "brain_" in name) == sorted(f"pinky_{name}" for name in brain_tools())


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    saved = world.project / "documentation" / "gotcha" / f"{SLUG}.md"
    assert saved.is_file(), session.stdout[-2000:] + session.stderr[-2000:]
    assert SAVE["body"] in saved.read_text()


def test_the_first_request_carries_the_digest_in_the_system_prompt(world: World) -> None:
    system = system_of(world.sessions["save"].main[0]["body"])
    assert KNOWN[0] in system and "pinky brain:" in system, system[-3000:]
    assert "pinky_brain_search" in system  # named as Kilo's model calls it


def test_a_prompt_about_a_note_gets_its_recall_in_the_system_prompt(world: World) -> None:
    system = system_of(world.sessions["ask"].main[0]["body"])
    recalled = system.split("pinky recall", 1)
    assert len(recalled) == 2, system[-3000:]
    assert f"gotcha/{SLUG}" in recalled[1][:800]


def test_reading_a_linked_file_brings_its_notes_in_the_tool_output(world: World) -> None:
    session = world.sessions["ask"]
    results = [str(m.get("content")) for r in session.main for m in r["body"]["messages"] if m.get("role") == "tool"]
    assert results, session.stderr[-3000:]
    assert any(f"gotcha/{SLUG}" in text and "pool.close(timeout=5)" in text for text in results), results


def test_the_diary_names_the_prompts_and_the_host(world: World) -> None:
    diary = diary_today(world.project)
    for prompt in (PROMPT, ASK):
        asked = [line for line in diary.splitlines() if prompt in line]
        assert asked, diary[-2000:]
        assert any(re.search(r"\[kilo-", line) for line in asked), asked


def test_importing_the_sessions_its_hooks_recorded_adds_nothing(world: World) -> None:
    """Kilo keeps its sessions in its own SQLite database, ~/.local/share/kilo/kilo.db (OpenCode's tables):
    `pinky-brain import-sessions` reads them there, and as pinky's plugin recorded every turn of them already, the
    diary stays byte for byte as the hooks wrote it."""
    data = world.home / ".local" / "share" / "kilo"
    with closing(sqlite3.connect(f"file:{data / 'kilo.db'}?mode=ro", uri=True)) as db:  # as pinky reads it
        folders = [row[0] for row in db.execute("SELECT directory FROM session")]
    assert folders.count(str(world.project)) == 2, folders  # the save and the ask
    assert not (world.home / ".local" / "share" / "opencode").exists()  # nothing in OpenCode's place
    diary = world.project / "documentation" / "diary"
    before = {p.name: p.read_bytes() for p in diary.glob("*.md")}
    assert before
    done = world.pinky("import-sessions")
    assert done.returncode == 0, done.stdout + done.stderr
    seen = "the 2 past sessions of this project are recorded already"
    assert seen in done.stdout, (done.stdout, sorted(p.name for p in data.iterdir()))  # seen, and kept
    assert {p.name: p.read_bytes() for p in diary.glob("*.md")} == before, done.stdout


def test_setup_writes_the_plugin_for_kilo_and_remove_restores_the_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                                        kilo: str) -> None:
    world = new_world(tmp_path_factory.mktemp("kilo-setup"), ("kilo",), KNOWN)
    write_user_config(world, "kilo")
    folder = world.home / ".config" / "kilo"
    first, second = setup_round_trip(world, "kilo", folder)
    assert first == second
    assert '["--host", "kilo", event]' in first["plugins/pinky-brain.js"].decode()
    assert "OpenCode" not in first["plugins/pinky-brain.js"].decode()
    assert b"fetch-retries=0" in first[".npmrc"]
    config = json.loads(first["kilo.json"])
    assert config["mcp"]["pinky"]["type"] == "local" and config["provider"]["standin"]


def test_project_setup_gives_a_session_the_digest(tmp_path_factory: pytest.TempPathFactory, kilo: str) -> None:
    """`setup kilo --project` writes kilo.json and .kilo/plugins/pinky-brain.js in the repository; Kilo reads both
    there (the user's own kilo.json holds only the provider)."""
    world = new_world(tmp_path_factory.mktemp("kilo-project"), ("kilo",), KNOWN)
    write_user_config(world, "kilo")
    done = world.pinky("setup", "kilo", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (world.project / "kilo.json").is_file()
    assert (world.project / ".kilo" / "plugins" / "pinky-brain.js").is_file()
    session = world.session("project", [{"tool": "brain_search", "wait": 30, "input": {"query": "deploy"}}],
                            kilo_command(kilo, PROMPT), OPENCODE_ENV)
    assert session.returncode == 0, session.stderr[-2000:]
    assert KNOWN[0] in system_of(session.main[0]["body"])
    offered = {(tool.get("function") or {}).get("name", "") for tool in session.main[0]["body"]["tools"]}
    assert "pinky_brain_search" in offered
