"""The core operations `pinky view` needs, through the KnowledgeBase facade: undoable review actions
(verify, supersede, merge: each undone byte for byte, refused when the note changed since), why a hit
ranked, the whole graph, duplicate pairs, feedback counts, and files read only inside the roots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note

from pinky.config import load_config
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.kb import KnowledgeBase


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def test_verify_is_undone_through_update_with_its_version_even_where_the_field_was_absent(
        kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    text = "---\ntitle: Pool timeout\ntype: gotcha\ncreated: '2020-01-02'\ntags: [db]\n---\n\nClose the pool.\n"
    path = write_note(docs, "gotcha/pool-timeout.md", text)
    kb.reindex()
    before = kb.get("pool-timeout")
    verified = kb.hygiene.verify_entry("pool-timeout")
    assert verified.last_verified and path.read_text() != text
    undone = kb.update("pool-timeout", verified.version, fields={"last_verified": before.last_verified})
    assert path.read_text(encoding="utf-8") == text and undone.version == before.version
    with pytest.raises(Conflict):  # the version moved on: a second undo is refused, nothing written
        kb.update("pool-timeout", verified.version, fields={"last_verified": None})
    assert path.read_text(encoding="utf-8") == text


def test_update_fields_takes_only_hygiene_fields_and_checks_them(kb: KnowledgeBase) -> None:
    entry = kb.save("A note", "Some text.")
    for fields, message in (({"title": "x"}, "cannot be set"), ({"valid_until": "soon"}, "not a date"),
                            ({"superseded_by": "a\nb"}, "one slug")):
        with pytest.raises(InvalidInput, match=message):
            kb.update(entry.slug, entry.version, fields=fields)
    assert kb.get(entry.slug).version == entry.version


def test_supersede_marks_both_files_and_its_undo_restores_them_exactly(kb: KnowledgeBase) -> None:
    old = kb.save("CI runs Node 18", "The CI pipeline uses node 18.")
    new = kb.save("CI runs Node 20", "The CI pipeline uses node 20.")
    texts = {slug: kb.file_of(slug).read_bytes() for slug in (old.slug, new.slug)}
    done = kb.hygiene.supersede(old.slug, new.slug)
    assert kb.get(old.slug).meta["superseded_by"] == new.slug and kb.get(new.slug).meta["supersedes"] == old.slug
    assert [h.slug for h in kb.search("CI pipeline node").hits] == [new.slug]
    with pytest.raises(InvalidInput, match="already has superseded_by"):
        kb.hygiene.supersede(old.slug, new.slug)
    kb.hygiene.unsupersede(done)
    assert {slug: kb.file_of(slug).read_bytes() for slug in texts} == texts
    assert {h.slug for h in kb.search("CI pipeline node").hits} == {old.slug, new.slug}


def test_an_undo_is_refused_when_a_note_changed_since_and_writes_nothing(kb: KnowledgeBase) -> None:
    old = kb.save("Port is 8080", "The API listens on port 8080.")
    new = kb.save("Port is 9090", "The API listens on port 9090.")
    done = kb.hygiene.supersede(old.slug, new.slug)
    edited = kb.update(new.slug, kb.get(new.slug).version, body="The API listens on port 9091.")
    before = kb.file_of(old.slug).read_bytes()
    with pytest.raises(Conflict, match="changed since"):
        kb.hygiene.unsupersede(done)
    assert kb.file_of(old.slug).read_bytes() == before and kb.get(new.slug).version == edited.version


def test_merge_folds_a_duplicate_in_and_archives_it_and_unmerge_puts_both_back(kb: KnowledgeBase) -> None:
    keep = kb.save("Pool hangs on exit", "Call pool.close() before exit.", tags=["db"])
    other = kb.save("Postgres pool hang", "The pool blocks shutdown.", tags=["postgres"])
    kept_text, other_path, other_text = kb.file_of(keep.slug).read_bytes(), kb.file_of(other.slug), \
        kb.file_of(other.slug).read_bytes()
    done = kb.hygiene.merge(keep.slug, other.slug)
    merged = kb.get(keep.slug)
    assert "The pool blocks shutdown." in merged.body and "Merged from Postgres pool hang" in merged.body
    assert merged.tags == ["db", "postgres"] and not other_path.exists()
    with pytest.raises(NotFound):
        kb.get(other.slug)
    kb.hygiene.unmerge(done)
    assert kb.file_of(keep.slug).read_bytes() == kept_text and other_path.read_bytes() == other_text
    assert kb.get(other.slug).title == "Postgres pool hang"


def test_unmerge_brings_back_the_copy_the_merge_archived_beside_an_older_one(kb: KnowledgeBase) -> None:
    """The archive keeps every copy of a note: undo restores the merged one, not an older one nor a refusal
    to guess between them (SeveralVersions)."""
    keep = kb.save("Pool hangs on exit", "Call pool.close() before exit.")
    kb.delete(kb.save("Postgres pool hang", "An older text.").slug, "outdated")
    other = kb.save("Postgres pool hang", "The pool blocks shutdown.")
    other_path, other_text = kb.file_of(other.slug), kb.file_of(other.slug).read_bytes()
    done = kb.hygiene.merge(keep.slug, other.slug)
    kb.hygiene.unmerge(done)
    assert other_path.read_bytes() == other_text
    assert [c.reason for c in kb.hygiene.archived(other.slug)] == ["outdated"]


def test_an_explained_search_says_what_each_side_scored_and_a_plain_one_is_unchanged(kb: KnowledgeBase) -> None:
    kb.save("Pool timeout", "The postgres pool times out after 30 seconds.")
    for fruit in ("Bananas", "Apples", "Pears", "Plums"):
        kb.save(fruit, f"{fruit} are fruit.")
    plain = kb.search("postgres pool timeout")
    explained = kb.search("postgres pool timeout", explain=True)
    assert "parts" not in plain.hits[0].as_dict()
    parts = explained.hits[0].parts
    assert parts is not None and parts["full_text"]["rank"] == 1 and parts["full_text"]["score"] > 0
    assert parts["vector"]["rank"] == 1 and 0 < parts["vector"]["score"] <= 1
    assert [h.score for h in explained.hits] == [h.score for h in plain.hits]


def test_the_overview_has_every_current_entry_and_the_links_between_them(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    write_note(docs, "note/a.md", "---\ntitle: A\nlinks: [{to: note/b, rel: depends_on}]\n---\nSee [[c]].\n")
    write_note(docs, "note/b.md", "---\ntitle: B\n---\nB text, see [[missing]].\n")
    write_note(docs, "note/c.md", "---\ntitle: C\nsuperseded_by: note/b\n---\nOld.\n")
    write_note(docs, "diary/2026-01-02.md", "# 2026-01-02\n- 10:00 [s1] saved [[a]]\n")
    kb.reindex()
    graph = kb.graph.overview()
    assert {n["id"] for n in graph["nodes"]} == {"note/a", "note/b"}
    assert graph["edges"] == [{"from": "note/a", "to": "note/b", "kind": "typed", "rel": "depends_on"}]


def test_duplicates_lists_near_identical_pairs_closest_first(kb: KnowledgeBase) -> None:
    a = kb.save("Pool hangs on exit", "Call pool.close() before the process exits or it hangs.")
    b = kb.save("Pool hangs on exit (again)", "Call pool.close() before the process exits or it hangs.")
    kb.save("Unrelated", "Bananas are yellow and grow in bunches.")
    found = kb.hygiene.duplicates()
    assert [(p["a"], p["b"]) for p in found["pairs"]] == [tuple(sorted((a.slug, b.slug)))]
    assert found["pairs"][0]["similarity"] >= 0.8


def test_feedback_counts_count_each_verdict(kb: KnowledgeBase) -> None:
    entry = kb.save("A note", "Some text.")
    for verdict in ("wrong", "wrong", "useful"):
        kb.hygiene.feedback(entry.slug, verdict, "a query")
    assert kb.hygiene.feedback_counts(entry.slug) == {"wrong": 2, "useful": 1}


def test_graph_read_file_reads_inside_a_root_and_nothing_outside(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    (docs / "img").mkdir()
    (docs / "img" / "a.png").write_bytes(b"\x89PNG fake")
    (project / "secret.txt").write_text("outside")
    (docs / ".pinky").mkdir()
    (docs / ".pinky" / "x").write_text("hidden")
    os.symlink(project / "secret.txt", docs / "img" / "link.txt")
    assert kb.graph.read_file("project", "img/a.png") == b"\x89PNG fake"
    for rel in ("../secret.txt", "img/../../secret.txt", "/etc/passwd", "img/link.txt", ".pinky/x", "img",
                "img/none.png", ""):
        with pytest.raises(NotFound):
            kb.graph.read_file("project", rel)
    with pytest.raises(NotFound):
        kb.graph.read_file("elsewhere", "img/a.png")
    with pytest.raises(InvalidInput, match="larger"):
        kb.graph.read_file("project", "img/a.png", limit=3)


def test_a_brain_past_the_limit_is_drawn_as_its_communities_and_each_opens_on_its_members() -> None:
    from pinky.view.clusters import picture

    nodes = [{"id": f"t{g}/n{i}", "title": f"T{g} {i}", "type": "note", "scope": "global"}
             for g in range(3) for i in range(10)]
    nodes.append({"id": "lone", "title": "Lone", "type": "gotcha", "scope": "global"})
    edges = [{"from": f"t{g}/n{i}", "to": f"t{g}/n{j}", "kind": "wiki", "rel": "relates"}
             for g in range(3) for i in range(10) for j in range(i + 1, 10)]
    edges.append({"from": "t0/n0", "to": "t1/n0", "kind": "wiki", "rel": "relates"})
    whole = {"nodes": nodes, "edges": edges}
    assert picture(whole, limit=100)["mode"] == "notes"
    drawn = picture(whole, limit=5)
    assert drawn["mode"] == "clusters" and drawn["total"] == 31
    assert sorted(n["size"] for n in drawn["nodes"]) == [1, 10, 10, 10]
    assert [e["count"] for e in drawn["edges"]] == [1]
    group = next(n["id"] for n in drawn["nodes"] if n["size"] == 10)
    members = picture(whole, group, limit=5)
    assert members["mode"] == "notes" and len(members["nodes"]) == 5 and members["cut"] == 5
    assert {n["id"].split("/")[0] for n in members["nodes"]} == {group[2:].split("/")[0]}
