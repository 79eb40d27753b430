"""Secrets and sync: a file that would carry a new credential off the machine is held back.

Sync never rewrites a file to redact it: a user's note is theirs, and a digest mistaken for a key
would be lost. Instead, before each commit, every file added or changed is searched for the
credentials `pinky.base.redact` knows with high confidence; one that holds a credential its committed
version did not (compared by fingerprint, so a secret already pushed is not news) is left out of
the commit, and so out of the push, untouched on disk. The next sync looks again: once the
secret is removed, or allowed with `pinky sync --allow PATH`, the file is committed and pushed.

Allowing records, per machine, the fingerprints (SHA-256, never the text) of the credentials the
file holds now in ``.pinky/allow-secrets`` (git-ignored); a credential added later needs its own
allowing. No import of the other sync modules (they import this one): blobs are read from the
object store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinky.base import fileio
from pinky.base.secret_scan import Finding, find_secrets
from pinky.errors import InvalidInput

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.repo import Repo

    from pinky.sync.merge import Entry, Snapshot

ALLOW_FILE = ".pinky/allow-secrets"
_HEADER = ("# pinky-brain sync --allow: credentials allowed to be pushed, by file (path<TAB>kind<TAB>sha256 of the\n"
           "# secret). Per machine, never committed; delete a line to take the permission back.\n")


def findings(data: bytes | None) -> list[Finding]:
    """The credentials in a file's bytes; none in a binary file."""
    if not data:
        return []
    try:
        return find_secrets(data.decode("utf-8"))
    except UnicodeDecodeError:
        return []


def held_back(repo: Repo, changed: dict[str, Entry], before: Snapshot) -> dict[str, list[str]]:
    """The files of ``changed`` (path -> staged entry) to keep out of the commit, with the kinds of
    credential each adds to its version in ``before``, less what was allowed for it."""
    allowed = read_allowed(Path(repo.path))
    held: dict[str, list[str]] = {}
    for path, (mode, sha) in sorted(changed.items()):
        if mode & 0o170000 != 0o100000:
            continue
        old = before.get(path)
        known = {f.fingerprint for f in findings(_blob(repo, old[1]) if old else None)}
        known |= allowed.get(path, set())
        new = [f.kind for f in findings(_blob(repo, sha)) if f.fingerprint not in known]
        if new:
            held[path] = sorted(set(new))
    return held


def _blob(repo: Repo, sha: ObjectID) -> bytes:
    return repo.object_store[sha].as_raw_string()


def read_allowed(brain_dir: Path) -> dict[str, set[str]]:
    """path -> fingerprints allowed to be pushed, from ``.pinky/allow-secrets`` (missing: none)."""
    try:
        text = (brain_dir / ALLOW_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return {}
    allowed: dict[str, set[str]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and not line.startswith("#"):
            allowed.setdefault(parts[0], set()).add(parts[2].strip())
    return allowed


def allow(brain_dir: Path, path: str) -> list[str]:
    """Allow the credentials ``path`` (relative to the brain, or absolute inside it) holds now to be
    pushed; returns their kinds (empty: it holds none). InvalidInput for a file outside the brain."""
    rel = _brain_path(brain_dir, path)
    try:
        found = findings((brain_dir / rel).read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise InvalidInput(f"no file {rel} in the brain ({brain_dir})") from None
    have = read_allowed(brain_dir).get(rel, set())
    lines = [f"{rel}\t{f.kind}\t{f.fingerprint}\n" for f in found if f.fingerprint not in have]
    if lines:
        target = brain_dir / ALLOW_FILE
        current = target.read_text(encoding="utf-8") if target.is_file() else _HEADER
        target.parent.mkdir(parents=True, exist_ok=True)
        fileio.atomic_write(target, current + "".join(dict.fromkeys(lines)))
    return sorted({f.kind for f in found})


def allow_paths(brain_dir: Path, paths: Sequence[str]) -> list[dict[str, Any]]:
    """`allow` each path; ``{path, kinds}`` for each (kinds empty: it holds no credential)."""
    return [{"path": _brain_path(brain_dir, path), "kinds": allow(brain_dir, path)} for path in paths]


def _brain_path(brain_dir: Path, path: str) -> str:
    """``path`` as the brain-relative posix path sync reports."""
    given = Path(path).expanduser()
    full = given if given.is_absolute() else brain_dir / given
    try:
        rel = full.resolve().relative_to(brain_dir.resolve())
    except ValueError:
        raise InvalidInput(f"{path} is not inside the brain ({brain_dir}); give its path as sync reports it, "
                           "e.g. gotcha/ci.md") from None
    if not rel.parts or rel.parts[0] in (".git", ".pinky"):
        raise InvalidInput(f"{path} is not a file of the brain's notes")
    return rel.as_posix()
