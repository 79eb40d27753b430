"""The `pinky` CLI as a user runs it: real processes, real files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, write_note

NOTE = "---\ntitle: Redis eviction surprise\ntype: gotcha\ntags: [redis]\n---\nallkeys-lru evicts keys.\n"


def pinky(*args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([*console_script("pinky"), *args], cwd=cwd, input=stdin, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=120)


def test_init_is_idempotent_and_ignores_the_index(project: Path) -> None:
    first = pinky("init", cwd=project)
    assert first.returncode == 0, first.stderr
    assert (project / "documentation/_templates/gotcha.md").exists()  # one folder, out of the index
    assert not (project / "documentation/gotcha").exists()
    assert "brain.db" in (project / ".gitignore").read_text().splitlines()
    assert "documentation/diary/** merge=union" in (project / ".gitattributes").read_text().splitlines()
    second = pinky("init", "--json", cwd=project)
    assert json.loads(second.stdout)["created"] == []
    assert (project / ".gitignore").read_text().count("brain.db\n") == 1


def test_reindex_search_stats_json_shapes(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    report = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert {"added", "updated", "removed", "unchanged", "chunks_embedded", "seconds"} <= report.keys()
    assert report["added"] == 1
    again = json.loads(pinky("reindex", "--json", cwd=project).stdout)
    assert again["chunks_embedded"] == 0 and again["unchanged"] == 1
    hits = json.loads(pinky("search", "redis eviction", "--json", cwd=project).stdout)["hits"]
    assert hits[0]["slug"] == "gotcha/redis"
    assert {"slug", "path", "title", "type", "scope", "project", "tags", "score", "snippet", "heading",
            "line", "last_verified"} <= hits[0].keys()
    stats = json.loads(pinky("stats", "--json", cwd=project).stdout)
    assert stats["entries"] == 1 and stats["vectors"] == 1 and stats["dims"] == 256


def test_quiet_reindex_when_not_a_terminal(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    result = pinky("reindex", cwd=project)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("1 added")


def test_save_reads_stdin_and_get_shows_it(project: Path) -> None:
    saved = pinky("save", "--title", "Use uv for tools", "--type", "pattern", "--tag", "python", "--json",
                  cwd=project, stdin="uv tool install pinky-brain puts pinky on PATH.")
    assert saved.returncode == 0, saved.stderr
    entry = json.loads(saved.stdout)
    assert entry["slug"] == "pattern/use-uv-for-tools" and entry["tags"] == ["python"]
    shown = pinky("get", "use-uv-for-tools", cwd=project)
    assert "uv tool install" in shown.stdout and "version" in shown.stdout
    found = json.loads(pinky("search", "uv tool", "--type", "pattern", "--json", cwd=project).stdout)
    assert found["hits"][0]["slug"] == "pattern/use-uv-for-tools"


def test_save_and_update_take_questions(project: Path) -> None:
    saved = pinky("save", "--title", "Pool close", "--question", "why does the worker hang on shutdown?", "--json",
                  cwd=project, stdin="Call pool.close(timeout=5).")
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["meta"]["questions"] == ["why does the worker hang on shutdown?"]
    found = json.loads(pinky("search", "worker shutdown", "--json", cwd=project).stdout)
    assert found["hits"][0]["slug"] == "note/pool-close"
    updated = pinky("update", "pool-close", "--question", "how long may draining take?", cwd=project)
    assert updated.returncode == 0 and "updated note/pool-close" in updated.stdout, updated.stderr
    assert "how long may draining take?" in (project / "documentation/note/pool-close.md").read_text()
    stale = pinky("update", "pool-close", "--expected-version", "0000", "--no-questions", cwd=project)
    assert stale.returncode == 1 and "changed" in stale.stderr and "Traceback" not in stale.stderr
    cleared = pinky("update", "pool-close", "--no-questions", "--body", "--json", cwd=project, stdin="Drain first.")
    entry = json.loads(cleared.stdout)
    assert "questions" not in entry["meta"] and entry["body"].strip() == "Drain first."


def test_global_save_and_search_scope(project: Path, isolated_env: Path) -> None:
    saved = pinky("save", "--title", "Global tip", "--scope", "global", cwd=project, stdin="ripgrep tip")
    assert saved.returncode == 0, saved.stderr
    assert (isolated_env / "brain/note/global-tip.md").exists()
    hits = json.loads(pinky("search", "ripgrep", "--scope", "global", "--json", cwd=project).stdout)["hits"]
    assert [h["scope"] for h in hits] == ["global"]


def test_where_a_save_without_scope_lands_is_decided_in_one_place(project: Path, isolated_env: Path,
                                                                    tmp_path: Path) -> None:
    """One rule (pinky.knowledge.entries.save_scope): in a project, that project; a project named, that one (no
    click default says `project` any more, which refused `--project NAME`); outside any project a person at the
    CLI is asked to choose, where an agent's brain_save lands in the global brain."""
    here = json.loads(pinky("save", "-t", "Here", "--json", cwd=project, stdin="in the project").stdout)
    named = pinky("save", "-t", "Named", "--project", "billing", "--json", cwd=project, stdin="for billing")
    assert named.returncode == 0, named.stderr
    assert (here["scope"], json.loads(named.stdout)["scope"]) == ("project:demo-project", "project:billing")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for refused in (pinky("save", "-t", "Nowhere", cwd=elsewhere, stdin="x"),
                    pinky("save", "-t", "Nowhere", "--scope", "project", cwd=elsewhere, stdin="x")):
        assert refused.returncode == 1 and "pinky-brain init" in refused.stderr and "--scope global" in refused.stderr
        assert "Traceback" not in refused.stderr
    outside = pinky("save", "-t", "Outside", "--scope", "global", "--json", cwd=elsewhere, stdin="no project here")
    assert json.loads(outside.stdout)["scope"] == "global" and (isolated_env / "brain/note/outside.md").exists()


def test_delete_and_restore(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    pinky("reindex", cwd=project)
    deleted = pinky("delete", "gotcha/redis", "--reason", "obsolete", cwd=project)
    assert deleted.returncode == 0 and "restore" in deleted.stdout
    assert json.loads(pinky("search", "redis", "--json", cwd=project).stdout)["hits"] == []
    assert pinky("restore", "gotcha/redis", cwd=project).returncode == 0
    assert json.loads(pinky("search", "redis", "--json", cwd=project).stdout)["hits"]


@pytest.mark.parametrize(("args", "message"), [
    (["search", "x", "--limit", "0"], "limit must be a whole number from 1 to 100"),
    (["search", "x", "--limit", "500"], "limit must be a whole number from 1 to 100"),
    (["search", "x", "--type", "recipe"], "Invalid value for '--type'"),
    (["search", "x", "--scope", "nowhere"], "scope 'nowhere'"),
    (["get", "no/such-entry"], "no entry with slug 'no/such-entry'"),
    (["save", "--title", "x", "--tag", ""], "tag '' must be"),
    (["save", "--title", "x", "--question", "x" * 301], "must be 1-300 printable characters"),
    (["update", "no/such-entry", "--title", "y"], "no entry with slug 'no/such-entry'"),
    (["update", "no/such-entry"], "nothing to change"),
    (["--db", "/proc/forbidden/brain.db", "stats"], "brain.db"),
])
def test_bad_input_is_one_clear_line_and_non_zero(project: Path, args: list[str], message: str) -> None:
    result = pinky(*args, cwd=project, stdin="body")
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_doctor_reports_every_check_as_json(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    write_note(project / "documentation", "broken.md", "---\ntitle: [x\n---\nbody")
    pinky("reindex", cwd=project)
    write_note(project / "documentation", "note/unindexed.md", "new")
    result = pinky("doctor", "--json", cwd=project)
    report = json.loads(result.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True and result.returncode == 0
    assert checks["vector search (sqlite-vec)"]["status"] == "ok"
    assert checks["markdown vs index"]["status"] == "warn"
    assert checks["markdown vs index"]["fix"] == "pinky-brain reindex"
    assert "broken.md" in checks["malformed notes"]["detail"]


def test_doctor_has_no_warning_about_vectors_for_a_brand_new_empty_project(project: Path) -> None:
    """Issue 39 item 5: a new project has no notes, so no vectors to build: that is not something to fix."""
    report = json.loads(pinky("doctor", "--json", cwd=project).stdout)
    check = next(c for c in report["checks"] if c["name"] == "vector fingerprint")
    assert check["status"] == "ok" and "no notes to embed yet" in check["detail"], check


def test_doctor_reports_fingerprint_mismatch(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    pinky("reindex", cwd=project)
    report = json.loads(pinky("doctor", "--json", cwd=project, env={"PINKY_CHUNK_WORDS": "90"}).stdout)
    check = next(c for c in report["checks"] if c["name"] == "vector fingerprint")
    assert check["status"] == "warn" and "pinky-brain reindex" in check["fix"]


def test_corrupt_db_rebuilt_by_reindex(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    pinky("reindex", cwd=project)
    (project / "brain.db").write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        (project / f"brain.db{suffix}").unlink(missing_ok=True)
    result = pinky("reindex", "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["added"] == 1
    assert (project / "documentation/gotcha/redis.md").read_text() == NOTE


def test_gc_json(project: Path) -> None:
    write_note(project / "documentation", "gotcha/redis.md", NOTE)
    pinky("reindex", cwd=project)
    removed = json.loads(pinky("gc", "--json", cwd=project).stdout)
    assert removed["orphan_chunks"] == 0 and "bytes_reclaimed" in removed
