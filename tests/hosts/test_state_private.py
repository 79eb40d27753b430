"""`$PINKY_HOME/state` is the owner's alone, redacted like the diary, and bounded.

What it holds came from the user: the original bytes of a 0600 `~/.claude.json` (setup), the prompts and shell
commands of hosts without a transcript (the hook journals of Cursor, Copilot CLI, OpenCode and Windsurf), which
projects they opened. Driven through the real `pinky-brain setup` and real `pinky-hooks --host` processes fed
the hosts' payloads (tests/fixtures/<host>/), with the owner's umask at 000; read back by a real second user
(`nobody`, through setpriv) who can reach the folder above `$PINKY_HOME`.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import base, run_hook
from host_fixtures import diary_text, make_brain, output, payload, run_host, transcript

from pinky.hooks.journal import MAX_AGE_DAYS, MAX_BYTES

AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")
GITHUB_TOKEN = "ghp_" + "R8fK2mQ9xT4vL7wN1pB6yH3cJ5dG0sAzE2u"
OPENAI_KEY = "sk-proj-" + "Q4mZ7vR4tL8wN3pB6yH1cJ5dG0sAx9fQ2mZ7"
BARE_KEY = "Xk9fQ2mZ7vR4tL8wN3pB6yH1cJ5dG0sA"  # pasted without a label: the diary's unlabelled pass
DB_PASSWORD = "S3cret-Pa55word"
SECRETS = (GITHUB_TOKEN, OPENAI_KEY, BARE_KEY, DB_PASSWORD)


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder every user may enter (not pytest's 0700 tmp), holding the project, HOME and PINKY_HOME."""
    top = Path(tempfile.mkdtemp(prefix="pinky-state-", dir="/tmp"))
    top.chmod(0o755)
    old = os.umask(0)  # the owner's processes: what pinky makes private, it makes so whatever the umask
    try:
        (top / "home").mkdir()
        make_brain(top / "proj")
        yield top
    finally:
        os.umask(old)
        shutil.rmtree(top, ignore_errors=True)


def hosts_env(world: Path) -> dict[str, str]:
    return {"PINKY_HOME": str(world / "pinky"), "HOME": str(world / "home")}


def host(world: Path, name: str, event: str, fixture: str, **changes: object) -> dict:
    data = payload(name, fixture, world / "proj", world / "home", **changes)
    return output(run_host(name, event, data, world / "proj", **hosts_env(world)))


def setup_claude(world: Path) -> None:
    claude = world / "home" / ".claude.json"
    claude.write_text(json.dumps({"oauthAccount": {"emailAddress": "me@example.com"},
                                  "env": {"GITHUB_TOKEN": GITHUB_TOKEN}}))
    claude.chmod(0o600)
    env = {**os.environ, **hosts_env(world), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    result = subprocess.run([*console_script("pinky-brain"), "setup", "claude"], env=env, cwd=world / "home",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def secret_prompts(world: Path) -> None:
    """A prompt, shell commands and a file edit holding secrets, through Cursor and Windsurf (the hosts that give
    their hooks no transcript, so pinky keeps a journal; Copilot CLI's events.jsonl is its own)."""
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt",
         prompt=f"deploy with OPENAI_API_KEY={OPENAI_KEY}; the other one is {BARE_KEY}")
    host(world, "cursor", "post-tool", "afterFileEdit")
    command = f"export GITHUB_TOKEN={GITHUB_TOKEN} && curl -H 'Authorization: Bearer {GITHUB_TOKEN}' api.github.com"
    for line in (command, f"mysql -u root -p{DB_PASSWORD} app < dump.sql"):
        run = payload("windsurf", "post_run_command", world / "proj", world / "home")
        run["tool_info"]["command_line"] = line
        output(run_host("windsurf", "post-tool", run, world / "proj", **hosts_env(world)))


def journals(world: Path) -> dict[str, str]:
    folder = world / "pinky" / "state" / "hooks" / "journal"
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.jsonl"))}


def readable_by_nobody(paths: list[Path]) -> list[str]:
    """Which of `paths` the user `nobody` can open (files) or list (folders)."""
    script = 'for f; do if [ -d "$f" ]; then ls "$f"; else cat "$f"; fi >/dev/null 2>&1 && echo "$f"; done; exit 0'
    result = subprocess.run([*AS_NOBODY, "sh", "-c", script, "sh", *map(str, paths)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def needs_a_second_user() -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("a second user needs root and setpriv")
    if subprocess.run([*AS_NOBODY, "true"], capture_output=True).returncode != 0:
        pytest.skip("setpriv cannot run a command as nobody here")


def test_no_state_file_or_folder_is_anyone_else_s(world: Path) -> None:
    needs_a_second_user()
    setup_claude(world)
    secret_prompts(world)
    stop = payload("codex", "Stop", world / "proj", world / "home")
    transcript("codex", "rollout.jsonl", world / "proj", world / "home", stop["transcript_path"])
    output(run_host("codex", "stop", stop, world / "proj", **hosts_env(world)))
    started = run_hook("session-start", base(world / "proj", "SessionStart", source="startup"), world / "proj",
                       **hosts_env(world))
    assert started.returncode == 0, started.stderr
    state = world / "pinky" / "state"
    files = [p for p in state.rglob("*") if p.is_file()]
    folders = [state, *(p for p in state.rglob("*") if p.is_dir())]
    names = {p.relative_to(state).as_posix() for p in files}
    assert {"setup/files.json", "diary-offsets.json", "hooks/sessions.json"} <= names, names
    assert sum(name.startswith("hooks/journal/") for name in names) == 2, names
    wide = {p.relative_to(world).as_posix(): oct(stat.S_IMODE(p.stat().st_mode))
            for p in [*files, *folders] if stat.S_IMODE(p.stat().st_mode) not in (0o600, 0o700)}
    assert not wide, f"not the owner's alone: {wide}"
    assert (world / "pinky").stat().st_mode & 0o005  # the second user can reach PINKY_HOME itself: a real test
    assert readable_by_nobody([*files, *folders]) == []
    assert GITHUB_TOKEN in (state / "setup" / "files.json").read_text()  # the bytes setup gives back: kept, private


def test_state_an_older_pinky_left_open_is_tightened_at_the_next_write(world: Path) -> None:
    state = world / "pinky" / "state"
    (state / "setup").mkdir(parents=True, mode=0o755)
    (state / "hooks" / "journal").mkdir(parents=True, mode=0o755)
    (state / "setup" / "files.json").write_text("{}\n")
    old = state / "hooks" / "journal" / "cursor-c0ffee00-1111-2222-3333-444455556666.jsonl"
    old.write_text(json.dumps({"type": "user", "message": {"content": "an older prompt"}}) + "\n")
    for path in (state / "setup" / "files.json", old):
        path.chmod(0o644)
    setup_claude(world)
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt")
    for path in (state / "setup" / "files.json", old):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in (state, state / "setup", state / "hooks", state / "hooks" / "journal"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_the_journal_keeps_prompts_and_commands_redacted_like_the_diary(world: Path) -> None:
    secret_prompts(world)
    kept = journals(world)
    assert len(kept) == 2
    text = "".join(kept.values())
    assert [secret for secret in SECRETS if secret in text] == []
    assert "[REDACTED:" in text and "deploy with OPENAI_API_KEY=" in text and "mysql -u root" in text
    assert "curl -H" in text and "api.github.com" in text  # what is not a secret stays
    host(world, "cursor", "stop", "stop")
    diary = diary_text(world / "proj")
    assert "asked: deploy with OPENAI_API_KEY=" in diary and not [s for s in SECRETS if s in diary]


def test_a_journal_the_diary_has_recorded_is_emptied_and_nothing_is_recorded_twice(world: Path) -> None:
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt", prompt="fix the retry in src/db.py")
    host(world, "cursor", "post-tool", "afterFileEdit")
    (name, text), = journals(world).items()
    assert "fix the retry" in text
    host(world, "cursor", "stop", "stop")
    assert journals(world) == {name: ""}
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt", prompt="now document the retry")
    assert "now document the retry" in journals(world)[name]
    host(world, "cursor", "stop", "stop")
    diary = diary_text(world / "proj")
    assert diary.count("asked: fix the retry in src/db.py") == 1
    assert diary.count("asked: now document the retry") == 1
    assert journals(world) == {name: ""}


def test_a_journal_stops_growing_at_its_cap(world: Path) -> None:
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt")
    (path,) = (world / "pinky" / "state" / "hooks" / "journal").glob("*.jsonl")
    line = json.dumps({"type": "user", "message": {"content": "x" * 1000}}) + "\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line * (MAX_BYTES // len(line) + 1))
    size = path.stat().st_size
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt", prompt="one prompt more")
    assert path.stat().st_size == size


def test_journals_of_sessions_long_ended_are_deleted(world: Path) -> None:
    host(world, "cursor", "user-prompt", "beforeSubmitPrompt")
    folder = world / "pinky" / "state" / "hooks" / "journal"
    now = time.time()
    ended, recent = folder / "cursor-0ld5e55i0n.jsonl", folder / "copilot-yesterday.jsonl"
    for path, age_days in ((ended, MAX_AGE_DAYS + 1), (recent, 1)):
        path.write_text(json.dumps({"type": "user", "message": {"content": "hello"}}) + "\n")
        os.utime(path, (now - age_days * 86400, now - age_days * 86400))
    host(world, "cursor", "stop", "stop")
    assert not ended.exists() and recent.exists()
