"""`pinky list` and `pinky edit`: the everyday commands around single entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import console_script

PINKY = console_script("pinky")


def pinky(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PINKY, *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env={**os.environ, **env}, timeout=120)


def saved(project: Path, title: str, kind: str, *tags: str) -> None:
    args = [arg for tag in tags for arg in ("--tag", tag)]
    assert pinky("save", "-t", title, "--type", kind, *args, cwd=project, stdin=f"{title} body").returncode == 0


def test_list_filters_and_orders_newest_first(project: Path) -> None:
    saved(project, "First gotcha", "gotcha", "db")
    saved(project, "A pattern", "pattern", "db")
    saved(project, "Second gotcha", "gotcha", "net")
    os.utime(project / "documentation/gotcha/first-gotcha.md", (1, 1))  # an old file
    assert pinky("reindex", cwd=project).returncode == 0
    everything = json.loads(pinky("list", "--json", cwd=project).stdout)
    assert everything["count"] == 3 and everything["entries"][-1]["slug"] == "gotcha/first-gotcha"
    gotchas = json.loads(pinky("list", "--type", "gotcha", "--json", cwd=project).stdout)["entries"]
    assert [e["slug"] for e in gotchas] == ["gotcha/second-gotcha", "gotcha/first-gotcha"]
    tagged = json.loads(pinky("list", "--tag", "db", "--json", cwd=project).stdout)["entries"]
    assert {e["slug"] for e in tagged} == {"gotcha/first-gotcha", "pattern/a-pattern"}
    assert json.loads(pinky("list", "-n", "1", "--json", cwd=project).stdout)["count"] == 1
    text = pinky("list", "--type", "pattern", cwd=project).stdout
    assert "pattern/a-pattern" in text and "#db" in text
    assert pinky("list", "--scope", "global", cwd=project).stdout.strip() == "no entries"


def test_list_rejects_bad_limits_and_dates(project: Path) -> None:
    bad_limit = pinky("list", "-n", "0", cwd=project)
    assert bad_limit.returncode == 1 and "limit" in bad_limit.stderr
    bad_since = pinky("list", "--since", "last tuesday", cwd=project)
    assert bad_since.returncode == 1 and "since" in bad_since.stderr


def test_edit_opens_the_file_and_reindexes_it(project: Path, tmp_path: Path) -> None:
    saved(project, "Editable", "note")
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[-1], 'a').write('\\nAlso mind the zeppelin.\\n')\n")
    result = pinky("edit", "editable", cwd=project, EDITOR=f"{sys.executable} {editor}", VISUAL="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("reindexed note/editable")
    hits = json.loads(pinky("search", "zeppelin", "--json", cwd=project).stdout)["hits"]
    assert [h["slug"] for h in hits] == ["note/editable"]
    unchanged = pinky("edit", "editable", cwd=project, EDITOR="true", VISUAL="")
    assert unchanged.returncode == 0 and unchanged.stdout.startswith("unchanged")


def test_edit_of_an_unknown_entry_or_a_broken_editor_is_one_line(project: Path) -> None:
    missing = pinky("edit", "nope", cwd=project, EDITOR="true")
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1
    saved(project, "Exists", "note")
    broken = pinky("edit", "exists", cwd=project, EDITOR="/nonexistent/editor", VISUAL="")
    assert broken.returncode == 1 and len(broken.stderr.strip().splitlines()) == 1 and "editor" in broken.stderr.lower()
