"""Bad files and bad input: each gets one clear line, nothing is half-done, nothing binary is indexed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note

from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.kb import KnowledgeBase

PINKY = console_script("pinky")


def pinky(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PINKY, *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env={**os.environ, **env}, timeout=120)


def test_binary_and_non_utf8_files_are_skipped_with_a_reason(project: Path) -> None:
    docs = project / "documentation"
    (docs / "note").mkdir(parents=True)
    (docs / "note/image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (docs / "note/latin1.md").write_bytes("# Café\n\nRésumé en français.\n".encode("latin-1"))
    write_note(docs, "note/fine.md", "# Fine\n\nA readable note.\n")
    report = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert report["added"] == 1
    assert sorted(e.split(":")[0] for e in report["errors"]) == ["documentation/note/image.md",
                                                                  "documentation/note/latin1.md"]
    assert any("binary" in e for e in report["errors"]) and any("UTF-8" in e for e in report["errors"])
    again = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert len(again["errors"]) == 2 and again["added"] == 0  # said again, not read again
    assert pinky("get", "note/image", cwd=project).returncode == 1  # never indexed, never dumped
    checks = {c["name"]: c for c in json.loads(pinky("doctor", "--json", cwd=project).stdout)["checks"]}
    assert checks["unreadable files"]["status"] == "warn" and "image.md" in checks["unreadable files"]["detail"]
    (docs / "note/latin1.md").write_text("# Café\n\nNow UTF-8.\n", encoding="utf-8")
    fixed = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert fixed["added"] == 1 and len(fixed["errors"]) == 1
    assert json.loads(pinky("search", "café", "--json", cwd=project).stdout)["hits"][0]["slug"] == "note/latin1"


def test_a_note_that_turns_binary_leaves_the_index(project: Path) -> None:
    note = write_note(project / "documentation", "note/was-text.md", "# Was text\n\nzebrafish\n")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        assert kb.search("zebrafish").hits
        note.write_bytes(b"\x00" * 64)
        assert kb.index_file(note) is None
        assert not kb.search("zebrafish").hits and "binary" in kb.health.skipped()[0]


def test_an_unknown_type_is_indexed_as_a_note_with_a_warning(project: Path) -> None:
    write_note(project / "documentation", "misc/fruit.md", "---\ntitle: Fruit\ntype: banana\n---\nYellow.\n")
    report = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert report["added"] == 1 and report["errors"] == []
    assert report["warnings"] and "misc/fruit.md" in report["warnings"][0] and "banana" in report["warnings"][0]
    assert json.loads(pinky("get", "misc/fruit", "--json", cwd=project).stdout)["type"] == "note"
    plain = pinky("reindex", cwd=project)
    assert plain.returncode == 0


def test_empty_bodies_are_refused(project: Path) -> None:
    refused = pinky("save", "-t", "Nothing", cwd=project, stdin="  \n")
    assert refused.returncode == 1 and refused.stderr.strip() == "Error: body must not be empty"
    assert not (project / "documentation/note").exists()
    with KnowledgeBase(load_config()) as kb, pytest.raises(InvalidInput, match="body"):
        kb.save("Title", "")


def test_a_closed_pipe_is_quiet(project: Path) -> None:
    for n in range(5):
        assert pinky("save", "-t", f"Pipe note {n}", cwd=project, stdin=f"pipe body {n} " * 50).returncode == 0
    shell = shutil.which("bash")
    if shell is None:
        pytest.skip("needs bash for a pipeline")
    command = " ".join(PINKY) + " search pipe | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}"
    result = subprocess.run([shell, "-c", command], cwd=project, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() in ("0", "141") and "Traceback" not in result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize("args", [("search",), ("search", "x", "--limit", "abc"), ("save",), ("frobnicate",),
                                  ("search", "x", "--type", "banana")])
def test_usage_errors_are_one_line(project: Path, args: tuple[str, ...]) -> None:
    result = pinky(*args, cwd=project, stdin="body")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "--help" in lines[0], result.stderr


def test_a_bad_marker_is_one_clear_line(project: Path) -> None:
    (project / "pinky.toml").write_text("save_dir = [unclosed\n")
    result = pinky("stats", cwd=project)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()] and "pinky.toml" in result.stderr
    (project / "pinky.toml").write_text('colour = "blue"\n')
    assert "unknown setting 'colour'" in pinky("stats", cwd=project).stderr


def test_stats_on_a_new_index_says_there_are_no_vectors_yet(project: Path) -> None:
    result = pinky("stats", cwd=project)
    assert result.returncode == 0 and "0 dims" not in result.stdout and "no vectors yet" in result.stdout
