"""GitHub Copilot CLI (@github/copilot, pinned in tests/support/host_support.py, from npm), headless and offline: bring
your
own key (COPILOT_OFFLINE=true, COPILOT_PROVIDER_BASE_URL at tests/support/model_stand_in.py, which speaks Chat
Completions). A fresh HOME, the documented `pinky-brain setup copilot`, then a `copilot -p` session that saves a
note and a second one that asks about it and views a file linked to it. What the model was sent is read from the
stand-in's request log: the digest must reach the first request of the first session (no AGENTS.md written by a
previous session), the recall the prompt, the file's notes the view's result; and the diary must name the host."""

from __future__ import annotations

import json
import re

import pytest
from host_support import World, brain_tools, diary_today, find_cli, new_world
from host_worlds import COPILOT_ENV, KNOWN, PROMPT, SAVE, cli_env, copilot_command, saving_world

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(7)]
SLUG = "pg-pool-hangs-on-shutdown"
ASK = "Why does the pool hang on shutdown?"


@pytest.fixture(scope="module")
def copilot(request: pytest.FixtureRequest) -> str:
    return find_cli(request, "copilot")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, copilot: str) -> World:
    world = saving_world(tmp_path_factory, request, "copilot")
    (world.project / "db.py").write_text(f"import psycopg\n\n# Brain: {SLUG}\ndef close(pool):\n"
                                         "    pool.close(timeout=5)\n", encoding="utf-8")
    world.session("ask", [{"tool": "view", "input": {"path": str(world.project / "db.py")}}],
                  copilot_command(copilot, ASK), {**COPILOT_ENV, **cli_env("copilot", copilot)})
    return world


def offered(body: dict) -> list[str]:
    return [(tool.get("function") or {}).get("name", "") for tool in body.get("tools") or []]


def conversation(body: dict) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def test_copilot_is_offered_the_brain_tools(world: World) -> None:
    session = world.sessions["save"]
    assert session.returncode == 0, session.stderr[-3000:]
    names = {name for r in session.main for name in offered(r["body"]) if "brain_" in name}
    assert sorted(names) == sorted(f"pinky-{name}" for name in brain_tools()), sorted(names)


def test_the_first_request_of_the_first_session_carries_the_digest(world: World) -> None:
    first = world.sessions["save"].main[0]["body"]
    shown = conversation(first)
    assert KNOWN[0] in shown and "pinky brain:" in shown, shown[-3000:]
    assert "pinky-brain_search" in shown  # named as Copilot's model calls it
    assert not (world.project / "AGENTS.md").exists()  # from the hook, not from a rules file


def test_a_scripted_brain_save_lands_in_the_project(world: World) -> None:
    session = world.sessions["save"]
    saved = world.project / "documentation" / "gotcha" / f"{SLUG}.md"
    assert saved.is_file(), session.stdout[-2000:] + session.stderr[-2000:]
    assert SAVE["body"] in saved.read_text()
    assert not list((world.home / ".pinky").rglob(f"{SLUG}.md"))


def test_a_prompt_about_a_note_gets_its_recall(world: World) -> None:
    shown = conversation(world.sessions["ask"].main[0]["body"])
    recalled = shown.split("pinky recall", 1)
    assert len(recalled) == 2, shown[-3000:]
    assert f"gotcha/{SLUG}" in recalled[1][:800]


def test_viewing_a_linked_file_brings_its_notes_after_the_result(world: World) -> None:
    session = world.sessions["ask"]
    results = [str(m.get("content")) for r in session.main for m in r["body"]["messages"] if m.get("role") == "tool"]
    assert results, session.stderr[-3000:]
    assert any(f"gotcha/{SLUG}" in text and "Brain: " + SLUG in text for text in results), results


def test_the_diary_names_the_prompts_and_the_host(world: World) -> None:
    diary = diary_today(world.project)
    for prompt in (PROMPT, ASK):
        asked = [line for line in diary.splitlines() if prompt in line]
        assert asked, diary[-2000:]
        assert any(re.search(r"\bcopilot\b", line, re.IGNORECASE) for line in asked), asked


def test_importing_the_sessions_its_hooks_recorded_adds_nothing(world: World) -> None:
    """`pinky-brain import-sessions` reads the same sessions from Copilot CLI's events.jsonl: pinky's hooks
    recorded every turn of them already, so the diary stays byte for byte as the hooks wrote it."""
    diary = world.project / "documentation" / "diary"
    before = {p.name: p.read_bytes() for p in diary.glob("*.md")}
    assert before
    done = world.pinky("import-sessions")
    assert done.returncode == 0, done.stdout + done.stderr
    assert {p.name: p.read_bytes() for p in diary.glob("*.md")} == before, done.stdout


def test_setup_writes_user_level_hooks_and_remove_restores_the_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                                     copilot: str) -> None:
    world = new_world(tmp_path_factory.mktemp("copilot-setup"), ("copilot",), KNOWN)
    folder = world.home / ".copilot"
    folder.mkdir()
    mine = {"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "notify-send done"}]}}
    (folder / "hooks").mkdir()
    (folder / "hooks" / "mine.json").write_text(json.dumps(mine))
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done = world.pinky("setup", "copilot")
    assert done.returncode == 0, done.stderr
    hooks = json.loads((folder / "hooks" / "pinky-brain.json").read_text())
    assert hooks["version"] == 1
    assert {"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop"} <= set(hooks["hooks"])
    assert json.loads((folder / "hooks" / "mine.json").read_text()) == mine
    removed = world.pinky("setup", "copilot", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_project_hooks_run_once_the_folder_is_trusted(tmp_path_factory: pytest.TempPathFactory, copilot: str) -> None:
    """`setup copilot --project` writes .github/hooks/pinky-brain.json; Copilot CLI 1.0.102 ran it only with the
    repository in trusted_folders (a headless session asks nothing): measured both ways."""
    world = new_world(tmp_path_factory.mktemp("copilot-project"), ("copilot",), KNOWN)
    done = world.pinky("setup", "copilot", "--project")
    assert done.returncode == 0 and "trust" in done.stdout + done.stderr, done.stdout + done.stderr
    assert (world.project / ".github" / "hooks" / "pinky-brain.json").is_file()
    config = world.home / ".copilot" / "config.json"
    shown = {}
    for trusted in (False, True):
        config.parent.mkdir(exist_ok=True)
        config.write_text(json.dumps({"trusted_folders": [str(world.project)] if trusted else []}))
        session = world.session(f"project-{trusted}", [], copilot_command(copilot, PROMPT),
                                {**COPILOT_ENV, **cli_env("copilot", copilot)})
        assert session.returncode == 0, session.stderr[-2000:]
        shown[trusted] = KNOWN[0] in json.dumps([r["body"] for r in session.requests], ensure_ascii=False)
    assert shown == {False: False, True: True}, shown


STALE = "# Agents\nThe suite has 1,234 tests as of 2026-11-28.\n"  # facts that go stale: the guard's to refuse


def tool_results(session) -> list[str]:  # noqa: ANN001 - a host_support.Session
    return [str(m.get("content")) for r in session.main for m in r["body"]["messages"] if m.get("role") == "tool"]


def test_the_guard_refuses_stale_facts_in_agents_md(tmp_path_factory: pytest.TempPathFactory, copilot: str) -> None:
    """preToolUse's {"permissionDecision": "deny", "permissionDecisionReason": ...} (HOSTS.md took it from the
    documentation): the real Copilot CLI does not run the tool, and the model reads the reason as its result."""
    world = new_world(tmp_path_factory.mktemp("copilot-guard"), ("copilot",), KNOWN)
    done = world.pinky("setup", "copilot")
    assert done.returncode == 0, done.stdout + done.stderr
    agents = world.project / "AGENTS.md"
    session = world.session("guard", [{"tool": "create", "input": {"path": str(agents), "file_text": STALE}}],
                            copilot_command(copilot, "Write the test count into AGENTS.md."),
                            {**COPILOT_ENV, **cli_env("copilot", copilot)})
    assert session.returncode == 0, session.stderr[-3000:]
    results = tool_results(session)
    assert any("AGENTS.md must stay evergreen" in text for text in results), (results, session.stderr[-2000:])
    assert not agents.exists()


def test_the_checkpoint_runs_when_copilot_compacts(tmp_path_factory: pytest.TempPathFactory, copilot: str) -> None:
    """preCompact (HOSTS.md had it from the documentation): `copilot --resume <id> -p /compact` compacts a session
    headless, and before the history goes the hook reads the session's events.jsonl to its end (pinky's checkpoint
    offset for that session: only pre-compact writes it)."""
    world = new_world(tmp_path_factory.mktemp("copilot-compact"), ("copilot",), KNOWN)
    done = world.pinky("setup", "copilot")
    assert done.returncode == 0, done.stdout + done.stderr
    env = {**COPILOT_ENV, **cli_env("copilot", copilot)}
    first = world.session("first", [], copilot_command(copilot, PROMPT), env)
    assert first.returncode == 0, first.stderr[-2000:]
    (session,) = [p for p in (world.home / ".copilot" / "session-state").iterdir() if not p.name.startswith(".")]
    compact = world.session("compact", [], [copilot, "--resume", session.name, "-p", "/compact", "--allow-all-tools"],
                            env)
    assert compact.returncode == 0 and "Compacted conversation history" in compact.stdout, compact.stderr[-2000:]
    (offsets,) = world.home.rglob("checkpoint-offsets.json")
    entry = json.loads(offsets.read_text())[f"copilot:{session.name}"]
    assert entry["path"] == str(session / "events.jsonl") and entry["offset"] > 0, entry
    assert PROMPT in diary_today(world.project)
