"""pinky.knowledge.entries: save, get and update through the module functions (delete, restore: test_archive)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.knowledge import entries
from pinky.knowledge.entries import SaveRequest
from pinky.search.request import SearchRequest
from pinky.text.markdown import content_hash, split_frontmatter


@pytest.fixture
def index(project: Path) -> Iterator[Index]:
    idx = Index(load_config())
    yield idx
    idx.close()


@pytest.fixture
def docs(project: Path) -> Path:
    return project / "documentation"


def front(path: Path) -> dict:
    return split_frontmatter(path.read_text(encoding="utf-8"))[0]


# --- slugify ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("title", "stem"), [
    ("Pool hangs", "pool-hangs"),
    ("El pool de PG se cuelga", "el-pool-de-pg-se-cuelga"),
    ("Ça déborde — vraiment!", "ca-deborde-vraiment"),
    ("  --Leading & trailing--  ", "leading-trailing"),
    ("../../etc/passwd", "etc-passwd"),
    ("数据库连接池", "entry"),
    ("", "entry"),
    ("!!!", "entry"),
    ("a" * 59 + " b", "a" * 59),  # cut at 60 characters, never ending in '-'
    ("x" * 100, "x" * 60),
])
def test_slugify(title: str, stem: str) -> None:
    assert entries.slugify(title) == stem


# --- save and get ------------------------------------------------------------------------------------------------


def test_save_writes_the_note_then_indexes_it(index: Index, docs: Path) -> None:
    entry = entries.save(index, SaveRequest("Pool hangs", "The pool hangs under load.", type="Gotcha",
                                            tags=["db", " db ", "pg"], files=["src/db/pool.py"]), embed=False)
    path = docs / "gotcha" / "pool-hangs.md"
    assert path.is_file()
    assert (entry.slug, entry.path, entry.type, entry.title) == ("gotcha/pool-hangs",
                                                                 "documentation/gotcha/pool-hangs.md", "gotcha",
                                                                 "Pool hangs")
    assert entry.tags == ["db", "pg"]
    assert entry.files == ["src/db/pool.py"]
    assert (entry.scope, entry.project) == ("project:demo-project", "demo-project")
    assert entry.body.strip() == "The pool hangs under load."
    assert entry.version == content_hash(path.read_bytes())
    meta = front(path)
    assert meta["title"] == "Pool hangs"
    assert meta["last_verified"] == dt.datetime.now(dt.UTC).date().isoformat()
    assert dt.datetime.fromisoformat(str(meta["created"])).tzinfo is not None
    assert entries.get(index, "gotcha/pool-hangs") == entry
    assert entry.as_dict()["slug"] == "gotcha/pool-hangs"


def test_saving_the_same_title_twice_never_overwrites(index: Index, docs: Path) -> None:
    first = entries.save(index, SaveRequest("Pool", "one"), embed=False)
    second = entries.save(index, SaveRequest("Pool", "two"), embed=False)
    assert (first.slug, second.slug) == ("note/pool", "note/pool-2")
    assert "one" in (docs / "note/pool.md").read_text(encoding="utf-8")


def test_save_to_the_global_brain_and_to_a_named_project(index: Index, isolated_env: Path, docs: Path) -> None:
    glob = entries.save(index, SaveRequest("Use ripgrep", "rg is fast", scope="global"), embed=False)
    assert glob.slug == "global/note/use-ripgrep"
    assert glob.scope == "global"
    assert (isolated_env / "brain/note/use-ripgrep.md").is_file()
    other = entries.save(index, SaveRequest("Their API", "x", project="billing"), embed=False)
    assert (other.scope, other.project) == ("project:billing", "billing")
    assert (docs / "note/their-api.md").is_file()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"title": ""}, "title must not be empty"),
    ({"title": "two\nlines"}, "title must be one line"),
    ({"type": "essay"}, "unknown type 'essay'"),
    ({"tags": "db"}, "tags must be a list of strings"),
    ({"body": 5}, "body must be a string"),
    ({"scope": "team"}, "scope 'team' must be 'global' or 'project:<name>'"),
    ({"scope": "global", "project": "x"}, "contradicts"),
])
def test_save_refuses_bad_input_before_writing_anything(index: Index, docs: Path, kwargs: dict,
                                                        message: str) -> None:
    args = {"title": "Fine", "body": "fine", **kwargs}
    with pytest.raises(InvalidInput, match=message):
        entries.save(index, SaveRequest(args.pop("title"), args.pop("body"), **args), embed=False)
    assert list(docs.rglob("*.md")) == []


def test_get_by_shortened_and_ambiguous_slugs(index: Index) -> None:
    entries.save(index, SaveRequest("Pool", "project one", type="gotcha"), embed=False)
    entries.save(index, SaveRequest("Pool", "global one", type="gotcha", scope="global"), embed=False)
    entries.save(index, SaveRequest("Wal", "x", type="decision"), embed=False)
    assert entries.get(index, "wal").slug == "decision/wal"
    assert entries.get(index, "gotcha/pool").body.strip() == "project one"
    assert entries.get(index, "global/gotcha/pool").body.strip() == "global one"
    with pytest.raises(NotFound, match=r"slug 'pool' is ambiguous: gotcha/pool, global/gotcha/pool"):
        entries.get(index, "pool")
    with pytest.raises(NotFound, match="no entry with slug 'nothing'; search for it first"):
        entries.get(index, "nothing")
    with pytest.raises(InvalidInput, match="slug must be a non-empty string"):
        entries.get(index, "  ")


def test_get_rereads_a_note_edited_on_disk(index: Index, docs: Path) -> None:
    saved = entries.save(index, SaveRequest("Pool", "before"), embed=False)
    path = docs / "note/pool.md"
    path.write_text(path.read_text(encoding="utf-8").replace("before", "after"), encoding="utf-8")
    got = entries.get(index, "note/pool")
    assert got.body.strip() == "after"
    assert got.version != saved.version


def test_get_of_a_note_removed_from_disk(index: Index, docs: Path) -> None:
    entries.save(index, SaveRequest("Pool", "x"), embed=False)
    (docs / "note/pool.md").unlink()
    with pytest.raises(NotFound, match="entry 'note/pool' was removed from disk"):
        entries.get(index, "note/pool")
    with pytest.raises(NotFound, match="no entry with slug"):
        entries.get(index, "note/pool")  # and it left the index


# --- update --------------------------------------------------------------------------------------------------


def test_update_changes_only_what_is_given(index: Index, docs: Path) -> None:
    saved = entries.save(index, SaveRequest("Pool", "old body", type="gotcha", tags=["db"]), embed=False)
    updated = entries.update(index, "pool", saved.version, body="new body", last_verified="2026-11-20T10:00Z")
    assert updated.body.strip() == "new body"
    assert (updated.title, updated.type, updated.tags) == ("Pool", "gotcha", ["db"])
    assert updated.last_verified == "2026-11-20"
    assert updated.version != saved.version
    retitled = entries.update(index, "gotcha/pool", updated.version, title=" Pool stalls ", tags=[], type="bug")
    assert (retitled.title, retitled.type, retitled.tags) == ("Pool stalls", "bug", [])
    assert retitled.slug == "gotcha/pool"  # the file stays where it is
    assert retitled.body.strip() == "new body"


def test_update_on_a_stale_version_is_a_conflict_and_writes_nothing(index: Index, docs: Path) -> None:
    saved = entries.save(index, SaveRequest("Pool", "old"), embed=False)
    entries.update(index, "note/pool", saved.version, body="first writer")
    before = (docs / "note/pool.md").read_bytes()
    with pytest.raises(Conflict, match=r"entry 'note/pool' changed: its version is \w+, not " + saved.version):
        entries.update(index, "note/pool", saved.version, body="second writer")
    assert (docs / "note/pool.md").read_bytes() == before


@pytest.mark.parametrize(("version", "kwargs", "error", "message"), [
    ("", {}, InvalidInput, "expected_version is required"),
    (None, {}, InvalidInput, "expected_version is required"),
    ("current", {"last_verified": "soon"}, InvalidInput, "last_verified='soon' is not a date"),
    ("current", {"type": "essay"}, InvalidInput, "unknown type"),
    ("current", {"title": ""}, InvalidInput, "title must not be empty"),
])
def test_update_refuses_bad_input(index: Index, docs: Path, version: str | None, kwargs: dict,
                                  error: type[Exception], message: str) -> None:
    saved = entries.save(index, SaveRequest("Pool", "old"), embed=False)
    before = (docs / "note/pool.md").read_bytes()
    with pytest.raises(error, match=message):
        entries.update(index, "note/pool", saved.version if version == "current" else version, **kwargs)  # type: ignore[arg-type]
    assert (docs / "note/pool.md").read_bytes() == before


def test_update_refuses_a_note_with_malformed_frontmatter(index: Index, docs: Path) -> None:
    path = write_note(docs, "note/broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    indexer.reindex(index, embed=False)
    version = content_hash(path.read_bytes())
    with pytest.raises(InvalidInput, match="malformed frontmatter"):
        entries.update(index, "note/broken", version, body="x")
    assert path.read_text(encoding="utf-8").endswith("body\n")


# --- questions: what a note answers, a searched field of its own ---------------------------------------------


def _found(index: Index, query: str) -> list[str]:
    from pinky.search import hybrid as search

    return [hit.slug for hit in search.search(index, SearchRequest(query, mode="bm25", include_superseded=True)).hits]


def test_questions_are_kept_in_the_frontmatter_and_found_by_their_words(index: Index, docs: Path) -> None:
    entries.save(index, SaveRequest("Other note", "Nothing about the pool here."), embed=False)
    saved = entries.save(index, SaveRequest("Pool close", "Call pool.close(timeout=5) first.", type="gotcha",
                                            questions=["Why does the worker  hang on shutdown?",
                                                       "why does the worker hang on shutdown?"]), embed=False)
    assert front(docs / "gotcha/pool-close.md")["questions"] == ["Why does the worker hang on shutdown?",
                                                                 "why does the worker hang on shutdown?"]
    assert saved.meta["questions"] == front(docs / "gotcha/pool-close.md")["questions"]
    assert _found(index, "worker shutdown") == ["gotcha/pool-close"]
    # Markdown is the truth: a full rebuild finds the note by its questions again.
    indexer.reindex(index, full=True, embed=False)
    assert _found(index, "worker shutdown") == ["gotcha/pool-close"]


def test_update_replaces_keeps_or_removes_the_questions(index: Index, docs: Path) -> None:
    saved = entries.save(index, SaveRequest("Pool close", "Call pool.close(timeout=5) first.",
                                            questions=["why does the worker hang?"]), embed=False)
    kept = entries.update(index, "pool-close", saved.version, body="Call pool.close(timeout=10) first.")
    assert front(docs / "note/pool-close.md")["questions"] == ["why does the worker hang?"]
    asked = entries.update(index, "pool-close", kept.version, questions=["how long may the drain take?"])
    assert front(docs / "note/pool-close.md")["questions"] == ["how long may the drain take?"]
    assert _found(index, "drain") == ["note/pool-close"] and _found(index, "worker") == []
    entries.update(index, "pool-close", asked.version, questions=[])
    assert "questions" not in front(docs / "note/pool-close.md")
    assert _found(index, "drain") == []


@pytest.mark.parametrize(("questions", "message"), [
    ("why?", "questions must be a list of strings"),
    ([f"question {n}?" for n in range(21)], "21 questions given; at most 20 are allowed"),
    (["  "], "must be 1-300 printable characters"),
    (["x" * 301], "must be 1-300 printable characters"),
    (["two\x00parts"], "must be 1-300 printable characters"),
    ([3], "question 3 is not a string"),
])
def test_bad_questions_are_refused_before_anything_is_written(index: Index, docs: Path, questions: object,
                                                             message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        entries.save(index, SaveRequest("Pool", "body", questions=questions), embed=False)  # type: ignore[arg-type]
    assert not (docs / "note").exists()
    saved = entries.save(index, SaveRequest("Pool", "body"), embed=False)
    with pytest.raises(InvalidInput, match=message):
        entries.update(index, "note/pool", saved.version, questions=questions)  # type: ignore[arg-type]
    assert "questions" not in front(docs / "note/pool.md")


def test_a_secret_in_a_question_is_redacted_before_writing(index: Index, docs: Path) -> None:
    question = "why does ghp_abcdefghijklmnopqrstuvwxyz0123456789 fail?"
    saved = entries.save(index, SaveRequest("Deploy", "body", questions=[question]), embed=False)
    assert "github-token" in saved.redacted
    assert "ghp_" not in (docs / "note/deploy.md").read_text(encoding="utf-8")
