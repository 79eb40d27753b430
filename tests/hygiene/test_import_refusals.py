"""What import does with what is not a clean export: each bad record is refused with its line number and
reason while the rest is imported and indexed (CLI and brain_import), and the admin server refuses at once
a file it must not read (/dev/zero, a FIFO, a file over PINKY_MAX_IMPORT_BYTES), answering searches meanwhile."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_helpers import RawServer

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.kb import KnowledgeBase

REPLY_SECONDS = 10.0  # a refusal takes milliseconds; before the fix these never answered


def record(path: str, word: str) -> str:
    return json.dumps({"pinky_export": 1, "root": "project", "path": path,
                       "text": f"---\ntitle: Note {word}\n---\nThe word {word} is here.\n"})


def bad_export(folder: Path) -> tuple[Path, dict[int, str], list[str]]:
    """An export whose even lines are good notes and whose odd lines are each one kind of bad record:
    (file, {line number: what its refusal must say}, the good notes' unique words)."""
    bad = {
        2: (record("gotcha/" + "n" * 300 + ".md", "long"), "name of 303 bytes"),
        4: (record("gotcha/good1.md/under.md", "under"), "gotcha/good1.md is a file"),
        6: ('{"pinky_export": 1, "root": "project", "path": "gotcha/s.md", "text": "a \\ud800 b"}', "lone surrogate"),
        8: ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        10: (b'{"pinky_export": 1, "root": "project", "path": "gotcha/u.md", "text": "\xff"}', "not UTF-8"),
        12: ("x" * (3 << 20), "longer than"),
        14: ("{nope", "not JSON"),
    }
    lines: list[bytes] = []
    words = []
    for number in range(1, 16):
        if number in bad:
            line = bad[number][0]
            lines.append(line if isinstance(line, bytes) else line.encode())
        else:
            words.append(f"goodword{number}")
            lines.append(record(f"gotcha/good{number}.md", words[-1]).encode())
    dump = folder / "dump.jsonl"
    dump.write_bytes(b"\n".join(lines) + b"\n")
    return dump, {n: why for n, (_, why) in bad.items()}, words


def assert_refused(errors: list[str], expected: dict[int, str]) -> None:
    assert len(errors) == len(expected), errors
    for error, (number, why) in zip(errors, sorted(expected.items()), strict=True):
        assert error.startswith(f"line {number}: ") and why in error, (number, error)


def assert_imported_and_indexed(kb: KnowledgeBase, words: list[str]) -> None:
    for word in words:
        hits = kb.search(word, mode="bm25").hits
        assert hits and hits[0].slug == f"gotcha/good{word.removeprefix('goodword')}", word


def test_cli_refuses_each_bad_record_with_its_line_and_imports_and_indexes_the_rest(project: Path,
                                                                                  tmp_path: Path) -> None:
    dump, expected, words = bad_export(tmp_path)
    result = CliRunner().invoke(cli, ["import", str(dump)])
    assert result.exit_code == 1, result.output
    assert f"imported {len(words)} notes, 0 already there, 0 renamed, {len(expected)} refused" in result.stdout
    assert_refused([line.removeprefix("refused: ") for line in result.stderr.splitlines()], expected)
    with KnowledgeBase(load_config(cwd=project)) as kb:
        assert_imported_and_indexed(kb, words)
    again = CliRunner().invoke(cli, ["import", "--json", "-"], input=dump.read_bytes())
    report = json.loads(again.stdout)  # standard input, as JSON: the same refusals, the rest already there
    assert again.exit_code == 1 and len(report["duplicates"]) == len(words)
    assert_refused(report["errors"], expected)


def test_brain_import_refuses_each_bad_record_with_its_line_and_imports_and_indexes_the_rest(tmp_path: Path) -> None:
    dump, expected, words = bad_export(tmp_path)
    (tmp_path / "documentation").mkdir()
    with RawServer(tmp_path, PINKY_TIER="admin") as server:
        server.initialize()
        done = server.call("brain_import", file=str(dump))
        assert not done.get("isError"), done
        assert f"{len(expected)} refused" in done["content"][0]["text"]
        report = done["structuredContent"]
        assert len(report["imported"]) == len(words)
        assert_refused(report["errors"], expected)
        for word in words:
            found = server.call("brain_search", query=word, mode="keyword")["structuredContent"]["hits"]
            assert found and found[0]["path"].endswith(f"good{word.removeprefix('goodword')}.md"), word


def unreadable(kind: str, folder: Path) -> Path:
    if kind == "dev-zero":
        return Path("/dev/zero")
    if kind == "fifo":
        os.mkfifo(folder / "pipe.jsonl")  # nobody ever writes to it
        return folder / "pipe.jsonl"
    big = folder / "big.jsonl"  # good records, only too many bytes of them
    big.write_text("".join(record(f"note/n{n}.md", f"w{n}") + "\n" for n in range(40)), encoding="utf-8")
    assert big.stat().st_size > 2048
    return big


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="POSIX only")
@pytest.mark.parametrize(("kind", "why"), [("dev-zero", "a character device"), ("fifo", "a named pipe (FIFO)"),
                                           ("over-limit", "over the import limit of 2,048 (PINKY_MAX_IMPORT_BYTES)")])
def test_admin_brain_import_refuses_what_is_not_an_export_file_at_once_and_keeps_serving(
        tmp_path: Path, kind: str, why: str) -> None:
    (tmp_path / "documentation").mkdir()
    target = unreadable(kind, tmp_path)
    with RawServer(tmp_path, PINKY_TIER="admin", PINKY_MAX_IMPORT_BYTES="2048") as server:
        server.initialize()
        server.call("brain_save", title="Pool", body="The pool hangs on exit.", type="gotcha")
        server.send(json.dumps({"jsonrpc": "2.0", "id": "import", "method": "tools/call",
                                "params": {"name": "brain_import", "arguments": {"file": str(target)}}}))
        server.send(json.dumps({"jsonrpc": "2.0", "id": "search", "method": "tools/call",
                                "params": {"name": "brain_search", "arguments": {"query": "pool hangs"}}}))
        refused = server.answer("import", timeout=REPLY_SECONDS)["result"]
        assert refused["isError"] and why in refused["content"][0]["text"], refused
        assert "nothing was imported" in refused["content"][0]["text"]
        hits = server.answer("search", timeout=REPLY_SECONDS)["result"]["structuredContent"]["hits"]
        assert [hit["slug"] for hit in hits] == ["gotcha/pool"]
        assert server.call("brain_stats")["structuredContent"]["entries"] == 1  # nothing was imported
