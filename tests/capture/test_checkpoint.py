"""PreCompact: the decisions and open threads of a conversation reach the diary before compaction."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest
from capture_fixtures import bash, prompt, say, turn
from helpers import write_note
from hook_helpers import HOOKS, base, hook_env, measured, run_hook
from transcript_fixtures import edits_recorded, write_long_transcript

from pinky.capture.checkpoint import MAX_ITEMS, decisions_and_open_threads
from pinky.capture.recorder import CheckpointTrack, OffsetStore, TurnTrack, record
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


# --- long conversations -----------------------------------------------------------------------------


def test_decisions_found_before_a_run_stops_wait_redacted_and_are_written_once_at_the_end(tmp_path: Path) -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 4
    transcript, offsets, save_dir = tmp_path / "t.jsonl", tmp_path / "checkpoints.json", tmp_path / "brain"
    filler = [say(f"Reading module {i} of the parser, nothing to report here at all.") for i in range(20_000)]
    events = [say(f"We'll use the token {secret} for the nightly deploys."), *filler,
              say("Next step: rotate that token.")]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    when = datetime(2026, 11, 25, 14, 3)
    record(transcript, save_dir, [CheckpointTrack(OffsetStore(offsets), "s1", transcript)], now=when, budget=0.01)
    waiting = OffsetStore(offsets).entry("s1")
    assert waiting is not None and 0 < waiting["offset"] < transcript.stat().st_size
    assert waiting["decided"] == ["We'll use the token [REDACTED:github-token] for the nightly deploys."]
    assert not (save_dir / "diary").exists()  # nothing written before the end is known
    while OffsetStore(offsets).get("s1", transcript) < transcript.stat().st_size:
        record(transcript, save_dir, [CheckpointTrack(OffsetStore(offsets), "s1", transcript)], now=when, budget=0.01)
    text = (save_dir / "diary" / "2026-11-25.md").read_text(encoding="utf-8")
    assert text.count("decided: We'll use the token [REDACTED:github-token] for the nightly deploys.") == 1
    assert text.count("open: Next step: rotate that token.") == 1 and secret not in text
    assert OffsetStore(offsets).entry("s1").keys() == {"offset", "path", "seen"}  # nothing left waiting


def reading_rate(scratch: Path) -> int:
    """Bytes of transcript this machine records per second, as PreCompact reads them (16-160 MB a
    second is assumed at the least and the most)."""
    sample = scratch / "sample.jsonl"
    write_long_transcript(sample, 4 * 1024 * 1024)
    started = time.perf_counter()
    record(sample, scratch / "brain", [TurnTrack(OffsetStore(scratch / "o.json"), "s", sample),
                                       CheckpointTrack(OffsetStore(scratch / "c.json"), "s", sample)])
    rate = sample.stat().st_size / (time.perf_counter() - started)
    return int(min(max(rate, 16e6), 160e6))


def test_a_pre_compact_killed_midway_keeps_its_progress_and_reads_in_flat_memory(project: Path,
                                                                                   tmp_path: Path) -> None:
    """Issue 22: PreCompact read a 200 MB transcript whole (47 s, 1.5 GB) and stored its offsets only at
    the end, so a hook killed at Claude Code's 30 s limit kept nothing and the next one started over.
    It now streams the file and stores its progress every second."""
    small = tmp_path / "small"
    write_note(small, "pinky.toml", "")
    write_long_transcript(small / "t.jsonl", 64 * 1024)
    small_payload = json.dumps(base(small, "PreCompact", trigger="auto")).encode()
    rc, _, _, baseline_kib, _ = measured([*HOOKS, "pre-compact"], small_payload, small, hook_env(small))
    assert rc == 0

    transcript = project / "t.jsonl"
    turns = write_long_transcript(transcript, reading_rate(tmp_path) * 3)  # ~3 s of reading: progress at 1 s
    size = transcript.stat().st_size
    offsets = Path(os.environ["PINKY_HOME"]) / "state" / "diary-offsets.json"
    payload = base(project, "PreCompact", trigger="auto", custom_instructions="")
    hook = subprocess.Popen([*HOOKS, "pre-compact"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=project, env=hook_env(project))
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(payload).encode())
    hook.stdin.close()
    deadline = time.monotonic() + 120
    while OffsetStore(offsets).get(payload["session_id"]) == 0 and hook.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    running = hook.poll() is None
    hook.send_signal(signal.SIGKILL)
    hook.wait()
    kept = OffsetStore(offsets).get(payload["session_id"])
    assert running and 0 < kept < size, (running, kept, size)  # killed midway, with its progress stored
    after_kill = diary(project)
    assert "please fix thing 1 " in after_kill

    rc, out, err, peak_kib, _ = measured([*HOOKS, "pre-compact"], json.dumps(payload).encode(), project,
                                         hook_env(project))
    assert (rc, out, err) == (0, b"", b"")
    assert OffsetStore(offsets).get(payload["session_id"]) == size
    text = diary(project)
    assert text.startswith(after_kill) and text.count("please fix thing 1 ") == 1  # it did not start over
    assert edits_recorded(text) == turns  # every turn recorded, none twice
    assert 1 <= text.count("] decided: We'll use the ") <= 5
    assert peak_kib < baseline_kib + 16 * 1024, (baseline_kib, peak_kib, size)  # memory did not grow
