"""The folder and the type agree: a note moved into a type folder takes its type, as `pinky save` files a
type in its folder; moved elsewhere it keeps the type it had, and `pinky update --type` says where such a
note belongs. Real CLI runs on a real project."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers import console_script, write_note


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def types(project: Path) -> dict[str, str]:
    listed = json.loads(pinky("list", "--json", cwd=project).stdout)["entries"]
    return {item["slug"]: item["type"] for item in listed}


def test_mv_into_another_type_folder_takes_its_type_and_says_so(project: Path) -> None:
    pinky("save", "-t", "Pool choice", "--type", "gotcha", cwd=project, stdin="We pick pgbouncer.\n")
    pinky("save", "-t", "Other", "--type", "note", cwd=project, stdin="See [[gotcha/pool-choice]].\n")
    done = pinky("mv", "gotcha/pool-choice", "decision/pool-choice", cwd=project)
    assert types(project)["decision/pool-choice"] == "decision"
    text = (project / "documentation/decision/pool-choice.md").read_text(encoding="utf-8")
    assert "type: decision\n" in text and "gotcha" not in text and text.endswith("We pick pgbouncer.\n")
    assert "type: gotcha -> decision (a note in decision/ is a decision" in done.stdout
    assert "[[decision/pool-choice]]" in (project / "documentation/note/other.md").read_text(encoding="utf-8")
    again = json.loads(pinky("mv", "decision/pool-choice", "decisions/pool-pick", "--json", cwd=project).stdout)
    assert again["retyped"] is None and types(project)["decisions/pool-pick"] == "decision"  # the same type


def test_a_rename_in_its_folder_or_a_move_out_of_type_folders_keeps_the_type(project: Path) -> None:
    pinky("save", "-t", "Retry", "--type", "gotcha", cwd=project, stdin="Retry with jitter.\n")
    hint = pinky("update", "gotcha/retry", "--type", "pattern", cwd=project).stdout
    assert "it is a pattern in gotcha/, the folder of gotchas; `pinky-brain mv gotcha/retry pattern/retry`" in hint
    pinky("mv", "gotcha/retry", "gotcha/retry-jitter", cwd=project)  # renamed where it is: chosen type kept
    assert types(project)["gotcha/retry-jitter"] == "pattern"
    write_note(project / "documentation", "gotcha/by-folder.md", "# Typed by its folder\n\nNo type: field.\n")
    pinky("reindex", cwd=project)
    assert types(project)["gotcha/by-folder"] == "gotcha"
    done = json.loads(pinky("mv", "gotcha/by-folder", "misc/by-folder", "--json", cwd=project).stdout)
    assert done["retyped"] is None and types(project)["misc/by-folder"] == "gotcha"  # not silently a note
    assert "type: gotcha\n" in (project / "documentation/misc/by-folder.md").read_text(encoding="utf-8")
