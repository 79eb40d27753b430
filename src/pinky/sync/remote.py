"""Talking to ``origin``: fetch and bring its branch in (checkout, fast-forward or per-file
merge), and push ours back. Any transport failure becomes one SyncError line naming the remote.

dulwich is imported inside functions only: ``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from pinky.errors import SyncError
from pinky.sync.merge import merge_snapshots
from pinky.sync.repo import RepoBlobs, advance, head_branch, head_sha, make_commit, snapshot, write_tree
from pinky.sync.worktree import checkout, restage

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo


@dataclass(frozen=True)
class Merge:
    """Outcome of bringing the remote branch into the local one."""

    changed: list[str]
    conflicts: list[str]
    branch: Ref
    remote_sha: ObjectID | None
    note: str | None = None


# --- fetch and merge -----------------------------------------------------------------------------


def pull(repo: Repo, url: str, ident: bytes, err: BinaryIO) -> Merge:
    """Fetch origin and bring its branch in: checkout, fast-forward or a per-file merge."""
    refs, symrefs = _fetch(repo, url, err)
    remote_branch = _pick_remote_branch(repo, refs, symrefs)
    theirs = refs.get(remote_branch)
    ours = head_sha(repo)
    if theirs is None:
        return Merge([], [], remote_branch, None, "remote has no commits yet")
    if ours == theirs or _is_ancestor(repo, theirs, ours):
        return Merge([], [], remote_branch, theirs)
    if ours is None or _is_ancestor(repo, ours, theirs):
        changed = checkout(repo, snapshot(repo, ours), snapshot(repo, theirs))
        advance(repo, ours, theirs, f"pinky sync: fast-forward to {theirs[:8].decode()}")
        restage(repo, changed)
        return Merge(changed, [], remote_branch, theirs)
    changed, conflicts = _three_way(repo, ours, theirs, remote_branch, ident)
    return Merge(changed, conflicts, remote_branch, theirs)


def _fetch(repo: Repo, url: str, err: BinaryIO) -> tuple[dict[Ref, ObjectID], dict[Ref, Ref]]:
    """Fetch origin; any transport failure becomes one SyncError line naming the remote."""
    from dulwich import porcelain

    try:
        username, password = _credentials(url)
        result = porcelain.fetch(
            repo, "origin", outstream=io.StringIO(), errstream=err, username=username, password=password
        )
    except Exception as exc:
        raise SyncError(f"cannot fetch from remote {url}: {_cause(exc)}") from exc
    refs = {k: v for k, v in (result.refs or {}).items() if v is not None}
    return refs, dict(result.symrefs or {})


def _pick_remote_branch(repo: Repo, refs: dict[Ref, ObjectID], symrefs: dict[Ref, Ref]) -> Ref:
    """Same branch name as ours; a fresh repo follows the remote's HEAD (like clone)."""
    from dulwich.refs import HEADREF

    local = head_branch(repo)
    remote_head = symrefs.get(HEADREF)
    if head_sha(repo) is None and remote_head in refs and remote_head != local:
        repo.refs.set_symbolic_ref(HEADREF, remote_head)
        return remote_head
    if local in refs or remote_head not in refs:
        return local
    return remote_head


def _is_ancestor(repo: Repo, older: ObjectID | None, newer: ObjectID | None) -> bool:
    """True when ``newer`` already contains ``older``."""
    from dulwich.graph import can_fast_forward

    if older is None or newer is None:
        return False
    return can_fast_forward(repo, older, newer)


def _three_way(
    repo: Repo, ours: ObjectID, theirs: ObjectID, branch: Ref, ident: bytes
) -> tuple[list[str], list[str]]:
    """Merge per file from the merge base, commit with both parents, update the files."""
    from dulwich.graph import find_merge_base

    bases = find_merge_base(repo, [ours, theirs])
    base = snapshot(repo, bases[0] if bases else None)
    ours_snap, theirs_snap = snapshot(repo, ours), snapshot(repo, theirs)
    short = theirs[:8].decode()
    merged, conflicts = merge_snapshots(base, ours_snap, theirs_snap, RepoBlobs(repo), short)
    tree = write_tree(repo, merged)
    name = branch.decode().removeprefix("refs/heads/")
    message = f"pinky sync: merge origin/{name} ({len(conflicts)} conflict copies)"
    commit = make_commit(repo, tree, [ours, theirs], message, ident)
    changed = checkout(repo, ours_snap, merged)
    advance(repo, ours, commit, message)
    restage(repo, changed)
    return changed, conflicts


# --- push ------------------------------------------------------------------------------------------


def push(repo: Repo, url: str, merge: Merge, err: BinaryIO) -> bool:
    """Push our branch when origin lacks it; a rejection is a SyncError (retry next run).

    Compares with the fetched remote sha, not refs/remotes/origin: dulwich 1.2 updates the
    tracking ref even when the server rejects the ref.
    """
    from dulwich import porcelain
    from dulwich.porcelain import DivergedBranches

    head = head_sha(repo)
    if head is None or head == merge.remote_sha:
        return False
    refspec = head_branch(repo) + b":" + merge.branch
    try:
        username, password = _credentials(url)
        result = porcelain.push(
            repo, "origin", refspec, outstream=io.BytesIO(), errstream=err, username=username, password=password
        )
    except DivergedBranches:
        raise SyncError(
            f"push to remote {url} was rejected: it moved since the fetch (non-fast-forward); "
            "run sync again"
        ) from None
    except Exception as exc:
        raise SyncError(f"push to remote {url} failed: {_cause(exc)}") from exc
    failed = {ref: why for ref, why in (result.ref_status or {}).items() if why}
    if failed:
        raise SyncError(f"push to remote {url} was rejected: {_cause_text(failed)}")
    return True


def _credentials(url: str) -> tuple[str | None, str | None]:
    """``(username, password)`` for fetch and push; (None, None) lets dulwich use the URL as is.

    HTTPS without credentials in the URL: look the host up in git's credential store.
    """
    from urllib.parse import urlparse

    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or parsed.username or not parsed.hostname:
        return None, None
    from dulwich.client import get_credentials_from_store

    for username, password in get_credentials_from_store(parsed.scheme, parsed.hostname):
        return username, password
    return None, None


def _cause(exc: BaseException) -> str:
    """One line from any dulwich/OS exception."""
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {' '.join(text.split())}"


def _cause_text(failed: Mapping[bytes, str]) -> str:
    """Render ``{ref: reason}`` push failures as one line."""
    return "; ".join(
        f"{ref.decode('utf-8', 'replace')}: {why}" for ref, why in failed.items()
    )
