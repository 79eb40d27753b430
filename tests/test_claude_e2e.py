"""A new user's first sessions, with the real Claude Code CLI, offline (opt-in like test_plugin.py's).

With a fresh HOME and CLAUDE_CONFIG_DIR: add this repository as a marketplace, install the plugin, and run
headless `claude -p` sessions against tests/support/messages_stand_in.py, which plays scripted tool calls. The first
session must prepare pinky's runtime by itself, then save a note, find it, show it when a breadcrumbed file is
read, and write the diary; the second must do no install work.

pip gets no index during the sessions: the wheels of pinky's dependencies and of its build backend are
downloaded once, while the registry is reachable, into pytest's cache, and the sessions run with
PIP_NO_INDEX=1 PIP_FIND_LINKS=<that folder> (the way a company behind a wheelhouse would configure pip). The
sessions run inside `unshare -n` (loopback only) when this machine allows it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from claude_support import OFFLINE_ENV, find_claude
from host_support import loopback_only

REPO = Path(__file__).resolve().parents[1]
STAND_IN = Path(__file__).resolve().parent / "support" / "messages_stand_in.py"
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
TOOLS = "mcp__plugin_pinky_pinky__*"
SLUG = "pg-pool-hangs-on-shutdown"

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(1)]


@pytest.fixture(scope="module")
def claude_cli(request: pytest.FixtureRequest) -> str:
    return find_claude(request)


@pytest.fixture(scope="module")
def wheelhouse(request: pytest.FixtureRequest, claude_cli: str) -> Path:
    """pinky's dependencies and hatchling as wheels for this Python, downloaded once (pytest's cache)."""
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()[:12]
    tag = f"{sys.implementation.cache_tag}-{digest}"
    folder = Path(request.config.cache.mkdir(f"pinky-wheelhouse-{tag}"))
    import fcntl

    with open(folder / ".download.lock", "w") as lock:  # test_claude_readme.py's process wants it too
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            result = subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
                                     "--dest", str(folder), str(REPO), "hatchling"],
                                    capture_output=True, text=True, timeout=900)
            if result.returncode:
                pytest.skip(f"could not download the wheels (is the package registry reachable?): "
                            f"{result.stderr.strip().splitlines()[-1:]}")
            (folder / ".complete").write_text("")
    return folder


@dataclass
class Setup:
    home: Path
    project: Path
    env: dict[str, str]
    isolate: list[str]
    claude: str
    install_seconds: float

    @property
    def data(self) -> Path:
        return self.home / ".claude" / "plugins" / "data" / "pinky-pinky-market" / "runtime"

    def claude_command(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.isolate, self.claude, *args], env=self.env, cwd=self.project,
                              capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, claude_cli: str, wheelhouse: Path) -> Setup:
    """A fresh HOME with the marketplace added and the plugin installed, and an initialised project."""
    root = tmp_path_factory.mktemp("claude-e2e")
    home, project = root / "home", root / "project"
    home.mkdir()
    (project / "documentation").mkdir(parents=True)
    (project / "pinky.toml").write_text("# pinky project\n")  # the project marker the core is adopting
    (project / "db.py").write_text(f"import psycopg\n\n# Brain: {SLUG}\ndef close(pool):\n"
                                   "    pool.close(timeout=5)\n")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE", "PIP_", "ANTHROPIC"))}
    env = {**inherited, **OFFLINE_ENV, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "ANTHROPIC_API_KEY": "sk-ant-test-key", "PINKY_PYTHON": BASE_PYTHON, "PIP_CONFIG_FILE": os.devnull,
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    isolate = loopback_only()
    started = time.monotonic()
    for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "install", "pinky@pinky-market"]):
        result = subprocess.run([*isolate, claude_cli, *args], env=env, cwd=project, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
    return Setup(home, project, env, isolate, claude_cli, time.monotonic() - started)


@dataclass
class Session:
    events: list[dict]
    requests: list[dict]
    timing: dict
    returncode: int
    stderr: str

    def init(self) -> dict:
        return next(e for e in self.events if e.get("subtype") == "init")

    def server_status(self, name: str) -> str | None:
        """The MCP server's status at init (2.1.337 adds a "source" beside the name and status)."""
        return next((s.get("status") for s in self.init()["mcp_servers"] if s.get("name") == name), None)

    def tool_results(self, tool: str) -> list[dict]:
        """Results of calls to the tool named `tool` (or ending in __`tool`), in order."""
        ids = {block["id"] for e in self.events if e.get("type") == "assistant"
               for block in e["message"]["content"]
               if block.get("type") == "tool_use" and (block["name"] == tool or block["name"].endswith("__" + tool))}
        return [block for e in self.events if e.get("type") == "user" and isinstance(e["message"]["content"], list)
                for block in e["message"]["content"]
                if isinstance(block, dict) and block.get("tool_use_id") in ids]


def run_session(setup: Setup, name: str, prompt: str, script: list[dict], allow: tuple[str, ...] = ()) -> Session:
    logdir = setup.home.parent / f"log-{name}"
    logdir.mkdir()
    script_path = logdir.with_suffix(".json")
    script_path.write_text(json.dumps(script))
    command = [*setup.isolate, sys.executable, str(STAND_IN), "run", str(logdir), str(script_path), "--",
               setup.claude, "-p", prompt, "--output-format", "stream-json", "--verbose",
               "--permission-mode", "acceptEdits", "--allowedTools", TOOLS, "Bash(sleep:*)", "Bash(pinky-brain:*)",
               *allow]
    result = subprocess.run(command, env=setup.env, cwd=setup.project, capture_output=True, text=True, timeout=600)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    requests = [json.loads(p.read_text()) for p in sorted(logdir.glob("[0-9]*.json"))]
    timing = json.loads((logdir / "timing.json").read_text()) if (logdir / "timing.json").exists() else {}
    return Session(events, requests, timing, result.returncode, result.stderr)


def text_of(block: dict) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else json.dumps(content)


@pytest.fixture(scope="module")
def first(setup: Setup) -> Session:
    script = [
        {"tool": "brain_save", "wait": 240, "input": {
            "title": "PG pool hangs on shutdown", "type": "gotcha", "tags": ["postgres"],
            "body": "Call pool.close(timeout=5) before the process exits, or it hangs."}},
        {"tool": "brain_search", "input": {"query": "postgres pool hangs on shutdown"}},
        {"tool": "Read", "input": {"file_path": str(setup.project / "db.py")}},
    ]
    return run_session(setup, "first", "Remember the pool gotcha.", script)


@pytest.fixture(scope="module")
def second(setup: Setup, first: Session) -> Session:
    return run_session(setup, "second", "What do we know about the pool?", [
        {"tool": "brain_search", "wait": 60, "input": {"query": "pool close timeout"}},
        {"tool": "Bash", "input": {"command": "pinky-brain search pool --json", "description": "the CLI in bin/"}},
    ])


@pytest.fixture(scope="module")
def third(setup: Setup, second: Session) -> Session:
    """A prompt about the saved gotcha (recall), then a turn that fails, edits and passes (capture)."""
    (setup.project / "settings.py").write_text("POOL_SIZE = 10\n")
    (setup.project / "check.py").write_text("import settings\n\nassert settings.POOL_SIZE <= 2, "
                                            "'POOL_SIZE too large in settings.py'\nprint('check ok')\n")
    run = {"command": "python3 check.py", "description": "run the check"}
    return run_session(setup, "third", "Why does the pool hang on shutdown? Run the check and fix it.", [
        {"tool": "Bash", "input": run},
        {"tool": "Read", "input": {"file_path": str(setup.project / "settings.py")}},  # Edit needs a Read first
        {"tool": "Edit", "input": {"file_path": str(setup.project / "settings.py"), "old_string": "POOL_SIZE = 10",
                                   "new_string": "POOL_SIZE = 2"}},
        {"tool": "Bash", "input": run},
    ], allow=("Bash(python3 check.py)",))


CAPTURE_ASK = "pinky: this turn looks like it taught something worth keeping"


def conversation(request: dict) -> str:
    return json.dumps(request["body"].get("messages", []))


@pytest.fixture(scope="module", autouse=True)
def figures(request: pytest.FixtureRequest) -> dict:
    """The measurements, printed at the end of the module (run with -rA or -s to keep them in the log)."""
    found: dict = {}
    yield found
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter and found:
        reporter.write_line("")
        for name, value in found.items():
            reporter.write_line(f"claude e2e: {name}: {value}")


def test_the_plugin_copy_is_small_and_self_contained(setup: Setup, figures: dict) -> None:
    installed = json.loads((setup.home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    copy = Path(installed["plugins"]["pinky@pinky-market"][0]["installPath"])
    size = sum(p.stat().st_size for p in copy.rglob("*") if p.is_file() and not p.is_symlink())
    figures["plugin copy in Claude Code's cache"] = f"{size / 1e6:.2f} MB ({copy})"
    figures["marketplace add + install"] = f"{setup.install_seconds:.1f} s"
    figures["network"] = "loopback only (unshare -n)" if setup.isolate else "the host's (unshare -n not permitted)"
    assert size < 10_000_000
    assert (copy / "package" / "src" / "pinky" / "hooks" / "__init__.py").is_file()  # materialized, not a link
    assert not any((copy / name).exists() for name in (".venv", ".demo", ".pytest_cache", "tests"))


def test_the_first_session_prepares_the_runtime_and_the_brain_works(setup: Setup, first: Session,
                                                                    figures: dict) -> None:
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.server_status("plugin:pinky:pinky") == "connected", first.init()["mcp_servers"]
    ready = next(setup.data.glob("*/pinky-ready")).read_text()
    # what its pinky knows of the index, read when it is the previous runtime after an update
    from pinky.store.migrations import KNOWN

    assert next(setup.data.glob("*/pinky-schema")).read_text().split() == KNOWN
    figures["first-run preparation (venv + pip from the wheelhouse)"] = ready.split("seconds ")[1].strip() + " s"
    figures["first session, wall time"] = f"{first.timing.get('end', 0):.1f} s"

    saved = first.tool_results("brain_save")
    assert saved and not saved[0].get("is_error") and SLUG in text_of(saved[0]), saved
    found = first.tool_results("brain_search")
    assert found and not found[0].get("is_error") and SLUG in text_of(found[0]), found

    # The pre-read hook: the request after the Read carries the linked entry beside the Read's result (2.1.197
    # put the hook's context in the user turn, 2.1.337 in a system-role message right after it).
    read_at = next((i for i, r in enumerate(first.requests) if any(
        block.get("type") == "tool_result" and "Brain: " + SLUG in text_of(block)
        for m in r["body"].get("messages", [])[-2:] if isinstance(m.get("content"), list)
        for block in m["content"] if isinstance(block, dict))), None)
    hooks = [e for e in first.events if str(e.get("subtype", "")).startswith("hook")]
    assert read_at is not None, (first.tool_results("Read"), hooks[-8:])
    last_turn = json.dumps(first.requests[read_at]["body"]["messages"][-2:])
    assert "PreToolUse:Read hook additional context" in last_turn and f"gotcha/{SLUG}" in last_turn

    diary = setup.project / "documentation" / "diary" / f"{date.today().isoformat()}.md"
    assert diary.exists() and "Remember the pool gotcha." in diary.read_text()


def test_brain_save_writes_into_the_initialised_project(setup: Setup, first: Session) -> None:
    """The target behaviour (the core is moving to it): inside a pinky project the note lands in its
    documentation/, not in the global brain."""
    assert first.tool_results("brain_save"), "the first session made no brain_save call"
    saved = list((setup.project / "documentation").rglob(f"{SLUG}.md"))
    elsewhere = list((setup.home / ".pinky").rglob(f"{SLUG}.md"))
    assert saved, f"brain_save wrote {elsewhere or 'nothing'}, not into {setup.project / 'documentation'}"


def test_the_second_session_does_no_install_work(setup: Setup, first: Session, second: Session,
                                                 figures: dict) -> None:
    runtimes_before = sorted(p.name for p in setup.data.iterdir())
    marker = next(setup.data.glob("*/pinky-ready"))
    assert second.returncode == 0, second.stderr[-2000:]
    figures["second session, start to system/init with the server connected"] = f"{second.timing['init']:.1f} s"
    # 2.1.337 connects MCP servers in the background even with MCP_CONNECTION_NONBLOCKING=0: "pending" at init,
    # connected by the time the stand-in asks for brain_search (asserted below through its result).
    status = second.server_status("plugin:pinky:pinky")
    assert status in ("connected", "pending"), second.init()["mcp_servers"]
    figures["second session, the server's status at system/init"] = status
    named = " ".join(json.dumps(r["body"]) for r in second.requests)
    assert "mcp__plugin_pinky_pinky__brain_search" in named and "mcp__plugin_pinky_pinky__brain_status" not in named
    assert (setup.data / "prepare.log").read_text().count("pinky: preparing runtime") == 1
    assert sorted(p.name for p in setup.data.iterdir()) == runtimes_before
    assert marker.stat().st_mtime < time.time() - second.timing["end"]  # not rewritten by this session
    started = [e for e in second.events
               if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]
    assert started and "pinky brain:" in started[0]["output"]
    # 2.1.337 shows deferred MCP tools by name only: the digest says how to load them (ToolSearch), and the model
    # (here the stand-in) loaded brain_search with it before calling it.
    assert "ToolSearch" in started[0]["output"]
    searched = second.tool_results("ToolSearch")
    assert searched and "brain_search" in text_of(searched[0]), searched
    found = second.tool_results("brain_search")
    assert found and SLUG in text_of(found[0])
    # bin/ is on the Bash tool's PATH and finds the prepared runtime (the stand-in's waits for the server aside)
    shell = [r for r in second.tool_results("Bash") if not str(r.get("tool_use_id")).startswith("toolu_wait")]
    assert shell and not shell[0].get("is_error") and SLUG in text_of(shell[0]), shell


def test_a_prompt_about_the_brain_recalls_the_entry(setup: Setup, third: Session) -> None:
    assert third.returncode == 0, third.stderr[-2000:]
    main = [r for r in third.requests if any(t.get("name") == "Read" for t in r["body"].get("tools") or [])]
    context = conversation(main[0])  # Claude Code 2.1 sends hook context as a system-role message
    recalled = context.split("UserPromptSubmit hook additional context: ", 1)
    assert len(recalled) == 2, context[:2000]
    assert recalled[1].startswith("pinky recall") and f"gotcha/{SLUG}" in recalled[1][:600]


def test_a_fail_then_fix_turn_gets_the_capture_ask_and_a_plain_turn_does_not(setup: Setup, first: Session,
                                                                             second: Session,
                                                                             third: Session) -> None:
    ran = third.tool_results("Bash")
    assert len(ran) >= 2 and ran[0].get("is_error") and not ran[-1].get("is_error"), ran
    asked = [r for r in third.requests if CAPTURE_ASK in conversation(r)]
    assert asked, "no request carried the Stop hook's capture ask"
    assert "python3 check.py" in conversation(asked[0]) and "brain_save" in conversation(asked[0])
    assert not any(CAPTURE_ASK in conversation(r) for r in second.requests)  # a plain turn: no ask
    assert not any(CAPTURE_ASK in conversation(r) for r in first.requests)  # it saved: no ask
    diary = (setup.project / "documentation" / "diary" / f"{date.today().isoformat()}.md").read_text()
    assert "capture: asked to save what was learned" in diary and "capture: no save followed the ask" in diary
