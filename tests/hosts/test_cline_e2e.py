"""Cline CLI (npm `cline`, pinned in tests/support/host_support.py), headless and offline: an openai-compatible provider
pointed at tests/support/model_stand_in.py by `cline auth`, the session run in the CLI process (no hub daemon left
behind).
A fresh HOME, the documented `pinky-brain setup cline` (an MCP entry and pinky's plugin), then a session that saves
a note, one that asks about it and reads a file linked to it, and one that tries to write stale facts into
AGENTS.md. What the model was sent is read from the stand-in's request log: the digest in the system prompt of the
first request of the first session (no rules file of pinky's), the recall after the prompt, the file's notes after
the read, the guard's reason instead of the write; and the diary must name the host."""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from shlex import quote

import pytest
from host_support import VENV_BIN, World, brain_tools, diary_today, find_cli, new_world
from host_worlds import (
    CLINE_ENV,
    CLINE_HOOK,
    CLINE_MCP,
    KNOWN,
    PROMPT,
    SAVE,
    cline_command,
    saving_world,
    setup_round_trip,
    write_user_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(6)]
SLUG = "pg-pool-hangs-on-shutdown"
ASK = "Why does the pool hang on shutdown?"
STALE = "Run the tests with make test (412 tests as of 2026-12-07; see line 88 of db.py)."


@pytest.fixture(scope="module")
def cline(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "cline")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, cline: str) -> World:
    world = saving_world(tmp_path_factory, request, "cline")
    (world.project / "db.py").write_text(f"import psycopg\n\n# Brain: {SLUG}\ndef close(pool):\n"
                                         "    pool.close(timeout=5)\n", encoding="utf-8")
    (world.project / "AGENTS.md").write_text("# Agents\n\nRun the tests with make test.\n", encoding="utf-8")
    read = {"files": [{"path": str(world.project / "db.py")}]}
    world.session("ask", [{"tool": "read_files", "input": read}], cline_command(cline, ASK), CLINE_ENV)
    edit = {"path": str(world.project / "AGENTS.md"), "old_text": "Run the tests with make test.", "new_text": STALE}
    world.session("guard", [{"tool": "editor", "input": edit}], cline_command(cline, "Note the test count."),
                  CLINE_ENV)
    return world


def offered(body: dict) -> list[str]:
    return [(tool.get("function") or {}).get("name", "") for tool in body.get("tools") or []]


def system_of(body: dict) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")


def after_system(body: dict) -> str:
    return json.dumps([m for m in body.get("messages", []) if m.get("role") != "system"], ensure_ascii=False)


def test_cline_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    names = {name for r in session.main for name in offered(r["body"]) if "brain_" in name}
    assert sorted(names) == sorted(f"pinky__{name}" for name in brain_tools()), sorted(names)


def test_the_first_request_of_the_first_session_carries_the_digest(world: World) -> None:
    system = system_of(world.sessions["save"].main[0]["body"])
    assert KNOWN[0] in system and "pinky brain:" in system, system[-3000:]
    assert "pinky__brain_search" in system  # named as Cline's model calls it
    assert not (world.project / ".clinerules").exists()  # from pinky's plugin, not from a rules file


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    saved = world.project / "documentation" / "gotcha" / f"{SLUG}.md"
    assert saved.is_file(), session.stdout[-2000:] + session.stderr[-2000:]
    assert SAVE["body"] in saved.read_text()
    assert not list((world.home / ".pinky").rglob(f"{SLUG}.md"))


def test_a_prompt_about_a_note_gets_its_recall_in_the_first_request(world: World) -> None:
    shown = after_system(world.sessions["ask"].main[0]["body"])
    recalled = shown.split("pinky recall", 1)
    assert len(recalled) == 2, shown[-3000:]
    assert f"gotcha/{SLUG}" in recalled[1][:800]


def test_reading_a_linked_file_brings_its_notes_after_the_result(world: World) -> None:
    session = world.sessions["ask"]
    assert len(session.main) >= 2, session.stderr[-3000:]
    shown = after_system(session.main[-1]["body"]).split("read_files", 1)[-1]
    assert f"gotcha/{SLUG}" in shown and "linked to db.py" in shown, shown[-3000:]


def test_stale_facts_are_kept_out_of_agents_md_and_the_model_is_told_why(world: World) -> None:
    session = world.sessions["guard"]
    assert session.returncode == 0, session.stderr[-3000:]
    assert (world.project / "AGENTS.md").read_text() == "# Agents\n\nRun the tests with make test.\n"
    results = [str(m.get("content")) for r in session.main for m in r["body"]["messages"] if m.get("role") == "tool"]
    assert any("AGENTS.md must stay evergreen" in text for text in results), results


def diary_with(world: World, prompts: tuple[str, ...], seconds: float = 60) -> str:
    """Today's diary once it names every prompt: the plugin writes it in the background after each run."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        diary = diary_today(world.project)
        if all(prompt in diary for prompt in prompts) or time.monotonic() > deadline:
            return diary
        time.sleep(0.2)


def test_the_diary_names_the_prompts_and_the_host(world: World) -> None:
    diary = diary_with(world, (PROMPT, ASK))
    for prompt in (PROMPT, ASK):
        asked = [line for line in diary.splitlines() if prompt in line]
        assert asked, diary[-2000:]
        assert any(re.search(r"\bcline\b", line, re.IGNORECASE) for line in asked), asked
    assert "pinky recall" not in diary  # the hook context pinky added is not what the user asked


def hub_daemons(project: Path) -> list[int]:
    """The Cline hub daemons started for `project` (a `cline --cline-hub-daemon --cwd <project>` process)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"/cline") and b"--cline-hub-daemon" in argv and str(project).encode() in argv:
            found.append(int(cmdline.parent.name))
    return found


def test_no_hub_daemon_outlives_the_sessions(world: World) -> None:
    """By default `cline` starts a hub daemon that outlives it (measured); the tests run the session in the CLI."""
    assert not hub_daemons(world.project)


def test_a_session_run_by_the_hub_daemon_gets_the_digest_recall_and_diary_too(
        tmp_path_factory: pytest.TempPathFactory, cline: str) -> None:
    """Cline's default backend: the first `cline` leaves a hub daemon, and the next session runs in it, plugin and
    all, with the daemon's environment (measured with 3.0.65). Both sessions run in one network namespace."""
    world = new_world(tmp_path_factory.mktemp("cline-hub"), ("cline",), KNOWN)
    assert world.pinky("setup", "cline").returncode == 0
    first = cline_command(cline, "First session about the deploys.")
    second = cline_command(cline, "Why do staging deploys time out?")
    both = ["sh", "-c", f"{' '.join(map(quote, first))} >/dev/null 2>&1; sleep 3; "
            f"test -e {quote(str(world.project / 'pinky.toml'))} && {' '.join(map(quote, second))}"]
    try:
        session = world.session("hub", [{"tool": "brain_search", "input": {"query": "deploy"}}], both,
                                {**CLINE_ENV, "CLINE_SESSION_BACKEND_MODE": "auto"})
        daemons = hub_daemons(world.project)
    finally:
        for pid in hub_daemons(world.project):  # the daemons this test's sessions started, by their pid
            os.kill(pid, signal.SIGTERM)
    assert daemons, "no hub daemon was left by the first session"
    assert session.returncode == 0, session.stderr[-3000:]
    asked = [r["body"] for r in session.main if "Why do staging" in json.dumps(r["body"]["messages"][1:2])]
    assert asked and "pinky brain:" in system_of(asked[0]) and KNOWN[0] in after_system(asked[0])
    assert "Why do staging deploys time out?" in diary_with(world, ("Why do staging deploys time out?",))


def test_setup_twice_and_remove_restore_the_user_s_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                         cline: str) -> None:
    world = new_world(tmp_path_factory.mktemp("cline-setup"), ("cline",), KNOWN)
    write_user_config(world, "cline")
    mine = {p: p.read_bytes() for p in (world.home / ".cline").rglob("*") if p.is_file()}
    dry = world.pinky("setup", "cline", "--dry-run")
    assert dry.returncode == 0 and "+++ " in dry.stdout and "pinky-brain.js" in dry.stdout, dry.stdout + dry.stderr
    assert {p: p.read_bytes() for p in (world.home / ".cline").rglob("*") if p.is_file()} == mine  # nothing written
    first, second = setup_round_trip(world, "cline", world.home / ".cline")
    assert first == second  # the second run changed no byte
    settings = json.loads(first["data/settings/cline_mcp_settings.json"])
    assert settings["mcpServers"]["notes"] == CLINE_MCP["mcpServers"]["notes"]
    assert settings["mcpServers"]["pinky"]["command"].endswith("pinky-mcp")
    assert first["hooks/TaskComplete"] == CLINE_HOOK.encode()  # the user's own hook file, untouched
    assert b"pinky-hooks" in first["plugins/pinky-brain.js"]


def test_project_setup_writes_a_plugin_without_a_machine_path(tmp_path_factory: pytest.TempPathFactory,
                                                              cline: str) -> None:
    """`setup cline --project` writes .cline/plugins/pinky-brain.js, which a team commits: it runs pinky-hooks from
    PATH, and Cline runs it with no trust step. Cline has no project-level MCP config, so the server stays a per-user
    entry."""
    world = new_world(tmp_path_factory.mktemp("cline-project"), ("cline",), KNOWN)
    done = world.pinky("setup", "cline", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    plugin = (world.project / ".cline" / "plugins" / "pinky-brain.js").read_text()
    assert str(world.root) not in plugin and "/.venv/" not in plugin
    # An MCP entry in the project (where Cline keeps none): measured, it offers nothing
    mcp = {"mcpServers": {"pinky": {"command": str(VENV_BIN / "pinky-mcp"), "args": []}}}
    (world.project / ".cline" / "cline_mcp_settings.json").write_text(json.dumps(mcp))
    session = world.session("project", [], cline_command(cline, PROMPT), CLINE_ENV)
    assert session.returncode == 0, session.stderr[-3000:]
    first = session.main[0]["body"]
    assert KNOWN[0] in system_of(first)  # the project's plugin ran, with no trust step
    assert not [name for name in offered(first) if "brain_" in name]  # no project-level MCP config in Cline
    (world.project / ".cline" / "cline_mcp_settings.json").unlink()
    removed = world.pinky("setup", "cline", "--project", "--remove")
    assert removed.returncode == 0 and not (world.project / ".cline" / "plugins" / "pinky-brain.js").exists()


def test_cline_s_own_hook_files_reach_the_model_only_after_a_tool(tmp_path_factory: pytest.TempPathFactory,
                                                                  cline: str) -> None:
    """Why pinky writes a plugin: of Cline's hook files, TaskStart's and UserPromptSubmit's contextModification never
    reach the model in a headless run, PostToolUse's does, after the tool's result (kept measured here so that a Cline
    release that changes it is noticed)."""
    world = new_world(tmp_path_factory.mktemp("cline-hook-files"), ("cline",), KNOWN)
    hooks = world.home / ".cline" / "hooks"
    hooks.mkdir(parents=True)
    for event in ("TaskStart", "UserPromptSubmit", "PostToolUse"):
        (hooks / event).write_text(f"#!/bin/sh\ncat >/dev/null\necho '{{\"contextModification\": \"MARK-{event}\"}}'\n")
    read = {"files": [{"path": str(world.project / "pinky.toml")}]}
    session = world.session("hook-files", [{"tool": "read_files", "input": read}], cline_command(cline, PROMPT),
                            CLINE_ENV)
    assert session.returncode == 0, session.stderr[-3000:]
    shown = session.shown()
    assert "MARK-PostToolUse" in shown and "MARK-TaskStart" not in shown and "MARK-UserPromptSubmit" not in shown
