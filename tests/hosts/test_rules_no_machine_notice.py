"""A broken host entry of this machine is said on stderr, never written into a rules file the repository commits."""

from __future__ import annotations

import json
from pathlib import Path

from host_fixtures import make_brain, payload, run_host


def test_a_rules_file_the_repository_commits_gets_no_notice_about_this_machine(tmp_path: Path) -> None:
    """Cursor's digest goes into .cursor/rules/pinky-brain.mdc: a broken entry of this machine is said on stderr,
    never written into a file with this machine's paths."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    gone = tmp_path / "gone" / "bin" / "pinky-hooks"
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"{gone} --host codex session-start"}]}]}}))
    root = tmp_path / "proj"
    root.mkdir()
    make_brain(root)
    ran = run_host("cursor", "session-start", payload("cursor", "sessionStart", root, home), root, HOME=str(home),
                   CODEX_HOME=str(home / ".codex"))
    assert ran.returncode == 0 and "run `pinky-brain setup codex`" in ran.stderr, ran.stderr
    rules = (root / ".cursor" / "rules" / "pinky-brain.mdc").read_text()
    assert str(gone) not in rules and "pinky-brain setup codex" not in rules
