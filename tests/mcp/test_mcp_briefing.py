"""briefing() and related(): the read-only views behind brain_briefing and brain_related (no process)."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest
from helpers import write_note

from pinky.base.dates import parse_since
from pinky.config import load_config
from pinky.errors import InvalidInput, NotFound
from pinky.kb import KnowledgeBase


@pytest.fixture
def kb(project: Path) -> KnowledgeBase:
    with KnowledgeBase(load_config()) as brain:
        yield brain


def test_parse_since_accepts_iso_and_spans() -> None:
    now = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
    assert parse_since("36h", now) == now - dt.timedelta(hours=36)
    assert parse_since("2w", now) == now - dt.timedelta(weeks=2)
    assert parse_since("2026-11-20T09:00Z") == dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    assert parse_since("2026-11-20").tzinfo is not None  # no zone: local time
    for bad in ("", "yesterday", "12x", None, "2026-13-01"):
        with pytest.raises(InvalidInput, match="ISO-8601"):
            parse_since(bad)  # type: ignore[arg-type]


def test_briefing_splits_new_and_updated_and_reads_the_diary(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    old = write_note(docs, "gotcha/old.md", "---\ntitle: Old one\ncreated: 2020-01-01\n---\nbody\n")
    ancient = write_note(docs, "note/ancient.md", "---\ntitle: Untouched\ncreated: 2020-01-01\n---\nbody\n")
    os.utime(ancient, (time.time() - 86400 * 30, time.time() - 86400 * 30))
    now = dt.datetime.now().astimezone()
    earlier = now - dt.timedelta(hours=3)
    # Each line goes into the diary of its own day (after midnight, 3 hours ago was yesterday).
    lines = {earlier: f"- {earlier:%H:%M} [s1] asked: too early\n",
             now: f"- {now:%H:%M} [s2] files: src/db.py\nnot a diary line\n"}
    for moment, line in lines.items():
        path = docs / f"diary/{moment:%Y-%m-%d}.md"
        head = "" if path.exists() else "---\ntitle: Diary\ntype: diary\n---\n# Diary\n\n"
        write_note(docs, f"diary/{moment:%Y-%m-%d}.md", (path.read_text() if path.exists() else "") + head + line)
    kb.reindex()
    fresh = kb.save("Fresh one", "new knowledge", type="pattern")
    old.write_text(old.read_text() + "edited\n")
    kb.index_file(old)

    news = kb.briefing((now - dt.timedelta(hours=1)).isoformat())
    assert [i["slug"] for i in news["new"]] == [fresh.slug]
    assert [i["slug"] for i in news["updated"]] == ["gotcha/old"]
    assert [(d["session"], d["kind"], d["text"]) for d in news["diary"]] == [("s2", "files", "src/db.py")]
    assert news["counts"] == {"new": 1, "updated": 1, "diary_lines": 1} and not news["truncated"]
    assert "summary" not in news["new"][0]
    full = kb.briefing("1d", compact=False)
    assert full["new"][0]["summary"] == "new knowledge" and full["new"][0]["tags"] == []
    assert len(full["diary"]) == 2  # the 3-hours-old line is inside a day
    assert kb.briefing("2999-01-01")["counts"] == {"new": 0, "updated": 0, "diary_lines": 0}


def test_related_resolves_wiki_md_and_title_links(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    write_note(docs, "gotcha/pg-pool.md", "---\ntitle: PG pool hangs\nfiles: [src/db.py, src/app.py]\n---\n"
               "See [[retries]], [[Deploy Guide]], [the guide](../guide/deploy.md) and [[missing-thing]].\n")
    write_note(docs, "pattern/retries.md", "# Retries\n\nBack off; see [[gotcha/pg-pool]].\n")
    write_note(docs, "guide/deploy.md", "# Deploy Guide\n\nNothing links back from here.\n")
    write_note(docs, "note/unrelated.md", "# Pool party\n\npg-pool is mentioned but not linked.\n")
    kb.reindex()

    graph = kb.related("gotcha/pg-pool")
    assert sorted((lk["target"], lk["slug"] or "") for lk in graph["links"]) == [
        ("../guide/deploy.md", "guide/deploy"), ("Deploy Guide", "guide/deploy"), ("missing-thing", ""),
        ("retries", "pattern/retries")]
    assert [b["slug"] for b in graph["backlinks"]] == ["pattern/retries"]
    assert [c["file"] for c in graph["code"]] == ["src/db.py", "src/app.py"]
    assert {b["slug"] for b in kb.related("guide/deploy")["backlinks"]} == {"gotcha/pg-pool"}
    assert kb.related("note/unrelated") == {**kb.related("note/unrelated"), "links": [], "backlinks": []}
    with pytest.raises(NotFound):
        kb.related("nope/nothing")
