"""Transcripts that once stopped the Stop and PreCompact hooks: poison lines, and long ones built at run time.

POISON holds one bad line per case, shaped like the event it would have been (a prompt, a Bash call, an
Edit, a commit, a tool result) with a lone surrogate escape where a string cut inside an emoji puts it,
or nested 1,000 deep, or not UTF-8, or cut short. The tool output is a failure then fixed by an edit, so
its error line, surrogate and all, is what the capture ask would quote. `poisoned` wraps a case in turns
that must all be recorded. `failing_commands` and `write_long_transcript` build the large transcripts of
the scaling checks and of benchmarks/bench_capture.py (never committed). Not a test module; tests import
it like conftest's helpers.
"""

from __future__ import annotations

import json
from pathlib import Path

CUT_EMOJI = "\ud83d"  # the first half of 😀: what a string cut between the two serialises to


def prompt(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


def tool_call(tool_id: str, name: str, tool_input: dict) -> dict:
    return {"type": "assistant", "cwd": "/p", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}}


def tool_result(tool_id: str, output: str, error: bool = False) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": error}]}}


def line(event: dict) -> bytes:
    return json.dumps(event).encode() + b"\n"  # ensure_ascii: a lone surrogate becomes the escape \ud83d


POISON: dict[str, bytes] = {
    "prompt": line(prompt(f"why does the emoji {CUT_EMOJI} break")),
    "bash command": line(tool_call("tb", "Bash", {"command": f"echo '{CUT_EMOJI}' > out.txt"})),
    "file path": line(tool_call("te", "Edit", {"file_path": f"/p/notes-{CUT_EMOJI}.md", "old_string": "a",
                                               "new_string": "b"})),
    "commit message": line(tool_call("tc", "Bash", {"command": f'git commit -m "Fix the {CUT_EMOJI} label"'})),
    "tool output": line(tool_call("to", "Bash", {"command": "pytest tests/test_labels.py"}))
    + line(tool_result("to", f"Exit code 1\nE   AssertionError in src/labels.py: {CUT_EMOJI}", error=True))
    + line(tool_call("tl", "Edit", {"file_path": "/p/src/labels.py", "old_string": "a", "new_string": "b"}))
    + line(tool_call("tp", "Bash", {"command": "pytest tests/test_labels.py"})) + line(tool_result("tp", "1 passed")),
    "deep json": b'{"type":"user","message":{"role":"user","content":' + b"[" * 1000 + b"]" * 1000 + b"}}\n",
    "invalid utf-8": b'{"type":"user","message":{"role":"user","content":"caf\xe9 \xff\xfe"}}\n',
    "truncated line": line(prompt("a prompt cut short by a crash"))[:30] + b"\n",
}
BEFORE = ("turn one adds the parser", "turn two adds its tests", "turn three fixes the lexer")
AFTER = ("turn five renames the module", "turn six updates the docs", "turn seven bumps the version")


def turn(number: int, text: str) -> bytes:
    return line(prompt(text)) + line(tool_call(f"t{number}", "Bash", {"command": f"make step{number}"})) \
        + line(tool_result(f"t{number}", "ok"))


def poisoned(bad: bytes) -> bytes:
    """Three turns, the bad line, three more turns; the last says "We'll use ..." (a checkpoint decision)."""
    after = b"".join(turn(5 + i, text) for i, text in enumerate(AFTER))
    decision = line({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "We'll use semantic versioning for the releases."}]}})
    return b"".join(turn(1 + i, text) for i, text in enumerate(BEFORE)) + bad + after + decision


def failing_commands(n: int) -> list[dict]:
    """A turn of `n` test runs that all fail: the worst case of the capture's command matching."""
    events = []
    for i in range(n):
        tool_id = f"toolu_{i:06d}"
        events.append(tool_call(tool_id, "Bash", {"command": f"pytest tests/test_orders.py -k case_{i}"}))
        events.append(tool_result(tool_id, f"Exit code 1\nE   AssertionError: expected 3, got 4 (src/orders.py:{i})",
                                  error=True))
    return events


WORDS = ("pool timeout retry cache index vector query schema migration lock thread socket parser token "
         "config deploy build release worker queue session cookie header proxy encoder").split()


def write_long_transcript(path: Path, size: int) -> int:
    """A transcript of at least `size` bytes of varied turns (prompt, text with a decision now and then, an
    edit, a command and its output); returns the number of turns. Fast: lines are formatted, not dumped."""
    n = 0
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < size:
            n += 1
            words = " ".join(WORDS[(n * 7 + i) % len(WORDS)] for i in range(40))
            cue = f"We'll use the {WORDS[n % len(WORDS)]} cache for step {n}. " if n % 50 == 0 else ""
            handle.write(json.dumps(prompt(f"please fix thing {n} {words}")) + "\n")
            handle.write(json.dumps({"type": "assistant", "cwd": "/p", "message": {"role": "assistant", "content": [
                {"type": "text", "text": cue + words * 2},
                {"type": "tool_use", "id": f"e{n}", "name": "Edit",
                 "input": {"file_path": f"/p/src/f{n % 50}.py", "old_string": "a" * 200, "new_string": "b" * 200}},
                {"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": f"pytest -k t{n % 9}"}}]}})
                + "\n")
            handle.write(json.dumps(tool_result(f"b{n}", f"{n % 9} passed\n" + words * 3)) + "\n")
    return n


def edits_recorded(diary: str) -> int:
    """How many Edit calls the diary's `tools:` lines count, over every batch: equal to the turns of a
    `write_long_transcript` transcript when each was recorded once."""
    return sum(int(part.split("×")[1]) for line in diary.splitlines() if " tools: " in line
               for part in line.split(" tools: ")[1].split(", ") if part.startswith("Edit×"))
