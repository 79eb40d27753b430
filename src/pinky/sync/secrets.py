"""Secrets and sync: notes are redacted before they are committed, and when they are pulled in.

No import of the other sync modules (they import this one): blobs are read from the object store.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pinky import fileio
from pinky.redact import redact_kinds

if TYPE_CHECKING:
    from dulwich.repo import Repo

    from pinky.sync.merge import Entry


def redact_note(path: str, data: bytes) -> tuple[bytes, list[str]]:
    """A markdown note's bytes with its secrets replaced, and their kinds; other files as they are."""
    if not path.endswith(".md"):
        return data, []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, []
    clean, kinds = redact_kinds(text)
    return (clean.encode("utf-8"), kinds) if kinds else (data, [])


def redact_staged(repo: Repo, changed: dict[str, Entry]) -> list[str]:
    """Redact the notes about to be committed, on disk; return 'path (kinds)' for each one changed.

    A file edited again since it was staged is left alone (it is committed next run, redacted)."""
    root, done = Path(repo.path), []
    for path, (mode, sha) in sorted(changed.items()):
        if mode & 0o170000 != 0o100000 or not path.endswith(".md"):
            continue
        data = repo.object_store[sha].as_raw_string()
        clean, kinds = redact_note(path, data)
        target = root.joinpath(*path.split("/"))
        if kinds and target.is_file() and target.read_bytes() == data:
            fileio.atomic_write(target, clean, mode=target.stat().st_mode & 0o777)
            done.append(f"{path} ({', '.join(kinds)})")
    return done
