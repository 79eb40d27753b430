"""Search's relevance bands are the prompt hook's gate: one measure, one floor (`pinky.search.recall.judge`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search.recall import DEFAULT_THRESHOLD, candidates, floor, judge
from pinky.store.readonly import connect_ro

NOTES = {
    "gotcha/pool-timeout.md": ("Postgres pool hangs on shutdown", "Call pool.close(timeout=5) before the postgres "
                               "server goes down, or shutdown hangs."),
    "decision/pgbouncer.md": ("Use PgBouncer in front of postgres", "Connections go through PgBouncer."),
    "guide/release.md": ("How to cut a release", "Tag it, let CI build the wheel, upload the artifacts."),
}
SLUGS = ["gotcha/pool-timeout", "decision/pgbouncer", "guide/release"]


@pytest.fixture
def conn(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    for rel, (title, body) in NOTES.items():
        write_note(root, f"documentation/{rel}", f"---\ntitle: {title}\ncreated: 2026-01-05\n---\n{body}\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    connection = connect_ro(str(root / "brain.db"))
    assert connection is not None
    yield connection
    connection.close()


def test_only_what_reaches_the_hooks_floor_is_relevant_and_a_note_with_every_word_is_strong(conn) -> None:  # type: ignore[no-untyped-def]
    bands = judge(conn, "postgres shutdown", SLUGS)
    assert bands["gotcha/pool-timeout"][1] == "strong"
    assert bands["decision/pgbouncer"][1] == "weak" and bands["guide/release"][1] == "weak"
    assert bands["guide/release"][0] is None or bands["guide/release"][0] < floor()
    gate = {c.entry_id: c.score for c in candidates(conn, "postgres shutdown")}  # the hook's own score
    pool_id = conn.execute("SELECT id FROM entry WHERE slug = 'gotcha/pool-timeout'").fetchone()[0]
    assert bands["gotcha/pool-timeout"][0] == round(gate[pool_id], 3) >= DEFAULT_THRESHOLD


def test_the_floor_is_the_hooks_setting_and_a_query_of_no_content_words_is_nothing_relevant(
        conn, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PINKY_RECALL_MIN_SCORE", "50")
    assert {band for _, band in judge(conn, "postgres shutdown", SLUGS).values()} == {"weak"}
    monkeypatch.delenv("PINKY_RECALL_MIN_SCORE")
    assert judge(conn, "how do i do this", SLUGS) == dict.fromkeys(SLUGS, (None, "weak"))


def test_the_cli_marks_weak_hits_and_says_nothing_relevant_through_the_same_judge(
        conn, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "PINKY_HASH_EMBED": "1"}
    done = subprocess.run([*console_script("pinky"), "search", "postgres release", "--mode", "bm25"],
                          cwd=tmp_path / "proj", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "nothing relevant: no hit shares enough" in done.stderr
    assert done.stdout.count("(weak: below the relevance floor)") == done.stdout.count("\n    ") // 2 > 0
    done = subprocess.run([*console_script("pinky"), "search", "postgres shutdown", "--mode", "bm25"],
                          cwd=tmp_path / "proj", env=env, capture_output=True, text=True, timeout=120)
    first = done.stdout.splitlines()[0]
    assert "gotcha/pool-timeout" in first and "weak" not in first and "nothing relevant" not in done.stderr
