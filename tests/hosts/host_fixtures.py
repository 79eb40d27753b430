"""The recorded host payloads (tests/fixtures/<host>/), their machine paths filled in, run through real
`pinky-hooks --host <host> <event>` processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import write_note
from hook_helpers import HOOKS, hook_env

from pinky.config import load_config
from pinky.kb import KnowledgeBase

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def filled(text: str, root: Path, home: Path) -> str:
    return text.replace("{PROJECT}", str(root)).replace("{HOME}", str(home))


def payload(host: str, name: str, root: Path, home: Path, **changes: object) -> dict:
    """tests/fixtures/<host>/[hooks/]<name>.json with the test's folders in place of the placeholders."""
    folder = FIXTURES / host
    path = folder / "hooks" / f"{name}.json" if (folder / "hooks").is_dir() else folder / f"{name}.json"
    return {**json.loads(filled(path.read_text(encoding="utf-8"), root, home)), **changes}


def transcript(host: str, name: str, root: Path, home: Path, where: str) -> Path:
    """The recorded transcript written where the hook payload says it is."""
    target = Path(where)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(filled((FIXTURES / host / name).read_text(encoding="utf-8"), root, home), encoding="utf-8")
    return target


def run_host(host: str, event: str, data: dict | str, root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    text = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run([*HOOKS, "--host", host, event], input=text, capture_output=True, text=True, cwd=root,
                          env=hook_env(root, **env), timeout=60)


def output(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    assert "pinky-hooks" not in result.stderr, result.stderr  # nothing failed open
    return json.loads(result.stdout) if result.stdout.strip() else {}


def make_brain(root: Path) -> Path:
    """A git project whose brain has a gotcha linked to src/db.py (by its files: and by the file's breadcrumb)."""
    (root / ".git" / "info").mkdir(parents=True)
    write_note(root, "pinky.toml", "")
    write_note(root, "documentation/gotcha/db-retries.md",
               "---\ntitle: DB retries need jitter\ntype: gotcha\nfiles: [src/db.py]\n---\n"
               "The db client retries without jitter; add it before touching the retry loop.\n")
    write_note(root, "src/db.py", "import os\n# Brain: db-retries\nprint(1)\n")
    write_note(root, "src/other.py", "print('nothing linked')\n")
    write_note(root, "AGENTS.md", "# Agents\n\nRun the tests with make test.\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    return root


def diary_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "documentation" / "diary").glob("*.md")))
