"""`pinky-hooks --host cline <event>` on the payloads pinky's Cline plugin sent in a real Cline CLI 3.0.65 session
(tests/fixtures/cline/README.md), and that session's own store read back: by the stop hook (the diary naming the
host) and by `pinky-brain import-sessions`, which must write the same diary byte for byte, take nothing twice and
leave another project's session alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from helpers import console_script
from host_fixtures import FIXTURES, diary_text, filled, make_brain, output, payload, run_host

import pinky.capture.recorder as recorder
from pinky.base.locations import locate
from pinky.hooks.state import StateFiles
from pinky.hooks.stop import offsets_path, stop
from pinky.hosts.catalog import host

SESSION = "1796679610539_lghdm"  # tests/fixtures/cline/sessions/<SESSION>/
PROMPT = "Fix the retry count in src/db.py and remember why."
PINKY = console_script("pinky-brain")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_brain(tmp_path / "proj")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PINKY_HOOKS_NO_BACKGROUND", "1")
    monkeypatch.setenv("PINKY_CAPTURE", "off")  # the import asks nothing: compare with a stop that asks nothing
    return home


def context(result: subprocess.CompletedProcess[str], event: str) -> str:
    out = output(result)["hookSpecificOutput"]
    assert out["hookEventName"] == event
    return str(out["additionalContext"])


def session_store(root: Path, home: Path, session: str = SESSION, cwd: Path | None = None) -> Path:
    """The recorded session where Cline keeps it (~/.cline/data/sessions/<id>/), run in `cwd` (the project);
    the path of the JSONL the stop hook is given."""
    folder = home / ".cline" / "data" / "sessions" / session
    folder.mkdir(parents=True, exist_ok=True)
    for source in sorted((FIXTURES / "cline" / "sessions" / SESSION).iterdir()):
        text = filled(source.read_text(encoding="utf-8"), cwd or root, home).replace(SESSION, session)
        (folder / source.name.replace(SESSION, session)).write_text(text, encoding="utf-8")
    return folder / f"{session}.messages.jsonl"


def test_the_rule_carries_the_digest_with_the_names_cline_s_model_calls(root: Path, home: Path) -> None:
    digest = context(run_host("cline", "session-start", payload("cline", "session-start", root, home), root),
                     "registerRule")
    assert "DB retries need jitter" in digest
    assert "pinky__brain_search" in digest and "pinky__brain_save" in digest and "mcp__" not in digest
    assert not (root / ".clinerules").exists() and not (root / ".cline").exists()  # no rules file of pinky's


def test_before_run_recalls_the_note_the_prompt_is_about(root: Path, home: Path) -> None:
    sent = payload("cline", "user-prompt", root, home)
    assert sent["prompt"] == PROMPT  # the plugin took it out of <user_input mode="act">
    text = context(run_host("cline", "user-prompt", {**sent, "prompt": "fix the retry in src/db.py"}, root),
                   "beforeRun")
    assert "gotcha/db-retries" in text and "pinky__brain_get" in text


@pytest.mark.parametrize("name", ["post-tool-read_files", "post-tool-editor", "post-tool-run_commands"])
def test_after_a_tool_touched_a_linked_file_its_notes_follow(root: Path, home: Path, name: str) -> None:
    text = context(run_host("cline", "post-tool", payload("cline", name, root, home), root), "afterTool")
    assert "linked to src/db.py" in text and "gotcha/db-retries" in text
    other = payload("cline", "post-tool-read_files", root, home, tool_input={"paths": [str(root / "src/other.py")]})
    assert output(run_host("cline", "post-tool", other, root)) == {}


def test_stale_facts_written_into_agents_md_are_refused_with_the_reason(root: Path, home: Path) -> None:
    agents = (root / "AGENTS.md").read_bytes()
    out = output(run_host("cline", "pre-write", payload("cline", "pre-write-editor-AGENTS_md", root, home),
                          root))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"  # the plugin answers beforeTool with {skip: true, reason}
    assert "AGENTS.md must stay evergreen" in out["permissionDecisionReason"]
    assert "permissionDecision" not in json.dumps(output(run_host(
        "cline", "pre-write", payload("cline", "pre-write-editor", root, home), root)))
    assert (root / "AGENTS.md").read_bytes() == agents


def test_after_run_writes_the_diary_from_the_session_naming_cline(root: Path, home: Path) -> None:
    sent = payload("cline", "stop", root, home)
    assert sent["transcript_path"] == str(session_store(root, home))
    assert output(run_host("cline", "stop", sent, root)) == {}  # afterRun cannot continue: nothing asked
    diary = diary_text(root)
    assert "[cline-" in diary and f"asked: {PROMPT}" in diary
    assert "files: src/db.py" in diary and "commands: sed -i s/3/4/ src/db.py" in diary
    assert "pinky recall" not in diary and "linked to src/db.py" not in diary  # pinky's own context is left out
    assert output(run_host("cline", "stop", sent, root)) == {}
    assert diary_text(root) == diary  # the same session again: nothing new


def stop_hook_diary(root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The diary the plugin's afterRun writes, at the moment the session's last message was written."""
    path = session_store(root, home)
    messages = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))["messages"]
    moment = datetime.fromtimestamp(messages[-1]["ts"] / 1000).astimezone()

    class Clock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Clock:  # type: ignore[override]
            return moment  # type: ignore[return-value]

    cline = host("cline")
    cline.before_transcript(str(path))
    payload = {"session_id": f"cline:{SESSION}", "transcript_path": str(path), "cwd": str(root),
               "hook_event_name": "afterRun", "stop_hook_active": False}
    with monkeypatch.context() as patched:
        patched.setattr(recorder, "datetime", Clock)
        assert stop(payload, locate(env=os.environ, start=str(root)), StateFiles(),
                    translate=cline.translator(str(root))) is None
    return diary_text(root)


def import_sessions(root: Path) -> str:
    done = subprocess.run([*PINKY, "import-sessions"], capture_output=True, text=True, cwd=root, env=dict(os.environ),
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_sessions_writes_the_diary_the_stop_hook_writes_byte_for_byte(root: Path, home: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    expected = stop_hook_diary(root, home, monkeypatch)
    assert f"asked: {PROMPT}" in expected
    shutil.rmtree(root / "documentation" / "diary")  # back to a machine where pinky never ran
    Path(offsets_path(locate(env=os.environ, start=str(root)))).unlink()
    shutil.rmtree(home / ".cline")
    session_store(root, home)
    elsewhere = root.parent / "elsewhere"  # another project's session on the same machine
    elsewhere.mkdir()
    other = session_store(root, home, session="1796679999999_other", cwd=elsewhere)
    out = import_sessions(root)
    assert "took in 1 of 1 session" in out and "cline 1" in out, out
    assert not other.exists()  # another project's session folder is not written to
    assert diary_text(root) == expected
    assert "nothing new" in import_sessions(root)
    assert diary_text(root) == expected


def test_a_session_is_read_through_one_line_per_message_beside_it(root: Path, home: Path) -> None:
    """Cline pretty-prints a session's messages in one JSON document; pinky reads transcripts by lines."""
    path = session_store(root, home)
    cline = host("cline")
    cline.before_transcript(str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    messages = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))["messages"]
    assert len(lines) == len(messages) + 1 and json.loads(lines[0])["cwd"] == str(root)
    before = path.stat().st_mtime_ns
    cline.before_transcript(str(path))
    assert path.stat().st_mtime_ns == before  # nothing new: not written again
    events = [e for line in lines for e in cline.translator(None)(json.loads(line))]
    tools = [b["name"] for e in events if e["type"] == "assistant" for b in e["message"]["content"]]
    assert tools == ["mcp__pinky__brain_search", "Read", "Edit", "Bash", "Edit", "Edit", "mcp__pinky__brain_save"]
