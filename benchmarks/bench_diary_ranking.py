"""Diaries against knowledge in one ranking, on a small realistic brain (a script, not a test).

    python benchmarks/bench_diary_ranking.py [--hash] [--limit N]

A project of 24 notes (a web service with a Postgres pool, workers, deploys, CI, caching) and three
days of diary lines about the pool shutdown work, as the Stop hook writes them, then the week's and
the month's rollups (`pinky.capture.rollup`). For each knowledge query it prints where the diaries
rank and which notes they pushed out of the top N; for each query that asks about history (dates,
"diary", "what did we do"), where the first diary ranks. The default embedder unless --hash.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

NOTES = {
    "gotcha/pg-pool-hangs-on-shutdown": ("gotcha", "PG pool hangs on shutdown",
        "The asyncpg pool waits for every connection on close. A worker that still holds a lease when the "
        "service shuts down blocks pool.close() for ever. Call pool.close(timeout=5) after the workers drained."),
    "pattern/drain-workers-before-closing-the-pool": ("pattern", "Drain workers before closing the pool",
        "On SIGTERM stop taking jobs, wait for the running ones (at most 20 s), then close the connection pool "
        "and the HTTP client. Shutdown order: queue consumer, workers, pool, logging."),
    "decision/pool-size-20": ("decision", "Pool size 20 per process",
        "We size the Postgres pool at 20 connections per process: 4 processes x 20 stays under the server's "
        "max_connections of 100 with room for migrations and psql."),
    "guide/graceful-shutdown": ("guide", "Graceful shutdown of the API service",
        "Kubernetes sends SIGTERM and waits terminationGracePeriodSeconds (30 s). The app stops readiness, "
        "drains in-flight requests, drains workers, then closes the database pool."),
    "bug/leaked-connections-in-tests": ("bug", "Leaked connections in the test suite",
        "Tests that open a pool without the fixture leak connections; the suite then hangs at exit waiting "
        "for the pool. Use the db_pool fixture, which closes the pool in teardown."),
    "gotcha/pgbouncer-transaction-mode": ("gotcha", "PgBouncer transaction mode breaks prepared statements",
        "Behind PgBouncer in transaction mode asyncpg's statement cache fails: set statement_cache_size=0."),
    "note/connection-timeouts": ("note", "Connection and command timeouts",
        "Connect timeout 5 s, command timeout 30 s, pool acquire timeout 10 s. A slow query logs at 1 s."),
    "decision/use-asyncpg": ("decision", "Use asyncpg, not psycopg",
        "asyncpg is twice as fast for our row shapes and has a built-in pool; psycopg 3 was considered."),
    "guide/deploy": ("guide", "Deploying to production",
        "Merge to main, CI builds the image, Argo rolls it out in canary steps of 10 %, 50 %, 100 %."),
    "gotcha/helm-secrets-order": ("gotcha", "Helm applies secrets after the deployment",
        "A new secret is not there when the pod starts: add it in a release before the one that reads it."),
    "pattern/feature-flags": ("pattern", "Feature flags for risky changes",
        "Wrap risky code paths in a flag read from the settings service; remove the flag a week after 100 %."),
    "note/ci-cache": ("note", "CI cache for dependencies",
        "The pip cache is keyed on the lock file hash; a cache miss costs four minutes."),
    "bug/flaky-redis-test": ("bug", "Flaky Redis test on CI",
        "test_rate_limit fails one run in twenty: the key expires between two calls. Freeze time instead."),
    "decision/redis-for-rate-limits": ("decision", "Redis for rate limits",
        "Rate limits use Redis INCR with an expiry per window; the database was too slow under load."),
    "guide/local-setup": ("guide", "Local development setup",
        "docker compose up starts Postgres, Redis and the API; make seed loads the fixtures."),
    "gotcha/utc-timestamps": ("gotcha", "Timestamps are UTC in the database",
        "Store timestamptz in UTC; convert to the user's zone in the API layer only."),
    "pattern/retry-with-jitter": ("pattern", "Retry with jitter",
        "Retry idempotent calls three times with exponential backoff and full jitter; never retry POSTs."),
    "note/logging-fields": ("note", "Structured logging fields",
        "Every log line carries request_id, user_id and route; errors add the exception type."),
    "decision/celery-to-arq": ("decision", "Move background jobs from Celery to arq",
        "arq is asyncio-native and shares the asyncpg pool; Celery needed a second, synchronous pool."),
    "gotcha/arq-job-timeout": ("gotcha", "arq job timeout kills the worker's transaction",
        "A job past job_timeout is cancelled mid-transaction; the connection goes back to the pool dirty."),
    "guide/migrations": ("guide", "Running database migrations",
        "alembic upgrade head runs as a pre-deploy job; a migration must be backwards compatible."),
    "note/metrics": ("note", "Service metrics",
        "Prometheus scrapes /metrics: request latency histograms, pool size in use, queue depth."),
    "bug/memory-leak-in-image-resize": ("bug", "Memory leak in image resizing",
        "Pillow images were not closed in the thumbnail worker; use a context manager."),
    "pattern/health-checks": ("pattern", "Liveness and readiness checks",
        "Liveness only says the process runs; readiness checks the pool and Redis, and turns false on SIGTERM."),
}

DIARY = {  # day offset from the Monday of the week -> lines, as the Stop hook writes them
    0: ["- 09:12 [a1b2c3d4] asked: the service hangs on shutdown in staging, find out why",
        "- 09:40 [a1b2c3d4] files: app/main.py, app/db/pool.py",
        "- 09:41 [a1b2c3d4] commands: pytest tests/test_shutdown.py -x",
        "- 10:05 [a1b2c3d4] tools: Read×6, Edit×2, Bash×3",
        "- 10:30 [a1b2c3d4] decided: close the pool with a timeout after the workers drained",
        "- 10:31 [a1b2c3d4] commits: 3f2a1b0 Close the pool after draining workers on shutdown"],
    1: ["- 14:02 [e5f6a7b8] asked: pool shutdown still hangs when an arq job is running",
        "- 14:20 [e5f6a7b8] files: app/worker.py, app/db/pool.py, tests/test_shutdown.py",
        "- 14:21 [e5f6a7b8] commands: pytest tests/test_shutdown.py -k arq",
        "- 15:10 [e5f6a7b8] learned: gotcha/pg-pool-hangs-on-shutdown PG pool hangs on shutdown",
        "- 15:12 [e5f6a7b8] commits: 9c8d7e6 Drain arq jobs before closing the pool"],
    3: ["- 11:00 [c9d0e1f2] asked: add readiness false on SIGTERM so the pool shutdown is clean",
        "- 11:30 [c9d0e1f2] files: app/health.py, deploy/chart/values.yaml",
        "- 11:31 [c9d0e1f2] commits: 1a2b3c4 Readiness turns false on SIGTERM"],
}

KNOWLEDGE = ["pool shutdown", "service hangs on shutdown", "close the connection pool", "graceful shutdown",
             "pool hangs when a job is running", "readiness on SIGTERM", "pool size"]
HISTORY = ["what did we do about the pool shutdown this week", "diary pool shutdown",
           "pool shutdown yesterday", "{monday} pool shutdown"]


def build(root: Path, monday: dt.date) -> Path:
    docs = root / "project" / "documentation"
    for slug, (kind, title, body) in NOTES.items():
        path = docs / f"{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: {title}\ntype: {kind}\ncreated: '{monday - dt.timedelta(days=40)}'\n---\n\n"
                        f"{body}\n", encoding="utf-8")
    for offset, lines in DIARY.items():
        day = monday + dt.timedelta(days=offset)
        path = docs / "diary" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Diary {day}\ntype: diary\ncreated: {day}\ntags: [diary]\n---\n\n"
                        f"# Diary {day}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    from pinky.capture.rollup import month_period, week_period, write_rollup

    iso = monday.isocalendar()
    after = monday + dt.timedelta(days=40)
    write_rollup(docs, week_period(iso.year, iso.week), after)
    write_rollup(docs, month_period(monday.year, monday.month), after)
    (root / "project" / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
    return root / "project"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hash", action="store_true", help="The hashing embedder instead of the default one.")
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    if args.hash:
        os.environ["PINKY_HASH_EMBED"] = "1"
    sys.path.insert(0, str(REPO / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    work = Path(tempfile.mkdtemp(prefix="pinky-diary-rank-"))
    monday = dt.date(2026, 11, 2)
    project = build(work, monday)
    config = load_config(home=work / "home", cwd=project)
    with KnowledgeBase(config) as kb:
        kb.reindex()
        print(f"embedder: {kb.index.embedder.name}; {len(NOTES)} notes, {len(DIARY)} daily diaries, "
              f"a weekly and a monthly rollup; top {args.limit}")
        crowded = 0
        for query in KNOWLEDGE:
            hits = kb.search(query, limit=args.limit).hits
            at = [n for n, hit in enumerate(hits, 1) if hit.type == "diary"]
            crowded += len(at)
            print(f"  knowledge {query!r:42} diaries at {at or '-'}; notes: "
                  f"{', '.join(hit.slug.split('/')[-1][:24] for hit in hits if hit.type != 'diary')}")
        firsts = []
        for query in HISTORY:
            query = query.format(monday=monday + dt.timedelta(days=1))
            hits = kb.search(query, limit=args.limit).hits
            first = next((n for n, hit in enumerate(hits, 1) if hit.type == "diary"), None)
            firsts.append(first)
            print(f"  history   {query!r:52} first diary at {first or '-'}")
        print(f"diaries in the top {args.limit} of {len(KNOWLEDGE)} knowledge queries: {crowded}; "
              f"history queries with a diary first: {sum(f == 1 for f in firsts)} of {len(HISTORY)}")


if __name__ == "__main__":
    main()
