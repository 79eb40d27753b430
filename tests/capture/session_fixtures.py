"""A machine's past sessions for `pinky-brain import-sessions`, made of the transcripts recorded from the real CLIs
(tests/fixtures/claude-code/rejected-writes.jsonl from Claude Code 2.1.197, tests/fixtures/codex/rollout.jsonl from
Codex CLI 0.169.0, tests/fixtures/gemini/chat.jsonl from Gemini CLI 0.61.0), laid out where each host keeps them.

A session of several turns on several days is the recorded session followed by a second turn in the same host's
format, its timestamps a day later: a correction typed to Claude Code, a test that failed and passed after an edit in
Codex. Secrets are planted in prompts and commands (SECRETS), and a damaged line in the Codex rollout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE_ID = "18960e3f-6c59-40b1-bfd5-d8357cb20d50"
CODEX_ID = "01a220ab-4f8b-7992-93b8-3e7bf8edf397"
GEMINI_ID = "a7b8e3ee-567f-451c-bb44-52d1a7bfd502"
SECRETS = ("sk-ant-api03-" + "Qx7vB2mN9pL4kR8sT1wY6zA3cD5fG0hJ" * 2 + "AA",
           "ghp_" + "7Hk2Lm9Np4Qr8St1Vw6Xy3Za5Bc0De" + "Fg12",
           "AKIA" + "Z7Q4N2K9W3R8T5Y1")
CORRECTION = f"no, never use print for this; use the logging module instead. The key is {SECRETS[0]}"
_STAMP = re.compile(r'"(timestamp|startTime|lastUpdated)": ?"([^"]+)"')


def munged(folder: Path) -> str:
    """Claude Code's name for a cwd's sessions folder."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(folder))


def filled(text: str, root: Path, home: Path) -> str:
    return text.replace("{PROJECT}", str(root)).replace("{HOME}", str(home)).replace("/CWD", str(root))


def later(text: str, delta: timedelta) -> str:
    """Every timestamp of a transcript moved by `delta`."""
    def move(match: re.Match[str]) -> str:
        moment = datetime.fromisoformat(match.group(2)) + delta
        return f'"{match.group(1)}": "{moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")}"'
    return _STAMP.sub(move, text)


@dataclass
class Session:
    host: str
    path: Path
    session_id: str  # as the Stop hook is given it
    cwd: Path
    turns: list[bytes] = field(default_factory=list)  # the bytes each turn added to the file, in order

    def write(self, upto: int | None = None) -> None:
        """The file as it stood after `upto` turns (all by default)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"".join(self.turns[:upto]))


def _lines(text: str) -> bytes:
    return text.encode() if text.endswith("\n") else (text + "\n").encode()


def claude_session(root: Path, home: Path, session_id: str = CLAUDE_ID, prompt: str = CORRECTION,
                   days: int = 1) -> Session:
    """The recorded Claude Code session, then a correction a day later (its prompt carrying a secret)."""
    recorded = filled((FIXTURES / "claude-code" / "rejected-writes.jsonl").read_text(encoding="utf-8"), root, home)
    recorded = recorded.replace(CLAUDE_ID, session_id)
    typed = '"message":{"role":"user","content":"tidy the two modules"}'
    second = later(recorded, timedelta(days=days, hours=3)).replace(
        typed, f'"message":{{"role":"user","content":{json.dumps(prompt)}}}')
    # Its queue-operation lines (the prompt queued) keep the old prompt, and their time is the next turn's.
    path = home / ".claude" / "projects" / munged(root) / f"{session_id}.jsonl"
    return Session("claude", path, session_id, root, [_lines(recorded), _lines(second)])


def codex_fix_turn(cwd: Path, when: datetime, broken: str = "", pad: int = 0) -> str:
    """A Codex turn in the rollout's shape: pytest fails, src/db.py is patched, pytest passes."""
    stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    items = [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": f"the db tests fail, fix them (export GITHUB_TOKEN={SECRETS[1]})"}]}]
    for n, (cmd, code) in enumerate([("pytest tests/test_db.py", 1),
                                     ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/db.py\n@@\n-print(1)"
                                      "\n+print(2)\n*** End Patch\nEOF", 0),
                                     (f"AWS_ACCESS_KEY_ID={SECRETS[2]} pytest tests/test_db.py", 0)]):
        items += [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": cmd}),
                   "call_id": f"fix{n}"},
                  {"type": "function_call_output", "call_id": f"fix{n}", "output": f"Process exited with code {code}"
                   "\nOutput:\n" + ("E   AssertionError: retry count in src/db.py" if code else "1 passed")
                   + "\n" + "collected test output line\n" * (pad // 27)}]
    lines = [json.dumps({"timestamp": stamp, "type": "response_item", "payload": item}) for item in items]
    if broken:
        lines.insert(2, broken)
    return "\n".join(lines) + "\n"


def codex_session(root: Path, home: Path, session_id: str = CODEX_ID, cwd: Path | None = None,
                  remote: str | None = None) -> Session:
    """The recorded Codex rollout, then a fix after a failure a day later (with a damaged line)."""
    cwd = cwd or root
    recorded = filled((FIXTURES / "codex" / "rollout.jsonl").read_text(encoding="utf-8"), cwd, home)
    recorded = recorded.replace(CODEX_ID, session_id)
    if remote:
        recorded = recorded.replace('"git": {}', json.dumps({"git": {"repository_url": remote}})[1:-1], 1)
    first = json.loads(recorded.splitlines()[0])["timestamp"]
    second = codex_fix_turn(cwd, datetime.fromisoformat(first) + timedelta(days=1, hours=2), broken='{"timestamp": "2')
    path = home / ".codex" / "sessions" / "2026" / "11" / "28" / f"rollout-2026-11-28T05-40-27-{session_id}.jsonl"
    return Session("codex", path, f"codex:{session_id}", cwd, [_lines(recorded), _lines(second)])


def gemini_session(root: Path, home: Path, session_id: str = GEMINI_ID) -> Session:
    """The recorded Gemini CLI chat, one turn."""
    recorded = filled((FIXTURES / "gemini" / "chat.jsonl").read_text(encoding="utf-8"), root, home)
    recorded = recorded.replace(GEMINI_ID, session_id)
    path = home / ".gemini" / "tmp" / root.name / "chats" / f"session-2026-11-28T05-41-{session_id[:8]}.jsonl"
    return Session("gemini", path, f"gemini:{session_id}", root, [_lines(recorded)])


def machine(root: Path, home: Path) -> list[Session]:
    """The project's sessions from the three hosts, written."""
    sessions = [claude_session(root, home), codex_session(root, home), gemini_session(root, home)]
    for session in sessions:
        session.write()
    return sessions


def turn_end(turn: bytes) -> datetime:
    """When a turn's Stop fired: the moment of its last line that has one."""
    stamps = []
    for line in turn.decode().splitlines():
        try:
            stamps.append(json.loads(line)["timestamp"])
        except (ValueError, KeyError, TypeError):
            continue  # a damaged line, or one without a time of its own (Gemini's `$set`)
    return datetime.fromisoformat(stamps[-1])


def diary_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "documentation" / "diary").glob("*.md")))


def write_many_sessions(root: Path, home: Path, size: int, per_session: int = 4 << 20, pad: int = 20_000) -> int:
    """Codex sessions of this project holding about `size` bytes in all: the recorded rollout's first line, then
    turns that fail, patch and pass with long outputs, a minute apart, each session on a day of its own; the bytes
    written."""
    meta = filled((FIXTURES / "codex" / "rollout.jsonl").read_text(encoding="utf-8").splitlines()[0], root, home)
    start = datetime.fromisoformat(json.loads(meta)["timestamp"])
    written, n = 0, 0
    while written < size:
        sid = f"{n:08x}-0000-4000-8000-000000000000"
        path = home / ".codex" / "sessions" / "2026" / "11" / "28" / f"rollout-2026-11-28T05-40-27-{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            out.write(meta.replace(CODEX_ID, sid) + "\n")
            turn, length = 0, 0
            while length < per_session and written + length < size:
                length += out.write(codex_fix_turn(root, start + timedelta(days=n, minutes=turn), pad=pad))
                turn += 1
        written += path.stat().st_size
        n += 1
    return written
