"""Sync's per-file merge rules, on their own: snapshots are dicts, blobs live in a dict."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pinky.sync.merge import (
    ROLLUP_DIRS,
    conflict_copy_name,
    is_append_only,
    list_conflicts,
    merge_snapshots,
    union_merge,
)
from pinky.text.markdown import split_frontmatter

FILE = 0o100644


class MemoryBlobs:
    """The `Blobs` interface over a dict, so the rules run without a repository."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def write(self, data: bytes) -> bytes:
        sha = hashlib.sha1(data).hexdigest().encode()
        self.data[sha] = data
        return sha

    def read(self, sha: bytes) -> bytes:
        return self.data[sha]

    def entry(self, text: str) -> tuple[int, bytes]:
        return (FILE, self.write(text.encode()))


@pytest.fixture
def blobs() -> MemoryBlobs:
    return MemoryBlobs()


def test_one_side_changed_deleted_or_added(blobs: MemoryBlobs) -> None:
    v1, v2 = blobs.entry("v1"), blobs.entry("v2")
    base = {"a.md": v1, "b.md": v1, "c.md": v1, "d.md": v1}
    ours = {"a.md": v2, "b.md": v1, "d.md": v2, "new-ours.md": v1}
    theirs = {"a.md": v1, "b.md": v2, "c.md": v1, "new-theirs.md": v2}
    merged, conflicts = merge_snapshots(base, ours, theirs, blobs, "1a2b3c4d")
    assert conflicts == []
    # a: ours changed; b: theirs changed; c: we deleted it; d: they deleted what we modified
    assert merged == {"a.md": v2, "b.md": v2, "d.md": v2, "new-ours.md": v1, "new-theirs.md": v2}


def test_both_changed_keeps_ours_and_saves_theirs_beside_it(blobs: MemoryBlobs) -> None:
    base, ours, theirs = blobs.entry("base"), blobs.entry("ours"), blobs.entry("theirs")
    merged, conflicts = merge_snapshots({"gotcha/x.md": base}, {"gotcha/x.md": ours}, {"gotcha/x.md": theirs},
                                        blobs, "1a2b3c4d")
    assert conflicts == ["gotcha/x.conflict-1a2b3c4d.md"]
    assert merged == {"gotcha/x.md": ours, "gotcha/x.conflict-1a2b3c4d.md": theirs}


def test_both_changed_diary_is_unioned_and_rollup_keeps_ours(blobs: MemoryBlobs) -> None:
    head = "---\ntype: diary\n---\n# D\n\n"
    base = blobs.entry(head)
    ours, theirs = blobs.entry(head + "- 10:00 [a] ours\n"), blobs.entry(head + "- 09:00 [b] theirs\n")
    rollup = f"{ROLLUP_DIRS[0]}2026-W48.md"
    snap = lambda entry: {"diary/2026-11-20.md": entry, rollup: entry}  # noqa: E731
    merged, conflicts = merge_snapshots(snap(base), snap(ours), snap(theirs), blobs, "1a2b3c4d")
    assert conflicts == []
    assert merged[rollup] == ours
    assert blobs.read(merged["diary/2026-11-20.md"][1]).decode() == head + "- 09:00 [b] theirs\n- 10:00 [a] ours\n"


def test_an_append_only_file_over_the_limit_is_not_unioned_but_kept_whole_twice(blobs: MemoryBlobs) -> None:
    """A 50 MB diary took 1.5 GB and 20 s to union line by line: over the limit it is merged like
    any other file, ours in place and theirs as a conflict copy, so no line is lost either way."""
    head = "---\ntype: diary\n---\n# D\n\n"
    lines = "".join(f"- 07:00 [s] shared line {i}\n" for i in range(200))
    base = blobs.entry(head + lines)
    ours, theirs = blobs.entry(head + lines + "- 10:00 [a] ours\n"), blobs.entry(head + lines + "- 09:00 [b] theirs\n")
    path, copy = "diary/2026-11-20.md", "diary/2026-11-20.conflict-1a2b3c4d.md"
    size = len(blobs.read(ours[1]))
    merged, conflicts = merge_snapshots({path: base}, {path: ours}, {path: theirs}, blobs, "1a2b3c4d",
                                        union_limit=size - 1)
    assert conflicts == [copy] and merged == {path: ours, copy: theirs}
    merged, conflicts = merge_snapshots({path: base}, {path: ours}, {path: theirs}, blobs, "1a2b3c4d",
                                        union_limit=size + 100)
    assert conflicts == [] and "theirs" in blobs.read(merged[path][1]).decode()


@pytest.mark.parametrize(
    ("path", "front", "expected"),
    [
        ("diary/2026-11-20.md", "", True),
        ("notes/log.md", "---\nappend_only: true\n---\n", True),
        ("notes/log.md", "---\nappend_only: yes\n---\n", True),  # YAML's own booleans
        ("notes/log.md", "---\nappend_only: false\n---\n", False),
        ("notes/log.md", "---\ntitle: append_only: true\n---\n", False),  # broken YAML declares nothing
        ("notes/log.md", "append_only: true\n", False),  # not frontmatter
        ("notes/log.md", "", False),
    ],
)
def test_is_append_only(path: str, front: str, expected: bool) -> None:
    assert is_append_only(path, (front + "- a\n").encode(), b"- b\n") is expected


def test_binary_files_are_never_append_only() -> None:
    assert is_append_only("diary/x.md", b"\xff\xfe", b"- a\n") is False


def test_union_merge_keeps_continuations_star_bullets_and_untimed_lines_first() -> None:
    ours = "# Log\n\n- untimed ours\n- 10:00 first\n  continued\n* 12:00 star\n"
    theirs = "# Theirs\n- 10:00 first\n  continued\n- 11:00 [b] middle\n- untimed: sorts as the 11:00 before it\n"
    assert union_merge(ours, theirs) == (
        "# Log\n\n- untimed ours\n- 10:00 first\n  continued\n- 11:00 [b] middle\n"
        "- untimed: sorts as the 11:00 before it\n* 12:00 star\n"
    )


def test_union_merge_header_ends_where_the_frontmatter_says() -> None:
    ours = "---\ntags:\n- diary\n- log\n---\n- 09:00 [a] x\n"  # YAML list items are not diary lines
    assert union_merge(ours, "- 08:00 [b] y\n") == "---\ntags:\n- diary\n- log\n---\n- 08:00 [b] y\n- 09:00 [a] x\n"
    assert union_merge("# Only a header\n", "# Theirs\n") == "# Only a header\n"


@pytest.mark.parametrize(
    ("path", "copy"),
    [("notes/a.md", "notes/a.conflict-abc1234.md"), ("README", "README.conflict-abc1234"),
     (".hidden", ".hidden.conflict-abc1234"), ("a.tar.gz", "a.tar.conflict-abc1234.gz")],
)
def test_conflict_copy_name(path: str, copy: str) -> None:
    assert conflict_copy_name(path, "abc1234") == copy


def test_list_conflicts_finds_only_sync_copies(tmp_path: Path) -> None:
    for rel in ("gotcha/x.conflict-1a2b3c4d.md", "gotcha/x.md", "notes/conflict-resolution.md",
                ".git/y.conflict-1a2b3c4d.md", "z.conflict-nothex.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert list_conflicts(tmp_path) == [tmp_path / "gotcha/x.conflict-1a2b3c4d.md"]
    assert list_conflicts(tmp_path / "missing") == []


# --- issue 10: identical lines from both sides, headers edited on one side ----------------------


BASE = "---\ntitle: Diary 2026-11-20\ntype: diary\ntags: [diary]\n---\n\n# Diary 2026-11-20\n\n- 09:00 [a] shared\n"


def test_the_same_line_added_on_both_sides_is_kept_twice() -> None:
    line = "- 10:00 [manual] deployed v2"
    merged = union_merge(BASE + line + "\n", BASE + line + "\n", BASE)
    assert merged.count(line) == 2 and merged.count("shared") == 1


def test_a_line_both_sides_got_from_the_base_is_kept_once_and_a_deletion_holds() -> None:
    ours = BASE + "- 11:00 [a] mine\n"
    theirs = BASE.replace("- 09:00 [a] shared\n", "") + "- 12:00 [b] theirs\n"
    merged = union_merge(ours, theirs, BASE)
    assert "shared" not in merged and "mine" in merged and "theirs" in merged


def test_duplicates_within_one_side_survive_and_unrelated_histories_dedupe() -> None:
    twice = BASE + "- 10:00 [a] make test\n- 10:00 [a] make test\n"
    assert union_merge(BASE + "- 11:00 [b] x\n", twice, BASE).count("make test") == 2
    assert union_merge(twice, twice.replace("[a]", "[a]"), None).count("make test") == 2  # max, not sum
    assert union_merge(BASE, BASE, None).count("shared") == 1


def test_header_text_added_on_one_side_survives() -> None:
    theirs = BASE.replace("# Diary 2026-11-20\n", "# Diary 2026-11-20\n\nRelease day: freeze at 16:00.\n")
    merged = union_merge(BASE + "- 11:00 [a] mine\n", theirs + "- 12:00 [b] theirs\n", BASE)
    assert "Release day: freeze at 16:00." in merged and "mine" in merged and "theirs" in merged


def test_headers_edited_on_both_sides_keep_both_additions() -> None:
    ours = BASE.replace("tags: [diary]", "tags: [diary, release]").replace(
        "# Diary 2026-11-20\n", "# Diary 2026-11-20\n\nOurs: note A.\n")
    theirs = BASE.replace("type: diary\n", "type: diary\nproject: pinky\n").replace(
        "tags: [diary]", "tags: [diary, hotfix]").replace("# Diary 2026-11-20\n", "# Diary 2026-11-20\n\nTheirs: B.\n")
    merged = union_merge(ours + "- 11:00 [a] x\n", theirs + "- 12:00 [b] y\n", BASE)
    meta = split_frontmatter(merged)[0]
    assert meta["tags"] == ["diary", "release", "hotfix"] and meta["project"] == "pinky"
    assert "Ours: note A." in merged and "Theirs: B." in merged
    assert merged.index("Theirs: B.") < merged.index("- 09:00")
