"""Precision and recall of the candidate notes `pinky-brain import-sessions` offers (a script, not a test).

    python benchmarks/eval_import_candidates.py [--verbose]

Each case is one past session on a temporary machine: a session recorded from the real CLI (Claude Code's
rejected-writes.jsonl, Codex's rollout.jsonl: tests/capture/session_fixtures.py) followed a day later by a turn in
the same host's format where the learning is known: a planted fix after a failure (a test fails, a file is patched,
it passes), a planted correction by the user, or a turn that teaches nothing although it looks close (a flaky
rerun, a failing lookup, a failure never fixed, a polite "no thanks"). The Gemini CLI recording is a case of its own
(it saved what it learned: nothing to offer). The real `pinky-brain import-sessions` runs once over all of them;
a candidate is right when its session had a learning of that kind. Prints precision, recall, and every miss.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "capture"))

from helpers import console_script  # noqa: E402
from session_fixtures import FIXTURES, Session, claude_session, filled, gemini_session  # noqa: E402

from pinky.capture.diary import short_session  # noqa: E402

PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: {file}\n@@\n-a\n+b\n*** End Patch\nEOF"
FAIL = {"pytest": "E   AssertionError: expected 3 retries in src/db.py\nFAILED tests/test_db.py::test_retry",
        "npm": "TypeError: Cannot read properties of undefined (reading 'id')\n    at src/api.js:14:7",
        "cargo": "error[E0308]: mismatched types\n --> src/main.rs:9:5", "go": "--- FAIL: TestParse (0.00s)",
        "grep": "", "make": "make: *** [Makefile:12: build] Error 2",
        "ruff": "src/db.py:3:1: F401 [*] `os` imported but unused\nFound 1 error."}
# (label, the turn's prompt, its runs: (command, exit code, output key) or ("patch", file)); label: the kind of
# candidate it should give, or "" for a turn that teaches nothing.
CODEX_CASES = [
    ("fixed", "the db tests fail, fix them", [("pytest tests/test_db.py", 1, "pytest"), ("patch", "src/db.py"),
                                               ("pytest tests/test_db.py", 0, "")]),
    ("fixed", "npm test is red", [("npm test", 1, "npm"), ("patch", "src/api.js"), ("npm test", 0, "")]),
    ("fixed", "build is broken", [("cargo build", 1, "cargo"), ("patch", "src/main.rs"), ("cargo build", 0, "")]),
    ("fixed", "parser test", [("go test ./...", 1, "go"), ("patch", "parse.go"),
                              ("go test ./... -run TestParse", 0, "")]),
    ("fixed", "make fails", [("make build", 1, "make"), ("patch", "Makefile"), ("make build", 0, "")]),
    ("correction", "no, use the repository's retry helper instead of a loop", [("patch", "src/db.py")]),
    ("correction", "we never commit generated files; remove them", [("git status", 0, "")]),
    ("", "run the tests again", [("pytest tests/test_db.py", 1, "pytest"), ("pytest tests/test_db.py", 0, "")]),
    ("", "where is retry defined?", [("grep -rn retry_later src", 1, "grep"), ("grep -rn retry src", 0, "")]),
    ("", "try the build", [("cargo build", 1, "cargo"), ("patch", "src/main.rs"), ("cargo build", 1, "cargo")]),
    ("", "no thanks, that is all for today", [("git status", 0, "")]),
    ("", "add a docstring to db.py", [("patch", "src/db.py"), ("pytest tests/test_db.py", 0, "")]),
    # Written after the rules, to find where they fail: a correction without a telltale word, a lint fix, and a
    # request that reads like a correction.
    ("correction", "the config lives in settings.toml, please move it there", [("patch", "settings.toml")]),
    ("fixed", "lint is failing", [("ruff check src", 1, "ruff"), ("patch", "src/db.py"), ("ruff check src", 0, "")]),
    ("", "you should have a look at the README first, then summarise it", [("cat README.md", 0, "")]),
]
CLAUDE_CASES = [
    ("correction", "no, don't edit the generated client; change the schema and regenerate it"),
    ("correction", "that's wrong: the timeout is in milliseconds, not seconds"),
    ("correction", "always use the project's logger, never print"),
    ("", "tidy the two modules again please"),
    ("", "no problem, carry on with the next file"),
    ("", "what does the retry loop do?"),
]


def codex_case(root: Path, home: Path, n: int, prompt: str, runs: list[tuple]) -> Session:
    sid = f"{n:08x}-1111-4000-8000-000000000000"
    recorded = filled((FIXTURES / "codex" / "rollout.jsonl").read_text(encoding="utf-8"), root, home)
    recorded = recorded.replace("01a220ab-4f8b-7992-93b8-3e7bf8edf397", sid)
    when = datetime.fromisoformat(json.loads(recorded.splitlines()[0])["timestamp"]) + timedelta(days=1, minutes=n)
    stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    items: list[dict] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]
    for k, run in enumerate(runs):
        if run[0] == "patch":
            items.append({"type": "custom_tool_call", "name": "apply_patch", "call_id": f"p{k}",
                          "input": PATCH.format(file=run[1])})
            items.append({"type": "custom_tool_call_output", "call_id": f"p{k}", "output": "Success."})
            continue
        command, code, output = run
        items.append({"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": command}),
                      "call_id": f"c{k}"})
        items.append({"type": "function_call_output", "call_id": f"c{k}",
                      "output": f"Process exited with code {code}\nOutput:\n{FAIL.get(output, 'ok')}"})
    turn = "".join(json.dumps({"timestamp": stamp, "type": "response_item", "payload": i}) + "\n" for i in items)
    path = home / ".codex" / "sessions" / "2026" / "11" / "28" / f"rollout-2026-11-28T05-40-27-{sid}.jsonl"
    session = Session("codex", path, f"codex:{sid}", root, [recorded.encode(), turn.encode()])
    session.write()
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", action="store_true", help="print every candidate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eval-candidates-") as scratch:
        root, home = Path(scratch) / "proj", Path(scratch) / "home"
        (root / "documentation").mkdir(parents=True)
        (root / "pinky.toml").write_text("", encoding="utf-8")
        truth: dict[str, tuple[str, str]] = {}  # session tag -> (expected kind, the case's prompt)
        for n, (label, prompt, runs) in enumerate(CODEX_CASES):
            truth[short_session(codex_case(root, home, n, prompt, runs).session_id)] = (label, prompt)
        for n, (label, prompt) in enumerate(CLAUDE_CASES):
            session = claude_session(root, home, session_id=f"{n:08x}-2222-4000-8000-000000000000", prompt=prompt)
            session.write()
            truth[short_session(session.session_id)] = (label, prompt)
        gemini = gemini_session(root, home)
        gemini.write()
        truth[short_session(gemini.session_id)] = ("", "(the recorded Gemini CLI session)")
        env = {**os.environ, "HOME": str(home), "PINKY_HOME": str(Path(scratch) / "pinky-home"),
               "PINKY_HASH_EMBED": "1"}
        command = [*console_script("pinky-brain"), "import-sessions"]
        subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
        listed = json.loads(subprocess.run([*command, "--candidates", "--json"], cwd=root, env=env, check=True,
                                           capture_output=True, text=True).stdout)["candidates"]
    report(truth, listed, args.verbose)


def report(truth: dict[str, tuple[str, str]], listed: list[dict], verbose: bool) -> None:
    found = {item["session"]: item for item in listed}
    right = [tag for tag, item in found.items() if _matches(truth.get(tag, ("", ""))[0], item["kind"])]
    positives = [tag for tag, (label, _) in truth.items() if label]
    recalled = [tag for tag in positives if tag in right]
    precision = len(right) / len(found) if found else 1.0
    print(f"{len(truth)} sessions ({len(positives)} with a planted learning: "
          f"{sum(1 for t in positives if truth[t][0] == 'fixed')} fix after failure, "
          f"{sum(1 for t in positives if truth[t][0] == 'correction')} corrections)")
    print(f"candidates: {len(found)}; precision {precision:.0%} ({len(right)}/{len(found)}), "
          f"recall {len(recalled) / len(positives):.0%} ({len(recalled)}/{len(positives)})")
    for tag, (label, prompt) in truth.items():
        item = found.get(tag)
        wrong = (item is None) != (not label) or (item is not None and not _matches(label, item["kind"]))
        if wrong or verbose:
            got = f"{item['kind']}: {item['evidence']}" if item else "no candidate"
            print(f"  {'MISS ' if wrong else ''}{tag} expected {label or 'nothing'} ({prompt!r}); got {got}")


def _matches(label: str, kind: str) -> bool:
    return bool(label) and (kind == label or (label == "fixed" and kind == "error-fixed"))


if __name__ == "__main__":
    main()
