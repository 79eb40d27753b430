"""Usage outlives the index (issue 22, item 6): what searches returned and what was marked useful is kept in
each knowledge folder's `.pinky/usage.log`, so `pinky prune` never archives a note used minutes before a
rebuild — a full one, one killed with SIGKILL, or a deleted brain.db — nor a global note used from another
project's index; and it prunes nothing where use has not been watched for the whole span."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import console_script, usage_watched_since, write_note

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.kb import KnowledgeBase

LONG = os.environ.get("PINKY_FAULTS_LONG") == "1"
OLD = "2025-01-10"
TOPICS = {"kafka": "kafka consumer offsets reset on rebalance", "redis": "redis eviction policy allkeys-lru",
          "nginx": "nginx proxy buffering on websockets", "cron": "cron jobs run in UTC on the build host"}


def old_notes(docs: Path, names: list[str], folder: str = "gotcha") -> None:
    stamp = time.mktime((2025, 1, 10, 12, 0, 0, 0, 0, -1))
    for name in names:
        path = write_note(docs, f"{folder}/{name}.md",
                          f"---\ntitle: {name}\ncreated: {OLD}\nlast_verified: {OLD}\n---\n{TOPICS[name]}\n")
        os.utime(path, (stamp, stamp))


def use(kb: KnowledgeBase) -> None:
    """Three notes used today: two found by searches, one marked useful; `cron` never."""
    assert kb.search("kafka offsets rebalance", record_usage=True, limit=1).hits[0].slug.endswith("kafka")
    assert kb.search("redis eviction", record_usage=True, limit=1).hits[0].slug.endswith("redis")
    kb.hygiene.feedback("nginx", "useful", query="websocket proxy")


@pytest.fixture
def brain(project: Path) -> Path:
    docs = project / "documentation"
    old_notes(docs, list(TOPICS))
    usage_watched_since(docs)
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        use(kb)
    return project


def pruned(project: Path) -> list[str]:
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        return sorted(item["slug"] for item in kb.hygiene.prune(6, apply=True)["archived"])


@pytest.mark.parametrize("how", ["full rebuild", "deleted index"])
def test_prune_after_a_rebuild_keeps_what_was_used(brain: Path, how: str) -> None:
    if how == "full rebuild":
        with KnowledgeBase(load_config()) as kb:
            kb.reindex(full=True)
            assert kb.stats()["usage_events"] == 0  # the index forgot: the ledger did not
    else:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{load_config().db_path}{suffix}").unlink(missing_ok=True)
    assert pruned(brain) == ["gotcha/cron"]
    assert [p.name.split(".")[0] for p in (brain / "documentation/.archive/gotcha").glob("*.md")] == ["cron"]
    assert all((brain / f"documentation/gotcha/{name}.md").exists() for name in ("kafka", "redis", "nginx"))


@pytest.mark.parametrize("count", [pytest.param(3, id="short"), pytest.param(
    10, id="long", marks=[pytest.mark.faults_long, pytest.mark.skipif(not LONG, reason="PINKY_FAULTS_LONG=1")])])
def test_prune_after_full_rebuilds_killed_at_random_moments(project: Path, count: int,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    docs = project / "documentation"
    old_notes(docs, list(TOPICS))
    usage_watched_since(docs)
    for n in range(300):  # enough notes for a rebuild to take a while
        write_note(docs, f"note/filler-{n}.md", f"---\ncreated: {dt.date.today()}\n---\nfiller {n} words\n")
    started = time.perf_counter()  # how long a whole rebuild takes here: the kills land in its second half
    assert subprocess.run([*console_script("pinky"), "reindex", "--full"], cwd=project, capture_output=True,
                          timeout=300).returncode == 0
    took = time.perf_counter() - started
    with KnowledgeBase(load_config()) as kb:
        use(kb)
    rng = random.Random(count)
    for _ in range(count):
        proc = subprocess.Popen([*console_script("pinky"), "reindex", "--full"], cwd=project,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.6, 0.95) * took)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = subprocess.run([*console_script("pinky"), "prune", "--months", "6", "--apply", "--json"], cwd=project,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    archived = sorted(item["slug"] for item in json.loads(done.stdout)["archived"])
    with capsys.disabled():
        print(f"\n[faults] kill -9 during {count} full rebuilds ({took:.1f} s each uninterrupted), then prune "
              f"--apply: archived {archived} (used today: gotcha/kafka, gotcha/redis, gotcha/nginx)", flush=True)
    assert archived == ["gotcha/cron"]


def test_a_global_note_used_from_a_project_is_not_pruned_from_elsewhere(project: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config()
    old_notes(config.global_dir, ["kafka", "cron"])
    usage_watched_since(config.global_dir)
    with KnowledgeBase(config) as kb:  # the project's index finds the global notes too
        kb.reindex()
        assert kb.search("kafka offsets rebalance", record_usage=True, limit=1).hits[0].slug == "global/gotcha/kafka"
    monkeypatch.chdir(tmp_path)  # outside the project: the global brain's own index
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        assert sorted(i["slug"] for i in kb.hygiene.prune(6, apply=True)["archived"]) == ["global/gotcha/cron"]


def test_nothing_is_pruned_where_use_was_not_watched_for_the_whole_span(project: Path) -> None:
    old_notes(project / "documentation", ["kafka", "cron"])
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        done = kb.hygiene.prune(6, apply=True)
    assert done["archived"] == [] and done["candidates"] == []
    assert sorted(i["slug"] for i in done["unwatched"]) == ["gotcha/cron", "gotcha/kafka"]
    assert done["watched_since"]["project"][:10] == dt.datetime.now(dt.UTC).date().isoformat()
    said = CliRunner().invoke(cli, ["prune", "--apply"])
    assert said.exit_code == 0 and "archived 0 entries" in said.output
    assert "kept 2 more that look unused but may not be" in said.output and "project notes since" in said.output
    assert (project / "documentation/gotcha/cron.md").exists()


def test_the_ledger_is_written_once_a_day_per_note_and_compacted(project: Path) -> None:
    from pinky.base import usage

    docs = project / "documentation"
    old_notes(docs, ["kafka", "redis"])
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        for _ in range(5):
            kb.search("kafka offsets rebalance", record_usage=True, limit=1)
    lines = (docs / usage.LEDGER).read_text().splitlines()
    assert len(lines) == 2 and "since" in lines[0] and '"path": "gotcha/kafka.md"' in lines[1]
    with open(docs / usage.LEDGER, "a") as ledger:  # a torn line (a crash) and older days
        ledger.write('{"day": "2026-01-01", "use": "retrieved", "path": "gotcha/redis.md"}\n{"day": "20')
        ledger.write('\n{"day": "2025-06-01", "use": "retrieved", "path": "gotcha/redis.md"}\n')
    since, days = usage.last_used(docs)
    assert since is not None and days["gotcha/redis.md"] == "2026-01-01"
    usage.compact(docs)
    assert usage.last_used(docs) == (since, days)
    assert len((docs / usage.LEDGER).read_text().splitlines()) == 3  # since, kafka, redis


def test_a_read_only_knowledge_folder_still_searches(project: Path) -> None:
    docs = project / "documentation"
    old_notes(docs, ["kafka"])
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        (docs / ".pinky").mkdir(exist_ok=True)
        os.chmod(docs / ".pinky", 0o500)
        try:
            assert kb.search("kafka offsets", record_usage=True).hits
        finally:
            os.chmod(docs / ".pinky", 0o700)
