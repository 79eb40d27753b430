"""Working from any folder: the CLI and every hook find the project the way git finds `.git`, and
knowledge lands in the project (or, outside one, nowhere near the current folder)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note

PINKY = console_script("pinky")
HOOKS = console_script("pinky-hooks")
SESSION = "f7d3a9c2-1111-2222-3333-444455556666"


def pinky(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PINKY, *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env={**os.environ, **env}, timeout=120)


def hook(event: str, payload: dict, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PINKY_HOOKS_NO_BACKGROUND": "1", **env}
    return subprocess.run([*HOOKS, event], input=json.dumps(payload), text=True, capture_output=True, cwd=cwd,
                          env=full_env, timeout=30)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An initialised project with a gotcha linked to src/db/pool.py, and a deep subfolder."""
    root = tmp_path / "repo"
    (root / "src" / "db" / "deep").mkdir(parents=True)
    write_note(root, "src/db/pool.py", "def close():\n    pass  # Brain: pool-hang\n")
    assert pinky("init", "--no-mcp", cwd=root).returncode == 0
    saved = pinky("save", "-t", "Pool hang", "--type", "gotcha", "--file", "src/db/pool.py", cwd=root,
                  stdin="Call pool.close(timeout=5) before exit.")
    assert saved.returncode == 0, saved.stderr
    return root


def test_every_command_gives_the_same_answer_from_a_subfolder(repo: Path) -> None:
    deep = repo / "src" / "db" / "deep"
    top = json.loads(pinky("search", "pool close", "--json", cwd=repo).stdout)["hits"]
    below = json.loads(pinky("search", "pool close", "--json", cwd=deep).stdout)["hits"]
    assert [h["slug"] for h in below] == [h["slug"] for h in top] == ["gotcha/pool-hang"]
    assert json.loads(pinky("list", "--json", cwd=deep).stdout)["count"] == 1
    assert pinky("get", "pool-hang", cwd=deep).returncode == 0


def test_a_save_from_a_subfolder_lands_in_the_project(repo: Path) -> None:
    src = repo / "src"
    saved = pinky("save", "-t", "From below", "--json", cwd=src, stdin="written from src/")
    data = json.loads(saved.stdout)
    assert data["path"] == "documentation/note/from-below.md" and data["scope"] == "project:repo"
    assert (repo / "documentation/note/from-below.md").is_file()
    assert not (src / "documentation").exists() and not (src / "brain.db").exists()


def test_outside_a_project_a_project_save_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    refused = pinky("save", "-t", "Where", cwd=folder, stdin="body")
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "pinky-brain init" in lines[0] and "--scope global" in lines[0]
    shared = pinky("save", "-t", "Shared", "--scope", "global", "--json", cwd=folder, stdin="for every project")
    assert json.loads(shared.stdout)["scope"] == "global"
    assert list(folder.iterdir()) == []  # no documentation/, no brain.db
    found = json.loads(pinky("search", "every project", "--json", cwd=folder).stdout)["hits"]
    assert [h["slug"] for h in found] == ["global/note/shared"]
    assert pinky("get", "global/note/shared", cwd=folder).returncode == 0  # no phantom "removed from disk"


def test_a_documentation_folder_alone_is_not_a_project(tmp_path: Path) -> None:
    """Many repositories have a documentation/ of their own: only pinky.toml marks a pinky project."""
    folder = tmp_path / "other-repo"
    write_note(folder, "documentation/README.md", "# Our docs\n")
    result = pinky("save", "-t", "x", cwd=folder, stdin="y")
    assert result.returncode == 1 and "pinky.toml" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["documentation"]


def test_a_nested_project_is_its_own(repo: Path) -> None:
    inner = repo / "packages" / "inner"
    inner.mkdir(parents=True)
    assert "already initialised: " + str(repo) in pinky("init", "--no-mcp", cwd=inner).stdout  # the enclosing one
    assert pinky("init", ".", "--no-mcp", cwd=inner).returncode == 0  # a nested project is asked for by name
    saved = json.loads(pinky("save", "-t", "Inner fact", "--json", cwd=inner / ".", stdin="x").stdout)
    assert saved["scope"] == "project:inner"
    assert (inner / "documentation/note/inner-fact.md").is_file()


def test_init_summary_is_short_and_templates_stay_out_of_the_way(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    result = pinky("init", "--no-mcp", cwd=folder)
    assert result.returncode == 0 and len(result.stdout.strip().splitlines()) <= 4, result.stdout
    kinds = {p.name for p in (folder / "documentation").iterdir()}
    assert kinds == {"_templates"}
    assert (folder / "pinky.toml").is_file()


# --- the hooks, started from a subfolder -----------------------------------------------------------


def payload(event: str, cwd: Path, **extra: object) -> dict:
    return {"session_id": SESSION, "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
            "hook_event_name": event, **extra}


@pytest.mark.parametrize("start", ["project", "subfolder"])
def test_pre_read_and_pre_write_find_the_project_from_a_subfolder(repo: Path, start: str) -> None:
    where = repo if start == "project" else repo / "src" / "db"
    read = hook("pre-read", payload("PreToolUse", where, tool_name="Read", tool_use_id="t1",
                                    tool_input={"file_path": str(repo / "src/db/pool.py")}),
                cwd=where, CLAUDE_PROJECT_DIR=str(where))
    assert read.returncode == 0 and "gotcha/pool-hang" in read.stdout, read.stderr
    write = hook("pre-write", payload("PreToolUse", where, tool_name="Edit", tool_use_id="t2",
                                      tool_input={"file_path": str(repo / "src/db/pool.py"), "old_string": "a",
                                                  "new_string": "b"}),
                 cwd=where, CLAUDE_PROJECT_DIR=str(where))
    assert write.returncode == 0 and "gotcha/pool-hang" in write.stdout


def test_session_start_and_stop_find_the_project_from_a_subfolder(repo: Path) -> None:
    where = repo / "src"
    started = hook("session-start", payload("SessionStart", where, source="startup"), cwd=where,
                   CLAUDE_PROJECT_DIR=str(where))
    digest = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "gotcha/pool-hang" in digest
    transcript = where / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "fix the pool"}}) + "\n")
    stopped = hook("stop", payload("Stop", where, stop_hook_active=False), cwd=where, CLAUDE_PROJECT_DIR=str(where))
    assert stopped.returncode == 0 and stopped.stdout == ""
    diaries = list((repo / "documentation" / "diary").glob("*.md"))
    assert len(diaries) == 1 and "fix the pool" in diaries[0].read_text()
    assert not (where / "documentation").exists()


def test_hooks_outside_a_project_stay_silent_and_write_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "t.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
    for event, data in (("session-start", payload("SessionStart", folder, source="startup")),
                        ("stop", payload("Stop", folder, stop_hook_active=False))):
        result = hook(event, data, cwd=folder, CLAUDE_PROJECT_DIR=str(folder))
        assert result.returncode == 0 and result.stdout == ""
    assert sorted(p.name for p in folder.iterdir()) == ["t.jsonl"]


def test_session_start_shows_global_notes_about_this_project(repo: Path) -> None:
    write_note(Path(os.environ["PINKY_HOME"]) / "brain", "note/repo-deploy-key-rotation.md",
               "---\ntitle: Repo deploy key rotation\nproject: repo\n---\nRotate the deploy key every quarter.\n")
    for n in range(6):  # more global notes than the digest shows: the one about this project comes first
        assert pinky("save", "-t", f"Unrelated tip {n}", "--scope", "global", cwd=repo, stdin="x").returncode == 0
    assert pinky("reindex", cwd=repo).returncode == 0  # the note written by hand
    started = hook("session-start", payload("SessionStart", repo, source="startup"), cwd=repo,
                   CLAUDE_PROJECT_DIR=str(repo))
    digest = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "global/note/repo-deploy-key-rotation" in digest


# --- the MCP server, started by Claude Code in a subfolder ------------------------------------------


def test_the_mcp_server_saves_into_the_project_from_a_subfolder(repo: Path) -> None:
    from mcp_helpers import RawServer

    where = repo / "src" / "db"
    env = {"PINKY_DB": "", "PINKY_SAVE_DIR": "", "PINKY_HOME": os.environ["PINKY_HOME"],
           "CLAUDE_PROJECT_DIR": str(where)}
    with RawServer(where, **env) as server:  # as the plugin's .mcp.json starts it: no PINKY_* paths at all
        server.initialize()
        saved = server.call("brain_save", title="Learned in a session", body="The pool needs a timeout.",
                            type="gotcha")["structuredContent"]
        assert saved["scope"] == "project:repo" and saved["path"] == "documentation/gotcha/learned-in-a-session.md"
        assert "commit it with the code" in saved["saved_to"]
        hits = server.call("brain_search", query="pool timeout")["structuredContent"]["hits"]
        assert {h["slug"] for h in hits} >= {"gotcha/pool-hang", "gotcha/learned-in-a-session"}
        listed = server.call("brain_list", type="gotcha")["structuredContent"]
        assert [e["slug"] for e in listed["entries"]][0] == "gotcha/learned-in-a-session" and listed["count"] == 2
        shared = server.call("brain_save", title="Everywhere", body="x", scope="global")["structuredContent"]
        assert shared["scope"] == "global" and "global brain" in shared["saved_to"]
    assert (repo / "documentation/gotcha/learned-in-a-session.md").is_file()
    assert not (where / "documentation").exists() and not (where / "brain.db").exists()
    listed_by_cli = json.loads(pinky("list", "--json", cwd=repo).stdout)
    assert listed_by_cli["count"] == 3, listed_by_cli  # the CLI sees the same brain (and the global note)
