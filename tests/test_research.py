"""brain_research and `pinky research`: a dossier on a topic, packed to a budget, through the real programs."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, server_env

POOL = ("---\ntitle: Postgres pool hangs on shutdown\ntype: gotcha\ntags: [postgres]\n---\n"
        "The postgres pool waits for idle connections; see [[decision/pool-size]].\n"
        + "Call pool.close(timeout=5) before exiting. " * 60)
SIZE_20 = "---\ntitle: Postgres pool size\ntype: decision\nkey: db.pool-size\n---\nThe postgres pool size is 20.\n"
SIZE_50 = "---\ntitle: Postgres pool limit\ntype: note\nkey: db.pool-size\n---\nThe postgres pool size is 50.\n"
LUNCH = "---\ntitle: Lunch menu\ntype: note\n---\nSoup on Mondays.\n"


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    docs = tmp_path / "documentation"
    write_note(docs, "gotcha/pool-hangs.md", POOL)
    write_note(docs, "decision/pool-size.md", SIZE_20)
    write_note(docs, "note/pool-limit.md", SIZE_50)
    write_note(docs, "note/lunch.md", LUNCH)
    today = dt.datetime.now().date().isoformat()
    write_note(docs, f"diary/{today}.md", f"# {today}\n\n- 09:15 [abc12345] prompt: why does the postgres pool hang?\n"
                                          f"- 09:20 [abc12345] files: src/app.py\n"
                                          f"- 09:30 [abc12345] note: fixed per gotcha/pool-hangs\n")
    env = server_env(tmp_path, PINKY_LOG_QUERIES="1")
    subprocess.run([*console_script("pinky"), "reindex"], cwd=tmp_path, env=env, check=True, capture_output=True)
    return tmp_path


def test_the_dossier_holds_entries_links_contradictions_gaps_and_diary(brain: Path) -> None:
    with RawServer(brain, PINKY_LOG_QUERIES="1") as server:
        server.initialize()
        assert server.call("brain_search", query="kubernetes autoscaler")["structuredContent"]["count"] == 0  # a gap
        result = server.call("brain_research", topic="postgres pool kubernetes autoscaler", max_tokens=5000)
    assert not result.get("isError"), result
    out = result["structuredContent"]
    slugs = [item["slug"] for item in out["entries"]]
    assert {"gotcha/pool-hangs", "decision/pool-size", "note/pool-limit"} <= set(slugs)
    assert "note/lunch" not in slugs
    assert {"from": "gotcha/pool-hangs", "to": "decision/pool-size", "rel": "relates",
            "from_title": "Postgres pool hangs on shutdown", "to_title": "Postgres pool size",
            "both_in_top": True} in out["links"]
    assert [(c["a"], c["b"]) for c in out["contradictions"]] == [("decision/pool-size", "note/pool-limit")]
    assert out["contradictions"][0]["reason"].startswith("same key")
    assert [g["query"] for g in out["gaps"]] == ["kubernetes autoscaler"]
    assert [d["text"] for d in out["diary"]] == ["fixed per gotcha/pool-hangs", "why does the postgres pool hang?"]
    assert all(n == 0 for n in out["cut"].values()) and out["notice"] is None
    assert out["used_tokens"] <= 5000
    text = result["content"][0]["text"]
    assert "# Research: postgres pool kubernetes autoscaler" in text and "## Contradictions" in text


def test_a_small_budget_cuts_and_says_what(brain: Path) -> None:
    with RawServer(brain) as server:
        server.initialize()
        small = server.call("brain_research", topic="postgres pool", max_tokens=200)["structuredContent"]
        too_small = server.call("brain_research", topic="postgres pool", max_tokens=50)
        empty = server.call("brain_research", topic="   ")
    assert small["used_tokens"] <= 200
    assert sum(small["cut"].values()) > 0 and "cut to fit 200 tokens" in small["notice"]
    packed = [item for name in ("entries", "links", "contradictions", "gaps", "diary") for item in small[name]]
    assert sum(len(json.dumps(item, ensure_ascii=False)) for item in packed) <= 200 * 4
    assert too_small.get("isError") is True and "max_tokens" in too_small["content"][0]["text"]
    assert empty.get("isError") is True and "topic must not be empty" in empty["content"][0]["text"]


def test_cli_research_prints_the_dossier(brain: Path) -> None:
    env = server_env(brain)
    run = [*console_script("pinky"), "research", "postgres pool"]
    text = subprocess.run(run, cwd=brain, env=env, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "## Postgres pool hangs on shutdown  [gotcha] gotcha/pool-hangs" in text.stdout
    data = json.loads(subprocess.run([*run, "--json", "--max-tokens", "300"], cwd=brain, env=env,
                                     capture_output=True, text=True, timeout=120).stdout)
    assert data["max_tokens"] == 300 and data["used_tokens"] <= 300
    bad = subprocess.run([*run, "--max-tokens", "99999"], cwd=brain, env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "max_tokens must be a whole number from 200 to 20,000" in bad.stderr
