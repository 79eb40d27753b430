"""Talking to ``origin``: fetch and bring its branch in (checkout, fast-forward or per-file
merge), and push ours back. Any transport failure becomes one SyncError line naming the remote.

dulwich is imported inside functions only: ``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pinky.errors import SyncError
from pinky.sync.credentials import auth_for
from pinky.sync.locks import mark_push
from pinky.sync.merge import UNION_LIMIT_BYTES, Snapshot, conflict_copy_name, merge_snapshots
from pinky.sync.repo import RepoBlobs, advance, contains, head_branch, head_sha, make_commit, snapshot, write_tree
from pinky.sync.worktree import checkout, restage

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo


FETCH_ATTEMPTS = 5


@dataclass(frozen=True)
class Merge:
    """Outcome of bringing the remote branch into the local one."""

    changed: list[str]
    conflicts: list[str]
    branch: Ref
    remote_sha: ObjectID | None
    note: str | None = None


# --- fetch and merge -----------------------------------------------------------------------------


def pull(repo: Repo, url: str, ident: bytes, err: BinaryIO, on_fetched: Callable[[], None] | None = None,
         union_limit: int = UNION_LIMIT_BYTES, held: Mapping[str, object] | None = None) -> Merge:
    """Fetch ``url`` and bring its branch in: checkout, fast-forward or a per-file merge.

    ``on_fetched`` runs once the remote has answered, before anything is merged (sync records a
    new ``--remote`` as origin there: a URL that cannot be fetched never replaces a good one).
    ``held``: files the local commit held back (pinky.sync.secrets); they stay as they are on disk,
    and the other machine's version of one goes beside it as a conflict copy."""
    refs, symrefs = _fetch(repo, url, err)
    if on_fetched is not None:
        on_fetched()
    remote_branch = _pick_remote_branch(repo, refs, symrefs)
    theirs = refs.get(remote_branch)
    ours = head_sha(repo)
    if theirs is None:
        return Merge([], [], remote_branch, None, "remote has no commits yet")
    if ours == theirs or _is_ancestor(repo, theirs, ours):
        return Merge([], [], remote_branch, theirs)
    if ours is None or _is_ancestor(repo, ours, theirs):
        old, short = snapshot(repo, ours), theirs[:8].decode()
        disk, copies = beside_held(old, snapshot(repo, theirs), held or {}, short)
        changed, edited = checkout(repo, old, disk, short, union_limit)
        advance(repo, ours, theirs, f"pinky sync: fast-forward to {short}")
        restage(repo, changed)
        return Merge(changed, copies + edited, remote_branch, theirs)
    changed, conflicts = _three_way(repo, ours, theirs, remote_branch, ident, union_limit, held or {})
    return Merge(changed, conflicts, remote_branch, theirs)


def beside_held(old: Snapshot, new: Snapshot, held: Mapping[str, object], short: str) -> tuple[Snapshot, list[str]]:
    """The files to write for ``new`` when ``held`` ones must stay as they are on disk: each keeps its
    ``old`` entry, and the other machine's version of it, if it changed, goes beside it as a conflict
    copy (listed second). A held file the other machine deleted stays too."""
    disk, copies = dict(new), []
    for path in sorted(held):
        theirs = new.get(path)
        if theirs == old.get(path):
            continue
        if path in old:
            disk[path] = old[path]
        else:
            disk.pop(path, None)
        if theirs is not None:
            copy = conflict_copy_name(path, short)
            disk[copy] = theirs
            copies.append(copy)
    return disk, copies


def _fetch(repo: Repo, url: str, err: BinaryIO) -> tuple[dict[Ref, ObjectID], dict[Ref, Ref]]:
    """Fetch the remote; any transport failure becomes one SyncError line naming the remote.

    A fetch from a repository on this disk reads the remote's refs twice, once to choose what to copy and
    again for its answer: a push into it in between answers a commit that was never copied (dulwich's
    KeyError, later). So the answer is checked, and the fetch made again, until every commit it names is here.
    """
    from dulwich import porcelain

    clean, username, password = auth_for(url)
    for _ in range(FETCH_ATTEMPTS):
        try:
            with _quiet_http():
                result = porcelain.fetch(
                    repo, clean, outstream=io.StringIO(), errstream=err, username=username, password=password
                )
        except Exception as exc:
            raise SyncError(f"cannot fetch from remote {clean}: {_cause(exc)}") from exc
        refs = {k: v for k, v in (result.refs or {}).items() if v is not None}
        if all(sha in repo.object_store for sha in refs.values()):
            return refs, dict(result.symrefs or {})
        _drop_dangling_refs(repo)
    raise SyncError(f"remote {clean} kept moving while it was fetched (another machine pushing); run sync again")


def _drop_dangling_refs(repo: Repo) -> None:
    """Remove the tracking refs the fetch set to commits it never copied: the next fetch would take them as
    commits we have, and not copy them again."""
    from dulwich.refs import Ref

    for name, sha in repo.refs.as_dict(Ref(b"refs/remotes")).items():
        if sha not in repo.object_store:
            repo.refs.remove_if_equals(Ref(b"refs/remotes/" + name), sha)


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
    if older is None or newer is None:
        return False
    return contains(repo, newer, older)


def _three_way(
    repo: Repo, ours: ObjectID, theirs: ObjectID, branch: Ref, ident: bytes, union_limit: int,
    held: Mapping[str, object],
) -> tuple[list[str], list[str]]:
    """Merge per file from the merge base, commit with both parents, update the files."""
    from dulwich.graph import find_merge_base

    bases = find_merge_base(repo, [ours, theirs])
    base = snapshot(repo, bases[0] if bases else None)
    ours_snap, theirs_snap = snapshot(repo, ours), snapshot(repo, theirs)
    short = theirs[:8].decode()
    merged, conflicts = merge_snapshots(
        base, ours_snap, theirs_snap, RepoBlobs(repo), short, related=bool(bases), union_limit=union_limit
    )
    tree = write_tree(repo, merged)
    name = branch.decode().removeprefix("refs/heads/")
    message = f"pinky sync: merge origin/{name} ({len(conflicts)} conflict copies)"
    commit = make_commit(repo, tree, [ours, theirs], message, ident)
    disk, copies = beside_held(ours_snap, merged, held, short)
    changed, edited = checkout(repo, ours_snap, disk, short, union_limit)
    advance(repo, ours, commit, message)
    restage(repo, changed)
    return changed, conflicts + copies + edited


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
    clean, username, password = auth_for(url)
    local = Path(clean) if os.path.isdir(clean) else None  # a remote on this disk: its locks are ours to clean
    mark = mark_push(Path(repo.controldir()), local) if local else None
    try:
        with _quiet_http():
            result = porcelain.push(
                repo, clean, refspec, outstream=io.BytesIO(), errstream=err, username=username, password=password
            )
    except DivergedBranches:
        raise SyncError(
            f"push to remote {clean} was rejected: it moved since the fetch (non-fast-forward); "
            "run sync again"
        ) from None
    except Exception as exc:
        raise SyncError(f"push to remote {clean} failed: {_cause(exc)}") from exc
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)
    failed = {ref: why for ref, why in (result.ref_status or {}).items() if why}
    if failed:
        raise SyncError(f"push to remote {clean} was rejected: {_cause_text(failed)}")
    return True


@contextmanager
def _quiet_http() -> Iterator[None]:
    """urllib3 logs a warning per retry ("Retrying (Retry(total=2 ..."): the error is reported once, by us."""
    logger = logging.getLogger("urllib3")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


_HTTP_REASON = re.compile(r"Caused by \w+\((?:[\"']?\w+\([^)]*\)[,:]?\s*)?(.*?)[\"']?\)*$")


def _cause(exc: BaseException) -> str:
    """One short line from any dulwich/OS/HTTP exception."""
    text = " ".join((str(exc).strip() or type(exc).__name__).split())
    if "Max retries exceeded" in text:  # urllib3: keep the reason, not the pool and the retry count
        found = _HTTP_REASON.search(text)
        return f"cannot connect: {found.group(1) if found else text}"
    return f"{type(exc).__name__}: {text}"


def _cause_text(failed: Mapping[bytes, str]) -> str:
    """Render ``{ref: reason}`` push failures as one line."""
    return "; ".join(
        f"{ref.decode('utf-8', 'replace')}: {why}" for ref, why in failed.items()
    )
