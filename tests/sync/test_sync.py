"""Git sync between two machines through a bare remote, all on disk in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from pinky.errors import InvalidInput, SyncError
from pinky.sync.merge import list_conflicts, union_merge
from pinky.sync.run import sync

SRC = Path(__file__).resolve().parents[2] / "src"
DAY = "2026-11-20"
HEADER = f"---\ntype: diary\ndate: {DAY}\n---\n# Diary {DAY}\n\n"


@pytest.fixture(autouse=True)
def _no_author_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PINKY_GIT_AUTHOR", raising=False)


@pytest.fixture
def remote(tmp_path: Path) -> str:
    path = tmp_path / "remote.git"
    porcelain.init(str(path), bare=True).close()
    return str(path)


def files(root: Path) -> dict[str, bytes]:
    """Every working-tree file except .git and the machine's own .pinky (locks), as relative path -> bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".pinky"} & set(p.relative_to(root).parts)
    }


def head(root: Path) -> bytes:
    with Repo(str(root)) as repo:
        return repo.head()


def remote_tip(remote: str, local: Path) -> bytes | None:
    """The remote's commit for the local branch (whatever dulwich named it)."""
    with Repo(str(local)) as repo:
        branch = repo.refs.read_ref(b"HEAD")[len(b"ref: ") :]
    with Repo(remote) as bare:
        return bare.refs.as_dict().get(branch)


def append_diary(root: Path, *lines: str) -> None:
    path = root / "diary" / f"{DAY}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text() if path.exists() else HEADER
    path.write_text(text + "".join(line + "\n" for line in lines))


def write_entry(root: Path, rel: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {path.stem}\ntype: gotcha\n---\n{body}\n")


def assert_no_markers(root: Path) -> None:
    for rel, data in files(root).items():
        assert b"<<<<<<<" not in data and b">>>>>>>" not in data, rel


def assert_clean(root: Path) -> None:
    status = porcelain.status(str(root))
    assert status.staged == {"add": [], "delete": [], "modify": []}
    assert status.unstaged == [] and status.untracked == []


A_LINES = ["- 09:00 [aaaaaaaa] files: src/a.py", "- 14:30 [aaaaaaaa] asked: why does the pool time out"]
B_LINES = ["- 10:15 [bbbbbbbb] commits: 1a2b3c4 fix pool", "- 14:30 [bbbbbbbb] files: src/b.py"]


@pytest.mark.parametrize("order", ["ABA", "BAB"])
def test_existing_folders_merge_without_loss(tmp_path: Path, remote: str, order: str) -> None:
    machines = {"A": tmp_path / "A", "B": tmp_path / "B"}
    append_diary(machines["A"], *A_LINES)
    write_entry(machines["A"], "gotcha/pool-timeout.md", "A knows")
    append_diary(machines["B"], *B_LINES)
    write_entry(machines["B"], "decision/use-sqlite.md", "B decided")

    reports = [sync(machines[m], remote) for m in order]

    assert reports[0].initialised and not reports[0].cloned
    a, b = files(machines["A"]), files(machines["B"])
    assert a == b
    diary = a[f"diary/{DAY}.md"].decode()
    assert diary.startswith(HEADER)
    bullets = diary[len(HEADER) :].splitlines()
    first, second = (A_LINES, B_LINES) if order[1] == "A" else (B_LINES, A_LINES)
    # sorted by time; the 14:30 tie keeps the merging machine's (ours) line first
    assert bullets == [A_LINES[0], B_LINES[0], first[1], second[1]]
    assert {"gotcha/pool-timeout.md", "decision/use-sqlite.md"} <= set(a)
    assert f"diary/{DAY}.md" in reports[1].pulled_paths
    for root in machines.values():
        assert_no_markers(root)
        assert_clean(root)
        assert list_conflicts(root) == []


@pytest.mark.parametrize("order", ["ABA", "BAB"])
def test_later_edits_merge_from_common_base(tmp_path: Path, remote: str, order: str) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    first = sync(a, remote)
    assert first.cloned and first.pushed  # an empty bare remote clones to an empty repo
    append_diary(a, "- 08:00 [00000000] started")
    write_entry(a, "gotcha/old.md", "to be removed")
    sync(a)
    assert sync(b, remote).cloned
    assert files(b) == files(a)

    append_diary(a, *A_LINES)
    write_entry(a, "gotcha/a-only.md", "from A")
    (a / "gotcha/old.md").unlink()
    append_diary(b, *B_LINES)
    write_entry(b, "gotcha/b-only.md", "from B")

    machines = {"A": a, "B": b}
    for name in order:
        sync(machines[name])

    assert files(a) == files(b)
    got = files(a)
    assert "gotcha/old.md" not in got
    assert {"gotcha/a-only.md", "gotcha/b-only.md"} <= set(got)
    diary = got[f"diary/{DAY}.md"].decode()
    for line in ["- 08:00 [00000000] started", *A_LINES, *B_LINES]:
        assert diary.count(line + "\n") == 1
    assert_no_markers(a)
    assert_clean(a)
    assert_clean(b)


def test_same_entry_edited_on_both_keeps_both_versions(tmp_path: Path, remote: str) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    write_entry(a, "gotcha/pool-timeout.md", "original")
    sync(a, remote)
    sync(b, remote)
    write_entry(a, "gotcha/pool-timeout.md", "A's fix: raise pool size")
    write_entry(b, "gotcha/pool-timeout.md", "B's fix: lower timeout")
    sync(a)

    report = sync(b)

    assert len(report.conflicts) == 1
    copy = report.conflicts[0]
    assert copy.startswith("gotcha/pool-timeout.conflict-") and copy.endswith(".md")
    assert "B's fix" in (b / "gotcha/pool-timeout.md").read_text()
    assert "A's fix" in (b / copy).read_text()
    assert copy in report.pulled_paths
    sync(a)
    assert files(a) == files(b)
    assert list_conflicts(a) == [a / copy]
    assert_no_markers(a)


def test_deleted_on_one_side_modified_on_other_keeps_modified(tmp_path: Path, remote: str) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    write_entry(a, "gotcha/x.md", "v1")
    write_entry(a, "gotcha/y.md", "v1")
    sync(a, remote)
    sync(b, remote)
    (a / "gotcha/x.md").unlink()
    write_entry(a, "gotcha/y.md", "A edits y")
    write_entry(b, "gotcha/x.md", "B edits x")
    (b / "gotcha/y.md").unlink()
    sync(a)
    sync(b)
    sync(a)
    for root in (a, b):
        assert "B edits x" in (root / "gotcha/x.md").read_text()
        assert "A edits y" in (root / "gotcha/y.md").read_text()
        assert list_conflicts(root) == []


def test_frontmatter_append_only_file_is_unioned(tmp_path: Path, remote: str) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    log = "---\ntitle: log\nappend_only: true\ntags:\n- log\n---\n# Log\n"
    (a / "notes").mkdir(parents=True)
    (a / "notes/log.md").write_text(log)
    sync(a, remote)
    sync(b, remote)
    (a / "notes/log.md").write_text(log + "- 11:00 from A\n")
    (b / "notes/log.md").write_text(log + "- 09:00 from B\n")
    sync(a)
    report = sync(b)
    assert report.conflicts == []
    assert (b / "notes/log.md").read_text() == log + "- 09:00 from B\n- 11:00 from A\n"


def test_identical_lines_and_a_header_edit_survive_on_both_machines(tmp_path: Path, remote: str) -> None:
    """Issue 10: the same bullet written on both machines merged into one, and header text added on
    one machine was lost on both."""
    a, b = tmp_path / "A", tmp_path / "B"
    append_diary(a, "- 09:00 [aaaaaaaa] asked: start")
    sync(a, remote)
    sync(b, remote)
    path_a, path_b = a / "diary" / f"{DAY}.md", b / "diary" / f"{DAY}.md"
    path_a.write_text(path_a.read_text().replace(f"# Diary {DAY}\n", f"# Diary {DAY}\n\nFreeze at 16:00.\n"))
    append_diary(a, "- 10:00 [manual] deployed v2")
    append_diary(b, "- 10:00 [manual] deployed v2")
    sync(a)
    sync(b)
    sync(a)
    for path in (path_a, path_b):
        text = path.read_text()
        assert "Freeze at 16:00." in text and text.count("deployed v2") == 2 and text.count("start") == 1
    assert path_a.read_text() == path_b.read_text()
    assert_no_markers(b)


def test_union_merge_keeps_ours_header_and_dedupes() -> None:
    ours = "---\ntags:\n- x\n---\n# D\n\n- 10:00 [aaaaaaaa] one\n- 12:00 [aaaaaaaa] two\n"
    theirs = (
        "---\ntags: [other]\n---\n# D\n\n"
        "- 10:00 [aaaaaaaa] one\n- 10:00 [bbbbbbbb] tie\n- 09:00 [bbbbbbbb] early\n"
    )
    merged = union_merge(ours, theirs)
    assert merged == (
        "---\ntags:\n- x\n---\n# D\n\n- 09:00 [bbbbbbbb] early\n- 10:00 [aaaaaaaa] one\n"
        "- 10:00 [bbbbbbbb] tie\n- 12:00 [aaaaaaaa] two\n"
    )


def test_dead_remote_raises_and_leaves_brain_intact(tmp_path: Path, remote: str) -> None:
    a = tmp_path / "A"
    write_entry(a, "gotcha/x.md", "kept")
    sync(a, remote)
    before_files, before_head = files(a), head(a)
    (tmp_path / "plain").mkdir()
    for dead in [str(tmp_path / "missing.git"), str(tmp_path / "plain")]:
        with pytest.raises(SyncError) as info:
            sync(a, dead)
        message = str(info.value)
        assert dead in message and "\n" not in message
        assert "NotGitRepository" in message
        assert files(a) == before_files and head(a) == before_head


def test_first_sync_with_dead_remote_then_good_one(tmp_path: Path, remote: str) -> None:
    a, seed = tmp_path / "A", tmp_path / "seed"
    write_entry(seed, "gotcha/x.md", "from seed")
    sync(seed, remote)
    with pytest.raises(SyncError, match="cannot fetch"):
        sync(a, str(tmp_path / "missing.git"))
    report = sync(a, remote)
    assert report.cloned and "gotcha/x.md" in report.pulled_paths
    assert files(a) == files(seed)


def test_rejected_push_after_merge_is_retried(tmp_path: Path, remote: str, monkeypatch) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    sync(a, remote)
    sync(b, remote)
    append_diary(b, "- 07:00 [bbbbbbbb] b first")
    sync(b)
    append_diary(a, "- 08:00 [aaaaaaaa] a line")
    real_push = porcelain.push
    raced = []

    def racing_push(*args, **kwargs):
        if not raced:  # B pushes between A's fetch and A's push: A's push is non-fast-forward
            raced.append(True)
            append_diary(b, "- 09:00 [bbbbbbbb] b raced")
            with monkeypatch.context() as inner:
                inner.setattr(porcelain, "push", real_push)
                sync(b)
        return real_push(*args, **kwargs)

    monkeypatch.setattr(porcelain, "push", racing_push)
    with pytest.raises(SyncError, match="push to remote .*remote.git was rejected: it moved"):
        sync(a)
    assert "a line" in (a / f"diary/{DAY}.md").read_text()  # merged and committed locally
    assert_clean(a)

    report = sync(a)
    assert report.pushed and not report.committed
    sync(b)
    for root in (a, b):
        text = (root / f"diary/{DAY}.md").read_text()
        assert all(s in text for s in ("b first", "a line", "b raced"))
    assert files(a) == files(b)


def test_a_diary_over_the_note_limit_syncs_as_two_files_not_a_union(tmp_path: Path, remote: str) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    append_diary(a, *(f"- 07:00 [cccccccc] shared {i}" for i in range(300)))
    sync(a, remote)
    sync(b, remote)
    append_diary(a, "- 08:00 [aaaaaaaa] a line")
    append_diary(b, "- 09:00 [bbbbbbbb] b line")
    sync(a)
    report = sync(b, union_limit=4096)
    copy = report.conflicts[0]
    assert report.conflicts == [copy] and copy.startswith(f"diary/{DAY}.conflict-")
    assert "b line" in (b / f"diary/{DAY}.md").read_text() and "a line" in (b / copy).read_text()
    assert_clean(b)


def test_failed_push_is_retried_next_run(tmp_path: Path, remote: str, monkeypatch) -> None:
    a = tmp_path / "A"
    sync(a, remote)
    write_entry(a, "gotcha/new.md", "unpushed")

    def broken(*args, **kwargs):
        raise OSError("connection reset by peer")

    with monkeypatch.context() as m:
        m.setattr(porcelain, "push", broken)
        with pytest.raises(SyncError, match="connection reset"):
            sync(a)
    assert remote_tip(remote, a) != head(a)
    report = sync(a)
    assert report.pushed and not report.committed
    assert remote_tip(remote, a) == head(a)


def test_local_only_when_no_remote(tmp_path: Path) -> None:
    a = tmp_path / "A"
    write_entry(a, "gotcha/x.md", "local")
    (a / "brain.db").write_bytes(b"sqlite")
    (a / "brain.db-wal").write_bytes(b"wal")
    (a / ".pinky").mkdir()
    (a / ".pinky/state.json").write_text("{}")
    report = sync(a)
    assert report.initialised and report.committed and not report.pushed
    assert report.remote is None
    assert any("nothing to push" in note for note in report.notes)
    assert report.commit_message == "pinky sync: add 2, update 0, remove 0 (.gitignore, gotcha/x.md)"
    gitignore = (a / ".gitignore").read_text().splitlines()
    assert "brain.db*" in gitignore and ".pinky/" in gitignore
    with Repo(str(a)) as repo:
        tracked = {p.decode() for p in repo.open_index()}
    assert tracked == {".gitignore", "gotcha/x.md"}
    assert sync(a).committed is False


def test_remote_flag_updates_origin_and_author(tmp_path: Path, remote: str, monkeypatch) -> None:
    a = tmp_path / "A"
    write_entry(a, "gotcha/x.md", "local")
    sync(a)
    monkeypatch.setenv("PINKY_GIT_AUTHOR", "Ada <ada@example.org>")
    write_entry(a, "gotcha/y.md", "more")
    report = sync(a, remote)
    assert report.pushed and report.remote == remote
    with Repo(str(a)) as repo:
        assert repo.get_config().get((b"remote", b"origin"), b"url") == remote.encode()
        assert repo[repo.head()].author == b"Ada <ada@example.org>"
    with pytest.raises(InvalidInput, match="Name <email>"):
        sync(a, author="no email here")


SUBPROCESS_SCRIPT = """
import sys
from pathlib import Path
from pinky.sync.run import sync
a, b, remote = (Path(p) for p in sys.argv[1:4])
sync(a, str(remote))                       # clone of an empty remote + push
(a / "diary").mkdir()
(a / "diary/2026-11-20.md").write_text("# D\\n- 09:00 [aaaaaaaa] a\\n")
sync(a)
(b / "diary").mkdir(parents=True)
(b / "diary/2026-11-20.md").write_text("# D\\n- 10:00 [bbbbbbbb] b\\n")
sync(b, str(remote))                       # init + fetch + 3-way merge + push
sync(a)                                    # fast-forward
print("OK", file=sys.stderr)
"""


def test_sync_writes_nothing_to_stdout(tmp_path: Path, remote: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PINKY_GIT_AUTHOR", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SUBPROCESS_SCRIPT)]
        + [str(tmp_path / "A"), str(tmp_path / "B"), remote],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"OK" in proc.stderr
    assert proc.stdout == b""
    assert "- 10:00 [bbbbbbbb] b" in (tmp_path / "A/diary/2026-11-20.md").read_text()


def test_import_does_not_load_dulwich() -> None:
    code = "import sys, pinky.sync.run; print(sorted(m for m in sys.modules if m.startswith('dulwich')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    ).stdout
    assert out.strip() == "[]"
