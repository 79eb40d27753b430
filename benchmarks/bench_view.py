"""`pinky view` speed in a real headless Chromium (a script, not a test): prints figures, asserts nothing.

    python benchmarks/bench_view.py [--notes 10000] [--embedder use|hash] [--keep DIR] [--shots DIR]

Generates N notes of ~150 words in topics of ~60 (four links a note, mostly inside its topic, one of
them typed), plus what the review page lists (stale entries, flagged ones, a contradiction, duplicates,
knowledge gaps) and a month of diary days with a weekly rollup; indexes them (`--embedder use`: the
default model, as a user has it; the second stage is off: PINKY_QUALITY=off); starts the real
`pinky view --no-open` and drives Debian's /usr/bin/chromium through Playwright. Prints:

- time to open the page: navigation start to the first view drawn (the 50 newest entries), median of 5;
- search as you type: each keystroke of 8 queries typed at 8 keys a second, from the key to the
  results that include it on screen (p50, p95), and the server's own time per search;
- the graph: the whole brain (clustered above 2,500 notes), the largest cluster, a note's 2-hop
  neighbourhood: data fetched, first frame drawn, layout settled.

`--shots DIR` saves a screenshot of each of the five views there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import percentile, vocabulary  # noqa: E402

KINDS = ["gotcha", "pattern", "decision", "guide", "note", "bug"]
TOPIC = 60
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
QUERIES = ["postgres pool timeout", "retry with backoff", "cache invalidation", "deploy pipeline",
           "memory leak", "database migration", "connection refused", "config flag"]


def rel_of(i: int) -> str:
    return f"{KINDS[i % len(KINDS)]}/note-{i:05d}"


def make_brain(docs: Path, count: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    words, weights = vocabulary()
    topics = [" ".join(rng.choices(words, weights, k=2)) for _ in range(count // TOPIC + 1)]
    for i in range(count):
        kind, topic = KINDS[i % len(KINDS)], i // TOPIC
        start = topic * TOPIC
        near = [t for t in rng.sample(range(start, min(count, start + TOPIC)), 4) if t != i][:3]
        far = rng.randrange(count)
        targets = [rel_of(t) for t in [*near, far] if t != i]
        title = f"{topics[topic].capitalize()}: " + " ".join(rng.choices(words, weights, k=4))
        typed = f"links:\n  - {{to: {targets[0]}, rel: {rng.choice(['depends_on', 'fixed_by', 'relates'])}}}\n"
        body = [" ".join(rng.choices(words, weights, k=45)).capitalize() + "." for _ in range(3)]
        body[1] += " See " + ", ".join(f"[[{t}]]" for t in targets[1:]) + "."
        created = "2024-01-15" if i % 97 == 0 else "2026-10-01"
        path = docs / kind / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: '{title}'\ntype: {kind}\ncreated: '{created}'\n{typed}---\n\n# {title}\n\n"
                        + "\n\n".join(body) + "\n", encoding="utf-8")
    extras = {
        "gotcha/pg-pool-hangs.md": ("PG pool hangs on shutdown", "Call pool.close(timeout=5) before exit, "
                                    "or the postgres pool waits forever for idle connections."),
        "gotcha/pg-pool-hangs-again.md": ("Postgres pool hangs at exit", "Call pool.close(timeout=5) before exit, "
                                          "or the postgres pool waits forever for idle connections."),
        "decision/api-port.md": ("The API listens on port 8080", "The API server listens on port 8080 in production."),
        "decision/api-port-new.md": ("The API listens on port 9090",
                                     "The API server listens on port 9090 in production."),
    }
    for rel, (title, text) in extras.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        key = "key: api.port\n" if "api-port" in rel else ""
        (docs / rel).write_text(f"---\ntitle: {title}\n{key}created: '2026-10-01'\n---\n\n{text}\n", encoding="utf-8")
    diary = docs / "diary"
    (diary / "weekly").mkdir(parents=True, exist_ok=True)
    for day in range(1, 29):
        lines = [f"- {9 + n:02d}:{rng.randrange(60):02d} [s{day:03d}abc] "
                 f"{rng.choice(['asked', 'saved', 'files'])}: {' '.join(rng.choices(words, weights, k=8))} "
                 f"[[{rel_of(rng.randrange(count))}]]" for n in range(5)]
        (diary / f"2026-11-{day:02d}.md").write_text(f"# 2026-11-{day:02d}\n\n" + "\n".join(lines) + "\n")
    (diary / "weekly" / "2026-W47.md").write_text(
        "---\ntitle: Week 2026-W47\ntype: diary\n---\n\n# Week 2026-W47\n\n## Highlights\n\n"
        f"- worked on [[{rel_of(1)}]] and [[{rel_of(2)}]]\n")


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def prepare(project: Path, notes: int, env: dict[str, str], pinky: str) -> None:
    if (project / "pinky.toml").exists():
        return
    docs = project / "documentation"
    docs.mkdir(parents=True)
    (project / "pinky.toml").write_text("# bench\n")
    make_brain(docs, notes)
    started = time.perf_counter()
    run([pinky, "reindex"], project, env)
    print(f"indexed {notes:,} notes in {time.perf_counter() - started:.1f} s", flush=True)
    for n in range(8):  # flagged entries and knowledge gaps
        run([pinky, "feedback", rel_of(n * 7 + 3), "wrong" if n % 2 else "outdated", "--query", "bench"],
            project, env)
    code = ("from pinky.kb import KnowledgeBase\nwith KnowledgeBase() as kb:\n"
            "    for q in ['kubernetes helm chart rollback', 'oauth refresh token rotation', 'gpu driver cuda']:\n"
            "        [kb.search(q, record_usage=True) for _ in range(3)]\n")
    subprocess.run([sys.executable, "-c", code], cwd=project, env={**env, "PINKY_LOG_QUERIES": "1"}, check=True)


def start_view(project: Path, env: dict[str, str], pinky: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([pinky, "view", "--no-open"], cwd=project, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    url = re.search(r"http://\S+", process.stdout.readline())
    if url is None:
        raise SystemExit("pinky view printed no URL")
    return process, url.group(0)  # the one-time sign-in link: the browser uses it


def until(page: Any, expression: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(expression)
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(expression)


def open_times(page: Any, base: str) -> list[float]:
    times = []
    for _ in range(5):
        page.goto(base + "/#/search")
        page.reload()
        times.append(until(page, "window.pinkyPerf && window.pinkyPerf.ready"))
    return times


def keystrokes(page: Any) -> tuple[list[float], list[float]]:
    latencies: list[float] = []
    server: list[float] = []
    for query in QUERIES:
        page.evaluate("window.pinkyPerf.keystrokes = []; window.pinkyPerf.searches = []")
        page.fill("#q", "")
        page.click("#q")
        page.keyboard.type(query, delay=125)
        until(page, f"document.querySelector('#results').dataset.query === {json.dumps(query)}")
        page.wait_for_timeout(200)
        marks = page.evaluate("window.pinkyPerf.keystrokes")
        latencies += [m["t1"] - m["t0"] for m in marks if m["t1"] is not None]
        server += [s["server_ms"] for s in page.evaluate("window.pinkyPerf.searches") if s["server_ms"]]
    return latencies, server


def graph_times(page: Any, base: str, hash_: str) -> dict[str, Any]:
    page.goto(base + "/#/search")
    page.reload()
    until(page, "window.pinkyPerf.ready")
    page.evaluate(f"location.hash = {json.dumps(hash_)}")
    figures = until(page, "window.pinkyPerf.graph && window.pinkyPerf.graph.settled_ms !== null "
                          "&& window.pinkyPerf.graph", 120)
    return dict(figures)


def shots(page: Any, base: str, folder: Path, note: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(base + "/#/search")
    page.reload()
    until(page, "window.pinkyPerf.ready")
    page.fill("#q", "postgres pool")
    until(page, "document.querySelector('#results').dataset.query === 'postgres pool'")
    page.screenshot(path=str(folder / "1-search.png"))
    page.evaluate(f"location.hash = '#/note/' + encodeURIComponent({json.dumps(note)})")
    page.wait_for_selector("#history .timeline, #history .empty")
    page.screenshot(path=str(folder / "2-note.png"))
    page.evaluate("window.pinkyPerf.graph = null; "
                  f"location.hash = '#/graph/' + encodeURIComponent({json.dumps(note)}) + '?depth=2'")
    until(page, "window.pinkyPerf.graph && window.pinkyPerf.graph.settled_ms !== null", 120)
    page.wait_for_timeout(500)
    page.screenshot(path=str(folder / "3-graph.png"))
    page.evaluate("window.pinkyPerf.graph = null; location.hash = '#/graph'")
    until(page, "window.pinkyPerf.graph && window.pinkyPerf.graph.settled_ms !== null", 120)
    page.wait_for_timeout(500)
    page.screenshot(path=str(folder / "3-graph-whole.png"))
    page.evaluate("location.hash = '#/review'")
    page.wait_for_selector("#duplicates .card, #duplicates .empty", timeout=120_000)
    page.wait_for_selector("#contradictions .card, #contradictions .empty", timeout=120_000)
    page.screenshot(path=str(folder / "4-review.png"), full_page=True)
    page.evaluate("location.hash = '#/diary'")
    page.wait_for_selector(".day")
    page.screenshot(path=str(folder / "5-diary.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--embedder", choices=["use", "hash"], default="use")
    parser.add_argument("--keep", help="build (or reuse) the brain in this folder")
    parser.add_argument("--shots", help="save a screenshot of each view in this folder")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    project = Path(args.keep or tempfile.mkdtemp(prefix="bench-view-")) / f"brain-{args.notes}-{args.embedder}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PINKY_")}
    env.update(PINKY_HOME=str(project.parent / f"home-{args.notes}-{args.embedder}"), PINKY_QUALITY="off")
    if args.embedder == "hash":
        env["PINKY_HASH_EMBED"] = "1"
    pinky = str(Path(sys.executable).parent / "pinky")
    prepare(project, args.notes, env, pinky)
    process, url = start_view(project, env, pinky)
    base = url.split("/#sign-in=")[0]
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
            page.goto(url)  # the page signs in (the session secret in its localStorage), then draws
            until(page, "window.pinkyPerf && window.pinkyPerf.ready")
            owner = {"Authorization": "Bearer " + page.evaluate("localStorage.getItem('pinky-view-session')")}
            page.request.get(base + "/api/search?q=warm", headers=owner)  # the first search loads the vectors
            opened = open_times(page, base)
            typed, server = keystrokes(page)
            whole = graph_times(page, base, "#/graph")
            biggest = page.request.get(base + "/api/overview", headers=owner).json()
            cluster = graph_times(page, base, "#/graph?cluster=" + biggest["nodes"][0]["id"]) \
                if biggest["mode"] == "clusters" else None
            hood = graph_times(page, base, "#/graph/" + rel_of(1).replace("/", "%2F") + "?depth=2")
            if args.shots:
                shots(page, base, Path(args.shots), rel_of(1))
            browser.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
    print(f"\npinky view, {args.notes:,} notes ({args.embedder} embedder), Chromium {CHROMIUM}")
    print(f"open the page (first view drawn): median {statistics.median(opened):.0f} ms "
          f"(runs: {', '.join(f'{t:.0f}' for t in opened)})")
    print(f"search per keystroke ({len(typed)} keys): p50 {percentile(typed, 0.5):.0f} ms, "
          f"p95 {percentile(typed, 0.95):.0f} ms; server p50 {percentile(server, 0.5):.1f} ms, "
          f"p95 {percentile(server, 0.95):.1f} ms")
    for name, figures in (("whole brain", whole), ("largest cluster", cluster), ("2-hop neighbourhood", hood)):
        if figures:
            print(f"graph, {name}: {figures['nodes']:,} nodes, {figures['links']:,} links: data "
                  f"{figures['fetch_ms']:.0f} ms, first frame {figures['first_frame_ms']:.0f} ms, "
                  f"settled {figures['settled_ms']:.0f} ms")


if __name__ == "__main__":
    main()
