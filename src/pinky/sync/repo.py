"""The brain's local git repository through dulwich: open or create it, lock it, read and write
trees and commits, move the branch, and commit what changed on disk.

Commits are written directly (no hooks, no signing, no global git identity). dulwich is
imported inside functions only: ``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pinky.base import fileio
from pinky.errors import SyncError
from pinky.sync.merge import Snapshot

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo


def is_fresh(brain_dir: Path) -> bool:
    """A missing/empty dir, or a repo with no commit and no files, is cloned into."""
    if not brain_dir.exists():
        return True
    names = {p.name for p in brain_dir.iterdir()}
    if not names <= {".git"}:
        return False
    if not names:
        return True
    return head_commit(brain_dir) is None


def head_commit(brain_dir: Path) -> ObjectID | None:
    """HEAD's commit of the repository at ``brain_dir``; None when unborn or not a repository."""
    from dulwich.repo import Repo

    try:
        with Repo(str(brain_dir)) as repo:
            return head_sha(repo)
    except Exception:
        return None


def open_or_init(brain_dir: Path) -> tuple[Repo, bool]:
    """Open the brain repo, or init one when there is none; True when it was created."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    if brain_dir.exists() and not brain_dir.is_dir():
        raise SyncError(f"brain path {brain_dir} exists and is not a directory")
    try:
        return Repo(str(brain_dir)), False
    except NotGitRepository:
        pass
    if (brain_dir / ".git").exists():
        raise SyncError(f"{brain_dir}/.git exists but is not a readable git repository")
    brain_dir.mkdir(parents=True, exist_ok=True)
    return Repo.init(str(brain_dir)), True


@contextmanager
def sync_lock(repo: Repo) -> Iterator[None]:
    """One sync at a time per brain (hooks may fire together); released if the process dies."""
    with ExitStack() as held:
        try:
            held.enter_context(fileio.file_lock(os.path.join(repo.controldir(), "pinky-sync.lock"), blocking=False))
        except BlockingIOError:
            raise SyncError(f"another pinky-brain sync is running on {repo.path}") from None
        yield


def remote_url(remote: str) -> str:
    """A remote as ``origin`` records it: a local path made absolute, a URL as given."""
    return os.path.abspath(remote) if os.path.exists(remote) else remote


def set_origin(repo: Repo, remote: str | None) -> str | None:
    """Record ``remote`` as origin, without any password; return origin's URL or None.

    Call it only once the remote has answered a fetch: a mistyped URL must not replace a good one.
    """
    from pinky.sync.credentials import split_password

    config = repo.get_config()
    section = (b"remote", b"origin")
    if remote:
        url = split_password(remote_url(remote))[0]
        config.set(section, b"url", url.encode())
        config.set(section, b"fetch", b"+refs/heads/*:refs/remotes/origin/*")
        config.write_to_path()
        return url
    try:
        return config.get(section, b"url").decode()
    except KeyError:
        return None


# --- refs, trees, commits ------------------------------------------------------------------------


def head_branch(repo: Repo) -> Ref:
    """The branch HEAD points at; sync refuses a detached HEAD rather than guess."""
    from dulwich.refs import HEADREF, Ref

    target = repo.refs.read_ref(HEADREF)
    if not target or not target.startswith(b"ref: refs/heads/"):
        raise SyncError(f"{repo.path} has a detached HEAD; check out a branch before syncing")
    return Ref(target[len(b"ref: ") :].strip())


def head_sha(repo: Repo) -> ObjectID | None:
    """Commit HEAD points at, None while the branch is unborn."""
    try:
        return repo.refs[head_branch(repo)]
    except KeyError:
        return None


def snapshot(repo: Repo, commit: ObjectID | None) -> Snapshot:
    """Flatten a commit's tree into path -> (mode, sha)."""
    from dulwich.objects import Commit

    if commit is None:
        return {}
    obj = repo[commit]
    if not isinstance(obj, Commit):
        raise SyncError(f"{commit.decode()} is a {obj.type_name.decode()}, not a commit (a branch must point at one)")
    return {
        e.path.decode("utf-8", "surrogateescape"): (e.mode, e.sha)
        for e in repo.object_store.iter_tree_contents(obj.tree)
    }


def read_blob(repo: Repo, sha: ObjectID) -> bytes:
    """A file's contents from the object store; any other object there is a SyncError."""
    from dulwich.objects import Blob

    obj = repo.object_store[sha]
    if not isinstance(obj, Blob):
        raise SyncError(f"{sha.decode()} is a {obj.type_name.decode()}, not a file's contents")
    return obj.data


def write_tree(repo: Repo, snap: Snapshot) -> ObjectID:
    """Store the nested tree objects for a flat snapshot; return the root tree id."""
    from dulwich.index import commit_tree

    blobs = [(p.encode("utf-8", "surrogateescape"), sha, mode) for p, (mode, sha) in snap.items()]
    return commit_tree(repo.object_store, blobs)


def make_commit(repo: Repo, tree: ObjectID, parents: list[ObjectID], message: str, ident: bytes) -> ObjectID:
    """Write a commit object directly: no hooks, no signing, no global identity lookup.

    Its commit time is later than every parent's, even within one second: dulwich finds merge bases
    and checks fast-forwards (its own push check too) by walking newest-first, and two commits of the
    same second could come out in the wrong order and make a plain fast-forward look diverged."""
    from dulwich.objects import Commit

    now = int(time.time())
    offset = time.localtime(now).tm_gmtoff
    commit = Commit()
    commit.tree = tree
    commit.parents = parents
    commit.author = commit.committer = ident
    commit.author_time = now
    commit.commit_time = max([now] + [_commit_time(repo, parent) + 1 for parent in parents])
    commit.author_timezone = commit.commit_timezone = offset
    commit.encoding = b"UTF-8"
    commit.message = message.encode() + b"\n"
    repo.object_store.add_object(commit)
    return commit.id


def _commit_time(repo: Repo, sha: ObjectID) -> int:
    commit = repo.object_store[sha]
    return int(getattr(commit, "commit_time", 0))


def contains(repo: Repo, newer: ObjectID, older: ObjectID) -> bool:
    """True when ``older`` is ``newer`` or one of its ancestors: a walk over parents that trusts no
    commit time (another machine's clock may be wrong), stopping at the first sight of ``older``."""
    seen: set[ObjectID] = set()
    stack = [newer]
    parents_of = repo.parents_provider()
    while stack:
        sha = stack.pop()
        if sha == older:
            return True
        if sha in seen:
            continue
        seen.add(sha)
        stack.extend(parents_of.get_parents(sha))
    return False


def advance(repo: Repo, old: ObjectID | None, new: ObjectID, message: str) -> None:
    """Move the branch from ``old`` to ``new`` atomically, or fail if someone else moved it."""
    branch = head_branch(repo)
    msg = message.encode()
    ok = (
        repo.refs.add_if_new(branch, new, message=msg)
        if old is None
        else repo.refs.set_if_equals(branch, old, new, message=msg)
    )
    if not ok:
        raise SyncError(f"{branch.decode()} moved during sync; run sync again")


class RepoBlobs:
    """The merge rules' `Blobs`, backed by the repository's object store."""

    def __init__(self, repo: Repo) -> None:
        self._repo = repo

    def read(self, sha: ObjectID) -> bytes:
        return read_blob(self._repo, sha)

    def write(self, data: bytes) -> ObjectID:
        from dulwich.objects import Blob

        blob = Blob.from_string(data)
        self._repo.object_store.add_object(blob)
        return blob.id


# --- committing local changes --------------------------------------------------------------------


def commit_local(repo: Repo, ident: bytes, held: dict[str, list[str]] | None = None) -> str | None:
    """Stage everything (adds, edits, deletions) and commit it; None when nothing changed. pinky's own
    temporary files (`fileio.is_temp`) are never staged.

    A file that would add a credential (pinky.sync.secrets) is held back: left out of the commit and
    unstaged, untouched on disk, and recorded in ``held`` as path -> kinds; the next run looks again."""
    from dulwich import porcelain

    from pinky.sync.secrets import held_back

    porcelain.add(repo)
    head = head_sha(repo)
    staged = _staged(repo)
    before = snapshot(repo, head)
    temps = [p for p in staged if fileio.is_temp(p.rpartition("/")[2]) and p not in before]
    if temps:  # a write under way (or a killed one's leftover): never committed
        repo.get_worktree().unstage(temps)
        staged = _staged(repo)
    kept = held_back(repo, {p: e for p, e in staged.items() if before.get(p) != e}, before)
    if kept:
        repo.get_worktree().unstage(list(kept))  # the index matches the commit: `git status` shows them
        staged = _staged(repo)
        if held is not None:
            held.update(kept)
    if staged == before:
        return None
    tree = write_tree(repo, staged)
    message = _local_message(before, staged)
    advance(repo, head, make_commit(repo, tree, [head] if head else [], message, ident), message)
    return message


def _staged(repo: Repo) -> Snapshot:
    """The index as a snapshot; a path left conflicted by a git merge stops the sync."""
    from dulwich.index import ConflictedIndexEntry

    staged: Snapshot = {}
    for raw, entry in repo.open_index().iteritems():
        path = raw.decode("utf-8", "surrogateescape")
        if isinstance(entry, ConflictedIndexEntry):
            raise SyncError(f"{path} has an unresolved git merge conflict in {repo.path}; resolve it before syncing")
        staged[path] = (entry.mode, entry.sha)
    return staged


def _local_message(before: Snapshot, after: Snapshot) -> str:
    """``pinky sync: add 2, update 1, remove 0 (a.md, b.md, ...)`` so ``git log`` reads well."""
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    updated = sorted(p for p in set(after) & set(before) if after[p] != before[p])
    paths = added + updated + removed
    shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
    return f"pinky sync: add {len(added)}, update {len(updated)}, remove {len(removed)} ({shown})"


# --- conflict copies not yet reported ---------------------------------------------------------------

PENDING_CONFLICTS = "pinky-conflicts"  # in the control dir: copies made by a run that then failed


def remember_conflicts(repo: Repo, paths: list[str]) -> None:
    """Record conflict copies a merge just wrote, before the push that may fail: the run that made them
    reports them, or else the next one does (`take_conflicts`)."""
    if not paths:
        return
    known = _pending(repo)
    fileio.atomic_write(_pending_path(repo), "".join(f"{p}\n" for p in dict.fromkeys([*known, *paths])))


def take_conflicts(repo: Repo) -> list[str]:
    """The recorded conflict copies still on disk, and forget them: this run reports them."""
    known = _pending(repo)
    if not known:
        return []
    root = Path(repo.path)
    Path(_pending_path(repo)).unlink(missing_ok=True)
    return [path for path in known if (root / path).is_file()]


def _pending_path(repo: Repo) -> str:
    return os.path.join(repo.controldir(), PENDING_CONFLICTS)


def _pending(repo: Repo) -> list[str]:
    try:
        with open(_pending_path(repo), encoding="utf-8") as stream:
            return [line.rstrip("\n") for line in stream if line.strip()]
    except OSError:
        return []
