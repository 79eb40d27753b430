"""Fault suite, issue 10 item 1: no valid note freezes the brain.

Each case was seen to hang or balloon: a 40,000-dash body (40 s to save), a 100,000-character token
(163 s), a heading with a long run of blanks, a one-line 20 MB note (minutes of reindex), a
750-byte YAML alias bomb (37 s, 1.87 GB, a 256 MB brain.db), a line of `Brain:` marks in code
(seconds per hook). The timings printed are the measure; the assertions only guard against a hang
(HANG_GUARD_S, far above the expected fraction of a second) and check the work was done. Megabytes of
text cost seconds of honest work on a slow machine, so the guard for a large note grows with what a
note of plain prose of its size costs on this machine, measured once per run (`prose_seconds`).
The expensive variants are marked `faults_long` and run with PINKY_FAULTS_LONG=1.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import write_note
from hypothesis import given, settings
from hypothesis import strategies as st

from pinky.capture.transcript import commit_subject
from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.text.breadcrumbs import breadcrumbs
from pinky.text.markdown import file_names_mentioned, first_heading, split_frontmatter

HANG_GUARD_S = 20.0
PROSE_FACTOR = 4.0  # a pathological note may cost this many times plain prose of its size: a hang costs hundreds


def timed(what: str, work: Callable[[], Any], guard: float = HANG_GUARD_S) -> Any:
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    print(f"{what}: {seconds:.3f} s")
    assert seconds < guard, f"{what} took {seconds:.1f} s (guard: {guard:.1f} s)"
    return result


def prose(size: int) -> str:
    """`size` characters of plain sentences in paragraphs: what an ordinary long note costs to index."""
    words = "the pool hangs on shutdown when the connection timeout is reached and retry backoff grows".split()
    sentences = [" ".join(words[(n + k) % len(words)] for k in range(12)).capitalize() + "." for n in range(64)]
    text = "\n\n".join(" ".join(sentences[(p * 8 + k) % 64] for k in range(8)) for p in range(size // 600 + 1))
    return text[:size]


@pytest.fixture(scope="session")
def prose_seconds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], float]:
    """Seconds a note of `size` characters of plain prose takes to index here, from one of 1 MB (linear)."""
    root = tmp_path_factory.mktemp("prose")
    write_note(root / "documentation", "note/prose.md", "# Prose\n" + prose(1_000_000))
    (root / "pinky.toml").write_text("")
    from pinky.config import load_config as load

    with KnowledgeBase(load(env={"PINKY_HOME": str(root / "home"), "PINKY_HASH_EMBED": "1"}, cwd=root)) as brain:
        started = time.perf_counter()
        brain.reindex()
        per_byte = (time.perf_counter() - started) / 1_000_000
    return lambda size: max(HANG_GUARD_S, PROSE_FACTOR * size * per_byte)


@pytest.fixture
def kb(project: Path) -> KnowledgeBase:
    with KnowledgeBase(load_config()) as brain:
        yield brain


def alias_bomb(levels: int) -> str:
    """`a: &a [lol × 9]`, `b: &b [*a × 9]`, …: 9**levels values from a few hundred bytes."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    names = "abcdefghijklmnop"
    for level in range(1, levels):
        lines.append(f"{names[level]}: &{names[level]} [" + ", ".join([f"*{names[level - 1]}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nThe body of the bomb note: quasar.\n"


# --- saves that used to freeze the brain (inside BEGIN IMMEDIATE) -----------------------------------


@pytest.mark.parametrize("name,body", [
    ("dashes", "-" * 100_000),
    ("token", "a" * 100_000),
    ("dotted token", "a." * 50_000),
    ("slashed token", "a/" * 50_000),
    ("heading blanks", "# x" + " " * 99_000 + "y"),
    ("heading hashes", "# x" + "#" * 99_000 + "y"),
    ("wiki brackets", "[[a|" * 25_000),
    ("link brackets", "](a.md#" * 14_000),
])
def test_a_pathological_body_saves_at_once(kb: KnowledgeBase, name: str, body: str) -> None:
    entry = timed(f"save of a {len(body):,}-character {name}", lambda: kb.save(f"Pathological {name}", body))
    assert entry.body.strip() == body.strip()
    assert kb.search(f"pathological {name}", mode="bm25").hits[0].slug == entry.slug


def test_slow_work_happens_before_the_write_lock(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunking, hashing and finding mentions run outside BEGIN IMMEDIATE: another process waiting for
    the lock never waits for them (it failed with 'database is locked' after 60 s)."""
    from pinky.indexing import note_rows

    seen: list[bool] = []
    for name in ("chunk_rows", "file_names_mentioned"):
        real = getattr(note_rows, name)

        def spy(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            seen.append(kb.db.conn.in_transaction)
            return _real(*args, **kwargs)

        monkeypatch.setattr(note_rows, name, spy)
    kb.save("Spied save", "Some text naming src/db/pool.py.")
    write_note(kb.config.save_dir, "note/by-hand.md", "# By hand\n\nText naming app/main.py.\n")
    kb.reindex()
    assert len(seen) == 4 and not any(seen), seen


# --- huge notes: indexed by their title and first bytes, with a warning ------------------------------


@pytest.mark.parametrize("shape", ["token", "words"])
def test_a_20_mb_one_line_note_reindexes_in_a_moment(kb: KnowledgeBase, shape: str,
                                                     prose_seconds: Callable[[int], float]) -> None:
    text = "x" * 20_000_000 if shape == "token" else "lorem ipsum dolor " * 1_111_112
    write_note(kb.config.save_dir, "note/huge.md", "---\ntitle: Huge one-liner\n---\n" + text)
    report = timed(f"reindex of a 20 MB one-line note ({shape})", kb.reindex, prose_seconds(4_000_000))
    assert report.added == 1 and report.errors == []
    assert "too large: 20,000,0" in report.warnings[0]
    assert "bytes, over the 4,000,000-byte limit (PINKY_MAX_NOTE_BYTES)" in report.warnings[0]
    assert kb.search("huge one-liner", mode="bm25").hits[0].slug == "note/huge"
    assert kb.db.conn.execute("SELECT length(body) FROM entry").fetchone()[0] <= 4_000_000
    assert kb.config.db_path.stat().st_size < 40_000_000


def test_an_oversized_note_keeps_its_whole_version_and_is_listed_by_doctor(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pinky.services.doctor import run_checks
    from pinky.text.markdown import content_hash

    monkeypatch.setenv("PINKY_MAX_NOTE_BYTES", "4096")
    note = write_note(project / "documentation", "note/long.md",
                      "# Long note\n\nfirst words\n" + "filler line\n" * 1000 + "last words\n")
    with KnowledgeBase(load_config()) as brain:
        report = brain.reindex()
        assert report.warnings == ["documentation/note/long.md: too large: 12,036 bytes, over the 4,096-byte "
                                   "limit (PINKY_MAX_NOTE_BYTES): indexed by its title and its first 4,093 bytes only"]
        assert brain.search("first words", mode="bm25").hits and not brain.search("last", mode="bm25").hits
        entry = brain.get("note/long")
        assert entry.version == content_hash(note.read_bytes())  # the whole file: updates still check it
        brain.update("note/long", entry.version, tags=["big"])
        checks = {c.name: c for c in run_checks(brain)}
        assert checks["oversized notes"].status == "warn" and "note/long.md" in checks["oversized notes"].detail
        assert checks["malformed notes"].status == "ok"


def test_the_note_size_limit_is_checked() -> None:
    from pinky.errors import InvalidInput

    with pytest.raises(InvalidInput, match="PINKY_MAX_NOTE_BYTES must be at least 4096"):
        load_config(env={"PINKY_MAX_NOTE_BYTES": "100"})
    assert load_config(env={"PINKY_MAX_NOTE_BYTES": "8192"}).max_note_bytes == 8192


@pytest.mark.faults_long
def test_a_200_mb_note_and_4_mb_notes_of_every_bad_shape(kb: KnowledgeBase,
                                                         prose_seconds: Callable[[int], float]) -> None:
    """Each note is indexed alone, and may cost a few times a note of plain prose of its size (the 200 MB
    one is indexed by its first 4 MB)."""
    docs = kb.config.save_dir
    write_note(docs, "note/giant.md", "# Giant\n" + "y" * 200_000_000)
    timed("reindex of a 200 MB note", kb.reindex, prose_seconds(4_000_000))
    shapes = {"dashes": "-", "token": "z", "dots": "a.", "slashes": "a/", "blanks": "# x" + " " * 8,
              "wiki": "[[a|", "links": "](a.md#", "marks": "Brain:", "fences": "```\n", "bullets": "- "}
    for name, unit in shapes.items():
        write_note(docs, f"note/{name}.md", f"# Shape {name}\n" + unit * (3_900_000 // len(unit)))
        report = timed(f"reindex of a 3.9 MB note of {name}", kb.reindex, prose_seconds(3_900_000))
        assert report.added == 1 and report.errors == []
    assert kb.search("shape wiki", mode="bm25").hits[0].slug == "note/wiki"


# --- YAML ------------------------------------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_at_once_and_the_note_is_still_indexed(kb: KnowledgeBase) -> None:
    bomb = alias_bomb(7)  # 9**7 = 4.8 million values from 371 bytes
    write_note(kb.config.save_dir, "note/bomb.md", bomb)
    report = timed(f"reindex of a {len(bomb)}-byte alias bomb", kb.reindex)
    assert report.added == 1
    assert report.warnings == ["documentation/note/bomb.md: malformed YAML frontmatter: its aliases expand it "
                               "past 20,000 values and characters (an alias bomb?); refused"]
    assert kb.search("quasar", mode="bm25").hits[0].slug == "note/bomb"  # indexed as a plain note
    assert kb.config.db_path.stat().st_size < 2_000_000


@pytest.mark.faults_long
def test_the_750_byte_bomb_of_the_report(kb: KnowledgeBase) -> None:
    bomb = alias_bomb(12).replace('"lol"', '"' + 'lol' * 7 + '"')
    assert 700 < len(bomb) < 800
    meta, body, _, error = timed("parsing the 750-byte bomb (9**12 values)", lambda: split_frontmatter(bomb))
    assert meta == {} and "alias bomb" in str(error) and "quasar" in body


@pytest.mark.parametrize("yaml,problem", [
    ("a: &a [*a]", "recursive alias"),
    ("a: " + "[" * 100 + "]" * 100, "nested more than 64 deep"),
    ("a: &x " + "long text " * 5000 + "\nb: [" + ", ".join(["*x"] * 50) + "]", "alias bomb"),
])
def test_yaml_that_cannot_be_expanded_safely_is_malformed(yaml: str, problem: str) -> None:
    meta, body, _, error = timed("parsing unsafe YAML", lambda: split_frontmatter(f"---\n{yaml}\n---\nbody\n"))
    assert meta == {} and body == "body\n" and problem in str(error)


def test_ordinary_aliases_and_merge_keys_still_load() -> None:
    text = "---\nbase: &b {owner: ana, tags: [db, pool]}\nnote:\n  <<: *b\n  extra: 1\nagain: *b\n---\nx\n"
    meta, _, _, error = split_frontmatter(text)
    assert error is None
    assert meta["note"] == {"owner": "ana", "tags": ["db", "pool"], "extra": 1} and meta["again"] == meta["base"]


# --- the pure parsers: linear, and as before on ordinary text ----------------------------------------


OLD_PATH_LIKE = re.compile(r"[\w.-]+(?:/[\w.-]+)+|[\w-]+\.[A-Za-z0-9]{1,10}\b")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1_é.-/ \n", max_size=40))
def test_file_names_mentioned_finds_what_the_quadratic_pattern_found(text: str) -> None:
    """The only names the linear pattern leaves out start with '-' right after another name
    (`a.py-b.md` gave `a.py` and `-b.md`)."""
    old = [name for m in OLD_PATH_LIKE.finditer(text) if (name := m.group(0).rstrip(".").rsplit("/", 1)[-1])]
    new = file_names_mentioned(text)
    assert set(new) <= set(old)
    assert all(name.startswith("-") for name in set(old) - set(new)), (old, new)


def test_file_names_mentioned_on_ordinary_text() -> None:
    text = "See src/db/pool.py and `config.toml`, not http://example.com/x or v1.2.3; a.py-b.md."
    assert file_names_mentioned(text) == ("pool.py", "config.toml", "x", "v1.2", "a.py")


@pytest.mark.parametrize("line,expected", [
    ("# Title", "Title"), ("## Title ##", "Title"), ("# C#", "C"), ("#   spaced   ", "spaced"),
    ("# ###", "#"), ("#\tTab", "Tab"), ("####### seven", None), ("#nospace", None),
])
def test_headings_read_as_before(line: str, expected: str | None) -> None:
    assert first_heading(line) == expected


@pytest.mark.parametrize("name,work", [
    ("first_heading of a 1 MB heading", lambda: first_heading("# x" + " \t#" * 333_333 + "y")),
    ("mentions in a 1 MB token", lambda: file_names_mentioned("b" * 1_000_000)),
    ("breadcrumbs in a 1 MB line of marks", lambda: breadcrumbs(b"Brain:" * 170_000)),
    ("commit subject of a 1 MB command", lambda: commit_subject("git " * 250_000)),
])
def test_each_parser_is_linear(name: str, work: Callable[[], Any]) -> None:
    timed(name, work)


def test_a_long_breadcrumb_line_keeps_whole_slugs_only() -> None:
    assert breadcrumbs(b"# Brain: gotcha/pool, decision/wal explains\n") == ["gotcha/pool", "decision/wal"]
    assert breadcrumbs(b"# Brain: " + b"a" * 10_000) == []  # cut in half: not a slug


def test_commit_subjects_read_as_before() -> None:
    assert commit_subject('git add -A && git commit -m "Fix the pool"') == "Fix the pool"
    assert commit_subject("git -C repo commit -am 'Retry'") == "Retry"
    assert commit_subject('git log; echo commit -m "no"') is None
    assert commit_subject('git status\ncommit -m "next line"') == "next line"
