"""The knowledge graph on a fixture repository: links as data, typed and temporal links, `pinky mv`,
neighbourhoods, timelines. Real notes, real code files, a real git history, the CLI in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_note

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.services.doctor import run_checks

POOL = """---
title: PG pool hangs
type: gotcha
files: [src/db.py]
links:
  - {to: decision/wal, rel: depends_on, since: 2026-01-01}
---
# PG pool hangs

It hangs on exit; see [[decision/wal|the WAL decision]].
We moved to [[Use pgbouncer#Why]] later.
Steps are in [the runbook](../guide/runbook.md#restart).
And [[missing-note]] is not written yet.
"""
CODE = {  # five comment syntaxes
    "src/db.py": "import pg\n\ndef close():  # Brain: gotcha/pool\n    pass\n",
    "src/app.js": "// Brain: decision/wal\nconst x = 1;\n",
    "src/q.sql": "-- Brain: guide/runbook\nSELECT 1;\n",
    "src/x.c": "int x; /* Brain: decision/pgbouncer */\n",
    "src/page.html": "<p>\n<!-- Brain: gotcha/pool -->\n</p>\n",
}


@pytest.fixture
def repo(project: Path) -> Path:
    docs = project / "documentation"
    write_note(docs, "gotcha/pool.md", POOL)
    write_note(docs, "decision/wal.md", "---\ntitle: Use WAL\n---\nWrite-ahead log.\n")
    write_note(docs, "decision/pgbouncer.md", "---\ntitle: Use pgbouncer\n---\nPool outside.\n")
    write_note(docs, "guide/runbook.md", "---\ntitle: Runbook\n---\nWhen it hangs: [[pool]].\n")
    for rel, text in CODE.items():
        write_note(project, rel, text)
    return project


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def check(kb: KnowledgeBase, name: str) -> object:
    return next(c for c in run_checks(kb) if c.name == name)


def test_every_link_syntax_lands_in_the_link_table_with_its_line(repo: Path) -> None:
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        pool = kb.related("gotcha/pool")
        assert [(lk["kind"], lk["target"], lk["slug"], lk["line"]) for lk in pool["links"]] == [
            ("typed", "decision/wal", "decision/wal", 5),
            ("wiki", "decision/wal", "decision/wal", 10),  # `|alias` dropped
            ("wiki", "Use pgbouncer", "decision/pgbouncer", 11),  # a title, `#heading` dropped
            ("md", "../guide/runbook.md", "guide/runbook", 12),  # relative, `#part` dropped
            ("wiki", "missing-note", None, 13)]
        assert [(b["slug"], b["kind"]) for b in pool["backlinks"]] == [("guide/runbook", "wiki")]
        assert [(c["file"], c["line"], c["source"]) for c in pool["code"]] == [
            ("src/db.py", None, "frontmatter"), ("src/db.py", 3, "breadcrumb"), ("src/page.html", 2, "breadcrumb")]
        for slug, file in [("decision/wal", "src/app.js"), ("guide/runbook", "src/q.sql"),
                           ("decision/pgbouncer", "src/x.c")]:
            assert [c["file"] for c in kb.related(slug)["code"]] == [file]
        broken = check(kb, "note links")
        assert broken.status == "warn" and "documentation/gotcha/pool.md:13 (missing-note)" in broken.detail


def test_moving_renaming_or_deleting_notes_and_breadcrumbs_updates_the_links_on_reindex(repo: Path) -> None:
    docs = repo / "documentation"
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        (docs / "decision/wal.md").rename(docs / "decision/wal-mode.md")  # renamed by hand
        (docs / "guide/runbook.md").unlink()
        write_note(docs, "note/missing-note.md", "# Missing note\nNow it exists.\n")
        (repo / "src/db.py").write_text("# Brain: gotcha/pool\n")  # the breadcrumb moved to line 1
        (repo / "src/page.html").unlink()
        kb.reindex()
        pool = kb.related("gotcha/pool")
        assert [(lk["target"], lk["slug"]) for lk in pool["links"]] == [
            ("decision/wal", None), ("decision/wal", None), ("Use pgbouncer", "decision/pgbouncer"),
            ("../guide/runbook.md", None), ("missing-note", "note/missing-note")]
        assert pool["backlinks"] == []
        assert [(c["file"], c["line"]) for c in pool["code"] if c["source"] == "breadcrumb"] == [("src/db.py", 1)]
        assert kb.related("decision/wal-mode")["code"] == []  # src/app.js names the old slug
        assert "src/app.js:1 (decision/wal)" in check(kb, "code breadcrumbs").detail
        (docs / "decision/wal-mode.md").rename(docs / "decision/wal.md")  # renamed back: links work again
        kb.reindex()
        assert [c["file"] for c in kb.related("decision/wal")["code"]] == ["src/app.js"]
        assert check(kb, "code breadcrumbs").detail == "1 name no single entry: src/q.sql:1 (guide/runbook)"


def test_pinky_mv_rewrites_every_inbound_link(repo: Path) -> None:
    run("reindex")
    moved = json.loads(run("mv", "decision/wal", "decision/write-ahead-log", "--json"))
    assert moved["new"] == "decision/write-ahead-log"
    assert moved["rewrote_notes"] == ["gotcha/pool"] and moved["rewrote_code"] == ["src/app.js"]
    pool = (repo / "documentation/gotcha/pool.md").read_text()
    assert "[[decision/write-ahead-log|the WAL decision]]" in pool and "to: decision/write-ahead-log" in pool
    assert (repo / "src/app.js").read_text() == "// Brain: decision/write-ahead-log\nconst x = 1;\n"
    run("mv", "guide/runbook", "restart-runbook")  # a bare name stays in its folder
    assert "[the runbook](../guide/restart-runbook.md#restart)" in (repo / "documentation/gotcha/pool.md").read_text()
    assert "Brain: guide/restart-runbook" in (repo / "src/q.sql").read_text()
    with KnowledgeBase(load_config()) as kb:
        assert [lk["slug"] for lk in kb.related("gotcha/pool")["links"]][:4] == [
            "decision/write-ahead-log", "decision/write-ahead-log", "decision/pgbouncer", "guide/restart-runbook"]
        assert [b["slug"] for b in kb.related("restart-runbook")["backlinks"]] == ["gotcha/pool"]
        detail = check(kb, "note links").detail
        assert "missing-note" in detail and "write-ahead" not in detail and "runbook" not in detail
    failed = CliRunner().invoke(cli, ["mv", "gotcha/pool", "decision/pgbouncer"])
    assert failed.exit_code == 1 and "exists" in failed.output
    refusals = [("global/gotcha/pool", "within one root"), ("../outside", "give a slug"), (".hidden/x", "give a slug")]
    for bad, why in refusals:
        refused = CliRunner().invoke(cli, ["mv", "gotcha/pool", bad])
        assert refused.exit_code == 1 and why in refused.output, refused.output
    assert (repo / "documentation/gotcha/pool.md").exists()


def test_closed_links_leave_default_queries_and_come_back_with_at(repo: Path) -> None:
    run("reindex")
    run("link", "gotcha/pool", "decision/pgbouncer", "--rel", "fixed_by", "--since", "2026-01-05")
    again = CliRunner().invoke(cli, ["link", "gotcha/pool", "decision/pgbouncer", "--rel", "fixed_by"])
    assert again.exit_code == 1 and "already fixed_by" in again.output
    with KnowledgeBase(load_config()) as kb:
        assert "fixed_by" in [lk["rel"] for lk in kb.related("gotcha/pool")["links"]]
    run("unlink", "gotcha/pool", "decision/pgbouncer", "--rel", "fixed_by", "--until", "2026-03-01")
    assert "until: '2026-03-01'" in (repo / "documentation/gotcha/pool.md").read_text()  # closed, not deleted
    with KnowledgeBase(load_config()) as kb:
        graph = kb.graph
        assert "fixed_by" not in [lk["rel"] for lk in graph.related("gotcha/pool")["links"]]
        assert "fixed_by" in [lk["rel"] for lk in graph.related("gotcha/pool", at="2026-02-01")["links"]]
        assert graph.related("gotcha/pool", at="2026-03-01", rels=["fixed_by"])["links"] == []
        assert [b["slug"] for b in graph.related("decision/pgbouncer", at="2026-02-01", rels=["fixed_by"])[
            "backlinks"]] == ["gotcha/pool"]
    history = json.loads(run("graph", "decision/pgbouncer", "--rel", "fixed_by", "--at", "2026-02-01", "--json"))
    assert [(e["from"], e["to"], e["rel"], e["until"]) for e in history["edges"]] == [
        ("gotcha/pool", "decision/pgbouncer", "fixed_by", "2026-03-01")]
    assert json.loads(run("graph", "decision/pgbouncer", "--rel", "fixed_by", "--json"))["edges"] == []
    refused = CliRunner().invoke(cli, ["unlink", "gotcha/pool", "decision/pgbouncer"])
    assert refused.exit_code == 1 and "no open typed link" in refused.output


def test_graph_walks_both_ways_through_notes_and_code_files(repo: Path) -> None:
    run("reindex")
    one = json.loads(run("graph", "decision/wal", "--json"))
    assert {(n["id"], n["depth"]) for n in one["nodes"]} == {("decision/wal", 0), ("gotcha/pool", 1), ("src/app.js", 1)}
    two = json.loads(run("graph", "decision/wal", "--depth", "2", "--json"))
    found = {n["id"]: n["depth"] for n in two["nodes"]}
    assert found["guide/runbook"] == 2 and found["src/db.py"] == 2 and found["src/page.html"] == 2
    assert "missing-note" not in found  # unresolved links are doctor's business, not nodes
    assert {(e["from"], e["to"], e["kind"]) for e in two["edges"]} >= {
        ("gotcha/pool", "decision/wal", "typed"), ("src/app.js", "decision/wal", "breadcrumb"),
        ("gotcha/pool", "src/db.py", "files"), ("src/db.py", "gotcha/pool", "breadcrumb")}
    typed = json.loads(run("graph", "decision/wal", "--depth", "3", "--rel", "depends_on", "--json"))
    assert [n["id"] for n in typed["nodes"]] == ["decision/wal", "gotcha/pool"]
    tree = run("graph", "decision/wal", "--depth", "2").splitlines()
    assert tree[0] == "decision/wal  Use WAL"
    assert "├─ ← depends_on, ← wiki gotcha/pool  PG pool hangs" in tree
    assert "│  ├─ → files, ← breadcrumb:3 src/db.py" in tree  # both links between the two, on one line
    dot = run("graph", "gotcha/pool", "--dot")
    assert dot.startswith("digraph pinky {") and '"gotcha/pool" -> "decision/wal" [label="depends_on"];' in dot
    bad = CliRunner().invoke(cli, ["graph", "gotcha/pool", "--depth", "4"])
    assert bad.exit_code == 2


def test_timeline_from_git_history_links_and_diary(repo: Path) -> None:
    from dulwich import porcelain

    docs = repo / "documentation"
    porcelain.init(str(repo)).close()
    who = b"Ada <ada@example.com>"

    def commit(message: str, when: int) -> None:
        porcelain.add(str(repo), paths=[str(docs / "gotcha/pool.md")])
        porcelain.commit(str(repo), message=message.encode(), author=who, committer=who,
                         author_timestamp=when, commit_timestamp=when, author_timezone=0, commit_timezone=0)

    commit("Add the pool gotcha", 1_767_225_600)  # 2026-01-01
    (docs / "gotcha/pool.md").write_text(POOL + "Restart it twice.\n")
    commit("Pool: the second restart\n\nlong story", 1_770_000_000)  # 2026-02-02
    write_note(docs, "diary/2026-02-03.md", "---\ntype: diary\n---\n- 10:00 [abc12345] note: hit gotcha/pool again\n"
               "- 11:00 [abc12345] note: something else\n")
    found = json.loads(run("timeline", "gotcha/pool", "--json"))  # a new index is filled first
    assert found["history"] == "git"
    assert [(e["date"][:10], e["kind"], e["text"]) for e in found["events"]] == [
        ("2026-01-01", "created", f"Add the pool gotcha (+{len(POOL.splitlines())} -0 lines)"),
        ("2026-01-01", "linked", "gotcha/pool depends_on decision/wal"),
        ("2026-02-02", "changed", "Pool: the second restart (+1 -0 lines)"),
        ("2026-02-03", "diary", "hit gotcha/pool again")]
    text = run("timeline", "gotcha/pool")
    assert text.splitlines()[1].startswith("2026-01-01 00:00  created ")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_brain_related_depth_rel_at_and_brain_get_timeline(tmp_path: Path, anyio_backend: str) -> None:
    import jsonschema
    from mcp_helpers import in_process

    docs = tmp_path / "documentation"
    write_note(docs, "gotcha/pool.md", POOL.replace("since: 2026-01-01", "since: 2026-01-01, until: 2026-05-01"))
    write_note(docs, "decision/wal.md", "---\ntitle: Use WAL\n---\nSee [[note/deep]].\n")
    write_note(docs, "note/deep.md", "---\ntitle: Two links away\n---\nDeep.\n")
    async with in_process(tmp_path, "read", project="demo") as (client, runtime):
        runtime.caught_up.wait(30)
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        async def call(tool: str, **arguments: object) -> dict:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content[0].text
            jsonschema.validate(result.structured_content, schemas[tool])
            return {"text": result.content[0].text, **result.structured_content}

        today = await call("brain_related", slug="gotcha/pool", rel=["depends_on"])
        assert today["links"] == [] and "graph" not in today  # the typed link was closed on 2026-05-01
        then = await call("brain_related", slug="gotcha/pool", rel=["depends_on"], at="2026-02-01")
        assert [(lk["slug"], lk["rel"], lk["until"]) for lk in then["links"]] == [
            ("decision/wal", "depends_on", "2026-05-01")]
        assert "decision/wal (depends_on)" in then["text"]
        deep = await call("brain_related", slug="gotcha/pool", depth=2)
        assert {(n["id"], n["depth"]) for n in deep["graph"]["nodes"]} >= {("decision/wal", 1), ("note/deep", 2)}
        assert {"from": "decision/wal", "to": "note/deep"}.items() <= next(
            e for e in deep["graph"]["edges"] if e["to"] == "note/deep").items()
        assert "within 2 links:" in deep["text"]
        entry = await call("brain_get", slug="gotcha/pool", timeline=True)
        assert [(e["date"], e["kind"]) for e in entry["timeline"]] == [("2026-01-01", "linked"),
                                                                        ("2026-05-01", "unlinked")]
        assert "Timeline:" in entry["text"]
        assert "timeline" not in await call("brain_get", slug="gotcha/pool")
        bad = await client.call_tool("brain_related", {"slug": "gotcha/pool", "depth": 4})
        assert bad.is_error
        found = await call("brain_search", query="pool hangs", context_file="src/db.py")
        assert found["hits"][0]["why"] == "linked to src/db.py (files)" and "(linked to src/db.py" in found["text"]
        assert "why" not in (await call("brain_search", query="pool hangs"))["hits"][0]


def test_a_context_file_lifts_the_entries_linked_to_it_and_says_why(repo: Path) -> None:
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        plain = {h.slug: h for h in kb.search("pool hangs exit outside", limit=20).hits}
        assert all(h.why is None for h in plain.values())
        lifted = {h.slug: h for h in kb.search("pool hangs exit outside", limit=20, context_file="src/x.c").hits}
        direct = lifted["decision/pgbouncer"]  # src/x.c carries its breadcrumb
        assert direct.why == "linked to src/x.c (breadcrumb)" and direct.score > plain["decision/pgbouncer"].score
        hop = lifted["gotcha/pool"]  # which links to decision/pgbouncer
        assert hop.why == "one link from decision/pgbouncer, which is linked to src/x.c"
        assert hop.score > plain["gotcha/pool"].score
        absolute = kb.search("pool hangs exit outside", limit=20, context_file=str(repo / "src" / "db.py")).hits
        assert {h.slug: h.why for h in absolute}["gotcha/pool"] == "linked to src/db.py (breadcrumb)"
        assert [h.slug for h in kb.search("pool", context_file="nowhere/else.py").hits] == [
            h.slug for h in kb.search("pool").hits]  # a file nothing links to changes nothing


def test_the_walk_is_bounded_in_fan_out_and_says_so(project: Path) -> None:
    from pinky.graph.neighbourhood import FANOUT

    docs = project / "documentation"
    spokes = FANOUT + 5
    write_note(docs, "note/hub.md", "# Hub\n" + "".join(f"[[note/spoke-{n}]]\n" for n in range(spokes)))
    for n in range(spokes):
        write_note(docs, f"note/spoke-{n}.md", f"# Spoke {n}\n")
    run("reindex")
    found = json.loads(run("graph", "note/hub", "--json"))
    assert found["truncated"] is True and len(found["nodes"]) == FANOUT + 1
    small = json.loads(run("graph", "note/spoke-3", "--depth", "1", "--json"))
    assert small["truncated"] is False and [n["id"] for n in small["nodes"]] == ["note/spoke-3", "note/hub"]
    tree = run("graph", "note/hub").splitlines()
    assert tree[-1].startswith("… more links than shown") and len(tree) == FANOUT + 2


def test_a_link_saved_before_its_target_resolves_when_the_target_is_saved(project: Path) -> None:
    with KnowledgeBase(load_config()) as kb:
        first = kb.save("Retries", "Back off; see [[Pool hangs]] and [[gotcha/pool-hangs]].", type="pattern")
        assert [lk["slug"] for lk in kb.related(first.slug)["links"]] == [None, None]
        target = kb.save("Pool hangs", "Close it with a timeout.", type="gotcha")
        assert [lk["slug"] for lk in kb.related(first.slug)["links"]] == [target.slug, target.slug]
        assert [b["slug"] for b in kb.related(target.slug)["backlinks"]] == [first.slug]
        kb.delete(target.slug, "wrong")
        assert [lk["slug"] for lk in kb.related(first.slug)["links"]] == [None, None]
        kb.restore(target.slug)
        assert [lk["slug"] for lk in kb.related(first.slug)["links"]] == [target.slug, target.slug]
