"""Auto-classification on save: the rules and the vocabulary (pure), then saves on a real brain."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, server_env

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.knowledge.classify import neighbour_tags, neighbour_type, normalise_tags, rule_type, tag_key


@pytest.mark.parametrize(("title", "body", "kind"), [
    ("Import fails", "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'x'", "bug"),
    ("Queue library", "We decided to use Redis streams; alternatives were Kafka and SQS.", "decision"),
    ("How to rotate the signing key", "1. Create the key\n2. Upload it\n3. Revoke the old one", "guide"),
    ("Gotcha: naive datetimes", "Beware comparing naive and aware values.", "gotcha"),
    ("Error handling convention", "We always use Result types at module boundaries.", "pattern"),
    ("Weekly sync", "Talked about the roadmap.", None),
])
def test_rules_read_the_type_from_the_words(title: str, body: str, kind: str | None) -> None:
    assert rule_type(title, body) == kind


def test_neighbours_vote_only_when_two_agree() -> None:
    assert neighbour_type(["gotcha", "bug", "gotcha"]) == "gotcha"
    assert neighbour_type(["decision", "bug", "gotcha"]) is None
    assert neighbour_type(["diary", "diary", "note"]) is None  # a diary is not a kind to copy
    assert neighbour_type(["bug", "bug", "gotcha", "gotcha"]) == "bug"  # better ranks weigh more


def test_tag_keys_ignore_case_plural_and_separators() -> None:
    assert tag_key("Postgres_Pools") == tag_key("postgres-pool") == tag_key("postgres pool") == "postgres-pool"
    assert tag_key("dependencies") == tag_key("dependency")
    assert tag_key("css") == "css" and tag_key("aws") != tag_key("aw")
    tags, renamed = normalise_tags(["Retries", "CI_Cache", "new-thing", "retry"], ["retry", "ci-cache"])
    assert tags == ["retry", "ci-cache", "new-thing"]
    assert renamed == {"Retries": "retry", "CI_Cache": "ci-cache"}


def test_neighbour_tags_are_shared_or_named() -> None:
    neighbours = [["postgres", "pool"], ["postgres", "shutdown"], ["kubernetes"]]
    assert neighbour_tags(neighbours, "the pool leaks", ["python"]) == ["postgres", "pool"]
    assert neighbour_tags([], "Python datetimes", ["python", "go"]) == ["python"]


# --- saves on a real brain -------------------------------------------------------------------------

GOTCHA = "---\ntitle: {title}\ntype: gotcha\ntags: [postgres, connection-pool]\n---\n{body}\n"


@pytest.fixture
def kb(project: Path) -> KnowledgeBase:
    docs = project / "documentation"
    write_note(docs, "gotcha/pool-a.md", GOTCHA.format(title="Postgres pool hangs on exit",
                                                       body="The postgres pool waits for idle connections."))
    write_note(docs, "gotcha/pool-b.md", GOTCHA.format(title="Postgres pool exhausted under load",
                                                       body="The postgres pool runs out of connections."))
    write_note(docs, "note/lunch.md", "---\ntitle: Lunch\ntype: note\ntags: [office]\n---\nSoup.\n")
    brain = KnowledgeBase(load_config())
    brain.reindex()
    yield brain
    brain.close()


def test_a_save_without_type_or_tags_takes_its_neighbours(kb: KnowledgeBase) -> None:
    entry = kb.save("Postgres pool leaks connections", "The postgres pool keeps connections after errors.",
                    type=None, classify=True)
    assert entry.type == "gotcha" and entry.slug.startswith("gotcha/")
    assert entry.tags == ["postgres", "connection-pool"]
    assert entry.classification == {"suggested_type": "gotcha", "suggested_tags": ["postgres", "connection-pool"],
                                    "type_applied": True, "tags_applied": True, "renamed_tags": {}}
    text = kb.file_of(entry.slug).read_text(encoding="utf-8")
    assert "type: gotcha" in text and "connection-pool" in text


def test_what_the_caller_gives_wins_and_tags_join_the_vocabulary(kb: KnowledgeBase) -> None:
    entry = kb.save("Postgres pool sizing", "We decided on 20 connections.", type="decision",
                    tags=["Connection_Pools", "Sizing"], classify=True)
    assert entry.type == "decision" and entry.tags == ["connection-pool", "sizing"]
    assert entry.classification is not None and entry.classification["renamed_tags"] == {
        "Connection_Pools": "connection-pool"}
    assert not entry.classification["type_applied"] and not entry.classification["tags_applied"]
    ruled = kb.save("Postgres pool decision", "We decided to cap the pool.", type=None, tags=["db"], classify=True)
    assert ruled.type == "decision" and ruled.tags == ["db"]  # the rule beats the gotcha neighbours
    assert set(ruled.classification["suggested_tags"]) == {"postgres", "connection-pool"}
    assert not ruled.classification["tags_applied"]


def test_nothing_to_go_on_stays_a_note_and_library_saves_do_not_classify(kb: KnowledgeBase) -> None:
    alone = kb.save("Weekly sync", "Talked about the roadmap.", type=None, classify=True)
    assert alone.type == "note" and alone.tags == [] and alone.classification["suggested_type"] is None
    plain = kb.save("Postgres pool again", "The postgres pool waits for idle connections.")
    assert plain.type == "note" and plain.tags == [] and plain.classification is None
    status = kb.save("Deploy pipeline", "Green since Monday.", type=None, subject="deploy pipeline", classify=True)
    assert status.type == "status" and not status.classification["type_applied"]


def test_brain_save_and_pinky_save_return_the_suggestion(tmp_path: Path) -> None:
    docs = tmp_path / "documentation"
    for name in ("a", "b"):
        write_note(docs, f"gotcha/pool-{name}.md", GOTCHA.format(title=f"Postgres pool trouble {name}",
                                                                 body="The postgres pool waits for connections."))
    env = server_env(tmp_path)
    subprocess.run([*console_script("pinky"), "reindex"], cwd=tmp_path, env=env, check=True, capture_output=True)
    with RawServer(tmp_path) as server:
        server.initialize()
        result = server.call("brain_save", title="Postgres pool stalls", body="The postgres pool stalls on exit.")
        chosen = server.call("brain_save", title="Postgres pool rule", body="Use 20.", type="pattern",
                             tags=["Postgres"])
    out = result["structuredContent"]
    assert (out["type"], out["suggested_type"], out["type_applied"]) == ("gotcha", "gotcha", True)
    assert out["tags"] == ["postgres", "connection-pool"] and out["tags_applied"] is True
    assert "wrote the suggested type gotcha and tags postgres, connection-pool" in result["content"][0]["text"]
    picked = chosen["structuredContent"]
    assert (picked["type"], picked["tags"], picked["suggested_type"]) == ("pattern", ["postgres"], None)
    done = subprocess.run([*console_script("pinky"), "save", "-t", "Postgres pool waits", "--json"], cwd=tmp_path,
                          env=env, input="The postgres pool waits on exit.", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    assert saved["type"] == "gotcha" and saved["classification"]["tags_applied"] is True
    words = subprocess.run([*console_script("pinky"), "save", "-t", "How to restart the pool"], cwd=tmp_path, env=env,
                           input="1. Stop the app\n2. Restart postgres", capture_output=True, text=True)
    assert "type: guide (suggested; --type chooses)" in words.stdout
