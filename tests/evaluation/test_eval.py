"""`pinky eval`: golden queries over a real brain, the baseline gate, bad input, proposals from usage."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import console_script
from mcp_helpers import RawServer, server_env

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "sample-notes"
GOLDEN = ROOT / "examples" / "golden.jsonl"
BASELINE = ROOT / "examples" / "golden-baseline.json"
POOL = "gotcha/postgres-pool-hangs-on-shutdown"


def pinky(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, text=True, capture_output=True,
                          env=env or dict(os.environ), timeout=300)


@pytest.fixture
def samples(project: Path) -> Path:
    shutil.copytree(SAMPLES, project / "documentation", dirs_exist_ok=True)
    return project


def golden(path: Path, *lines: dict[str, object] | str) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
                    encoding="utf-8")
    return path


# --- the shipped golden set, with the real default embedder ---------------------------------------


@pytest.fixture
def real(samples: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PINKY_HASH_EMBED", raising=False)
    return samples


@pytest.mark.slow
def test_the_examples_golden_set_passes_its_baseline(real: Path) -> None:
    done = pinky("eval", str(GOLDEN), "--baseline", str(BASELINE), "--json", cwd=real)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embedder"] == "use" and report["queries"] == len(GOLDEN.read_text().splitlines())
    assert report["comparison"]["passed"] and report["comparison"]["regressions"] == []
    assert {"cross-lingual", "paraphrase", "lexical", "error-text"} <= set(report["categories"])
    assert report["categories"]["cross-lingual"]["r@5"] >= 0.95  # the Spanish and Italian queries find their notes


@pytest.mark.slow
def test_a_baseline_claiming_better_figures_fails_the_gate_and_names_the_query(real: Path, tmp_path: Path) -> None:
    claimed = json.loads(BASELINE.read_text(encoding="utf-8"))
    target = min(claimed["results"], key=lambda item: item["scores"]["ndcg@10"])  # the one query not perfect
    assert target["scores"]["ndcg@10"] < 0.99, "the shipped baseline should hold one imperfect query"
    target["scores"] = dict.fromkeys(target["scores"], 1.0)
    claimed["overall"] = dict.fromkeys(claimed["overall"], 1.0)
    planted = tmp_path / "claimed.json"
    planted.write_text(json.dumps(claimed), encoding="utf-8")
    done = pinky("eval", str(GOLDEN), "--baseline", str(planted), cwd=real)
    assert done.returncode == 1
    assert f"worse: {target['query']!r} nDCG@10 1.0000 ->" in done.stderr
    assert "regression: overall: mrr@10 1.0000 ->" in done.stderr
    assert "fell by more than 0.01" in done.stderr.splitlines()[-1]


# --- the gate on a brain that changed (the hashing embedder: only the change matters) ---------------


def test_an_unchanged_brain_passes_and_a_changed_gold_note_fails_naming_its_query(samples: Path,
                                                                                  tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    first = pinky("eval", str(GOLDEN), "--save-baseline", str(baseline), cwd=samples)
    assert first.returncode == 0, first.stderr
    assert f"baseline written to {baseline}" in first.stdout
    again = pinky("eval", str(GOLDEN), "--baseline", str(baseline), cwd=samples)
    assert again.returncode == 0, again.stderr
    assert "no figure fell by more than 0.01" in again.stdout
    note = samples / "documentation" / "gotcha" / "postgres-pool-hangs-on-shutdown.md"
    note.write_text("---\ntitle: Lunch menu\ntype: gotcha\n---\nSoup on Mondays, fish on Fridays.\n", encoding="utf-8")
    assert pinky("reindex", cwd=samples).returncode == 0
    worse = pinky("eval", str(GOLDEN), "--baseline", str(baseline), cwd=samples)
    assert worse.returncode == 1
    assert "worse: 'service never exits after SIGTERM' nDCG@10 1.0000 -> 0.0000 (-1.0000)" in worse.stderr
    assert "regression: category error-text: r@5 1.0000 -> 0.6667 (-0.3333)" in worse.stderr
    loose = pinky("eval", str(GOLDEN), "--baseline", str(baseline), "--tolerance", "1", cwd=samples)
    assert loose.returncode == 0, loose.stderr  # a figure may fall by up to 1: nothing fails


def test_report_figures_categories_and_misses(samples: Path, tmp_path: Path) -> None:
    file = golden(tmp_path / "g.jsonl",
                  {"query": "postgres pool shutdown", "expected": [POOL], "category": "en"},
                  {"query": "lunch menu on fridays", "expected": ["bug/memory-leak-in-cache"], "category": "en"},
                  {"query": "sqlite index", "expected": ["documentation/decision/sqlite-as-the-index.md"],
                   "type": "decision", "mode": "keyword"})
    done = pinky("eval", str(file), "--json", cwd=samples)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["categories"]["en"]["queries"] == 2 and report["categories"]["uncategorised"]["r@10"] == 1.0
    first, missing, by_path = report["results"]
    assert first["ranks"] == {POOL: 1} and first["scores"]["mrr@10"] == 1.0
    assert missing["ranks"] == {"bug/memory-leak-in-cache": None} and missing["scores"]["ndcg@10"] == 0.0
    assert by_path["expected"] == ["decision/sqlite-as-the-index"] and by_path["mode"] == "bm25"
    assert set(by_path["found"]) == {"decision/sqlite-as-the-index"}  # the type filter applied
    assert {"p50", "p95"} == set(report["latency_ms"])
    text = pinky("eval", str(file), cwd=samples).stdout
    assert "overall" in text and "ndcg@10" in text and "latency: p50" in text
    assert "missed (line 2): 'lunch menu on fridays' -> not in the top 10: bug/memory-leak-in-cache" in text


# --- every bad input: one line, a non-zero exit ------------------------------------------------------


@pytest.mark.parametrize(("lines", "message"), [
    (['{"query": "x", "expected": ["' + POOL + '"]}', "{not json"], "g.jsonl:2: not valid JSON"),
    (['["a list"]'], "g.jsonl:1: each line must be a JSON object"),
    (['{"query": "x"}'], "g.jsonl:1: `expected` must be a non-empty list"),
    (['{"query": "", "expected": ["a"]}'], "g.jsonl:1: `query` must be a non-empty string"),
    (['{"query": "x", "expected": ["a"], "filter": 1}'], "g.jsonl:1: unknown field 'filter'"),
    (['{"query": "x", "expected": ["a"], "mode": "fuzzy"}'], "g.jsonl:1: unknown search mode 'fuzzy'"),
    (['', '{"query": "x", "expected": ["gotcha/no-such-note"]}'],
     "g.jsonl:2: expected 'gotcha/no-such-note' names no entry in this brain"),
    (['{"query": "x", "expected": ["' + POOL + '"], "type": "recipe"}'], "g.jsonl:1: unknown type 'recipe'"),
    ([''], "holds no query"),
])
def test_a_bad_golden_file_is_one_clear_line(samples: Path, tmp_path: Path, lines: list[str], message: str) -> None:
    done = pinky("eval", str(golden(tmp_path / "g.jsonl", *lines)), cwd=samples)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["missing.jsonl"], "golden file missing.jsonl does not exist"),
    (["G", "--tolerance", "-0.1"], "tolerance must be a number from 0 to 1"),
    (["G", "--tolerance", "lots"], "tolerance must be a number from 0 to 1"),
    (["G", "--baseline", "nowhere.json"], "baseline nowhere.json does not exist"),
    (["G", "--baseline", "BAD"], "has no `overall` figures"),
])
def test_bad_arguments_are_one_clear_line(samples: Path, tmp_path: Path, args: list[str], message: str) -> None:
    file = golden(tmp_path / "g.jsonl", {"query": "pool", "expected": [POOL]})
    (tmp_path / "bad.json").write_text('{"overall": {"r@5": "high"}}', encoding="utf-8")
    args = [str(file) if a == "G" else str(tmp_path / "bad.json") if a == "BAD" else a for a in args]
    done = pinky("eval", *args, cwd=samples)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr


def test_usage_errors_say_what_is_missing(samples: Path) -> None:
    assert "missing GOLDEN" in pinky("eval", cwd=samples).stderr
    both = pinky("eval", str(GOLDEN), "--from-usage", cwd=samples)
    assert both.returncode == 2 and "not both" in both.stderr


# --- proposals from what an agent did through the real pinky-mcp ---------------------------------------


def test_from_usage_proposes_searches_whose_hits_were_opened_or_marked_useful(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES, tmp_path / "documentation")
    env = server_env(tmp_path)
    assert pinky("reindex", cwd=tmp_path, env=env).returncode == 0
    with RawServer(tmp_path) as server:
        server.initialize()
        hits = server.call("brain_search", query="postgres pool shutdown")["structuredContent"]["hits"]
        assert hits and hits[0]["slug"] == POOL
        assert not server.call("brain_get", slug=POOL).get("isError")
        server.call("brain_search", query="sqlite decision")  # searched, nothing opened: no proposal
        server.call("brain_search", query="csv decimal comma")
        server.call("brain_feedback", slug="gotcha/locale-decimal-comma", verdict="useful", query="csv decimal comma")
        server.call("brain_search", query="cache memory")
        server.call("brain_feedback", slug="bug/memory-leak-in-cache", verdict="wrong", query="cache memory")
    out = tmp_path / "proposed.jsonl"
    done = pinky("eval", "--from-usage", "--out", str(out), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "2 proposed golden queries written" in done.stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(line["query"], tuple(line["expected"])) for line in lines} == {
        ("postgres pool shutdown", (POOL,)), ("csv decimal comma", ("gotcha/locale-decimal-comma",))}
    assert all(line["category"] == "from-usage" and line["why"] for line in lines)
    reused = pinky("eval", str(out), "--json", cwd=tmp_path, env=env)  # a proposal file is a golden file
    assert reused.returncode == 0, reused.stderr
    assert json.loads(reused.stdout)["queries"] == 2


def test_from_usage_with_nothing_recorded_says_so(samples: Path) -> None:
    done = pinky("eval", "--from-usage", cwd=samples)
    assert done.returncode == 0 and done.stdout == ""
    assert "no search yet whose hits were then opened" in done.stderr
