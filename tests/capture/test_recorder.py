"""The Stop hook's recorder: summaries as capped, redacted diary lines, offsets, record_stop."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from diary_fixtures import (
    CWD,
    HEADER,
    PEM_BODY,
    SECRETS,
    SESSION,
    TAG,
    WHEN,
    assistant,
    prompt,
    realistic_events,
    tool,
    write_jsonl,
)
from transcript_fixtures import edits_recorded, write_long_transcript

from pinky.capture.diary import parse_diary_line
from pinky.capture.recorder import OffsetStore, TurnTrack, format_lines, record, record_stop
from pinky.capture.transcript import SHOWN, SessionSummary, summarize
from pinky.errors import InvalidInput

# --- format_lines ------------------------------------------------------------------


def test_commands_keep_the_first_line_and_are_cut_only_when_formatted() -> None:
    long_cmd = "python -c 'print(1)' " + "x" * 200
    events = [
        assistant(tool("Bash", command="\n\ncat <<EOF > f\nline two\nEOF"), tool("Bash", command=long_cmd))
    ]
    summary = summarize(events)
    assert summary.commands == ("cat <<EOF > f", long_cmd)
    line = format_lines(summary, when=WHEN, session_id=SESSION)[-1]
    assert line.startswith(f"- 14:03 [{TAG}] commands: cat <<EOF > f; python -c 'print(1)' xxx")
    assert line.endswith("x…") and len(line.split("; ", 1)[1]) == 80


@pytest.mark.parametrize("column", [50, 60, 70, 79])
def test_a_secret_crossing_the_command_cut_is_still_redacted(column: int) -> None:
    secret = SECRETS["openai"]
    command = "x" * column + " " + secret + " && echo done"
    line = format_lines(summarize([assistant(tool("Bash", command=command))]), when=WHEN, session_id=SESSION)[
        -1
    ]
    assert "sk-proj" not in line and secret[8:16] not in line


def test_format_lines_shape() -> None:
    summary = SessionSummary(
        prompts=("fix the login bug", "add a test"),
        files=("src/a.py", "src/b.py"),
        tools=(("Edit", 3), ("Bash", 2), ("Read", 5)),
        commands=("pytest -q", "git status"),
        commits=("Fix login race",),
    )
    assert format_lines(summary, when=WHEN, session_id=SESSION) == [
        f"- 14:03 [{TAG}] asked: fix the login bug; then: add a test",
        f"- 14:03 [{TAG}] files: src/a.py, src/b.py",
        f"- 14:03 [{TAG}] tools: Edit×3, Bash×2, Read×5",
        f"- 14:03 [{TAG}] commands: pytest -q; git status",
        f"- 14:03 [{TAG}] commits: Fix login race",
    ]


def test_format_lines_omits_empty_kinds_and_empty_summary() -> None:
    assert format_lines(SessionSummary(), when=WHEN, session_id=SESSION) == []
    assert format_lines(SessionSummary(files=("a.py",)), when=WHEN, session_id=SESSION) == [
        f"- 14:03 [{TAG}] files: a.py"
    ]


def test_format_lines_collapses_whitespace() -> None:
    lines = format_lines(SessionSummary(prompts=("fix\n\n  the\tbug  ",)), when=WHEN, session_id=SESSION)
    assert lines == [f"- 14:03 [{TAG}] asked: fix the bug"]


def test_format_lines_caps_long_lines_with_a_count() -> None:
    files = tuple(f"src/pinky/module_{i:03d}.py" for i in range(60))
    prompts = tuple(f"prompt number {i} " + "word " * 40 for i in range(10))
    lines = format_lines(SessionSummary(prompts=prompts, files=files), when=WHEN, session_id=SESSION)
    assert all(len(line) <= 300 for line in lines)
    files_line = lines[1]
    shown = files_line.count("module_")
    assert files_line.endswith(f"… +{60 - shown} more")
    assert "src/pinky/module_000.py" in files_line
    assert "…" in lines[0] and "more" in lines[0]


def test_a_stretch_with_more_distinct_items_than_a_line_shows_keeps_the_first_and_counts_the_rest() -> None:
    events = [prompt(f"question number {i}") for i in range(SHOWN + 300)]
    events.append(assistant(*(tool("Edit", file_path=f"{CWD}/f{i}.py") for i in range(SHOWN + 5))))
    summary = summarize(events + events)  # every item twice: counted once
    assert len(summary.prompts) == SHOWN and summary.prompts[0] == "question number 0"
    assert dict(summary.more) == {"prompts": 300, "files": 5}
    asked, files = format_lines(summary, when=WHEN, session_id=SESSION)[:2]
    assert asked.endswith(f" … +{SHOWN + 300 - asked.count('question number')} more")
    assert files.endswith(f" … +{SHOWN + 5 - files.count('.py')} more")


def test_format_lines_truncates_a_single_huge_item() -> None:
    lines = format_lines(SessionSummary(prompts=("word " * 500,)), when=WHEN, session_id=SESSION)
    assert len(lines[0]) <= 300 and lines[0].endswith("…")


def test_format_lines_uses_local_time_of_an_aware_datetime() -> None:
    aware = datetime(2026, 11, 25, 14, 3, tzinfo=UTC)
    line = format_lines(SessionSummary(files=("a",)), when=aware, session_id=SESSION)[0]
    assert line.startswith(f"- {aware.astimezone():%H:%M} [")


def test_format_lines_sanitises_the_session_id() -> None:
    line = format_lines(SessionSummary(files=("a",)), when=WHEN, session_id="a]b c\nd-e")[0]
    assert line.startswith("- 14:03 [claude-") and line.endswith("] files: a")
    assert parse_diary_line(line) is not None


def test_format_lines_redacts_before_truncating() -> None:
    secret = SECRETS["anthropic"]
    # The key starts right where a naive cut would fall, so truncating first would leave a readable prefix.
    text = "x" * 110 + " " + secret
    line = format_lines(SessionSummary(prompts=(text,)), when=WHEN, session_id=SESSION)[0]
    assert secret[:20] not in line and "sk-ant" not in line


def test_format_lines_handles_a_huge_pasted_prompt() -> None:
    secret = SECRETS["github"]
    huge = "traceback line\n" * 50_000 + f"token {secret} " + "x" * 100_000
    lines = format_lines(SessionSummary(prompts=(f"why? {secret}\n" + huge,)), when=WHEN, session_id=SESSION)
    assert lines[0].startswith(f"- 14:03 [{TAG}] asked: why? [REDACTED:github-token] traceback line")
    assert len(lines[0]) <= 300 and secret not in lines[0]


# --- OffsetStore -------------------------------------------------------------------------


def test_offset_store_round_trip_and_file_shape(tmp_path: Path) -> None:
    store = OffsetStore(tmp_path / "state" / "diary-offsets.json")
    assert store.get("s1") == 0
    store.set("s1", 123, "/t/s1.jsonl", now=1000.0)
    store.set("s2", 7, now=1001.0)
    assert OffsetStore(store.path).get("s1", "/t/s1.jsonl") == 123
    assert OffsetStore(store.path).get("s2") == 7
    data = json.loads(store.path.read_text())
    assert data["s1"] == {"offset": 123, "path": "/t/s1.jsonl", "seen": 1000.0}
    assert not list(store.path.parent.glob(".*tmp"))


def test_offset_store_ignores_an_offset_for_a_different_transcript(tmp_path: Path) -> None:
    store = OffsetStore(tmp_path / "o.json")
    store.set("s1", 500, "/old/s1.jsonl")
    assert store.get("s1", "/new/s1.jsonl") == 0
    assert store.get("s1", "/old/s1.jsonl") == 500


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '"x"', '{"s1": 5, "s2": {"offset": -3}, "s3": {"offset": "7"}}', ""]
)
def test_offset_store_tolerates_a_corrupt_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "o.json"
    path.write_text(content)
    store = OffsetStore(path)
    assert store.get("s1") == 0 and store.get("s2") == 0 and store.get("s3") == 0
    store.set("s1", 9)
    assert OffsetStore(path).get("s1") == 9


def test_offset_store_prunes_old_sessions(tmp_path: Path) -> None:
    store = OffsetStore(tmp_path / "o.json")
    day = 24 * 3600.0
    store.set("old", 1, now=0.0)
    store.set("recent", 2, now=20 * day)
    store.set("new", 3, now=31 * day)
    assert (store.get("old"), store.get("recent"), store.get("new")) == (0, 2, 3)


def test_offset_store_rejects_a_negative_offset(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        OffsetStore(tmp_path / "o.json").set("s", -1)


# --- record_stop ----------------------------------------------------------------------------


def test_record_stop_writes_a_redacted_diary_and_nothing_twice(tmp_path: Path) -> None:
    transcript = tmp_path / "proj" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    partial = json.dumps(prompt("unfinished prompt that is still being written"))[:40]
    write_jsonl(transcript, realistic_events(), tail=partial)
    save_dir, offsets = tmp_path / "brain", tmp_path / "state" / "diary-offsets.json"

    path = record_stop(transcript, SESSION, save_dir, offsets, now=WHEN)

    assert path == save_dir / "diary" / "2026-11-25.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    body = [line for line in text.splitlines() if line.startswith("- ")]
    assert [parse_diary_line(line).kind for line in body] == [
        "asked",
        "files",
        "tools",
        "commands",
        "commits",
    ]
    assert all(line.startswith(f"- 14:03 [{TAG}] ") for line in body)
    assert "asked: fix the login bug my key is [REDACTED:anthropic-key]" in text
    assert "; then: add a test; also here is my .env: PASSWORD=[REDACTED:secret]" in text
    assert "files: src/auth.py, tests/test_auth.py, /etc/hosts" in text
    assert "tools: Read×1, Write×1, Edit×2, Bash×3" in text  # the commit a hook rejected is left out
    assert "commits: Fix login race\n" in text
    assert "Rejected by hook" not in text.split("commits:")[1]
    assert "unfinished prompt" not in text
    for name, secret in SECRETS.items():
        assert secret not in text, name
        assert secret[:16] not in text, name
    assert PEM_BODY[:16] not in text
    assert "BEGIN PRIVATE KEY" not in text

    # Nothing new: no second copy.
    assert record_stop(transcript, SESSION, save_dir, offsets, now=WHEN + timedelta(minutes=5)) is None
    assert path.read_text(encoding="utf-8") == text

    # The partial line is completed and a new turn arrives: only the new part is logged.
    with transcript.open("r+", encoding="utf-8") as f:
        content = f.read()
        f.seek(0)
        f.write(content[: len(content) - len(partial)])
        f.truncate()
    with transcript.open("a", encoding="utf-8") as f:
        f.write(json.dumps(prompt("now rename the module")) + "\n")
        f.write(json.dumps(assistant(tool("Bash", command="git mv a.py b.py"))) + "\n")
    record_stop(transcript, SESSION, save_dir, offsets, now=WHEN + timedelta(minutes=10))
    new_text = path.read_text(encoding="utf-8")
    assert new_text.startswith(text)
    assert new_text[len(text) :] == (
        f"- 14:13 [{TAG}] asked: now rename the module\n"
        f"- 14:13 [{TAG}] tools: Bash×1\n"
        f"- 14:13 [{TAG}] commands: git mv a.py b.py\n"
    )


# Passwords are only recognisable by the name they are assigned to, so they are tested in realistic_events().
@pytest.mark.parametrize("name", sorted(set(SECRETS) - {"db_password", "env_password"}))
def test_record_stop_never_writes_a_secret_from_a_prompt_or_command(tmp_path: Path, name: str) -> None:
    secret = SECRETS[name]
    events = [
        prompt(f"please use {secret} for this"),
        assistant(
            tool("Write", file_path=f"{CWD}/.env", content=f"TOKEN={secret}\n"),
            tool("Bash", command=f"deploy --token {secret} --verbose"),
            tool("Bash", command=f"export SERVICE_API_KEY={secret}; ./run"),
            tool("Bash", command=f"git commit -m 'Rotate key {secret}'"),
        ),
    ]
    transcript = write_jsonl(tmp_path / "t.jsonl", events)
    text = record_stop(transcript, SESSION, tmp_path / "b", tmp_path / "o.json", now=WHEN).read_text(
        encoding="utf-8"
    )
    assert "asked: please use [REDACTED:" in text  # the prompt itself did reach the diary
    assert "commands: deploy --token [REDACTED:" in text
    assert "export SERVICE_API_KEY=[REDACTED:" in text
    assert "commits: Rotate key [REDACTED:" in text
    assert secret not in text and secret[:12] not in text and secret[-12:] not in text


def test_record_stop_never_writes_a_private_key_block(tmp_path: Path) -> None:
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY[::-1]}\n-----END RSA PRIVATE KEY-----"
    transcript = write_jsonl(tmp_path / "t.jsonl", [prompt(f"why does this key fail?\n{pem}\nthanks")])
    text = record_stop(transcript, SESSION, tmp_path / "b", tmp_path / "o.json", now=WHEN).read_text(
        encoding="utf-8"
    )
    assert "asked: why does this key fail? [REDACTED:private-key] thanks" in text
    assert PEM_BODY[:10] not in text and PEM_BODY[::-1][:10] not in text


def test_record_stop_does_not_advance_the_offset_when_the_write_fails(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "t.jsonl", [prompt("hello")])
    save_dir = tmp_path / "brain"
    save_dir.mkdir()
    (save_dir / "diary").write_text("a file where the diary directory should be")
    offsets = tmp_path / "offsets.json"
    with pytest.raises(OSError):
        record_stop(transcript, SESSION, save_dir, offsets, now=WHEN)
    assert OffsetStore(offsets).get(SESSION) == 0

    (save_dir / "diary").unlink()
    path = record_stop(transcript, SESSION, save_dir, offsets, now=WHEN)
    assert "asked: hello" in path.read_text(encoding="utf-8")
    assert OffsetStore(offsets).get(SESSION) == transcript.stat().st_size


def test_record_stop_advances_past_events_that_produce_no_lines(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "t.jsonl", [prompt("meta", isMeta=True)])
    offsets = tmp_path / "offsets.json"
    assert record_stop(transcript, SESSION, tmp_path / "brain", offsets, now=WHEN) is None
    assert OffsetStore(offsets).get(SESSION) == transcript.stat().st_size
    assert not (tmp_path / "brain" / "diary").exists()


def test_record_stop_missing_transcript_is_nothing_new(tmp_path: Path) -> None:
    assert (
        record_stop(tmp_path / "nope.jsonl", SESSION, tmp_path / "b", tmp_path / "o.json", now=WHEN) is None
    )


def test_record_stop_requires_a_session_id(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        record_stop(tmp_path / "t.jsonl", "", tmp_path / "b", tmp_path / "o.json", now=WHEN)


def test_record_stop_restarts_after_the_transcript_was_replaced(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "t.jsonl", [prompt("first " + "padding " * 50)])
    offsets = tmp_path / "o.json"
    record_stop(transcript, SESSION, tmp_path / "b", offsets, now=WHEN)
    write_jsonl(transcript, [prompt("after rotation")])
    path = record_stop(transcript, SESSION, tmp_path / "b", offsets, now=WHEN)
    assert path is not None and "asked: after rotation" in path.read_text(encoding="utf-8")


# --- long transcripts: progress kept batch by batch --------------------------------------------


def test_runs_cut_short_by_their_budget_each_continue_where_the_last_stopped(tmp_path: Path) -> None:
    """Issue 22: a hook stopped at Claude Code's time limit kept nothing (its offset advanced only once the
    whole backlog was written), so the next run started over and never got further. Each run now writes
    what it read and stores its offset; the next goes on from there, and nothing is written twice."""
    transcript, offsets, save_dir = tmp_path / "t.jsonl", tmp_path / "offsets.json", tmp_path / "brain"
    turns = write_long_transcript(transcript, 3 * 1024 * 1024)
    size, stops = transcript.stat().st_size, []
    while not stops or stops[-1] < size:
        record(transcript, save_dir, [TurnTrack(OffsetStore(offsets), SESSION, transcript)], now=WHEN, budget=0.005)
        stops.append(OffsetStore(offsets).get(SESSION, transcript))
        assert len(stops) < 10_000 and (len(stops) == 1 or stops[-1] > stops[-2])  # every run got further
    assert len(stops) > 2, stops  # cut short at least twice
    assert edits_recorded((save_dir / "diary" / "2026-11-25.md").read_text(encoding="utf-8")) == turns


def test_a_stretch_another_hook_recorded_meanwhile_is_not_written_again(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "t.jsonl", [prompt("only once please")])
    offsets, save_dir = tmp_path / "offsets.json", tmp_path / "brain"
    first, second = (TurnTrack(OffsetStore(offsets), SESSION, transcript) for _ in range(2))  # both read offset 0
    assert record(transcript, save_dir, [first], now=WHEN) == [save_dir / "diary" / "2026-11-25.md"]
    assert record(transcript, save_dir, [second], now=WHEN) == []
    assert (save_dir / "diary" / "2026-11-25.md").read_text(encoding="utf-8").count("only once please") == 1


def test_the_offset_store_keeps_state_beside_an_offset(tmp_path: Path) -> None:
    store = OffsetStore(tmp_path / "o.json")
    written = store.set("s1", 10, "/t.jsonl", now=5.0, extra={"decided": ["We'll use RQ."]})
    assert store.entry("s1") == written == {"offset": 10, "path": "/t.jsonl", "seen": 5.0, "decided": ["We'll use RQ."]}
    assert store.get("s1", "/t.jsonl") == 10 and store.entry("s2") is None
