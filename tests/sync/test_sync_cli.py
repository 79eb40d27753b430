"""`pinky sync` / `pinky rollup` end to end: two machines (two PINKY_HOMEs, two projects, two
brain.db files) and a bare remote, all real repositories in tmp_path, driven through the CLI as
a subprocess (`python -m pinky`), plus the in-process glue in pinky.services.brain_sync."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from dulwich import porcelain

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.services.brain_sync import hide_secret, sync_global
from pinky.services.doctor import _sync as sync_check


@dataclass
class Machine:
    """One computer: its PINKY_HOME (global brain inside) and a project folder (the cwd)."""

    name: str
    home: Path
    project: Path

    @property
    def brain(self) -> Path:
        return self.home / "brain"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
        env.update(PINKY_HOME=str(self.home), PINKY_HASH_EMBED="1",
                   PINKY_GIT_AUTHOR=f"machine {self.name} <{self.name}@example.test>")
        return env

    def run(self, *args: str, stdin: str = "", ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "pinky", *args], cwd=self.project, env=self.env(),
                              input=stdin, capture_output=True, text=True, timeout=60)
        if ok:
            assert proc.returncode == 0, f"pinky {' '.join(args)} on {self.name}: {proc.stderr}"
        return proc

    def json(self, *args: str, stdin: str = "") -> dict:
        return json.loads(self.run(*args, "--json", stdin=stdin).stdout)

    def save(self, title: str, body: str, *extra: str) -> dict:
        return self.json("save", "-t", title, *extra, stdin=body)

    def kb(self) -> KnowledgeBase:
        config = load_config(home=self.home, db=self.project / "brain.db",
                             save_dir=self.project / "documentation", env={"PINKY_HASH_EMBED": "1"})
        return KnowledgeBase(config)


def make_machine(tmp_path: Path, name: str) -> Machine:
    project = tmp_path / name / f"proj-{name.lower()}"
    (project / "documentation").mkdir(parents=True)
    (project / "pinky.toml").touch()
    return Machine(name, tmp_path / name / "home", project)


@pytest.fixture
def remote(tmp_path: Path) -> str:
    path = tmp_path / "remote.git"
    porcelain.init(str(path), bare=True).close()
    return str(path)


@pytest.fixture
def a(tmp_path: Path) -> Machine:
    return make_machine(tmp_path, "A")


@pytest.fixture
def b(tmp_path: Path) -> Machine:
    return make_machine(tmp_path, "B")


def tree(root: Path) -> dict[str, str]:
    """Working-tree files (no .git) as path -> sha1, to prove nothing moved."""
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}


def index_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, slug, content_hash FROM entry ORDER BY id").fetchall()


def hits(machine: Machine, query: str, *extra: str) -> list[dict]:
    return machine.json("search", query, *extra)["hits"]


# --- the two-machine acceptance -----------------------------------------------------------------


def test_entry_saved_on_a_is_found_on_b_after_sync(a: Machine, b: Machine, remote: str) -> None:
    saved = a.save("Zebra migration runbook", "Run the zebracorn migration with --dry-run first.",
                   "--type", "guide", "--scope", "global")
    assert saved["scope"] == "global" and Path(saved["path"]).is_relative_to(a.brain)
    first = a.json("sync", "--remote", remote)
    assert first["pushed"] and first["committed"]
    assert "guide/zebra-migration-runbook.md" in first["commit_message"]

    b.save("Zebra fixtures", "The zebracorn test fixtures live in tests/zoo.", "--type", "note")  # project
    assert [h["slug"] for h in hits(b, "zebracorn migration")] == ["note/zebra-fixtures"]
    report = b.json("sync", "--remote", remote)
    assert report["cloned"] and "guide/zebra-migration-runbook.md" in report["pulled_paths"]
    assert report["reindexed"] == 1 and report["conflicts"] == []

    found = hits(b, "zebracorn migration")  # both scopes, one ranking
    by_slug = {h["slug"]: h["scope"] for h in found}
    assert by_slug == {"global/guide/zebra-migration-runbook": "global",
                       "note/zebra-fixtures": "project:proj-b"}
    assert found[0]["slug"] == "global/guide/zebra-migration-runbook"  # the better match ranks first
    only_global = hits(b, "zebracorn", "--scope", "global")
    assert [h["slug"] for h in only_global] == ["global/guide/zebra-migration-runbook"]
    human = b.run("search", "zebracorn dry-run").stdout
    assert "Zebra migration runbook  [guide, global]" in human

    # and back: B's global note reaches A, with no flag now that origin is recorded
    b.save("Zebra rollback", "Undo a zebracorn migration with the down script.", "--scope", "global")
    assert b.json("sync")["pushed"]
    back = a.json("sync")
    assert back["pulled_paths"] == ["note/zebra-rollback.md"] and back["reindexed"] == 1
    assert "global/note/zebra-rollback" in {h["slug"] for h in hits(a, "zebracorn down script")}

    # a deletion travels too, and leaves search on the other machine
    (a.brain / "note" / "zebra-rollback.md").unlink()
    a.run("sync")
    gone = b.json("sync")
    assert gone["pulled_paths"] == ["note/zebra-rollback.md"] and gone["reindexed"] == 1
    assert "global/note/zebra-rollback" not in {h["slug"] for h in hits(b, "zebracorn down script")}


def test_sync_human_output(a: Machine, remote: str) -> None:
    a.save("Plain note", "body", "--scope", "global")
    out = a.run("sync", "--remote", remote)
    assert out.stderr == ""
    assert f"remote: {remote}" in out.stdout
    assert "committed: pinky sync: add 2" in out.stdout and f"pushed to {remote}" in out.stdout
    again = a.run("sync").stdout
    assert "committed: nothing (no local changes)" in again and "pulled: nothing new" in again


def test_dead_remote_fails_cleanly_and_changes_nothing(a: Machine, remote: str, tmp_path: Path) -> None:
    a.save("Keep me", "precious local knowledge", "--scope", "global")
    a.run("sync", "--remote", remote)
    a.save("Unsynced", "written after the last sync", "--scope", "global")
    files_before, rows_before = tree(a.brain), index_rows(a.project / "brain.db")

    dead = str(tmp_path / "gone" / "remote.git")
    proc = a.run("sync", "--remote", dead, ok=False)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot fetch from remote {dead}")
    assert tree(a.brain) == files_before
    assert index_rows(a.project / "brain.db") == rows_before
    assert {h["slug"] for h in hits(a, "precious local knowledge written")} >= {"global/note/keep-me",
                                                                              "global/note/unsynced"}
    # pointing back at the live remote finishes the job
    assert a.json("sync", "--remote", remote)["pushed"]


def test_same_entry_edited_on_both_is_kept_reported_and_listed_by_doctor(
        a: Machine, b: Machine, remote: str) -> None:
    entry = a.save("Cache TTL", "The cache TTL is 60 seconds.", "--type", "decision", "--scope", "global")
    a.run("sync", "--remote", remote)
    b.run("sync", "--remote", remote)
    rel = "decision/cache-ttl.md"
    for machine, ttl in ((a, "90"), (b, "120")):
        path = machine.brain / rel
        path.write_text(path.read_text().replace("60 seconds", f"{ttl} seconds"))
    a.run("sync")
    out = b.run("sync").stdout
    assert "conflicts: 1 entry(ies) were edited on both machines" in out
    assert "delete the .conflict- copy, then run `pinky-brain sync`" in out
    copies = sorted(p.relative_to(b.brain).as_posix() for p in b.brain.rglob("*.conflict-*"))
    assert len(copies) == 1
    copy = copies[0]
    assert copy.startswith("decision/cache-ttl.conflict-") and copy.endswith(".md")
    assert f"{b.brain / copy}  (the other machine's version of {rel})" in out
    assert "90 seconds" in (b.brain / copy).read_text() and "120 seconds" in (b.brain / rel).read_text()
    for path in b.brain.rglob("*.md"):
        assert "<<<<<<<" not in path.read_text()
    assert {entry["slug"], "global/" + copy[:-3]} <= {h["slug"] for h in hits(b, "cache TTL seconds")}

    doctor = b.run("doctor", "--json")  # warnings do not fail doctor
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "brain sync")
    assert check["status"] == "warn" and str(b.brain / copy) in check["detail"]
    assert ".conflict-" in check["fix"] and "pinky-brain sync" in check["fix"]

    # resolving (delete the copy, sync) clears it
    (b.brain / copy).unlink()
    assert "conflicts" not in b.run("sync").stdout
    after = next(c for c in b.json("doctor")["checks"] if c["name"] == "brain sync")
    assert after["status"] == "ok" and after["detail"] == f"no conflict copies; syncs with origin {remote}"


# --- rollups ----------------------------------------------------------------------------------------


def write_diary(root: Path, day: str, *lines: str) -> Path:
    path = root / "diary" / f"{day}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntype: diary\n---\n# Diary {day}\n\n" + "".join(x + "\n" for x in lines))
    return path


def test_rollup_writes_indexes_and_is_idempotent(a: Machine) -> None:
    docs = a.project / "documentation"
    diary = write_diary(docs, "2026-11-24",
                        "- 09:00 [aaaaaaaa] files: src/quux.py, src/quux.py",
                        "- 09:10 [aaaaaaaa] asked: why does the quuxinator stall on startup?")
    write_diary(docs, "2026-11-30", "- 10:00 [bbbbbbbb] asked: next week's flibbertigibbet")
    diary_bytes = diary.read_bytes()
    a.save("Unrelated", "an entry, so search does not build a missing index by itself")

    data = a.json("rollup", "--week", "2026-W48")
    path = docs / "diary" / "weekly" / "2026-W48.md"
    assert data["path"] == str(path) and data["changed"] and data["diary_lines"] == 2
    text = path.read_text()
    assert "quuxinator stall" in text and "flibbertigibbet" not in text and "`src/quux.py` (2)" in text
    found = hits(a, "quuxinator stall", "--type", "diary")
    assert data["slug"] == "diary/weekly/2026-W48" and data["slug"] in {h["slug"] for h in found}

    mtime = path.stat().st_mtime_ns
    again = a.run("rollup", "--week", "2026-W48")
    assert again.stdout.startswith(f"unchanged {path}")
    assert path.stat().st_mtime_ns == mtime and path.read_text() == text
    assert diary.read_bytes() == diary_bytes  # a rollup never alters a diary

    month = a.json("rollup", "--month", "2026-11")
    assert month["path"] == str(docs / "diary" / "monthly" / "2026-11.md") and month["diary_lines"] == 3


def test_rollup_global_scope_uses_the_global_brain(a: Machine) -> None:
    write_diary(a.brain, "2026-12-29", "- 08:00 [cccccccc] learned: the yearend gizmo resets on 2027-01-01")
    a.save("Unrelated", "an entry, so search does not build a missing index by itself")
    data = a.json("rollup", "--week", "2026-W53", "--scope", "global")
    assert data["path"] == str(a.brain / "diary" / "weekly" / "2026-W53.md")
    assert data["slug"] == "global/diary/weekly/2026-W53"
    assert {"global"} == {h["scope"] for h in hits(a, "yearend gizmo")}


@pytest.mark.parametrize(("args", "message"), [
    (("--week", "2026-W60"), "Error: week 2026-W60 does not exist"),
    (("--week", "2026-48"), "Error: bad week '2026-48'"),
    (("--month", "2026-13"), "Error: month 2026-13 does not exist"),
    (("--week", "2026-W48", "--month", "2026-11"), "Error: give either a week"),
])
def test_rollup_bad_period_is_one_clear_error(a: Machine, args: tuple[str, ...], message: str) -> None:
    proc = a.run("rollup", *args, ok=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and proc.stderr.startswith(message)
    assert not (a.project / "documentation" / "diary").exists()


# --- in process: the glue the MCP brain_sync tool calls -----------------------------------------------


def test_running_server_kb_sees_pulled_entries(a: Machine, b: Machine, remote: str, capfd) -> None:
    a.save("Walrus tuning", "Set the walrus buffer to 64 MiB.", "--scope", "global")
    a.run("sync", "--remote", remote)
    capfd.readouterr()

    server_kb = b.kb()  # e.g. B's pinky-mcp, opened before the sync
    server_kb.reindex()
    assert server_kb.search("walrus buffer").hits == []
    syncing_kb = b.kb()
    try:
        report = sync_global(syncing_kb, remote)
    finally:
        syncing_kb.close()
    assert report["reindexed"] == 1 and report["brain"] == str(b.brain)
    json.dumps(report)  # JSON-able for the MCP tool
    result = server_kb.search("walrus buffer")
    assert [(h.slug, h.scope) for h in result.hits] == [("global/note/walrus-tuning", "global")]
    server_kb.close()
    out, _ = capfd.readouterr()
    assert out == ""  # nothing on stdout: it would corrupt the MCP channel


def test_doctor_hints_when_brain_repo_has_no_origin(a: Machine) -> None:
    kb = a.kb()
    try:
        kb.save("Local only", "body", scope="global")
        before = sync_check(kb)
        assert before.status == "ok" and "not synced" in before.detail
        report = sync_global(kb)  # no remote: commits locally
        assert report["initialised"] and report["committed"] and not report["pushed"]
        check = sync_check(kb)
    finally:
        kb.close()
    assert check.status == "warn" and "no origin" in check.detail and "--remote URL" in check.fix


def test_secrets_in_remote_urls_are_hidden() -> None:
    assert hide_secret("https://me:s3cret@git.example/b.git") == "https://me:***@git.example/b.git"
    assert hide_secret("git@github.com:me/brain.git") == "git@github.com:me/brain.git"
    assert hide_secret("ssh://git@host/brain") == "ssh://git@host/brain"
