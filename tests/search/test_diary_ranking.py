"""Diaries do not crowd out the notes they mention: a knowledge search ranks the daily diary and the
week's and month's rollups after the notes it finds, and a search that asks for history (a date,
yesterday, "diary", `--type diary`) ranks them as they score. A real project: notes saved with
`pinky save`, the diary written by the Stop hook from a transcript shaped as Claude Code writes it,
the rollups by `pinky rollup`, searched with `pinky search`."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import base, run_hook
from transcript_fixtures import line, prompt, tool_call, tool_result

from pinky.search.history import asks_for_history

NOTES = [
    ("PG pool hangs on shutdown", "gotcha", "The asyncpg pool waits for every connection on close: a worker that "
     "still holds a lease blocks pool.close() at shutdown. Call pool.close(timeout=5) after draining."),
    ("Drain workers before closing the pool", "pattern", "On SIGTERM stop taking jobs, wait for running ones, "
     "then close the connection pool. Shutdown order: consumer, workers, pool."),
    ("Graceful shutdown of the API", "guide", "Kubernetes sends SIGTERM; readiness turns false, requests drain, "
     "workers drain, then the database pool closes."),
    ("Pool size 20 per process", "decision", "Twenty Postgres connections per process keep four processes under "
     "max_connections."),
    ("Deploying to production", "guide", "CI builds the image and Argo rolls it out in canary steps."),
]


def pinky(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True, capture_output=True,
                          env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def worked_on(tmp_path: Path) -> Path:
    """A project whose notes are about the pool shutdown, after a day of diary and its rollups."""
    root = tmp_path / "service"
    root.mkdir()
    pinky("init", cwd=root)
    for title, kind, body in NOTES:
        pinky("save", "-t", title, "--type", kind, cwd=root, stdin=body + "\n")
    turns = [prompt("the service hangs on pool shutdown in staging, find out why"),
             tool_call("t1", "Edit", {"file_path": str(root / "app/db/pool.py"), "old_string": "close()",
                                      "new_string": "close(timeout=5)"}),
             tool_result("t1", "The file has been updated successfully."),
             tool_call("t2", "Bash", {"command": 'git commit -am "Close the pool with a timeout on shutdown"'}),
             tool_result("t2", "[main 3f2a1b0] Close the pool with a timeout on shutdown"),
             prompt("pool shutdown still hangs when a job is running; drain the workers first")]
    transcript = root / "t.jsonl"
    transcript.write_bytes(b"".join(line(event) for event in turns))
    stopped = run_hook("stop", base(root, "Stop", stop_hook_active=False, last_assistant_message="Done."), root)
    assert stopped.returncode == 0, stopped.stderr
    pinky("rollup", cwd=root)  # this week's
    pinky("rollup", "--month", dt.date.today().strftime("%Y-%m"), cwd=root)
    pinky("reindex", cwd=root)
    assert len(json.loads(pinky("list", "--type", "diary", "--json", cwd=root).stdout)["entries"]) == 3
    return root


def ranked(root: Path, query: str, *extra: str) -> list[tuple[str, str]]:
    hits = json.loads(pinky("search", query, "--json", "-n", "5", *extra, cwd=root).stdout)["hits"]
    return [(hit["type"], hit["slug"]) for hit in hits]


def test_a_knowledge_search_ranks_the_notes_before_the_diaries_unless_it_asks_for_history(worked_on: Path) -> None:
    for query in ("pool shutdown", "service hangs on shutdown", "drain the workers"):
        types = [kind for kind, _ in ranked(worked_on, query)]
        notes = [n for n, kind in enumerate(types) if kind != "diary"]
        diaries = [n for n, kind in enumerate(types) if kind == "diary"]
        assert notes and (not diaries or min(diaries) > max(notes)), (query, types)
        assert len(notes) >= 3, (query, types)  # the notes the diaries used to push out
    today = dt.date.today().isoformat()  # a search about history ranks the diaries as they score
    assert ranked(worked_on, f"{today} pool shutdown")[0][0] == "diary"
    assert ranked(worked_on, "diary pool shutdown")[0][0] == "diary"
    assert {kind for kind, _ in ranked(worked_on, "pool shutdown", "--type", "diary")} == {"diary"}


@pytest.mark.parametrize(("query", "asks"), [
    ("pool shutdown", False), ("the pool may hang on exit", False), ("session cookie expires", False),
    ("weekly cron job fails", False), ("march through the workers", False),
    ("pool shutdown yesterday", True), ("2026-11-03 pool shutdown", True), ("what did we do about the pool", True),
    ("diary", True), ("last week's deploy", True), ("Nov 3 deploy", True), ("rollup 2026-W45", True),
    ("on Tuesday the pool hung", True), ("what I worked on", True),
])
def test_which_queries_ask_for_history(query: str, asks: bool) -> None:
    assert asks_for_history(query) is asks
