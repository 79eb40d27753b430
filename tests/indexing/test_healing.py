"""The index heals itself and edits do not race (issue 10, items 4-6): a full rebuild or a repair is
seen by every process that has the index open, a damaged index is rebuilt from the markdown
wherever the damage shows, and two writers racing on one note never both win."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import console_script, damage, deleted_files_open, notes

from pinky.config import load_config
from pinky.errors import IndexUnavailable
from pinky.kb import KnowledgeBase


def pinky(*args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=120)


def hits(kb: KnowledgeBase, query: str) -> list[str]:
    return [h.slug for h in kb.search(query).hits]


@pytest.fixture
def brain(project: Path) -> dict[str, str]:
    """A project of 60 notes of ~300 words, indexed: {unique word: slug}."""
    words = notes(project / "documentation", 60)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    return words


# --- item 4: a full rebuild or a repair is seen by processes that have the index open --------------


def test_a_full_rebuild_is_seen_by_a_process_that_has_the_index_open(project: Path, brain: dict[str, str]) -> None:
    server = KnowledgeBase(load_config(), cache_vectors=True)  # what pinky-mcp holds
    word, slug = next(iter(brain.items()))
    assert hits(server, word)[0] == slug
    with KnowledgeBase(load_config()) as other:
        other.reindex(full=True)
        other.save("Zebra crossing timeout", "A zebrafish note saved after the rebuild.")
    assert hits(server, "zebrafish")[0] == "note/zebra-crossing-timeout"
    assert hits(server, word)[0] == slug
    assert deleted_files_open(os.getpid()) == []
    server.close()


def test_a_repair_by_another_process_is_followed_with_its_vectors(project: Path, brain: dict[str, str]) -> None:
    server = KnowledgeBase(load_config(), cache_vectors=True)
    word, slug = next(iter(brain.items()))
    assert hits(server, word)[0] == slug
    damage(project / "brain.db", "garbage")
    with KnowledgeBase(load_config()) as other:
        other.reindex()  # meets the damage: the index is rebuilt from the markdown, into a new file
        other.save("Okapi sighting", "An okapi note saved after the repair.")
    assert (project / "brain.db.corrupt").exists()
    assert hits(server, "okapi")[0] == "note/okapi-sighting"
    vector_hits = server.search("An okapi note saved after the repair.", mode="vector").hits
    assert vector_hits[0].slug == "note/okapi-sighting"  # the in-memory vectors follow the new file
    assert server.index_file(project / "documentation" / "gotcha" / "note-0.md") == "gotcha/note-0"
    assert deleted_files_open(os.getpid()) == []
    server.close()


def test_a_full_rebuild_is_seen_by_a_running_server(tmp_path: Path) -> None:
    from mcp_helpers import RawServer, server_env, wait_for

    word = next(iter(notes(tmp_path / "documentation", 5)))
    with RawServer(tmp_path) as server:
        server.initialize()
        assert wait_for(lambda: server.call("brain_search", query=word)["structuredContent"]["hits"])
        env = server_env(tmp_path)
        assert pinky("reindex", "--full", cwd=tmp_path, env=env).returncode == 0
        saved = pinky("save", "-t", "Saved after the rebuild", cwd=tmp_path, env=env, stdin="capybara wallpaper")
        assert saved.returncode == 0, saved.stderr
        found = server.call("brain_search", query="capybara")["structuredContent"]["hits"]
        assert found and found[0]["slug"] == "note/saved-after-the-rebuild", found
        assert deleted_files_open(server.proc.pid) == []


def test_a_rebuild_killed_halfway_is_finished_by_the_next_command(project: Path, brain: dict[str, str]) -> None:
    with KnowledgeBase(load_config()) as killed:
        killed.index.drop()  # emptied for the rebuild; then the process dies before reindexing
    word, slug = list(brain.items())[3]
    searched = pinky("search", word, "--json", cwd=project)
    assert searched.returncode == 0, searched.stderr
    assert slug in searched.stdout
    with KnowledgeBase(load_config()) as kb:
        assert not kb.index.rebuild_pending()
        assert kb.drift() == {"new": [], "changed": [], "deleted": []}


def test_opening_the_index_again_keeps_the_locks_of_connections_already_open(project: Path,
                                                                             brain: dict[str, str]) -> None:
    """POSIX locks belong to the process: a plain open() and close() of brain.db (say, to read its
    header) drops the lock every SQLite connection of the process holds on it. Another process then
    believes it is the last one and deletes the WAL under a live connection."""
    server = KnowledgeBase(load_config())
    server.search("pool")  # holds the index open: in WAL mode a shared lock, while it lives
    with KnowledgeBase(load_config()) as upkeep:  # a second connection in the same process opens, closes
        upkeep.search("pool")
    other = "from pinky.config import load_config; from pinky.kb import KnowledgeBase; " \
            "KnowledgeBase(load_config()).search('pool')"
    assert subprocess.run([sys.executable, "-c", other], cwd=project).returncode == 0
    assert (project / "brain.db-wal").exists(), "another process deleted the WAL of a live connection"
    server.close()


def test_brain_reindex_full_in_one_server_is_seen_by_another(tmp_path: Path) -> None:
    from mcp_helpers import RawServer, wait_for

    word = next(iter(notes(tmp_path / "documentation", 5)))
    with RawServer(tmp_path, PINKY_TIER="admin") as admin, RawServer(tmp_path) as other:
        for server in (admin, other):
            server.initialize()
            assert wait_for(lambda s=server: s.call("brain_search", query=word)["structuredContent"]["hits"])
        assert not admin.call("brain_reindex", full=True)["isError"]
        assert not admin.call("brain_save", title="Saved by the admin", body="a pangolin note")["isError"]
        found = other.call("brain_search", query="pangolin")["structuredContent"]["hits"]
        assert found and found[0]["slug"] == "note/saved-by-the-admin", found
        assert deleted_files_open(other.proc.pid) == deleted_files_open(admin.proc.pid) == []


# --- item 5: a damaged index is rebuilt wherever the damage shows -------------------------------------


@pytest.mark.parametrize("how", ["truncate", "garbage"])
def test_a_damaged_index_is_rebuilt_by_search_and_reindex(project: Path, brain: dict[str, str], how: str) -> None:
    markdown = {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")}
    damage(project / "brain.db", how)
    word, slug = list(brain.items())[7]
    searched = pinky("search", word, "--json", cwd=project)
    assert searched.returncode == 0, searched.stderr
    assert slug in searched.stdout
    reindexed = pinky("reindex", cwd=project)
    assert reindexed.returncode == 0, reindexed.stderr
    assert (project / "brain.db.corrupt").exists()
    with KnowledgeBase(load_config()) as kb:
        assert kb.verify() is None
        assert kb.drift() == {"new": [], "changed": [], "deleted": []}
        assert all(hits(kb, w)[0] == s for w, s in list(brain.items())[:10])
    assert {p: p.read_bytes() for p in (project / "documentation").rglob("*.md")} == markdown


def test_a_save_into_a_damaged_index_writes_one_note_and_heals(project: Path, brain: dict[str, str]) -> None:
    kb = KnowledgeBase(load_config())
    kb.search("pool")  # open, as a server would be
    damage(project / "brain.db", "garbage")
    entry = kb.save("Tapir gotcha", "The tapir note must be written exactly once.")
    assert entry.slug == "note/tapir-gotcha"
    assert [p.name for p in (project / "documentation" / "note").iterdir()] == ["tapir-gotcha.md"]
    assert hits(kb, "tapir")[0] == "note/tapir-gotcha"
    assert kb.verify() is None
    kb.close()


def test_doctor_fails_on_a_damaged_index_and_repairs_it(project: Path, brain: dict[str, str]) -> None:
    damage(project / "brain.db", "garbage", seed=9)
    first = pinky("doctor", cwd=project)
    assert first.returncode == 1, first.stdout
    assert "index integrity" in first.stdout and "rebuilt from the markdown" in first.stdout
    second = pinky("doctor", cwd=project)
    assert "ok    index integrity" in second.stdout.replace("ok  ", "ok    ", 1) or \
        "index integrity: every page sound" in second.stdout


def test_doctor_full_runs_integrity_check_and_fails_on_damage_quick_check_misses(project: Path,
                                                                                  brain: dict[str, str]) -> None:
    """Issue 22: 8 flipped bytes in an index key pass quick_check, so `pinky doctor` said the index was
    sound (exit 0) while a row was missing from that index; `--full` runs integrity_check."""
    from pinky.store.connect import open_database, quick_check

    damage(project / "brain.db", "index-key")
    db = open_database(project / "brain.db")
    assert quick_check(db.conn) is None  # every page sound: what plain `pinky doctor` checks
    assert "missing from index chunk_hash" in db.conn.execute("PRAGMA integrity_check(1)").fetchone()[0]
    db.close()
    full = pinky("doctor", "--full", cwd=project)
    assert full.returncode == 1, full.stdout
    line = next(line for line in full.stdout.splitlines() if "index integrity" in line)
    assert line.startswith("FAIL") and "missing from index chunk_hash" in line and "rebuilt from the markdown" in line
    assert "fix: nothing more to do" in full.stdout
    again = json.loads(pinky("doctor", "--full", "--json", cwd=project).stdout)
    check = next(c for c in again["checks"] if c["name"] == "index integrity")
    assert check["status"] == "ok" and "integrity_check" in check["detail"]
    word, slug = next(iter(brain.items()))
    with KnowledgeBase(load_config()) as kb:
        assert hits(kb, word)[0] == slug


def test_pinky_errors_that_mention_malformed_text_are_not_corruption(project: Path) -> None:
    from pinky.errors import InvalidInput
    from pinky.indexing.index import is_corruption

    assert not is_corruption(InvalidInput("note.md has malformed frontmatter (bad YAML)"))
    assert not is_corruption(IndexUnavailable("the note was written, but: database disk image is malformed"))
    junk = project / "junk.db"
    junk.write_bytes(b"not a database " * 100)
    conn = sqlite3.connect(junk)
    with pytest.raises(sqlite3.DatabaseError) as raw:
        conn.execute("SELECT * FROM sqlite_master").fetchall()
    conn.close()
    assert is_corruption(raw.value)
    wrapped = IndexUnavailable("migration m001 failed")
    wrapped.__cause__ = raw.value  # as `raise ... from exc` leaves it
    assert is_corruption(wrapped)
