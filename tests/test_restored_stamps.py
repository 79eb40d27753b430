"""An edit whose tool puts the size and mtime back is still seen (issue 35, item 9).

`cp -p`, `rsync -t`, `tar` and `touch -r` restore a file's mtime; two notes of the same size swapped by
rename keep both sizes and mtimes. Size and mtime alone said "unchanged" to every one of them (60 of 60
missed by a running `pinky-mcp` and by `pinky-brain reindex`). The change time (set by the kernel on every
write, by no tool) and the inode (a rename brings another) are in every change test now: the global
brain's signature and the incremental reindex alike. Every writer here is a real tool or a real syscall,
every reader the first to look after it."""

from __future__ import annotations

import os
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_helpers import RawServer
from test_global_fresh import cli

OLD, NEW = "zebrafish", "swordfish"  # the edit: one word for another of the same length
OTHER = "jellyfish"  # the word of the note beside it, of the same size: what the swap brings


def _write(path: Path, word: str) -> None:
    path.write_text(f"---\ntype: gotcha\n---\n# Nightly dates shift\n\nSet TZ=UTC in the {word} pipeline.\n",
                    encoding="utf-8")


def _edited(note: Path) -> str:
    text = note.read_text(encoding="utf-8")
    edited = text.replace(OLD, NEW)
    assert edited != text and len(edited) == len(text)
    return edited


def by_cp_p(note: Path, spare: Path) -> str:
    """A newer copy prepared elsewhere with the note's mtime, copied over it with `cp -p`."""
    copy = spare / "copy.md"
    copy.write_text(_edited(note), encoding="utf-8")
    subprocess.run(["touch", "-r", str(note), str(copy)], check=True)
    subprocess.run(["cp", "-p", str(copy), str(note)], check=True)
    return NEW


def by_touch_r(note: Path, spare: Path) -> str:
    """Edited in place, then its old mtime put back with `touch -r` from a copy made before."""
    reference = spare / "reference.md"
    subprocess.run(["cp", "-p", str(note), str(reference)], check=True)
    edited = _edited(note)
    with open(note, "r+", encoding="utf-8") as handle:
        handle.write(edited)
    subprocess.run(["touch", "-r", str(reference), str(note)], check=True)
    return NEW


def by_utime(note: Path, spare: Path) -> str:
    """Edited in place by a program that restores the mtime itself (os.utime, as rsync -t and editors do)."""
    before = note.stat()
    edited = _edited(note)
    with open(note, "r+", encoding="utf-8") as handle:
        handle.write(edited)
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    return NEW


def by_tar(note: Path, spare: Path) -> str:
    """An archive holding an edited copy with the note's mtime, extracted over the note (`tar x`)."""
    staged = spare / "staged"
    staged.mkdir()
    copy = staged / note.name
    copy.write_text(_edited(note), encoding="utf-8")
    os.utime(copy, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns))
    archive = spare / "notes.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(copy, arcname=note.name)
    subprocess.run(["tar", "-xf", str(archive), "-C", str(note.parent)], check=True)
    return NEW


def by_swap(note: Path, spare: Path) -> str:
    """Two notes of the same size and mtime swapped by three renames: every path keeps a size and an mtime."""
    other = note.with_name("other.md")
    between = note.with_name(".swap.tmp")
    os.rename(note, between)
    os.rename(other, note)
    os.rename(between, other)
    return OTHER


WAYS: dict[str, Callable[[Path, Path], str]] = {
    "cp -p": by_cp_p, "touch -r": by_touch_r, "os.utime": by_utime, "tar": by_tar, "swap": by_swap}


def _notes(folder: Path) -> Path:
    """The note (word OLD) and, for the swap, a note of the same size and mtime beside it (word OTHER)."""
    folder.mkdir(parents=True, exist_ok=True)
    note, other = folder / "dates.md", folder / "other.md"
    _write(note, OLD)
    _write(other, OTHER)
    whole = note.stat().st_mtime_ns // 10**9 * 10**9  # whole seconds, as a checkout or an archive leaves them
    for path in (note, other):
        os.utime(path, ns=(whole, whole))
    assert note.stat().st_size == other.stat().st_size
    return note


class Place:
    def __init__(self, tmp_path: Path, where: str) -> None:
        self.home = Path(os.environ["PINKY_HOME"])
        self.project = tmp_path / "proj"
        self.spare = tmp_path / "spare"
        self.spare.mkdir()
        (self.project / "documentation").mkdir(parents=True)
        (self.project / "pinky.toml").write_text("", encoding="utf-8")
        base = self.home / "brain" if where == "global" else self.project / "documentation"
        self.note = _notes(base / "gotcha")


def _hit_paths(found: dict) -> list[str]:
    return [Path(hit["path"]).name for hit in found["structuredContent"]["hits"]]


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("where", ["global", "project"])
def test_reindex_sees_it(tmp_path: Path, way: str, where: str) -> None:
    place = Place(tmp_path, where)
    assert "2 added" in cli("reindex", cwd=place.project, home=place.home)
    word = WAYS[way](place.note, place.spare)
    report = cli("reindex", cwd=place.project, home=place.home)
    assert ("2 updated" if way == "swap" else "1 updated") in report, report
    out = cli("search", word, cwd=place.project, home=place.home)
    assert "dates.md" in out.split("\n\n")[0], out  # the top hit is the note that holds the word now


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("where", ["global", "project"])
def test_a_running_server_sees_it(tmp_path: Path, way: str, where: str) -> None:
    place = Place(tmp_path, where)
    cli("reindex", cwd=place.project, home=place.home)
    with RawServer(place.project, PINKY_HOME=str(place.home), PINKY_DB=str(place.project / "brain.db"),
                   PINKY_SAVE_DIR=str(place.project / "documentation")) as server:
        server.initialize()
        before = server.call("brain_search", query=OTHER)
        assert _hit_paths(before)[:1] == ["other.md"], before
        word = WAYS[way](place.note, place.spare)
        found = server.call("brain_search", query=word)
        assert not found["isError"], found
        assert _hit_paths(found)[:1] == ["dates.md"], (found, server.stderr()[-2000:])
