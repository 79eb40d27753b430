"""`pinky import` puts notes where the user asked: into the project it runs in (a `project:` field naming
the exporting project follows the note there) and, with `--root global`, into the global brain even when
this project holds the same text. Real CLI runs in two real project folders."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers import console_script

BODY = "The pool hangs on shutdown when a worker still holds a lease; close the workers first.\n"


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def new_project(path: Path) -> Path:
    path.mkdir(parents=True)
    pinky("init", cwd=path)
    return path


def slugs(cwd: Path, scope: str) -> list[str]:
    return [item["slug"] for item in json.loads(pinky("list", "--scope", scope, "--json", cwd=cwd).stdout)["entries"]]


def exported_from_alpha(tmp_path: Path) -> tuple[Path, Path]:
    """Project `alpha` with one saved gotcha (saved notes carry `project: alpha`), and its export."""
    alpha = new_project(tmp_path / "alpha")
    pinky("save", "-t", "Pool shutdown hangs", "--type", "gotcha", cwd=alpha, stdin=BODY)
    assert "project: alpha" in (alpha / "documentation/gotcha/pool-shutdown-hangs.md").read_text(encoding="utf-8")
    export = tmp_path / "alpha.jsonl"
    export.write_text(pinky("export", "--scope", "project", cwd=alpha).stdout, encoding="utf-8")
    return alpha, export


def test_a_note_imported_into_another_project_belongs_to_it(tmp_path: Path) -> None:
    _, export = exported_from_alpha(tmp_path)
    beta = new_project(tmp_path / "beta")
    done = pinky("import", str(export), cwd=beta)
    assert slugs(beta, "project") == ["gotcha/pool-shutdown-hangs"]  # listed under this project
    assert "imported 1 notes" in done.stdout
    assert "now in project:beta: gotcha/pool-shutdown-hangs (exported from project:alpha)" in done.stdout
    hits = json.loads(pinky("search", "pool shutdown", "--scope", "project", "--json", cwd=beta).stdout)
    assert [hit["slug"] for hit in hits["hits"]][:1] == ["gotcha/pool-shutdown-hangs"]
    text = (beta / "documentation/gotcha/pool-shutdown-hangs.md").read_text(encoding="utf-8")
    assert "project: beta\n" in text and "alpha" not in text and text.endswith(BODY)
    pinky("reindex", "--full", cwd=beta)  # the markdown says so: a rebuilt index agrees
    assert slugs(beta, "project") == ["gotcha/pool-shutdown-hangs"]
    again = json.loads(pinky("import", str(export), "--json", cwd=beta).stdout)
    assert again["imported"] == [] and again["duplicates"] == [
        {"slug": "gotcha/pool-shutdown-hangs", "same_as": "gotcha/pool-shutdown-hangs"}]


def test_import_into_the_same_project_keeps_the_file_byte_for_byte(tmp_path: Path) -> None:
    alpha, export = exported_from_alpha(tmp_path)
    before = (alpha / "documentation/gotcha/pool-shutdown-hangs.md").read_bytes()
    elsewhere = new_project(tmp_path / "copy" / "alpha")  # a fresh checkout of the same project
    report = json.loads(pinky("import", str(export), "--json", cwd=elsewhere).stdout)
    assert report["imported"] == ["gotcha/pool-shutdown-hangs"] and report["rescoped"] == []
    assert (elsewhere / "documentation/gotcha/pool-shutdown-hangs.md").read_bytes() == before


def test_import_root_global_inside_a_project_that_holds_the_text_fills_the_global_brain(tmp_path: Path) -> None:
    alpha, export = exported_from_alpha(tmp_path)
    done = json.loads(pinky("import", "--root", "global", str(export), "--json", cwd=alpha).stdout)
    assert done["imported"] == ["global/gotcha/pool-shutdown-hangs"] and done["duplicates"] == []
    assert slugs(alpha, "global") == ["global/gotcha/pool-shutdown-hangs"]
    assert slugs(alpha, "project") == ["gotcha/pool-shutdown-hangs"]  # the project's note is left alone
    again = json.loads(pinky("import", "--root", "global", str(export), "--json", cwd=alpha).stdout)
    assert again["imported"] == [] and again["duplicates"] == [
        {"slug": "gotcha/pool-shutdown-hangs", "same_as": "global/gotcha/pool-shutdown-hangs"}]
