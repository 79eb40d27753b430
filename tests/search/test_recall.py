"""Recall on every prompt: the relevance gate on a real index, the rendering, and the hook process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import write_note
from hook_helpers import base, context_of, run_hook

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search.recall import (
    HEADER,
    age_note,
    asks,
    candidates,
    clauses,
    gist,
    needed_terms,
    prompt_terms,
    recall,
    render,
    words,
)
from pinky.store.readonly import connect_ro

NOTES = {
    "gotcha/pg-pool-xdist.md": ("Pool timeout under pytest-xdist", "gotcha",
                                "Each xdist worker opens its own pool of ten connections; with -n 8 Postgres runs "
                                "out of max_connections and tests hang on pool checkout. Set POOL_SIZE=2 in conftest."),
    "decision/wal.md": ("Use WAL journaling for SQLite", "decision",
                        "Chosen for concurrent readers; checkpoints run from the upkeep thread."),
    "guide/release.md": ("How to cut a release", "guide",
                         "Tag vMAJOR.MINOR.PATCH, let CI build the wheel, then twine upload from the artifacts."),
    "gotcha/docker-dns.md": ("Docker builds fail to resolve hosts behind the VPN", "gotcha",
                             "The VPN rewrites resolv.conf; pass --network host to docker build or set dns in "
                             "daemon.json."),
    "pattern/retry.md": ("Retry with jittered exponential backoff", "pattern",
                         "Wrap flaky network calls in tenacity with wait_random_exponential(max=30)."),
}
IRRELEVANT = ["commit this with a good message", "run the tests and fix whatever fails", "continue",
              "rename the variable to something clearer", "make the README shorter", "yes go ahead"]


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    for rel, (title, type_, body) in NOTES.items():
        front = f"---\ntitle: {title}\ntype: {type_}\ncreated: 2026-01-05\n---\n"
        write_note(root, f"documentation/{rel}", front + body + "\n")
    write_note(root, "documentation/diary/2026-11-20.md",
               "# 2026-11-20\n\n- 10:00 [abcd1234] asked: why do tests hang on pool checkout under xdist\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    return root


def slugs(root: Path, prompt: str, **kwargs: object) -> list[str]:
    conn = connect_ro(str(root / "brain.db"))
    assert conn is not None
    try:
        found = recall(conn, prompt, **kwargs)  # type: ignore[arg-type]
        ids = {r.entry_id for r in found}
        return [slug for eid, slug in conn.execute("SELECT id, slug FROM entry") if eid in ids]
    finally:
        conn.close()


# --- the gate on a real index ------------------------------------------------------------------------


def test_a_prompt_about_a_note_recalls_it(brain: Path) -> None:
    assert slugs(brain, "tests hang on pool checkout when I run pytest with xdist") == ["gotcha/pg-pool-xdist"]
    assert slugs(brain, "docker build cannot resolve hosts on the VPN") == ["gotcha/docker-dns"]


@pytest.mark.parametrize("prompt", IRRELEVANT)
def test_everyday_prompts_recall_nothing(brain: Path, prompt: str) -> None:
    assert slugs(brain, prompt) == []


def test_diary_lines_are_never_recalled(brain: Path) -> None:
    assert "diary/2026-11-20" not in slugs(brain, "why do tests hang on pool checkout under xdist", threshold=-100)


def test_excluded_entries_are_left_out(brain: Path) -> None:
    conn = connect_ro(str(brain / "brain.db"))
    assert conn is not None
    prompt = "tests hang on pool checkout when I run pytest with xdist"
    first = recall(conn, prompt)
    assert first and recall(conn, prompt, exclude={first[0].entry_id}) == []
    conn.close()


def test_relevance_falls_as_the_prompt_leaves_more_of_itself_unmatched(brain: Path) -> None:
    conn = connect_ro(str(brain / "brain.db"))
    assert conn is not None
    tight = candidates(conn, "pool checkout xdist")[0].score
    loose = candidates(conn, "pool checkout xdist kubernetes helm terraform ingress autoscaler")[0].score
    conn.close()
    assert tight > loose


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample brain (examples/sample-notes): what a new user's brain looks like."""
    import shutil

    root = tmp_path_factory.mktemp("sample") / "proj"
    write_note(root, "pinky.toml", "")
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "sample-notes", root / "documentation")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    return root


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Why does the app hang when shutting down the postgres pool? Also shrink the cache.",
     "gotcha/postgres-pool-hangs-on-shutdown"),
    ("Also shrink the cache. Why does the app hang when shutting down the postgres pool?",
     "gotcha/postgres-pool-hangs-on-shutdown"),
    ("Why does the app hang when shutting down the postgres pool?\nshrink the cache",
     "gotcha/postgres-pool-hangs-on-shutdown"),
])
def test_one_ask_of_a_two_part_prompt_that_matches_a_note_is_enough(sample: Path, prompt: str, expected: str) -> None:
    conn = connect_ro(str(sample / "brain.db"))
    assert conn is not None
    whole = [c for c in candidates(conn, prompt) if c.score >= 0.68]  # type: ignore[arg-type]
    conn.close()
    assert whole == []  # judged whole, the other ask's words count as left out and sink the note under the gate
    assert len(clauses(prompt)) == 1  # the other ask is too short to be judged alone
    assert expected in slugs(sample, prompt)


def test_the_hook_recalls_on_one_ask_of_a_two_part_prompt(sample: Path) -> None:
    prompt = "Why does the app hang when shutting down the postgres pool? Also shrink the cache."
    context = context_of(run_hook("user-prompt", prompt_payload(sample, prompt), sample), "UserPromptSubmit")
    assert "gotcha/postgres-pool-hangs-on-shutdown" in context


@pytest.mark.parametrize("prompt", [
    "Commit this with a good message. Also shrink the cache.", "Run the tests and fix whatever fails. Then push.",
    "Make the README shorter. Also add type hints to the module.\nThen open a pull request.",
])
def test_two_part_prompts_about_nothing_in_the_brain_stay_silent(brain: Path, sample: Path, prompt: str) -> None:
    assert slugs(brain, prompt) == []
    assert slugs(sample, prompt) == []


def test_clauses_split_sentences_and_lines_but_not_a_single_ask() -> None:
    assert clauses("why does the pool hang at shutdown") == []
    assert clauses("The parser drops tabs in YAML keys. Emit a warning when reading legacy files") == [
        "The parser drops tabs in YAML keys.", "Emit a warning when reading legacy files"]
    assert clauses("Why does the postgres pool hang at exit? Also add type hints.") == [
        "Why does the postgres pool hang at exit?"]  # a short ask is not judged alone
    assert len(clauses(". ".join(f"topic{i} detail{i} part{i} item{i}" for i in range(9)))) == 4  # 150 ms budget


def test_a_brain_of_one_note_still_recalls_it(tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    write_note(root, "pinky.toml", "")
    write_note(root, "documentation/gotcha/pool.md", "---\ntitle: PG pool hangs on shutdown\ntype: gotcha\n---\n"
                                                      "Call pool.close(timeout=5) before the process exits.\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    assert slugs(root, "Why does the pool hang on shutdown? Run the check and fix it.") == ["gotcha/pool"]
    assert slugs(root, "fix the connection timeout in the worker") == []  # one shared word is not enough
    assert slugs(root, "commit this with a good message") == []


# --- pure pieces -------------------------------------------------------------------------------------


def test_prompt_terms_keep_content_words_once() -> None:
    assert prompt_terms("Please, can you FIX the Pool timeout? the pool!") == ["pool", "timeout"]
    assert prompt_terms("port 5432 on v2") == ["port", "5432", "v2"]
    assert len(prompt_terms(" ".join(f"word{i}" for i in range(500)))) == 32


def test_render_fits_the_budget_and_says_how_old_each_entry_is() -> None:
    now = time.mktime(time.strptime("2026-11-26", "%Y-%m-%d"))
    rows = [("gotcha/a", "gotcha", "A title", "# A title\n\nThe first real line. " * 20, "2026-01-01", "2026-11-20"),
            ("guide/b", "guide", "B", "Body of b.", "2025-01-01", None)]
    text = render(rows, budget=600, stale_days={"gotcha": 180, "guide": 365}, now=now)
    assert text.startswith(HEADER) and len(text) <= 600
    assert "gotcha/a [gotcha] A title — The first real line." in text and "(verified 6 d ago)" in text
    assert "written 694 d ago, may be stale" in text
    assert render(rows, budget=len(HEADER) + 5, stale_days={}, now=now) == ""
    assert "may be stale" not in render(rows, budget=600, stale_days={"guide": None}, now=now)  # never stale


def test_gist_skips_the_repeated_title_and_markup() -> None:
    assert gist("Use WAL", "# Use WAL\n\n- Chosen for readers.") == "Chosen for readers."
    assert gist("T", "") == ""


def test_age_note_without_a_date_says_nothing() -> None:
    assert age_note(None, None, 90) == "" and age_note("garbage!!!", None, 90) == ""
    assert age_note("2026-11-26", None, None, now=time.mktime(time.strptime("2026-11-26", "%Y-%m-%d"))) == (
        "written today")


# --- the hook process --------------------------------------------------------------------------------


def prompt_payload(root: Path, prompt: str, session: str = "f7d3a9c2-1111-2222-3333-444455556666") -> dict:
    return {**base(root, "UserPromptSubmit", prompt_id="4f7f0000", permission_mode="default", prompt=prompt),
            "session_id": session}


def test_hook_injects_a_relevant_entry_once_per_session(brain: Path) -> None:
    payload = prompt_payload(brain, "tests hang on pool checkout when I run pytest with xdist")
    context = context_of(run_hook("user-prompt", payload, brain), "UserPromptSubmit")
    assert "gotcha/pg-pool-xdist" in context and len(context) <= 600
    again = run_hook("user-prompt", payload, brain)
    assert again.returncode == 0 and again.stdout == ""  # already in this session's context
    other = run_hook("user-prompt", prompt_payload(brain, payload["prompt"], session="another"), brain)
    assert "gotcha/pg-pool-xdist" in context_of(other, "UserPromptSubmit")


@pytest.mark.parametrize("prompt", ["commit this with a good message", "/compact", "", "   "])
def test_hook_is_silent_when_nothing_is_relevant(brain: Path, prompt: str) -> None:
    result = run_hook("user-prompt", prompt_payload(brain, prompt), brain)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_hook_can_be_turned_off_and_budgeted(brain: Path) -> None:
    payload = prompt_payload(brain, "tests hang on pool checkout when I run pytest with xdist")
    off = run_hook("user-prompt", payload, brain, PINKY_RECALL="off")
    assert off.returncode == 0 and off.stdout == ""
    short = context_of(run_hook("user-prompt", payload, brain, PINKY_RECALL_CHARS="200"), "UserPromptSubmit")
    assert len(short) <= 200 and "gotcha/pg-pool-xdist" in short


def test_hook_fails_open_on_a_damaged_index(brain: Path) -> None:
    (brain / "brain.db").write_bytes(b"not a database at all" * 100)
    for name in ("brain.db-wal", "brain.db-shm"):
        (brain / name).unlink(missing_ok=True)
    result = run_hook("user-prompt", prompt_payload(brain, "pool checkout xdist"), brain)
    assert result.returncode == 0 and result.stdout == ""
    assert "pinky-hooks user-prompt" in result.stderr


def test_hook_output_is_one_json_object(brain: Path) -> None:
    result = run_hook("user-prompt", prompt_payload(brain, "docker build cannot resolve hosts on the VPN"), brain)
    out = json.loads(result.stdout)
    assert set(out) == {"hookSpecificOutput"} and out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


# --- only what can clear the gate is looked for ------------------------------------------------------


def test_needed_terms_leave_out_the_words_that_cannot_lift_a_chunk_alone() -> None:
    weights = {"pool": 5.0, "the": 0.1, "worker": 0.2, "zebra": 4.0}  # zebra: in no chunk
    weighed = (weights, ["pool", "the", "worker"], 6.0)
    # a chunk of "the" and "worker" only: (0.3 - 0.5 * 9.0) / 6 < 0; with "pool" too: (5.3 - 0.5 * 4.0) / 6 = 0.55
    assert needed_terms(weighed, 0.5, 0.5) == ["pool"]
    assert needed_terms(weighed, 0.5, 0.6) == []  # not even all three together reach it
    assert needed_terms(weighed, 0.5, None) == ["pool", "the", "worker"]  # no floor: every word
    assert needed_terms(weighed, 0.5, -1.0) == ["pool", "the", "worker"]


def test_a_prompt_of_words_every_note_holds_recalls_nothing_without_a_full_text_pass(tmp_path: Path) -> None:
    """A word in most notes scores next to nothing; a full-text pass over all its chunks (24 ms at 10,000 notes)
    was spent to find that out on every prompt."""
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    for i in range(60):
        write_note(root, f"documentation/note/n{i}.md", f"# Note {i}\n\nThe worker queue and the deploy step {i}.\n")
    write_note(root, "documentation/gotcha/tz.md", "# Timezones in CI\n\nCI runs in UTC: set TZ before the suite.\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    conn = connect_ro(str(root / "brain.db"))
    assert conn is not None
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        assert recall(conn, "why does the worker queue stall on deploy when migrations lag behind replicas?") == []
        assert not [s for s in statements if "bm25(" in s]
        found = recall(conn, "the worker queue runs in UTC on CI: set TZ?")  # rare words still found
    finally:
        conn.close()
    assert len(found) == 1 and [s for s in statements if "bm25(" in s]


def test_words_and_asks_cut_as_the_regular_expressions_did() -> None:
    """The prompt hook no longer imports `re`: its word and ask splitting are string methods, and must cut every
    text as `\\w+` and `(?<=[.?!;])\\s+|\\n+` did (each ask's spaces made single)."""
    import random
    import re

    alphabet = "aZ_9é漢ß²٣ .?!;,-'\"\t\r\n\x0b\x1c\x85\u2028\u00a0\u200b" + "ab" * 6
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert words(text) == re.findall(r"\w+", text), repr(text)
        expected = [" ".join(part.split()) for part in re.split(r"(?<=[.?!;])\s+|\n+", text) if part.strip()]
        assert asks(text) == expected, repr(text)


@pytest.mark.parametrize("day", ["2026-11-20", "2024-02-29", "2023-02-29", "2026-13-01", "2026-04-31", "2026-00-10",
                                 "20261120xx", "2026/11/20", "2026-1-200", "abcd-ef-gh", "2026-11-2٣", "0999-01-01"])
def test_ages_are_counted_from_the_day_strptime_reads(day: str) -> None:
    now = time.time()
    try:
        expected = max(0, int((now - time.mktime(time.strptime(day, "%Y-%m-%d"))) // 86400))
    except ValueError:
        assert age_note(day, None, None, now) == ""
    else:
        assert age_note(day, None, None, now) == ("written today" if expected == 0 else f"written {expected} d ago")
