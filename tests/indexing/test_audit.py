"""Issue 31 item 18: bytes flipped inside rows pass SQLite's integrity_check; `doctor --full` compares the
index with the markdown it is derived from and rebuilds what differs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, notes

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.store import vectors as store_vectors


def pinky(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, text=True, capture_output=True,
                          env=dict(os.environ), timeout=180)


@pytest.fixture
def brain(project: Path) -> dict[str, str]:
    words = notes(project / "documentation", 12)
    (project / "documentation/note").mkdir()
    (project / "documentation/note/quokka.md").write_text(
        "---\ntitle: Quokka cache flag\ntype: note\n---\nSet QUOKKAMARKER=1 before the warm-up.\n", encoding="utf-8")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    return words


def flip_everywhere(db: Path, needle: bytes, at: int, value: int) -> int:
    """Set byte `at` of every copy of `needle` in the file's pages to `value`; returns how many."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    found, start = 0, 0
    while (place := data.find(needle, start)) >= 0:
        data[place + at] = value
        found, start = found + 1, place + 1
    db.write_bytes(bytes(data))
    return found


def integrity_check(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def audit_line(project: Path) -> tuple[int, dict]:
    done = pinky("doctor", "--full", "--json", cwd=project)
    check = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "index integrity")
    return done.returncode, check


def test_text_no_longer_utf8_passes_integrity_check_and_is_rebuilt_from_the_file(project: Path,
                                                                                     brain: dict[str, str]) -> None:
    db = project / "brain.db"
    assert flip_everywhere(db, b"QUOKKAMARKER", 3, 0xFF) >= 2  # the entry's body, the chunk's text
    assert integrity_check(db) == "ok"
    code, check = audit_line(project)
    assert code == 1 and check["status"] == "error", check
    assert "documentation/note/quokka.md" in check["detail"] and "rebuilt those from the files" in check["detail"]
    code, check = audit_line(project)
    assert code == 0 and check["status"] == "ok" and "content audit" in check["detail"]
    with KnowledgeBase(load_config()) as kb:
        assert [h.slug for h in kb.search("QUOKKAMARKER").hits][:1] == ["note/quokka"]
        assert "QUOKKAMARKER=1" in kb.get("note/quokka").body


def test_a_damaged_vector_is_found_and_embedded_again(project: Path, brain: dict[str, str]) -> None:
    db = project / "brain.db"
    with KnowledgeBase(load_config()) as kb:
        chunk_id, blob = store_vectors.all_vectors(kb.index.conn)[3]
    assert flip_everywhere(db, blob[:64], 7, blob[7] ^ 0x40) == 1  # an exponent bit of the second float
    assert integrity_check(db) == "ok"
    with KnowledgeBase(load_config()) as kb:
        assert dict(store_vectors.all_vectors(kb.index.conn))[chunk_id] != blob
    code, check = audit_line(project)
    assert code == 1 and "1 vectors were malformed" in check["detail"], check
    with KnowledgeBase(load_config()) as kb:
        assert blob in dict(store_vectors.all_vectors(kb.index.conn)).values()  # the same text, the same vector again
        assert store_vectors.count_pending(kb.index.conn) == 0


def test_a_sound_index_is_left_as_it_is(project: Path, brain: dict[str, str]) -> None:
    from pinky.indexing.audit import audit

    before = (project / "brain.db").stat().st_mtime_ns
    with KnowledgeBase(load_config()) as kb:
        found = audit(kb.index)
        assert kb.verify(full=True) is None
    assert not found.damaged and found.summary() == ""
    assert (project / "brain.db").stat().st_mtime_ns == before
