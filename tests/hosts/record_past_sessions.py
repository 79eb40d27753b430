"""Record the past sessions `pinky-brain import-sessions` is tested on, with the real Copilot CLI, OpenCode and
Kilo Code CLI (an OpenCode fork: the same steps, its own database), offline.

    PINKY_TEST_HOSTS=1 .venv/bin/python tests/hosts/record_past_sessions.py copilot|opencode|kilo CLI OUTDIR

CLI is the pinned binary (tests/support/host_support.py installs it into .pytest_cache/d/<host>-<version>/). A fresh
HOME
and project (tests/support/host_support.py new_world), `pinky-brain setup <host>`, then one session of two prompts
against
tests/support/model_stand_in.py inside a loopback-only network namespace where allowed:

1. "the db check fails, fix it" (with a GitHub token in it): the model runs `python3 check_db.py` (fails: an
   AssertionError naming src/db.py), edits src/db.py, runs the check again with an AWS key in the command (passes);
2. the same session resumed with a user's correction (with an Anthropic key in it): the model views src/db.py;

and a second session that saves a note with brain_save. What lands in OUTDIR: the host's own session store (Copilot
CLI: `session-state/<id>/events.jsonl`; OpenCode: its SQLite database's rows of the sessions, as JSON lines), every
payload pinky's hooks were given (`hooks/NNN-<event>.json`), and the diary pinky's Stop hooks wrote; machine paths
made placeholders ({PROJECT}, {HOME}).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from host_support import World, new_world  # noqa: E402
from host_worlds import COPILOT_ENV, KNOWN, OPENCODE_ENV, SAVE, cli_env, configure  # noqa: E402

SECRETS = ("sk-ant-api03-" + "Qx7vB2mN9pL4kR8sT1wY6zA3cD5fG0hJ" * 2 + "AA",
           "ghp_" + "7Hk2Lm9Np4Qr8St1Vw6Xy3Za5Bc0De" + "Fg12",
           "AKIA" + "Z7Q4N2K9W3R8T5Y1")
FIX = f"the db check fails, fix it (export GITHUB_TOKEN={SECRETS[1]})"
CORRECTION = f"no, never use print for this; use the logging module instead. The key is {SECRETS[0]}"
SAVING = "Remember why the pool hangs on shutdown."
CHECK = ("import pathlib, sys\n"
         "text = pathlib.Path('src/db.py').read_text()\n"
         "if 'RETRIES = 3' not in text:\n"
         "    sys.exit('AssertionError: retry count in src/db.py')\n"
         "print('1 passed')\n")


def steps(host: str, project: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The model's tool calls: the first prompt's, then the correction's."""
    db = str(project / "src" / "db.py")
    if host == "copilot":
        edit = {"tool": "edit", "input": {"path": db, "old_str": "RETRIES = 1", "new_str": "RETRIES = 3"}}
        view = {"tool": "view", "input": {"path": db}}
    else:
        edit = {"tool": "edit", "input": {"filePath": db, "oldString": "RETRIES = 1", "newString": "RETRIES = 3"}}
        view = {"tool": "read", "input": {"filePath": db}}
    fix = [{"tool": "bash", "input": {"command": "python3 check_db.py", "description": "run the db check"}},
           edit,
           {"tool": "bash", "input": {"command": f"AWS_ACCESS_KEY_ID={SECRETS[2]} python3 check_db.py",
                                      "description": "run the db check again"}}]
    return fix, [view]


def relay_hooks(world: World, out: Path) -> None:
    """pinky-hooks behind a script that keeps each payload it is given, in order."""
    real = shutil.which("pinky-hooks", path=world.env["PATH"])
    assert real, "pinky-hooks is not on the world's PATH"
    folder = out / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = world.root / "bin" / "pinky-hooks"
    wrapper.parent.mkdir()
    wrapper.write_text("#!/bin/sh\n"
                       f'n=$(ls "{folder}" | wc -l); for last; do :; done\n'
                       f'f="{folder}/$(printf %03d "$n")-$last.json"\n'
                       f'cat > "$f"; exec "{real}" "$@" < "$f"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    world.env["PATH"] = f"{wrapper.parent}{os.pathsep}{world.env['PATH']}"
    for plugin in world.home.rglob("pinky-brain.js"):  # OpenCode's plugin names the command it runs
        text = plugin.read_text(encoding="utf-8").replace(json.dumps(real), json.dumps(str(wrapper)))
        plugin.write_text(text, encoding="utf-8")
    for config in world.home.rglob("hooks/pinky-brain.json"):  # Copilot CLI's hook entries
        config.write_text(config.read_text(encoding="utf-8").replace(real, str(wrapper)), encoding="utf-8")


def command(host: str, cli: str, prompt: str, resume: str | None) -> list[str]:
    if host == "copilot":
        return [cli, "-p", prompt, "--allow-all-tools", *(["--resume", resume] if resume else [])]
    return [cli, "run", prompt, *(["--session", resume] if resume else [])]


def session_ids(host: str, home: Path) -> list[str]:
    """The host's sessions, oldest first."""
    if host == "copilot":
        folders = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
        return [p.parent.name for p in folders]
    with sqlite3.connect(database(host, home)) as db:
        return [row[0] for row in db.execute("SELECT id FROM session ORDER BY time_created")]


def database(host: str, home: Path) -> Path:
    """OpenCode's SQLite database, or Kilo's (the same schema, under its own folder)."""
    return home / ".local" / "share" / host / f"{host}.db"


def record(host: str, cli: str, out: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"record-{host}-"))
    world = new_world(root, (host,), KNOWN)
    (world.project / "src").mkdir()
    (world.project / "src" / "db.py").write_text("import logging\n\nRETRIES = 1\nprint(RETRIES)\n", encoding="utf-8")
    (world.project / "check_db.py").write_text(CHECK, encoding="utf-8")
    configure(world, host)
    relay_hooks(world, out)
    env = {**(COPILOT_ENV if host == "copilot" else OPENCODE_ENV), **cli_env(host, cli), "PINKY_CAPTURE": "off"}
    fix, correct = steps(host, world.project)
    plays = [("fix", fix, FIX, False), ("correct", fix + correct, CORRECTION, True),
             ("save", [{"tool": "brain_save", "wait": 30, "input": SAVE}], SAVING, False)]
    for name, script, prompt, resumed in plays:
        resume = session_ids(host, world.home)[-1] if resumed else None
        done = world.session(name, script, command(host, cli, prompt, resume), env)
        print(name, done.returncode, f"{done.seconds:.0f} s", file=sys.stderr)
        assert done.returncode == 0, done.stderr[-3000:]
    keep(host, world, out)


TABLES = ("project", "session", "message", "part")  # OpenCode's tables that hold the conversation
SECRET_NAMES = ("{ANTHROPIC_KEY}", "{GITHUB_TOKEN}", "{AWS_KEY}")  # kept out of the repository as they are


def placeholders(text: str, world: World | None) -> str:
    """Machine paths and the planted secrets as placeholders; Copilot CLI's system prompt shortened."""
    if world is not None:
        text = text.replace(str(world.project), "{PROJECT}").replace(str(world.home), "{HOME}")
    for secret, name in zip(SECRETS, SECRET_NAMES, strict=True):
        text = text.replace(secret, name)
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith('{"type":"system.message"'):
            event = json.loads(line)
            event["data"]["content"] = event["data"]["content"][:200] + " [… shortened]"
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
        lines.append(line)
    return "".join(lines)


def keep(host: str, world: World, out: Path) -> None:
    """The session store, the hooks' payloads and the diary, with placeholders for the machine's paths."""
    if host == "copilot":
        for events in (world.home / ".copilot" / "session-state").glob("*/events.jsonl"):
            target = out / "session-state" / events.parent.name / "events.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(placeholders(events.read_text(encoding="utf-8"), world), encoding="utf-8")
    else:
        dump_opencode(database(host, world.home), out / f"{host}-db", world)
    for payload in (out / "hooks").glob("*.json"):
        payload.write_text(placeholders(payload.read_text(encoding="utf-8"), world), encoding="utf-8")
    diary = sorted((world.project / "documentation" / "diary").glob("*.md"))
    (out / "diary.md").write_text(placeholders("".join(p.read_text(encoding="utf-8") for p in diary), world),
                                  encoding="utf-8")


def dump_opencode(database: Path, folder: Path, world: World) -> None:
    """The tables of OpenCode's database that hold the sessions, as JSON lines (their schema beside)."""
    folder.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        schema = "".join(row[0] + ";\n" for row in db.execute(
            f"SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN {TABLES}"))  # noqa: S608 - constants
        (folder / "schema.sql").write_text(placeholders(schema, world), encoding="utf-8")
        for table in TABLES:
            rows = [dict(row) for row in db.execute(f'SELECT * FROM "{table}"')]  # noqa: S608 - names from sqlite
            if rows:
                lines = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
                (folder / f"{table}.jsonl").write_text(placeholders(lines, world), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("copilot", "opencode", "kilo"):
        sys.exit(__doc__)
    record(sys.argv[1], sys.argv[2], Path(sys.argv[3]).resolve())
