"""`pinky eval`: golden queries run over the user's own brain, scored, and compared with a baseline.

A golden file is JSON lines, one query each: `{"query": …, "expected": [slug or path, …]}` plus, when
wanted, `category`, `mode` (hybrid, bm25/keyword, vector/semantic), `why` (free text) and the filters
search takes (`scope`, `project`, `type`, `tags`, `since`, `at`, `include_superseded`). The figures are
pure functions in `pinky.evaluation.metrics`; this module reads files, resolves slugs and runs the searches.
`proposals_from_usage` turns the usage telemetry into candidate golden lines.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pinky.base.validate import MAX_QUERY_CHARS
from pinky.errors import GoldenError, InvalidInput, NotFound
from pinky.evaluation import metrics
from pinky.search import second_stage

FILTERS = ("scope", "project", "type", "tags", "since", "at", "include_superseded")
FIELDS = frozenset(("query", "expected", "category", "mode", "why", *FILTERS))
DEPTH = 10  # results asked for each query: the deepest cut-off of metrics.METRICS
USAGE_WINDOW_MINUTES = 30  # an open this long after a search that returned the entry counts for that search


@dataclass(frozen=True)
class GoldenQuery:
    line: int
    query: str
    expected: tuple[str, ...]
    category: str | None = None
    mode: str = "hybrid"
    filters: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What identifies the query across runs (a baseline's and today's): its text, filters and mode."""
        return json.dumps([self.query, self.filters, self.mode], sort_keys=True, ensure_ascii=False)


def read_text(path: str | Path, what: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise GoldenError(f"{what} {file} does not exist" if not file.exists() else f"{what} {file} is not a file")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenError(f"{what} {file} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def load_golden(path: str | Path) -> list[GoldenQuery]:
    """The queries of a golden file; any bad line is an error naming the file and line."""
    queries: list[GoldenQuery] = []
    for number, text in enumerate(read_text(path, "golden file").splitlines(), 1):
        if text.strip():
            queries.append(parse_line(text, f"{path}:{number}", number))
    if not queries:
        raise GoldenError(f"golden file {path} holds no query (one JSON object per line)")
    return queries


def parse_line(text: str, where: str, number: int = 0) -> GoldenQuery:
    """One golden line; `where` (file:line) starts every error message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise GoldenError(f"{where}: each line must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise GoldenError(f"{where}: unknown field {unknown[0]!r}; fields are {', '.join(sorted(FIELDS))}")
    query, expected = data.get("query"), data.get("expected")
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
        raise GoldenError(f"{where}: `query` must be a non-empty string of at most {MAX_QUERY_CHARS:,} characters")
    if (not isinstance(expected, list) or not expected
            or not all(isinstance(item, str) and item.strip() for item in expected)):
        raise GoldenError(f"{where}: `expected` must be a non-empty list of slugs or paths")
    category, mode = data.get("category"), data.get("mode", "hybrid")
    if category is not None and (not isinstance(category, str) or not category.strip()):
        raise GoldenError(f"{where}: `category` must be a non-empty string")
    from pinky.search.hybrid import canonical_mode

    try:
        mode = canonical_mode(mode)
    except Exception as exc:
        raise GoldenError(f"{where}: {exc}") from None
    filters = {name: data[name] for name in FILTERS if data.get(name) is not None}
    return GoldenQuery(number, query, tuple(item.strip() for item in expected), category, mode, filters)


# --- running it -------------------------------------------------------------------------------------


def resolver(kb: Any) -> Any:
    """A function from an expected value (slug, a unique last part of one, or a note's path) to a slug."""
    by_path: dict[str, str] = {}
    for item in kb.entry_summaries(100_000):
        by_path[item["path"]] = item["slug"]
        by_path[str(Path(item["path"]).resolve())] = item["slug"]

    def resolve(value: str, where: str) -> str:
        if value in by_path:
            return by_path[value]
        absolute = str(Path(value).resolve())
        if absolute in by_path:
            return by_path[absolute]
        try:
            return str(kb.get(value).slug)
        except NotFound as exc:
            raise GoldenError(f"{where}: expected {value!r} names no entry in this brain ({exc})") from None

    return resolve


def run(kb: Any, queries: Sequence[GoldenQuery], source: str = "golden file") -> dict[str, Any]:
    """Search every query (no usage recorded) and score it; the report `pinky eval --json` prints."""
    resolve = resolver(kb)
    expected = [[resolve(value, f"{source}:{q.line}") for value in q.expected] for q in queries]
    results, latencies = [], []
    for query, wanted in zip(queries, expected, strict=True):
        started = time.perf_counter()
        try:
            hits = kb.search(query.query, limit=DEPTH, mode=query.mode, **query.filters).hits
        except InvalidInput as exc:
            raise GoldenError(f"{source}:{query.line}: {exc}") from None
        latencies.append((time.perf_counter() - started) * 1000)
        ranked = [hit.slug for hit in hits]
        scores = metrics.query_scores(ranked, wanted)
        results.append({"line": query.line, "query": query.query, "category": query.category, "mode": query.mode,
                        "key": query.key, "expected": wanted, "found": ranked,
                        "ranks": {slug: ranked.index(slug) + 1 if slug in ranked else None for slug in wanted},
                        "scores": {name: round(value, 4) for name, value in scores.items()}})
    stage = second_stage.summary(kb.index)
    second = f"{stage['model']}, {stage['chunks']} of {stage['total']} chunks" if stage["chunks"] else None
    return {"golden": source, "embedder": kb.config.embedder, "second_stage": second, **metrics.summarise(results),
            "latency_ms": {"p50": round(metrics.percentile(latencies, 0.5), 1),
                           "p95": round(metrics.percentile(latencies, 0.95), 1)},
            "results": results}


def tolerance_of(value: Any) -> float:
    """A tolerance given as text or a number: how far (absolute, 0-1) a figure may fall before it counts."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GoldenError(f"tolerance must be a number from 0 to 1 (e.g. 0.02), got {value!r}") from None
    if not 0 <= number <= 1:  # NaN fails this too
        raise GoldenError(f"tolerance must be a number from 0 to 1 (e.g. 0.02), got {value!r}")
    return number


def load_baseline(path: str | Path) -> dict[str, Any]:
    """A report saved by `pinky eval --save-baseline` (or `--json`)."""
    try:
        data = json.loads(read_text(path, "baseline"))
    except json.JSONDecodeError as exc:
        raise GoldenError(f"baseline {path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    overall = data.get("overall") if isinstance(data, dict) else None
    if not isinstance(overall, dict) or not all(isinstance(overall.get(m), int | float) for m in metrics.METRICS):
        raise GoldenError(f"baseline {path} has no `overall` figures ({', '.join(metrics.METRICS)}); "
                          "write one with pinky-brain eval --save-baseline")
    return data


def compare(report: dict[str, Any], baseline: dict[str, Any], tolerance: float) -> dict[str, Any]:
    """What fell beyond `tolerance` against the baseline, and every query whose nDCG@10 fell."""
    fallen = metrics.regressions(baseline, report, tolerance)
    worse = metrics.worse_queries(baseline.get("results") or [], report["results"])
    return {"tolerance": tolerance, "passed": not fallen, "regressions": [r.line() for r in fallen],
            "worse_queries": [{"query": r.where, "ndcg@10": [r.before, r.after], "drop": r.drop} for r in worse]}


# --- proposals from what agents did -----------------------------------------------------------------


def proposals_from_usage(index: Any, *, window_minutes: int = USAGE_WINDOW_MINUTES) -> list[dict[str, Any]]:
    """Candidate golden lines: searches whose hits an agent then opened (brain_get, within the window) or
    marked useful, minus hits marked wrong or outdated for that search. Most evidence first."""
    from pinky.store import hygiene_queries
    evidence: dict[str, dict[str, dict[str, int]]] = {}

    def count(row: Any, kind: str) -> None:
        evidence.setdefault(row["query"], {}).setdefault(row["slug"], {"opened": 0, "useful": 0})[kind] += row["times"]

    for row in hygiene_queries.opened_after_search(index.conn, window_minutes / 1440):
        count(row, "opened")
    rejected: set[tuple[str, str]] = set()
    for row in hygiene_queries.verdicts_by_query(index.conn):
        if row["verdict"] == "useful":
            count(row, "useful")
        else:
            rejected.add((row["query"], row["slug"]))
    lines: list[tuple[int, dict[str, Any]]] = []
    for query, found in evidence.items():
        kept = {slug: n for slug, n in found.items() if (query, slug) not in rejected and query.strip()}
        if not kept:
            continue
        order = sorted(kept, key=lambda slug: (-kept[slug]["useful"] - kept[slug]["opened"], slug))
        why = "; ".join(f"{slug}: " + ", ".join(f"{kind} {n}x" for kind, n in kept[slug].items() if n)
                        for slug in order)
        weight = sum(sum(n.values()) for n in kept.values())
        lines.append((weight, {"query": query, "expected": order, "category": "from-usage", "why": why}))
    lines.sort(key=lambda pair: (-pair[0], pair[1]["query"]))
    return [line for _, line in lines]
