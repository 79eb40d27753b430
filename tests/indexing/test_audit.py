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


# --- issue 35 item 11: flips that leave a vector finite and of unit length ------------------------------------

# (which stored vector, which of its non-zero floats, which bit of that float's lowest byte): the lowest mantissa
# bits, each moving one component by ~1e-7 of its size, so the vector stays finite and of unit length to ~1e-7
LOW_FLIPS = [(0, 0, 0), (1, 3, 1), (2, 5, 2), (3, 7, 3), (4, 1, 0), (5, 2, 4), (6, 4, 7)]


def vectors_by_place(project: Path) -> dict[tuple[str, int], bytes]:
    """Every stored vector by its chunk's entry and place in it: what two indexes of one brain must share."""
    with KnowledgeBase(load_config()) as kb:
        rows = kb.index.conn.execute(f"SELECT c.entry_id, c.ord, v.embedding FROM chunk c JOIN "
                                     f"{store_vectors.VEC_TABLE} v ON v.chunk_id = c.id").fetchall()
    return {(entry, order): bytes(blob) for entry, order, blob in rows}


def flip_low_bit(db: Path, blob: bytes, nth: int, bit: int) -> bytes:
    """Flip one bit of the lowest byte of the `nth` non-zero float of the vector stored as `blob`, in the
    file's pages (found by a stretch of the vector around it that occurs once in the file); the vector as it
    now reads."""
    import numpy as np

    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    nonzero = np.flatnonzero(np.frombuffer(blob, dtype=np.float32))
    offset = 4 * int(nonzero[nth % len(nonzero)])
    data = db.read_bytes()
    for width in (64, 128, 256, 512, len(blob)):
        start = max(0, min(offset - width // 2, len(blob) - width))
        needle = blob[start:start + width]
        if data.count(needle) == 1:
            break
    assert flip_everywhere(db, needle, offset - start, blob[offset] ^ (1 << bit)) == 1
    changed = bytearray(blob)
    changed[offset] ^= 1 << bit
    return bytes(changed)


def test_low_bit_flips_in_vectors_are_found_and_embedded_again(project: Path, brain: dict[str, str]) -> None:
    """Each of 7 single low-bit flips, one at a time: the vector still looks sound (finite, unit length),
    `doctor --full` finds it by its checksum and embeds it again, and the index is then the undamaged one."""
    import numpy as np

    db = project / "brain.db"
    undamaged = vectors_by_place(project)
    for which, component, bit in LOW_FLIPS:
        with KnowledgeBase(load_config()) as kb:
            chunk_id, blob = sorted(map(tuple, store_vectors.all_vectors(kb.index.conn)))[which]
        damaged = flip_low_bit(db, blob, component, bit)
        vector = np.frombuffer(damaged, dtype=np.float32)
        assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1) < 1e-6  # silent damage
        assert integrity_check(db) == "ok"
        with KnowledgeBase(load_config()) as kb:
            assert dict(store_vectors.all_vectors(kb.index.conn))[chunk_id] == damaged
        code, check = audit_line(project)
        assert code == 1 and "1 vectors no longer matched the checksum" in check["detail"], (which, check)
        assert vectors_by_place(project) == undamaged, which
        code, check = audit_line(project)
        assert code == 0 and check["status"] == "ok", check


def test_a_damaged_vector_is_not_handed_on_to_the_same_text(project: Path, brain: dict[str, str]) -> None:
    """A note edited around an unchanged paragraph: its new chunk takes the old chunk's vector without
    embedding again, unless that vector no longer matches its checksum. A plain reindex, no doctor."""
    db = project / "brain.db"
    note = project / "documentation/note/quokka.md"
    undamaged = vectors_by_place(project)
    with KnowledgeBase(load_config()) as kb:
        (entry_id,) = kb.index.conn.execute("SELECT entry_id FROM chunk WHERE text LIKE '%QUOKKAMARKER%'").fetchone()
        chunk_id, blob = next((i, v) for i, v in sorted(map(tuple, store_vectors.all_vectors(kb.index.conn)))
                              if i in {r[0] for r in kb.index.conn.execute(
                                  "SELECT id FROM chunk WHERE entry_id = ?", (entry_id,))})
    flip_low_bit(db, blob, 2, 0)
    note.write_text(note.read_text(encoding="utf-8").replace("type: note\n", "type: note\ntags: [cache]\n"),
                    encoding="utf-8")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    after = vectors_by_place(project)
    assert {place: after[place] for place in undamaged if place[0] == entry_id} == \
        {place: vector for place, vector in undamaged.items() if place[0] == entry_id}
