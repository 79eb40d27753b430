"""The plugin's launcher (plugin/runtime): finding a Python, the runtime key, readiness, the lock, failing open,
and the MCP stand-in that hands over to the real server. Real processes and files; no pip run succeeds here
(that needs a package index: tests/test_claude_e2e.py does it), so a ready runtime is made the quick way: a venv
whose site-packages point at this interpreter's, where `make venv` installed pinky and its dependencies."""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pinky.config import load_config
from pinky.hooks.dispatch import EVENTS
from pinky.kb import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugin"
SH = shutil.which("sh") or "/bin/sh"
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)  # what `python -m venv` would link to

sys.path.insert(0, str(PLUGIN / "runtime"))
import pinky_launcher as launcher  # noqa: E402
import pinky_runtime_lookup as lookup  # noqa: E402
import pinky_runtime_prepare as preparation  # noqa: E402


def env_for(data: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The hooks' and server's environment, with pip cut off from any index: nothing here may download."""
    empty = tmp_path / "no-wheels"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "CLAUDE_PLUGIN_DATA": str(data), "PINKY_PYTHON": BASE_PYTHON, "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty), "PINKY_HOOKS_NO_BACKGROUND": "1", **extra}


def run(env: dict[str, str], *args: str, plugin: Path = PLUGIN, stdin: str = "", cwd: Path | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SH, str(plugin / "runtime" / "run"), *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)


def info(env: dict[str, str], plugin: Path = PLUGIN) -> dict:
    result = run(env, "info", plugin=plugin)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def linked_runtime(env: dict[str, str], plugin: Path = PLUGIN) -> Path:
    """A ready runtime for `plugin`, made in a fraction of a second (see the module docstring)."""
    found = info(env, plugin)
    venv = Path(found["runtime"])
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "pinky-dev.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    (venv / lookup.READY).write_text(f"key {found['key']}\nseconds 1.0\n")
    (Path(found["data"]) / "runtime" / "python").write_text(str(venv / "bin" / "python") + "\n")
    return venv


@contextmanager
def preparation_lock(data: Path) -> Iterator[None]:
    """Hold the lock a preparing process holds."""
    (data / "runtime").mkdir(parents=True, exist_ok=True)
    fd = os.open(data / "runtime" / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def plugin_copy(tmp_path: Path, name: str = "copy") -> Path:
    """The plugin as Claude Code copies it into its cache: symlinks into the repository become files."""
    target = tmp_path / name
    shutil.copytree(PLUGIN, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def wait_for(predicate, timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


# --- finding a Python ---------------------------------------------------------------------------------


def fake_bin(tmp_path: Path, **names: str | None) -> dict[str, str]:
    """A PATH holding only these interpreters: a path links to a real one, None is one older than 3.11."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, target in names.items():
        path = folder / name.replace("_", ".")
        if target is None:
            path.write_text("#!/bin/sh\nexit 1\n")  # answers the version check like Python 3.10 would
            path.chmod(0o755)
        else:
            path.symlink_to(target)
    return {"PATH": str(folder)}


def test_run_takes_the_newest_python_that_is_recent_enough(tmp_path: Path) -> None:
    env = env_for(tmp_path / "data", tmp_path, **fake_bin(tmp_path, python3_13=None, python3_12=BASE_PYTHON,
                                                          python3=BASE_PYTHON))
    del env["PINKY_PYTHON"]
    assert info(env)["python"].endswith("/bin/python3.12")


def test_pinky_python_comes_first(tmp_path: Path) -> None:
    env = env_for(tmp_path / "data", tmp_path, **fake_bin(tmp_path, python3=None))
    assert info(env)["python"] == BASE_PYTHON


@pytest.mark.parametrize("mode,code", [(["hooks", "pre-read"], 0), (["cli", "search", "x"], 1), (["mcp"], 1)])
def test_without_a_recent_python_one_clear_line_and_hooks_fail_open(tmp_path: Path, mode: list[str],
                                                                    code: int) -> None:
    env = env_for(tmp_path / "data", tmp_path, **fake_bin(tmp_path, python3=None))
    del env["PINKY_PYTHON"]
    result = run(env, *mode, stdin="{}")
    assert result.returncode == code and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "needs Python 3.11 or newer" in result.stderr


# --- the runtime key: new content gets a new runtime, a copy of the same content does not ---------------


def test_key_follows_the_package_source_not_its_location_or_bytecode(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    first, second = plugin_copy(tmp_path, "a"), plugin_copy(tmp_path, "b")
    key = lookup.runtime_key(data, str(first))
    assert lookup.runtime_key(data, str(second)) == key  # Claude Code's cache copy reuses the runtime

    init = second / "package" / "src" / "pinky" / "__init__.py"
    os.utime(init, ns=(1, 1))  # a new mtime alone (a fresh copy): hashed again, same key
    (init.parent / "__pycache__").mkdir(exist_ok=True)
    (init.parent / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")  # left by a test run
    (second / "package" / "README.md").unlink()
    (second / "package" / "README.md").write_text("another readme")
    assert lookup.runtime_key(data, str(second)) == key

    init.write_text(init.read_text() + "\n# changed\n")
    assert lookup.runtime_key(data, str(second)) not in (key, "")
    (first / "package" / "pyproject.toml").write_text((first / "package" / "pyproject.toml").read_text() + "\n")
    assert lookup.runtime_key(data, str(first)) != key


def test_entry_points_are_the_console_scripts_of_pyproject() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    for program, module in launcher.ENTRY_POINTS.values():
        assert scripts[program] == f"{module}:main"
    assert set(scripts.values()) == {f"{m}:main" for _, m in launcher.ENTRY_POINTS.values()}


# --- a ready runtime: the hot path -----------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An initialised project (documentation/ and the pinky.toml marker) with one indexed note."""
    root = tmp_path / "proj"
    (root / "documentation" / "gotcha").mkdir(parents=True)
    (root / "documentation" / "gotcha" / "pg-pool.md").write_text(
        "---\ntitle: PG pool hangs on exit\ntype: gotcha\n---\nCall pool.close(timeout=5) before exit.\n")
    (root / "pinky.toml").write_text("")
    (root / "src").mkdir()
    (root / "src" / "db.py").write_text("# Brain: pg-pool\nimport psycopg\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    return root


def test_a_ready_runtime_runs_hooks_cli_and_bin_in_one_step(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path, CLAUDE_PROJECT_DIR=str(project))
    linked_runtime(env)
    assert info(env)["ready"] is True

    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Read",
               "tool_input": {"file_path": str(project / "src" / "db.py")}, "transcript_path": "t.jsonl"}
    hook = run(env, "hooks", "pre-read", stdin=json.dumps(payload), cwd=project)
    assert hook.returncode == 0, hook.stderr
    assert "gotcha/pg-pool" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]

    for command in ("pinky", "pinky-brain"):
        result = subprocess.run([str(PLUGIN / "bin" / command), "--version"], capture_output=True, text=True,
                                env=env, cwd=project, timeout=60)
        assert result.returncode == 0 and "pinky-brain, version" in result.stdout, result.stderr
    assert not (data / "runtime" / "prepare.log").exists()  # nothing was prepared


def test_bin_pinky_finds_the_runtime_without_claude_plugin_data(tmp_path: Path, project: Path) -> None:
    """The Bash tool's environment has no CLAUDE_PLUGIN_DATA: bin/pinky looks in Claude Code's data folder."""
    config = tmp_path / "claude-config"
    data = config / "plugins" / "data" / "pinky-some-fork"
    linked_runtime(env_for(data, tmp_path))
    env = env_for(data, tmp_path, CLAUDE_CONFIG_DIR=str(config))
    del env["CLAUDE_PLUGIN_DATA"]
    result = subprocess.run([str(PLUGIN / "bin" / "pinky"), "search", "pool", "--json"], capture_output=True,
                            text=True, env=env, cwd=project, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pg-pool" in result.stdout and not (config / "plugins" / "data" / "pinky-pinky-market").exists()


def test_new_content_needs_a_new_runtime_and_the_old_one_stays(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    old = linked_runtime(env)
    copy = plugin_copy(tmp_path)
    assert info(env, copy)["ready"] is True and info(env, copy)["runtime"] == str(old)

    init = copy / "package" / "src" / "pinky" / "__init__.py"
    init.write_text(init.read_text() + "\n# a plugin update\n")
    updated = info(env, copy)
    assert updated["ready"] is False and updated["runtime"] != str(old)
    assert info(env)["ready"] is True  # a session still on the old version keeps working


def test_a_half_built_runtime_is_not_ready(tmp_path: Path) -> None:
    env = env_for(tmp_path / "data", tmp_path)
    venv = linked_runtime(env)
    (venv / lookup.READY).unlink()  # a build that died before its last step
    assert info(env)["ready"] is False
    os.unlink(venv / "bin" / "python")  # a ready marker next to a broken interpreter counts for nothing either
    (venv / lookup.READY).write_text("key x\n")
    assert info(env)["ready"] is False


def test_prune_keeps_the_new_runtime_and_the_previous_one(tmp_path: Path) -> None:
    home = tmp_path / "runtime"
    for age, name in enumerate(["new", "previous", "older", "oldest"]):
        (home / name).mkdir(parents=True)
        (home / name / lookup.READY).write_text("")
        os.utime(home / name / lookup.READY, (1_000_000 - age, 1_000_000 - age))
    (home / "half-built" / "bin").mkdir(parents=True)
    (home / ".build-x").mkdir()
    (home / "keys").mkdir()
    (home / "pycache").mkdir()  # the launcher's own bytecode: recompiling it would cost the next hook
    preparation.prune(str(home), str(home / "new"))
    assert sorted(p.name for p in home.iterdir()) == ["keys", "new", "previous", "pycache"]


# --- not ready yet: hooks fail open, one preparation at a time ----------------------------------------------


def test_hooks_fail_open_while_another_process_prepares_and_start_no_second_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    with preparation_lock(data):
        waiting = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "prepare"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hook = run(env, "hooks", "session-start", stdin="{}")
        assert hook.returncode == 0 and hook.stdout == ""
        assert hook.stderr.count("\n") == 1 and "preparing its runtime" in hook.stderr
        assert not (data / "runtime" / "prepare.log").exists()  # it saw the lock and started nobody
        time.sleep(0.5)
        assert waiting.poll() is None  # `prepare` waits for the lock
        linked_runtime(env)  # what the process holding the lock builds
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0 and "preparing runtime" not in err  # found it ready: nothing built twice


def test_a_failed_preparation_is_reported_in_one_line_and_not_retried_by_every_hook(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)  # pip has no index: installing fails
    first = run(env, "hooks", "pre-write", stdin="{}")
    assert first.returncode == 0 and first.stdout == "" and "preparing its runtime" in first.stderr
    wait_for(lambda: (data / "runtime" / "failed").exists(), 90, "the background preparation to fail")
    failure = info(env)["failure"]
    assert "pip install failed" in failure and "\n" not in failure and info(env)["ready"] is False
    # the line that names the cause, not pip's last one ("This error originates from a subprocess ...")
    assert "No matching distribution found for hatchling" in failure and "originates" not in failure

    again = run(env, "hooks", "stop", stdin="{}")
    assert again.returncode == 0 and "could not prepare its runtime" in again.stderr
    assert (data / "runtime" / "prepare.log").read_text().count("pinky: preparing runtime") == 1

    cli = run(env, "cli", "stats")  # the CLI prepares in the foreground and says why it cannot, and where the log is
    last = cli.stderr.strip().splitlines()[-1]
    assert cli.returncode == 1 and last.startswith("pinky-brain: pip install failed")
    assert "No matching distribution found for hatchling" in last and str(data / "runtime" / "prepare.log") in last
    log = (data / "runtime" / "prepare.log").read_text()
    assert log.count("pinky: preparing runtime") == 2  # logged too
    # Issue 31 item 9: the terminal gets a line per step, not pip's output (which is in the log)
    assert "Looking in links" in log.split("pinky: preparing runtime")[2] and "Looking in links" not in cli.stderr
    assert len(cli.stderr.splitlines()) <= 6, cli.stderr
    assert "step 2 of 4: pip is collecting" in cli.stderr


# Output of failed steps as pip and Python print it (pip 25, Python 3.11).
PIP_BUILD_DEPENDENCIES = """Processing /data/runtime/.build-x/pinky-brain
  Installing build dependencies: started
  Installing build dependencies: finished with status 'error'
  error: subprocess-exited-with-error

  × pip subprocess to install build dependencies did not run successfully.
  │ exit code: 1
  ╰─> [3 lines of output]
      Looking in links: /wheels
      ERROR: Could not find a version that satisfies the requirement hatchling>=1.21 (from versions: none)
      ERROR: No matching distribution found for hatchling>=1.21
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error

× pip subprocess to install build dependencies did not run successfully.
│ exit code: 1
╰─> See above for output.

note: This error originates from a subprocess, and is likely not a problem with pip."""
IMPORT_CHECK = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
ModuleNotFoundError: No module named 'sqlite_vec'"""


@pytest.mark.parametrize("output,cause", [
    (PIP_BUILD_DEPENDENCIES, "No matching distribution found for hatchling>=1.21"),
    (IMPORT_CHECK, "ModuleNotFoundError: No module named 'sqlite_vec'"),
    ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n\nnote: x",
     "Could not install packages due to an OSError: [Errno 28] No space left on device"),
])
def test_a_failed_step_is_told_by_the_line_that_names_the_cause(output: str, cause: str) -> None:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    assert preparation.failure_cause(lines) == cause


def test_an_unusable_data_folder_still_fails_open(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    env = env_for(tmp_path / "a-file", tmp_path)
    result = run(env, "hooks", "pre-read", stdin="{}")
    assert result.returncode == 0 and result.stdout == "" and result.stderr.count("\n") == 1


# --- the MCP server while preparing ---------------------------------------------------------------------------


class Client:
    """An MCP client over the server's stdio, one JSON message per line; reads time out instead of hanging."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process, self.next_id = process, 0
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 30) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no message from the server within {timeout} s")
        assert line, "the server closed its output"
        return json.loads(line)

    def request(self, method: str, **params: object) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id:
                return message


INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def test_the_server_answers_at_once_and_hands_over_when_the_runtime_is_ready(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    with preparation_lock(data):  # "someone" prepares: the server must not start another preparation
        server = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "mcp"], env=env, cwd=project,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        client = Client(server)
        started = time.monotonic()
        init = client.request("initialize", **INITIALIZE)["result"]
        assert time.monotonic() - started < 5
        assert init["protocolVersion"] == "2025-11-25" and init["capabilities"]["tools"]["listChanged"] is True
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert [t["name"] for t in client.request("tools/list")["result"]["tools"]] == ["brain_status"]
        status = client.request("tools/call", name="brain_status", arguments={})["result"]
        assert status["isError"] is False and "retry in" in status["content"][0]["text"]
        early = client.request("tools/call", name="brain_search", arguments={"query": "pool"})["result"]
        assert early["isError"] is True and "preparing its runtime" in early["content"][0]["text"]
        linked_runtime(env)

    assert client.receive() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    tools = {t["name"] for t in client.request("tools/list")["result"]["tools"]}
    assert {"brain_search", "brain_save", "brain_get"} <= tools and "brain_status" not in tools
    found = client.request("tools/call", name="brain_search", arguments={"query": "pool close"})["result"]
    assert "gotcha/pg-pool" in json.dumps(found)
    # Issue 31 item 7: a client that still has brain_status in its list (it was listed while preparing) can call
    # it: it reports the runtime instead of "unknown tool".
    ready = client.request("tools/call", name="brain_status", arguments={})["result"]
    assert ready["isError"] is False, ready
    from pinky import __version__
    assert f"ready: version {__version__}" in ready["content"][0]["text"]
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert not (data / "runtime" / "prepare.log").exists()


def test_kill_9_of_the_stand_in_stops_the_real_server(tmp_path: Path, project: Path) -> None:
    """Issue 29 item 5 for a first session: the stand-in relays to pinky-mcp's front, which relays to the real
    server; killing the process the client started must end both, or they go on writing what was queued."""
    from mcp_helpers import alive, descendants_of

    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    with preparation_lock(data):
        server = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "mcp"], env=env, cwd=project,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        client = Client(server)
        client.request("initialize", **INITIALIZE)
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        linked_runtime(env)
    assert client.receive() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert "result" in client.request("tools/call", name="brain_stats", arguments={})  # the real server answers
    relay = descendants_of(server.pid)
    assert len(relay) >= 2, relay  # the front and the real server
    mark = "stand-in-streamed-save"
    for n in range(1, 201):  # a client streaming saves: most of them wait in the pipes
        client.send({"jsonrpc": "2.0", "id": f"save-{n}", "method": "tools/call", "params": {
            "name": "brain_save", "arguments": {"title": f"Streamed note {n}", "body": f"{mark} {n}", "type": "note"}}})
    while "result" not in client.receive():
        pass
    killed = time.time()
    server.kill()
    server.wait(timeout=10)
    wait_for(lambda: not any(alive(pid) for pid in relay), 15, "the front and the real server to end")
    time.sleep(1)
    written = [p.stat().st_mtime for p in project.rglob("*.md") if mark in p.read_text(errors="replace")]
    assert len([when for when in written if when > killed]) <= 1, f"{len(written)} written"


def brain_status(env: dict[str, str], project: Path) -> str:
    """The stand-in server's brain_status text, with the preparation lock held (someone prepares)."""
    server = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "mcp"], env=env, cwd=project,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = Client(server)
    client.request("initialize", **INITIALIZE)
    status = client.request("tools/call", name="brain_status", arguments={})["result"]
    server.stdin.close()
    assert server.wait(timeout=30) == 0 and status["isError"] is False
    return status["content"][0]["text"]


def test_brain_status_says_which_step_for_how_long_and_the_estimate_from_the_last_preparation(
        tmp_path: Path, project: Path) -> None:
    """Issue 25: the first session waited ~50 s while brain_status said "retry in 27 s", a guess from when the
    server started. Now it reads what the preparing process records: the step, since when, and how long the
    steps took the last time on this machine."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    key = info(env)["key"]
    with preparation_lock(data):
        last = time.time() - 100  # the last preparation: venv 10 s, resolve 4 s, install 20 s, check 6 s
        first = preparation.Progress(str(data), key)
        first.started, first.steps = last, [("venv", last), ("resolve", last + 10), ("install", last + 14),
                                            ("check", last + 34)]
        os.makedirs(data / "runtime", exist_ok=True)
        os.utime(data / "runtime")
        first.finish()
        timing = preparation.last_timing(str(data))
        assert timing is not None and timing["install"] == 20.0 and round(timing["check"]) == 66

        now = preparation.Progress(str(data), key)  # this one: venv 9 s, resolve 5 s, installing for 6 s
        begun = time.time() - 20
        now.started, now.steps = begun, [("venv", begun), ("resolve", begun + 9), ("install", begun + 14)]
        now.step("install", "45 packages")  # as pip_line() does when pip starts installing: rewrites the record
        text = brain_status(env, project)
    assert "Step 3 of 4: pip is installing the packages" in text and "(now: 45 packages)" in text
    assert "The last one here took 100 s" in text
    in_step, elapsed = map(int, re.search(r"for (\d+) s; (\d+) s since it started", text).groups())
    assert 6 <= in_step <= 20 and elapsed - in_step in (13, 14, 15)  # 6 and 20 s when the record was written
    left = int(text.split("about ")[1].split(" s are left")[0])
    assert 60 <= left <= 85  # install 20 - 6 s, then the check 66 s, at about the same pace as the last one
    assert f"retry in {left} s" in text and str(data / "runtime" / "prepare.log") in text


def test_brain_status_before_any_timing_quotes_the_measured_figures(tmp_path: Path, project: Path) -> None:
    data = tmp_path / "data"
    env = env_for(data, tmp_path)
    key = info(env)["key"]
    with preparation_lock(data):
        preparation.Progress(str(data), key).step("venv")
        text = brain_status(env, project)
    assert "Step 1 of 4: creating its Python environment" in text
    assert f"No preparation has been timed on this machine yet; one took {preparation.MEASURED}" in text


def test_a_new_session_tries_a_failed_preparation_again_and_reports_its_failure(tmp_path: Path,
                                                                               project: Path) -> None:
    """Issue 31 item 6: after a failure, fixing pip and starting a new session repeated the old failure for ten
    minutes while the message said a new session would try again (and named `pinky`, a finger clone on Debian)."""
    data = tmp_path / "data"
    env = env_for(data, tmp_path)  # pip has no index: the new try fails too, with its own cause
    key = info(env)["key"]
    (data / "runtime" / "failed").write_text(f"{key}\n{time.time()}\npip install failed (exit 1): an old cause")
    server = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "mcp"], env=env, cwd=project,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = Client(server)
    client.request("initialize", **INITIALIZE)
    deadline = time.monotonic() + 120
    while True:
        status = client.request("tools/call", name="brain_status", arguments={})["result"]
        if status["isError"] or time.monotonic() > deadline:
            break
        assert "an old cause" not in json.dumps(status)
        time.sleep(1)
    text = status["content"][0]["text"]
    assert status["isError"] is True and "No matching distribution found for hatchling" in text, text
    assert "run `pinky-brain` in the agent's shell" in text and "`pinky`" not in text
    assert "start a new session: either tries again at once" in text and "Hooks try again at " in text
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert (data / "runtime" / "prepare.log").read_text().count("pinky: preparing runtime") == 1


def test_hooks_try_a_failed_preparation_again_when_pips_settings_change(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data, key = str(tmp_path / "data"), "k1"
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.invalid/simple")
    preparation.record_failure(data, key, "pip install failed (exit 1): no index")
    assert preparation.recent_failure(data, key) == "pip install failed (exit 1): no index"  # a hook waits
    assert preparation.recent_failure(data, key, since=time.time() + 1) is None  # a session started after it
    assert preparation.recent_failure(data, "other-key") is None
    monkeypatch.setenv("PIP_INDEX_URL", "https://fixed.example/simple")
    assert preparation.recent_failure(data, key) is None  # what failed may have changed: try again
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.invalid/simple")
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = https://mirror.invalid/simple\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    preparation.record_failure(data, key, "no index")
    assert preparation.recent_failure(data, key) == "no index"
    config.write_text("[global]\nfind-links = /srv/wheels\n")
    assert preparation.recent_failure(data, key) is None
    assert preparation.recent_failure(data, key, max_age=None) == "no index"  # still reported


def test_a_ready_runtime_serves_mcp_directly(tmp_path: Path, project: Path) -> None:
    env = env_for(tmp_path / "data", tmp_path)
    linked_runtime(env)
    server = subprocess.Popen([SH, str(PLUGIN / "runtime" / "run"), "mcp"], env=env, cwd=project,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = Client(server)
    init = client.request("initialize", **INITIALIZE)["result"]
    assert init["serverInfo"]["name"] != "pinky" or init["serverInfo"].get("version") != "preparing"
    assert "brain_search" in {t["name"] for t in client.request("tools/list")["result"]["tools"]}
    server.stdin.close()
    assert server.wait(timeout=30) == 0


# --- what Claude Code gets: the plugin folder -------------------------------------------------------------------


def test_hooks_and_server_go_through_the_launcher() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    handlers = [h for groups in hooks.values() for group in groups for h in group["hooks"]]
    assert {h["args"][2] for h in handlers} == set(EVENTS)
    for handler in handlers:
        assert handler["command"] == "sh" and handler["args"][:2] == ["${CLAUDE_PLUGIN_ROOT}/runtime/run", "hooks"]
        assert 1 <= handler["timeout"] <= 30
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["pinky"]
    assert (server["command"], server["args"]) == ("sh", ["${CLAUDE_PLUGIN_ROOT}/runtime/run", "mcp"])
    for command in ("pinky", "pinky-brain"):
        assert os.access(PLUGIN / "bin" / command, os.X_OK)


def test_every_launcher_module_is_compiled_into_the_data_folder_not_the_plugin_folder(tmp_path: Path) -> None:
    """launch.py (and BytecodeCache for the modules loaded later) compiles each launcher module once into
    <data>/runtime/pycache: no start compiles it from source again, and the plugin folder, which may be
    read-only, gets no __pycache__. Even when the interpreter is told not to write bytecode."""
    copy, data = plugin_copy(tmp_path), tmp_path / "data"
    env = env_for(data, tmp_path, PYTHONDONTWRITEBYTECODE="1")
    info(env, copy)
    with preparation_lock(data):  # the stand-in server, with nobody started to prepare
        server = subprocess.run([SH, str(copy / "runtime" / "run"), "mcp"], capture_output=True, env=env, timeout=60)
    assert server.returncode == 0, server.stderr
    cache = data / "runtime" / "pycache" / str(copy / "runtime").lstrip(os.sep)
    assert {p.name.split(".")[0] for p in cache.glob("*.pyc")} == {
        p.stem for p in (copy / "runtime").glob("*.py") if p.name != "launch.py"}
    assert not list(copy.rglob("__pycache__"))


def test_the_plugin_folder_claude_code_copies_is_small_and_self_contained() -> None:
    """Claude Code copies the marketplace entry's source folder and turns symlinks that point elsewhere in the
    marketplace (this repository) into files; links leaving it are dropped. .venv, .demo and caches stay out."""
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert [p["source"] for p in market["plugins"]] == ["./plugin"]
    total, names = 0, set()
    for folder, dirs, files in os.walk(PLUGIN, followlinks=True):
        assert Path(folder).resolve().is_relative_to(REPO)
        names |= set(dirs)
        # bytecode a checkout's own runs wrote is not in the repository Claude Code installs from
        dirs[:] = [name for name in dirs if name not in ("__pycache__", ".ruff_cache", ".mypy_cache")]
        total += sum((Path(folder) / name).stat().st_size for name in files)
    assert not names & {".venv", ".demo", ".pytest_cache", "node_modules", ".git"}
    assert total < 5_000_000, f"the plugin folder holds {total} bytes"
    assert (PLUGIN / "package" / "src" / "pinky" / "hooks").is_dir()


def test_a_half_built_runtime_that_is_still_being_written_is_cleared_without_an_error(tmp_path: Path) -> None:
    """Issue 39 item 5: the next command after an interrupted build failed with `OSError: [Errno 39] Directory
    not empty: 'tests'`: the dead build's pip was still writing into the folder being removed."""
    home = tmp_path / "runtime"
    venv = home / "abc123"
    tests = venv / "lib" / "site-packages" / "numpy" / "tests"
    tests.mkdir(parents=True)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, itertools\n"
        "for n in itertools.count():\n"
        "    try:\n"
        "        open(os.path.join(sys.argv[1], f'test_{n}.py'), 'w').close()\n"
        "    except OSError:\n"
        "        break\n"), str(tests)])
    try:
        wait_for(lambda: len(os.listdir(tests)) > 200, 30, "the writer to start")
        for _ in range(20):  # each round clears a folder the writer is filling
            preparation.clear_half_built(str(venv), str(home))
            assert not venv.exists()
            tests.mkdir(parents=True, exist_ok=True)
    finally:
        writer.kill()
        writer.wait()
    preparation.prune(str(home), str(venv))
    assert [p.name for p in home.iterdir() if p.name.startswith(".trash-")] == []
