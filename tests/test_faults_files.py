"""Fault suite, issue 10 item 2: only regular files inside the roots are read or written.

Seen before: a `.md` link to a file outside the project was indexed and its text searchable; a link
to /dev/zero made reindex take 20 GB in 90 s; a FIFO named `.md` hung reindex for ever; linked
`<type>/`, `diary/` and `.archive/` folders received writes outside the project. Whatever could
hang runs in a child process with a time and memory limit (HANG_GUARD_S, 4 GB), so a regression
fails the test instead of stalling the suite. Every case checks that the files outside are untouched.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import all_breadcrumbs, console_script, write_note

from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.kb import KnowledgeBase

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links, FIFOs and /dev/zero")
HANG_GUARD_S = 20.0


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def guarded(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run a pinky console script, or `python -c` when args[0] == '-c', killed past the guard."""
    command = [sys.executable, *args] if args[0] == "-c" else [*console_script(args[0]), *args[1:]]
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=HANG_GUARD_S,
                          preexec_fn=_limits, env={**os.environ, "PINKY_HOOKS_NO_BACKGROUND": "1"})


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every path under `folder` with its bytes (a link: its target): what must not change."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else "dir"
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write_note(folder, "secret.md", "# Secret\n\nzanzibar is the password\n")
    write_note(folder, "gotcha/planted.md", "# Planted\n\nquokka lives outside\n")
    return folder


@pytest.fixture
def docs(project: Path) -> Path:
    return project / "documentation"


# --- reading: links out, /dev/zero, FIFOs, sockets ----------------------------------------------------


def test_reindex_reads_nothing_outside_and_opens_no_special_file(project: Path, docs: Path, outside: Path) -> None:
    before = snapshot(outside)
    write_note(docs, "note/real.md", "# Real\n\nwombat inside\n")
    (docs / "note/inside-link.md").symlink_to(docs / "note/real.md")  # inside the root: still a note
    (docs / "note/secret.md").symlink_to(outside / "secret.md")
    (docs / "note/zero.md").symlink_to("/dev/zero")
    (docs / "gotcha").symlink_to(outside / "gotcha")
    os.mkfifo(docs / "note/pipe.md")
    with socket.socket(socket.AF_UNIX) as server:
        try:
            server.bind(str(docs / "note/sock.md"))
        except OSError:  # the path is too long for a socket here
            pass
        result = guarded(["pinky", "reindex", "--json"], project)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    print(f"reindex: {report['seconds']} s")
    assert report["added"] == 2
    errors = "\n".join(report["errors"])
    assert "note/secret.md: skipped: a symbolic link to a file outside the knowledge folder" in errors
    assert ("note/zero.md: skipped: a symbolic link to a file outside the knowledge folder "
            "(it leads to /dev/zero") in errors
    assert "documentation/gotcha: skipped: a symbolic link to a folder outside the knowledge folder" in errors
    assert "note/pipe.md: skipped: a named pipe (FIFO), not a regular file: never opened" in errors
    with KnowledgeBase(load_config()) as kb:
        for word in ("zanzibar", "quokka"):
            assert kb.search(word, mode="bm25").hits == []
        assert {h.slug for h in kb.search("wombat", mode="bm25").hits} == {"note/real", "note/inside-link"}
        again = kb.reindex()  # skipped files are named again, never read
        assert (again.added, again.unchanged, sorted(again.errors)) == (0, 2, sorted(report["errors"]))
        assert kb.drift() == {"new": [], "changed": [], "deleted": []}
        from pinky.services.doctor import run_checks

        unreadable = next(c for c in run_checks(kb) if c.name == "unreadable files")
        assert unreadable.status == "warn" and "note/pipe.md" in unreadable.detail
    assert snapshot(outside) == before


def test_indexing_one_special_or_outside_file_records_it_as_skipped(project: Path, docs: Path, outside: Path) -> None:
    """What the watcher and the hooks do: index_file on a path someone just created."""
    (docs / "note").mkdir()
    (docs / "note/zero.md").symlink_to("/dev/zero")
    (docs / "note/secret.md").symlink_to(outside / "secret.md")
    os.mkfifo(docs / "note/pipe.md")
    code = ("import json; from pathlib import Path; from pinky.kb import KnowledgeBase\n"
            "kb = KnowledgeBase()\n"
            "print(json.dumps([kb.index_file(Path('documentation/note') / n) for n in ('zero.md', 'secret.md', "
            "'pipe.md')] + kb.health.skipped()))")
    result = guarded(["-c", code], project)
    assert result.returncode == 0, result.stderr
    slugs_and_skipped = json.loads(result.stdout)
    assert slugs_and_skipped[:3] == [None, None, None]
    assert len(slugs_and_skipped[3:]) == 3 and any("FIFO" in s for s in slugs_and_skipped[3:])


# --- writing: linked folders and files never receive anything ------------------------------------------


def _note(kb: KnowledgeBase) -> str:
    return kb.save("Kept inside", "koala stays home").slug


@pytest.mark.parametrize("case", ["save", "delete", "restore", "update", "diary", "rollup", "get"])
def test_no_write_leaves_the_project_through_a_link(project: Path, docs: Path, outside: Path, case: str) -> None:
    write_note(outside, "archive/note/old.md", "---\ntitle: Old\n---\nold text\n")
    write_note(outside, "a.md", "# A\n\noutside text\n")
    with KnowledgeBase(load_config()) as kb:
        slug = _note(kb)
        before = snapshot(outside)
        with pytest.raises(InvalidInput, match="pinky reads and writes only regular files inside"):
            _write_through_a_link(kb, docs, outside, case, slug)
    assert snapshot(outside) == before
    if case == "delete":
        assert (docs / "note/kept-inside.md").is_file()  # nothing was moved either


def _write_through_a_link(kb: KnowledgeBase, docs: Path, outside: Path, case: str, slug: str) -> None:
    from pinky.capture.diary import append_diary
    from pinky.capture.rollup import closed_periods, write_rollup

    if case == "save":
        (docs / "gotcha").symlink_to(outside / "gotcha")
        kb.save("Escape", "text", type="gotcha")
    elif case == "delete":
        (docs / ".archive").symlink_to(outside / "archive")
        kb.delete(slug, "gone")
    elif case == "restore":
        (docs / ".archive").symlink_to(outside / "archive")
        kb.restore("note/old")
    elif case in ("update", "get"):
        version = kb.get(slug).version
        path = docs / "note/kept-inside.md"
        path.unlink()
        path.symlink_to(outside / "a.md")
        kb.update(slug, version, tags=["x"]) if case == "update" else kb.get(slug)
    elif case == "diary":
        (docs / "diary").symlink_to(outside / "gotcha")
        append_diary(docs, ["- 10:00 [s1] asked: where does this go?"], dt.datetime.now())
    elif case == "rollup":
        append_diary(docs, ["- 10:00 [s1] asked: a week ago"], dt.datetime.now() - dt.timedelta(days=8))
        (docs / "diary/weekly").symlink_to(outside / "gotcha")
        write_rollup(docs, next(p for p in closed_periods(None, dt.date.today()) if p.kind == "week"))


def test_the_file_index_is_not_written_through_a_link(project: Path, outside: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    with KnowledgeBase(load_config()) as kb:
        files_index = Path(str(kb.config.db_path) + "-files")
        files_index.symlink_to(outside / "a-files")
        (outside / "a-files").write_text("keep\n")
        before = snapshot(outside)
        kb.save("Linked", "names src/app/main.py")
    assert snapshot(outside) == before
    assert "pinky reads and writes only regular files inside" in caplog.text


# --- the hooks and the code scan ---------------------------------------------------------------------


def _hook(event: str, payload: dict, project: Path) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "f7d3a9c2-0000", "cwd": str(project), "hook_event_name": event, **payload}
    os.environ["CLAUDE_PROJECT_DIR"] = str(project)
    try:
        return guarded(["pinky-hooks", event], project, json.dumps(payload))
    finally:
        del os.environ["CLAUDE_PROJECT_DIR"]


def test_the_hooks_never_open_a_fifo(project: Path, docs: Path, outside: Path) -> None:
    with KnowledgeBase(load_config()) as kb:
        kb.save("Pool gotcha", "names app/pipe.py", type="gotcha")
    os.mkfifo(project / "pipe.py")
    (docs / "diary").mkdir()
    os.mkfifo(docs / f"diary/{dt.date.today().isoformat()}.md")
    os.mkfifo(project / "t.jsonl")
    reads = {"tool_name": "Read", "tool_input": {"file_path": str(project / "pipe.py")}}
    for event, payload in (("pre-read", reads), ("pre-write", {**reads, "tool_name": "Edit"}),
                           ("session-start", {"source": "startup"}),
                           ("stop", {"transcript_path": str(project / "t.jsonl"), "stop_hook_active": False})):
        result = _hook(event, payload, project)
        assert result.returncode == 0, (event, result.stderr)
    assert "not a regular file" in result.stderr  # the Stop hook says why it recorded nothing


def test_the_code_scan_skips_links_out_of_the_project_and_fifos(project: Path, outside: Path) -> None:
    write_note(outside, "lib.py", "x = 1  # Brain: note/outside-crumb\n")
    write_note(project, "src/app.py", "y = 2  # Brain: note/inside-crumb\n")
    (project / "src/lib.py").symlink_to(outside / "lib.py")
    os.mkfifo(project / "src/pipe.py")
    result = guarded(["pinky", "reindex", "--json"], project)
    assert result.returncode == 0, result.stderr
    with KnowledgeBase(load_config()) as kb:

        assert [slug for slug, _, _ in all_breadcrumbs(kb.db.conn)] == ["note/inside-crumb"]


# --- the one check: pinky.base.fileio ---------------------------------------------------------------------


def test_outside_follows_every_link_below_the_root(tmp_path: Path, outside: Path) -> None:
    from pinky.base.fileio import outside as leaves

    root = tmp_path / "root"
    (root / "note").mkdir(parents=True)
    (root / "in").symlink_to(root / "note")
    (root / "out").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "nowhere")
    (tmp_path / "root-link").symlink_to(root)
    assert leaves(root / "note/new/deeper.md", root) is None  # missing parts are fine
    assert leaves(root / "in/x.md", root) is None
    assert leaves(tmp_path / "root-link/note/x.md", root) is None  # the root reached through a link
    assert leaves(root / "note/x.md", tmp_path / "root-link") is None
    for escaping in ("out/x.md", "dangling", "dangling/x.md", "note/../../outside/secret.md"):
        assert "outside" in str(leaves(root / escaping, root)), escaping


def test_open_regular_checks_before_it_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pinky.base import fileio

    os.mkfifo(tmp_path / "pipe")
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(os.fspath(path)) or real_open(path, *a, **k))
    for special in (tmp_path / "pipe", Path("/dev/zero")):
        with pytest.raises(fileio.UnsafeFile, match="not a regular file"):
            fileio.read_regular(special)
    with pytest.raises(InvalidInput, match="named pipe"):
        fileio.ensure_inside(tmp_path / "pipe", tmp_path)
    assert opened == []
    (tmp_path / "ok.md").write_text("fine")
    assert fileio.read_regular(tmp_path / "ok.md", tmp_path) == b"fine"


def test_a_folder_the_scan_cannot_list_is_reported_not_swallowed(project: Path) -> None:
    """Root reads every folder, so the folder is made unlistable the portable way: a path longer than
    the system allows (ENAMETOOLONG), built with relative mkdir calls."""
    import json
    import subprocess

    from helpers import console_script, write_note

    docs = project / "documentation"
    write_note(docs, "note/visible.md", "# Visible\n\nfound by the scan\n")
    fd = os.open(docs, os.O_RDONLY)
    try:
        for _ in range(20):  # 20 x 250 characters: past PATH_MAX (4096)
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    done = subprocess.run([*console_script("pinky"), "reindex", "--json"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    report = json.loads(done.stdout)
    assert report["added"] == 1
    assert any("folder not readable" in error and "ddd" in error for error in report["errors"]), report["errors"]


def test_entries_under_an_unreadable_folder_are_kept() -> None:
    from pinky.indexing.indexer import _kept_under_unreadable
    from pinky.store.entries import IndexedFile

    known = {("project", "private/a.md"): IndexedFile("1", "project", "private/a.md", "h", 0, 0, 0, 0),
             ("project", "public/b.md"): IndexedFile("2", "project", "public/b.md", "h", 0, 0, 0, 0),
             ("global", "private/c.md"): IndexedFile("3", "global", "private/c.md", "h", 0, 0, 0, 0)}
    assert _kept_under_unreadable(known, [("project", "private/")]) == {("project", "private/a.md")}
    assert _kept_under_unreadable(known, [("global", "")]) == {("global", "private/c.md")}
