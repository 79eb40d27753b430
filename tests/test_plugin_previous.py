"""After a plugin update, the previous runtime serves while the new one is prepared (issue 36, the plugin's own
sessions): every hook and every brain tool from the first session after the update, the new version from the next
start once it is ready, the previous runtime kept while it serves, and the stand-in (brain_status) instead when
the update changes the index's schema. Real plugin copies, runtimes made the quick way
(test_plugin_runtime.linked_runtime), real hook and server processes; no package index, so no preparation ends."""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path

import test_plugin_runtime
from test_plugin_runtime import (
    INITIALIZE,
    PLUGIN,
    SH,
    Client,
    env_for,
    info,
    linked_runtime,
    plugin_copy,
    preparation,
    preparation_lock,
)
from test_plugin_updates import update

from pinky.store import migrations

project = test_plugin_runtime.project  # the fixture: an initialised project with one indexed note
previous = importlib.import_module("pinky_runtime_previous")  # plugin/runtime: test_plugin_runtime put it on sys.path


def start_server(env: dict[str, str], copy: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], Client]:
    server = subprocess.Popen([SH, str(copy / "runtime" / "run"), "mcp"], env=env, cwd=cwd, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = Client(server)
    client.request("initialize", **INITIALIZE)
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server, client


def session_start(env: dict[str, str], copy: Path, project: Path) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup",
               "transcript_path": "t.jsonl"}
    return subprocess.run([SH, str(copy / "runtime" / "run"), "hooks", "session-start"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=project, timeout=120)


def test_the_schema_read_from_the_source_is_the_packages() -> None:
    assert previous.source_schema(str(PLUGIN)) == migrations.KNOWN


def test_the_first_session_after_an_update_runs_on_the_previous_runtime(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    old = linked_runtime(env, copy)
    update(copy)
    assert info(env, copy)["ready"] is False and info(env, copy)["meanwhile"] == str(old)
    with preparation_lock(data):  # the update's runtime is being prepared
        hook = session_start(env, copy, project)
        assert hook.returncode == 0 and hook.stderr == "", hook.stderr
        assert "PG pool hangs on exit" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        server, client = start_server(env, copy, project)
        try:
            tools = {t["name"] for t in client.request("tools/list")["result"]["tools"]}
            assert {"brain_search", "brain_save", "brain_get"} <= tools and "brain_status" not in tools
            found = client.request("tools/call", name="brain_search", arguments={"query": "pool close"})["result"]
            assert "gotcha/pg-pool" in json.dumps(found)
            preparation.remove_unless_running(str(old))  # the new runtime's prune: it serves, so it stays
            assert old.exists()
            new = linked_runtime(env, copy)  # ready now: the next start runs it
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=30)
    assert info(env, copy)["runtime"] == str(new) and info(env, copy)["ready"] is True
    preparation.remove_unless_running(str(old))
    assert not old.exists()
    assert "PG pool hangs on exit" in session_start(env, copy, project).stdout  # from the new runtime alone


def test_an_update_that_changes_the_index_schema_waits_for_its_runtime(tmp_path: Path, project: Path) -> None:
    """The previous version would take the index the new one migrates for damage and rebuild it: nothing runs
    from it; hooks are skipped and brain_status says why until the new runtime is ready."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    old = linked_runtime(env, copy)
    (old / previous.SCHEMA).write_text("\n".join(migrations.KNOWN[:-1]) + "\n")  # it knew one migration less
    update(copy)
    assert info(env, copy)["meanwhile"] is None and "schema" in info(env, copy)["meanwhile_not"]
    with preparation_lock(data):
        hook = session_start(env, copy, project)
        assert hook.returncode == 0 and hook.stdout == "" and "skipped" in hook.stderr
        server, client = start_server(env, copy, project)
        try:
            assert [t["name"] for t in client.request("tools/list")["result"]["tools"]] == ["brain_status"]
            status = client.request("tools/call", name="brain_status", arguments={})["result"]
            text = status["content"][0]["text"]
            assert "The previous version does not serve meanwhile: this update changes the index's schema" in text
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=30)


def test_the_schema_of_a_runtime_prepared_before_it_was_recorded_is_asked_once(tmp_path: Path) -> None:
    env = env_for(tmp_path / "data", tmp_path)
    old = linked_runtime(env)
    assert not (old / previous.SCHEMA).exists()
    assert previous.runtime_schema(str(old)) == migrations.KNOWN
    assert (old / previous.SCHEMA).read_text().split() == migrations.KNOWN
    broken = linked_runtime(env_for(tmp_path / "other", tmp_path))
    (broken / "bin" / "python").unlink()
    (broken / "bin" / "python").symlink_to(tmp_path / "gone")
    assert previous.runtime_schema(str(broken)) is None


def test_a_failed_preparation_is_said_at_session_start_while_the_previous_runtime_serves(tmp_path: Path,
                                                                                          project: Path) -> None:
    """Serving from the previous runtime must not hide that the update never arrives: Claude Code's SessionStart
    shows the user why, beside the digest."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    copy = plugin_copy(tmp_path)
    linked_runtime(env, copy)
    update(copy)
    key = info(env, copy)["key"]
    preparation.record_failure(str(data), key, "No matching distribution found for hatchling>=1.21")
    hook = session_start(env, copy, project)
    assert hook.returncode == 0, hook.stderr
    out = json.loads(hook.stdout)
    assert "PG pool hangs on exit" in out["hookSpecificOutput"]["additionalContext"]
    assert "could not prepare its runtime: No matching distribution found for hatchling" in out["systemMessage"]
    assert "the previous version serves" in out["systemMessage"]
