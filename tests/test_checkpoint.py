"""PreCompact: the decisions and open threads of a conversation reach the diary before compaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture_fixtures import bash, prompt, say, turn
from helpers import write_note
from hook_helpers import base, run_hook

from pinky.checkpoint import MAX_ITEMS, decisions_and_open_threads
from pinky.config import load_config
from pinky.kb import KnowledgeBase

CONVERSATION = turn(
    prompt("Should we keep Celery or move the jobs to RQ?"),
    say("RQ is simpler here. We'll use RQ for the background jobs and drop the Celery beat schedule. "
        "The retry policy stays as it is."),
    bash("pip install rq", "Successfully installed rq-1.16"),
    say("Jobs are ported. TODO: the nightly report still needs a cron entry. "
        "I have not yet tested the failure queue."),
    prompt("ok. Let's use Redis 7 in docker compose for local runs"),
    say("Done. Next step: update the deployment chart."),
)


def test_decisions_and_open_threads_are_extracted_in_order() -> None:
    decided, still_open = decisions_and_open_threads(CONVERSATION)
    assert decided == ["We'll use RQ for the background jobs and drop the Celery beat schedule.",
                       "Let's use Redis 7 in docker compose for local runs"]  # "retry policy stays": no cue
    assert still_open == ["TODO: the nightly report still needs a cron entry.",
                                       "I have not yet tested the failure queue.",
                                       "Next step: update the deployment chart."]


def test_tool_output_and_repeats_are_left_out_and_the_count_is_capped() -> None:
    noisy = turn(bash("make", "TODO: this is compiler output, not the conversation"),
                 *[say(f"We'll use option {i} for the cache layer.") for i in range(9)],
                 say("We'll use option 8 for the cache layer."))
    decided, still_open = decisions_and_open_threads(noisy)
    assert still_open == []
    assert len(decided) == MAX_ITEMS and decided[-1] == "We'll use option 8 for the cache layer."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    write_note(root, "documentation/guide/readme.md", "---\ntitle: Readme\ntype: guide\n---\nHello.\n")
    return root


def compact(root: Path) -> None:
    payload = base(root, "PreCompact", trigger="manual", custom_instructions="keep notes")
    result = run_hook("pre-compact", payload, root)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def diary(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "documentation/diary").glob("*.md")))


def test_pre_compact_writes_the_checkpoint_once_and_makes_it_searchable(project: Path) -> None:
    (project / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in CONVERSATION), encoding="utf-8")
    compact(project)
    text = diary(project)
    assert "decided: We'll use RQ for the background jobs" in text
    assert "open: TODO: the nightly report still needs a cron entry." in text
    assert "asked: Should we keep Celery or move the jobs to RQ?" in text  # the turn so far, flushed
    compact(project)
    assert diary(project) == text  # nothing new since: nothing written twice
    stop = run_hook("stop", base(project, "Stop", stop_hook_active=False, last_assistant_message="x"), project)
    assert stop.returncode == 0 and diary(project) == text  # and the next Stop does not log the turn again
    with KnowledgeBase(load_config(cwd=project)) as kb:
        assert any(h.type == "diary" for h in kb.search("nightly report cron", mode="bm25").hits)


def test_pre_compact_outside_a_project_does_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps(prompt("We'll use RQ for jobs")) + "\n", encoding="utf-8")
    compact(tmp_path)
    assert not (tmp_path / "documentation").exists()
