"""Likely duplicates: the rule (pure), and what a user sees with the default embedder — the save's warning,
`check`'s list, the review list and `merge` — through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import console_script

from pinky.knowledge.duplicates import content_words, likely_duplicate, word_overlap

PG = ("Postgres pool hangs on shutdown", "Call POOL.close(timeout=5) in close_pool before the process exits, or "
      "the app hangs at shutdown waiting for idle connections.")
PG_AGAIN = ("PG pool hangs on shutdown", "Call pool.close(timeout=5) before exiting")
REDIS = ("Redis client hangs on shutdown", "The redis ConnectionPool is never disconnected; call pool.disconnect() "
         "in the shutdown handler.")


def test_shared_words_decide_between_close_in_meaning_and_very_close() -> None:
    assert likely_duplicate(0.81, ("a b", "c d"), ("e f", "g h"))  # very close in meaning: words do not matter
    assert not likely_duplicate(0.59, PG, PG)  # not close: the same words do not make a duplicate
    assert likely_duplicate(0.75, PG, PG_AGAIN)  # the default embedder puts these two 0.75 apart
    assert not likely_duplicate(0.69, PG, REDIS)  # ... and these, two different facts, 0.69


def test_content_words_ignore_case_and_function_words() -> None:
    assert content_words("The Pool", "call POOL.close() and the app hangs") == {"pool", "call", "close", "app",
                                                                                "hangs"}
    assert word_overlap(frozenset(), frozenset()) == 0.0
    assert word_overlap(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PINKY_HASH_EMBED"}  # the default embedder, as users have it
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env=env, timeout=300)


@pytest.mark.slow
def test_a_reworded_copy_is_warned_about_listed_and_merged(project: Path) -> None:
    for title, body in (PG, REDIS):
        assert pinky("save", "-t", title, "--type", "gotcha", cwd=project, stdin=body).returncode == 0
    saved = pinky("save", "-t", PG_AGAIN[0], "--type", "gotcha", cwd=project, stdin=PG_AGAIN[1])
    assert saved.returncode == 0, saved.stderr
    assert ("likely a duplicate of gotcha/postgres-pool-hangs-on-shutdown" in saved.stderr
            and "pinky-brain merge gotcha/postgres-pool-hangs-on-shutdown gotcha/pg-pool-hangs-on-shutdown"
            in saved.stderr), saved.stderr
    assert "redis" not in saved.stderr
    check = json.loads(pinky("check", "--json", cwd=project).stdout)
    assert [(p["a"], p["b"]) for p in check["duplicates"]] == [
        ("gotcha/pg-pool-hangs-on-shutdown", "gotcha/postgres-pool-hangs-on-shutdown")]  # the review list's pairs
    assert "==" in pinky("check", cwd=project).stdout
    merged = pinky("merge", "gotcha/postgres-pool-hangs-on-shutdown", "gotcha/pg-pool-hangs-on-shutdown", cwd=project)
    assert merged.returncode == 0, merged.stderr
    kept = (project / "documentation/gotcha/postgres-pool-hangs-on-shutdown.md").read_text()
    assert "Call pool.close(timeout=5) before exiting" in kept
    assert not (project / "documentation/gotcha/pg-pool-hangs-on-shutdown.md").exists()
    assert json.loads(pinky("check", "--json", cwd=project).stdout)["duplicates"] == []


def test_merge_refuses_an_entry_into_itself(project: Path) -> None:
    assert pinky("save", "-t", PG[0], "--type", "gotcha", cwd=project, stdin=PG[1]).returncode == 0
    same = pinky("merge", "gotcha/postgres-pool-hangs-on-shutdown", "gotcha/postgres-pool-hangs-on-shutdown",
                 cwd=project)
    assert same.returncode != 0
    assert "cannot be merged into itself" in same.stderr
    assert "Traceback" not in same.stderr
