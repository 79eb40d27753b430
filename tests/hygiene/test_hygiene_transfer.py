"""Export and import: a round trip into an empty brain gives back every note byte for byte (examples/ and a
generated brain of 1,000 notes); import never overwrites, skips what is there, renames and says so, and
redacts secrets."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_note
from mcp_helpers import hermetic_config, in_process

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.hygiene.transfer import parse_record
from pinky.kb import KnowledgeBase

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sample-notes"
TOKEN = "ghp_" + "".join(random.Random(7).choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(33)) + "a1Z"


def brain(root: Path) -> KnowledgeBase:
    (root / "documentation").mkdir(parents=True, exist_ok=True)
    return KnowledgeBase(hermetic_config(root))


def files_of(kb: KnowledgeBase) -> dict[str, bytes]:
    return {f"{name}/{path.relative_to(base).as_posix()}": path.read_bytes()
            for name, base in kb.config.roots().items() for path in base.rglob("*.md")
            if not any(part.startswith((".", "_")) for part in path.relative_to(base).parts)}


def round_trip(source: KnowledgeBase, target_root: Path) -> tuple[dict[str, bytes], KnowledgeBase, dict]:
    """Export `source` and import it into an empty brain of a project with the same name."""
    source.reindex(embed=False)
    lines = [json.dumps(record, ensure_ascii=False) for record in source.hygiene.export()]
    target = brain(target_root)
    assert target.config.project == source.config.project
    report = target.hygiene.import_lines(lines, embed=False)
    return files_of(source), target, report


def assert_same_entries(source: KnowledgeBase, target: KnowledgeBase) -> None:
    for item in source.list_entries(limit=10_000, include_superseded=True):
        before, after = source.get(item["slug"]), target.get(item["slug"])
        assert (after.body, after.meta, after.scope, after.type, after.created, after.last_verified, after.tags) == \
            (before.body, before.meta, before.scope, before.type, before.created, before.last_verified, before.tags)


def test_parse_record_refuses_what_is_not_a_note_inside_a_root() -> None:
    good = {"pinky_export": 1, "root": "project", "path": "gotcha/a.md", "text": "---\ntitle: A\n---\nbody\n"}
    assert parse_record(json.dumps(good)).slug == "gotcha/a"
    for change, message in [({"pinky_export": 2}, "not a pinky-brain export"), ({"root": "etc"}, "root must be"),
                            ({"path": "../../etc/x.md"}, "not a note path"), ({"path": "/etc/x.md"}, "not a note"),
                            ({"path": ".archive/a.md"}, "not a note path"), ({"path": "a.txt"}, "not a note path"),
                            ({"text": "a\x00b"}, "NUL")]:
        with pytest.raises(InvalidInput, match=message):
            parse_record(json.dumps({**good, **change}))
    with pytest.raises(InvalidInput, match="not JSON"):
        parse_record("{nope")


def test_examples_round_trip_byte_for_byte(tmp_path: Path) -> None:
    source = brain(tmp_path / "a" / "demo")
    shutil.copytree(EXAMPLES, source.config.save_dir, dirs_exist_ok=True)
    write_note(source.config.global_dir, "pattern/shared.md", "---\ntitle: Shared\ntags: [x]\n---\nGlobal one.\n")
    before, target, report = round_trip(source, tmp_path / "b" / "demo")
    assert len(report["imported"]) == 8 and report["errors"] == report["duplicates"] == report["renamed"] == []
    assert files_of(target) == before
    assert_same_entries(source, target)


def generated_note(rng: random.Random, n: int) -> str:
    """Frontmatter of every shape pinky meets: dates, lists, nested maps, unicode, keys, none at all."""
    if n % 97 == 0:
        return f"# Bare note {n}\n\nNo frontmatter at all, ünïcödé and CRLF\r\nline.\n"
    meta = [f"title: Note {n} — {rng.choice(['pool', 'cache', 'deploy', 'ñandú'])}",
            f"type: {rng.choice(['gotcha', 'pattern', 'decision', 'guide', 'note', 'status', 'bug'])}",
            f"tags: [{', '.join(rng.sample(['db', 'ci', 'auth', 'perf', 'ops'], rng.randint(0, 3)))}]",
            f"created: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:00:00+00:00"]
    if n % 3 == 0:
        meta.append(f"last_verified: 2026-10-{rng.randint(10, 28)}")
    if n % 5 == 0:
        meta += [f"key: svc{n % 50}.port", "files:", "  - src/app.py", "  - 'weird: name.py'"]
    if n % 7 == 0:
        meta += ["extra:", "  nested: {a: 1, b: [true, null]}", "  when: 2026-03-01"]
    body = " ".join(f"word{rng.randint(0, 9999)}" for _ in range(rng.randint(5, 120)))
    return "---\n" + "\n".join(meta) + f"\n---\n\n## Heading {n}\n\n{body}\n" + ("\n" if n % 11 == 0 else "")


def test_a_generated_brain_of_1000_notes_round_trips_byte_for_byte(tmp_path: Path) -> None:
    source = brain(tmp_path / "a" / "demo")
    rng = random.Random(12)
    for n in range(1000):
        base = source.config.global_dir if n % 4 == 0 else source.config.save_dir
        write_note(base, f"{rng.choice(['gotcha', 'note', 'deep/er/folder'])}/n{n}.md", generated_note(rng, n))
    before, target, report = round_trip(source, tmp_path / "b" / "demo")
    assert len(before) == 1000 and len(report["imported"]) == 1000 and report["errors"] == []
    assert files_of(target) == before
    assert_same_entries(source, target)


def test_import_skips_duplicates_renames_a_taken_path_and_reports_secrets_unchanged(tmp_path: Path) -> None:
    source = brain(tmp_path / "a")
    write_note(source.config.save_dir, "gotcha/same.md", "---\ntitle: Same\n---\nsame text\n")
    write_note(source.config.save_dir, "gotcha/taken.md", "---\ntitle: Taken\n---\nthe exported one\n")
    write_note(source.config.save_dir, "note/secret.md", f"---\ntitle: Secret\n---\nuse {TOKEN}\n")
    source.reindex(embed=False)
    lines = [json.dumps(r) for r in source.hygiene.export()] + ["not json", ""]
    target = brain(tmp_path / "b")
    write_note(target.config.save_dir, "gotcha/same.md", "---\ntitle: Same\n---\nsame text\n")
    taken = write_note(target.config.save_dir, "gotcha/taken.md", "---\ntitle: Taken\n---\nmine, keep me\n")
    target.reindex(embed=False)
    report = target.hygiene.import_lines(lines, embed=False)
    assert report["duplicates"] == [{"slug": "gotcha/same", "same_as": "gotcha/same"}]
    assert report["renamed"] == [{"slug": "gotcha/taken", "new_slug": "gotcha/taken-2",
                                  "why": "a different note has that name"}]
    assert taken.read_text(encoding="utf-8").endswith("mine, keep me\n")  # never overwritten
    assert target.get("gotcha/taken-2").body == "the exported one\n"
    assert report["secrets"] == [{"slug": "note/secret", "kinds": ["github-token"]}] and report["redacted"] == []
    assert {"slug": "note/secret", "was": "project:a", "now": "project:b"} in report["rescoped"]
    assert (target.config.save_dir / "note/secret.md").read_text(encoding="utf-8") == \
        f"---\ntitle: Secret\n---\nuse {TOKEN}\n"  # never rewritten: hidden on display, held back by sync
    assert TOKEN not in target.get("note/secret").body
    assert report["errors"] == ["line 4: not JSON (Expecting value at column 1)"]
    again = target.hygiene.import_lines(lines, embed=False)  # a second import adds nothing
    assert again["imported"] == [] and len(again["duplicates"]) == 3


def test_a_project_note_needs_a_project_or_root_global(tmp_path: Path) -> None:
    line = json.dumps({"pinky_export": 1, "root": "project", "path": "note/a.md", "text": "---\ntitle: A\n---\nx\n"})
    with KnowledgeBase(load_config(home=tmp_path / "home", db=tmp_path / "g.db", cwd=tmp_path)) as kb:
        assert "no project here" in kb.hygiene.import_lines([line])["errors"][0]
        assert kb.hygiene.import_lines([line], root="global")["imported"] == ["global/note/a"]


def test_cli_export_and_import(project: Path, tmp_path: Path) -> None:
    write_note(project / "documentation", "gotcha/a.md", "---\ntitle: A\ntags: [x]\n---\nalpha\n")
    runner = CliRunner()
    exported = runner.invoke(cli, ["export", "--tag", "x"])
    assert exported.exit_code == 0 and json.loads(exported.stdout.splitlines()[0])["path"] == "gotcha/a.md"
    dump = tmp_path / "brain.jsonl"
    dump.write_text(exported.stdout, encoding="utf-8")
    (project / "documentation" / "gotcha" / "a.md").unlink()
    imported = runner.invoke(cli, ["import", str(dump)])
    assert imported.exit_code == 0 and "imported 1 notes" in imported.output
    assert (project / "documentation" / "gotcha" / "a.md").read_text(encoding="utf-8").endswith("alpha\n")
    dump.write_text("garbage\n", encoding="utf-8")
    failed = runner.invoke(cli, ["import", str(dump)])
    assert failed.exit_code == 1 and "line 1: not JSON" in failed.output


@pytest.mark.anyio
async def test_mcp_admin_export_and_import(tmp_path: Path) -> None:
    write_note(tmp_path / "a" / "documentation", "gotcha/a.md", "---\ntitle: A\n---\nalpha\n")
    dump = tmp_path / "dump.jsonl"
    async with in_process(tmp_path / "a", "admin") as (client, _):
        inline = await client.call_tool("brain_export", {})
        assert inline.structured_content["count"] == 1 and '"gotcha/a.md"' in inline.structured_content["jsonl"]
        done = await client.call_tool("brain_export", {"file": str(dump)})
        assert done.structured_content == {"count": 1, "file": str(dump), "jsonl": None}
        again = await client.call_tool("brain_export", {"file": str(dump)})
        assert again.is_error and "never overwrites" in again.content[0].text
        assert (await client.call_tool("brain_export", {"file": str(tmp_path / "x.txt")})).is_error
        made_up = tmp_path / "no" / "such" / "dir" / "dump.jsonl"
        refused = await client.call_tool("brain_export", {"file": str(made_up)})
        assert refused.is_error and "not a folder" in refused.content[0].text and not (tmp_path / "no").exists()
    (tmp_path / "b" / "documentation").mkdir(parents=True)
    async with in_process(tmp_path / "b", "admin") as (client, _):
        report = await client.call_tool("brain_import", {"file": str(dump)})
        assert report.structured_content["imported"] == ["gotcha/a"] and not report.is_error
        assert (tmp_path / "b" / "documentation" / "gotcha" / "a.md").read_bytes() == \
            (tmp_path / "a" / "documentation" / "gotcha" / "a.md").read_bytes()
    async with in_process(tmp_path / "b", "write") as (client, _):
        refused = await client.call_tool("brain_import", {"file": str(dump)})
        assert refused.is_error


def test_import_keeps_digests_cids_and_test_vectors_byte_for_byte(tmp_path: Path) -> None:
    """Issue 22: an import replaced a SHA-256 in prose, a CID and a base64 test vector by markers."""
    text = ("---\ntitle: Release checks\n---\n"
            "The release tarball's SHA-256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.\n"
            "Pinned on IPFS as QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG.\n"
            "Test vector: the expected output is 9QEfOgWNkEcFXgy0BCyPZpN7VnKkL8ykvyQDgkhkUKo=\n")
    source = brain(tmp_path / "a")
    write_note(source.config.save_dir, "note/release-checks.md", text)
    source.reindex(embed=False)
    target = brain(tmp_path / "a2")
    report = target.hygiene.import_lines([json.dumps(r) for r in source.hygiene.export()], embed=False)
    assert report["imported"] == ["note/release-checks"] and report["secrets"] == []
    assert (target.config.save_dir / "note/release-checks.md").read_text(encoding="utf-8") == text
