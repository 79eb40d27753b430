"""Git sync of the global brain between machines, through dulwich (no git binary needed).

The brain is a plain git repository; a run commits local changes, fetches ``origin``,
merges per file (diary lines are unioned, never conflict-marked) and pushes.

Credentials are whatever dulwich's transports support (dulwich 1.2):

* SSH (``ssh://host/path`` or ``user@host:path``): dulwich runs the system ``ssh``, so keys,
  ``~/.ssh/config`` and the ssh-agent work as they do for git. ``GIT_SSH_COMMAND`` / ``GIT_SSH``
  and ``core.sshCommand`` are honoured.
* HTTPS: credentials in the URL (``https://user:token@host/repo.git``) or a git credential
  *store* file (``~/.git-credentials`` / ``$XDG_CONFIG_HOME/git/credentials``), which this
  module looks up itself. dulwich does not run ``credential.helper`` programs (keychain, GCM).
* Local paths and ``file://`` URLs (a bare repository on a shared disk) need nothing.

dulwich is imported inside functions only: ``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pinky.errors import InvalidInput, SyncError

if TYPE_CHECKING:
    from dulwich.repo import Repo

DEFAULT_AUTHOR = "pinky <pinky@localhost>"
AUTHOR_ENV = "PINKY_GIT_AUTHOR"
IGNORED = ("brain.db*", ".pinky/")
ROLLUP_DIRS = ("diary/weekly/", "diary/monthly/")

_CONFLICT_RE = re.compile(r"\.conflict-[0-9a-f]{7,40}(\.[^./]+)?$")
_APPEND_ONLY_RE = re.compile(r"^append_only:\s*(true|yes)\s*$", re.MULTILINE | re.IGNORECASE)
_BULLET_RE = re.compile(r"^[-*] ")
_TIME_RE = re.compile(r"^[-*] (\d{2}:\d{2})\b")

Entry = tuple[int, bytes]  # (mode, blob sha) of one file in a tree
Snapshot = dict[str, Entry]  # relative posix path -> entry


@dataclass(frozen=True)
class SyncReport:
    """What one sync run did; ``pulled_paths`` are the files the caller must reindex."""

    cloned: bool = False
    initialised: bool = False
    committed: bool = False
    commit_message: str | None = None
    pulled_paths: list[str] = field(default_factory=list)
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)
    remote: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Merge:
    """Outcome of bringing the remote branch into the local one."""

    changed: list[str]
    conflicts: list[str]
    branch: bytes
    remote_sha: bytes | None
    note: str | None = None


def sync(
    brain_dir: Path,
    remote: str | None = None,
    *,
    author: str | None = None,
    errstream: BinaryIO | None = None,
) -> SyncReport:
    """Commit local changes, fetch and merge ``origin``, push; create the repo on first run.

    ``remote`` (re)sets ``origin``. Without any remote the brain is committed locally only.
    Merge rules, per file from the merge base: a side that changed wins; deleted vs modified
    keeps the modified file; ``diary/`` and ``append_only: true`` files are line-unioned;
    rollups (``diary/weekly``, ``diary/monthly``) keep ours, as they are regenerated; any
    other file edited on both sides keeps ours and gets theirs as ``<stem>.conflict-<sha>.md``.
    Conflict markers are never written.

    Raises SyncError when the remote is unreachable or rejects the push: local files and
    commits are kept, and the next run finishes the job (a failed push is retried).
    """
    brain_dir = Path(brain_dir).absolute()
    err: BinaryIO = errstream if errstream is not None else io.BytesIO()
    ident = _author_bytes(author)
    fresh = _is_fresh(brain_dir)
    repo, initialised = _open_or_init(brain_dir)
    with repo, _sync_lock(repo):
        url = _set_origin(repo, remote)
        merge = _pull(repo, url, ident, err) if fresh and url else None
        _ensure_gitignore(brain_dir)
        message = _commit_local(repo, ident)
        if url and not fresh:
            merge = _pull(repo, url, ident, err)
        pushed = _push(repo, url, merge, err) if url and merge else False
    if merge is None:
        merge = _Merge([], [], b"", None)
    notes = [n for n in (merge.note, _push_note(url, pushed)) if n]
    return SyncReport(
        cloned=bool(fresh and url),
        initialised=initialised,
        committed=message is not None,
        commit_message=message,
        pulled_paths=merge.changed,
        pushed=pushed,
        conflicts=merge.conflicts,
        remote=url,
        notes=notes,
    )


def list_conflicts(brain_dir: Path) -> list[Path]:
    """Conflict copies (``<stem>.conflict-<sha>.md``) left by sync, for ``pinky doctor``."""
    root = Path(brain_dir)
    if not root.is_dir():
        return []
    found = [
        p
        for p in root.rglob("*.conflict-*")
        if p.is_file() and ".git" not in p.relative_to(root).parts and _CONFLICT_RE.search(p.name)
    ]
    return sorted(found)


def union_merge(ours: str, theirs: str) -> str:
    """Merge two versions of an append-only file: ours' header, every bullet once, by HH:MM.

    Why: diary lines are self-contained and only ever appended, so the union of both sides
    is the right result; ordering by time is stable (ours first on ties).
    """
    header, ours_blocks = _split_blocks(ours)
    _, theirs_blocks = _split_blocks(theirs)
    seen = {text for _, text in ours_blocks}
    merged = list(ours_blocks)
    for key, text in theirs_blocks:
        if text not in seen:
            seen.add(text)
            merged.append((key, text))
    merged.sort(key=lambda block: block[0])
    body = "\n".join(text for _, text in merged)
    if not body:
        return header
    if header and not header.endswith("\n"):
        header += "\n"
    return header + body + "\n"


# --- the repository --------------------------------------------------------------------------


def _is_fresh(brain_dir: Path) -> bool:
    """A missing/empty dir, or a repo with no commit and no files, is cloned into."""
    if not brain_dir.exists():
        return True
    names = {p.name for p in brain_dir.iterdir()}
    if not names <= {".git"}:
        return False
    if not names:
        return True
    return _head_sha_at(brain_dir) is None


def _head_sha_at(brain_dir: Path) -> bytes | None:
    """HEAD's commit of an existing repo, None when unborn or not a repo."""
    from dulwich.repo import Repo

    try:
        with Repo(str(brain_dir)) as repo:
            return _head_sha(repo)
    except Exception:
        return None


def _open_or_init(brain_dir: Path) -> tuple[Repo, bool]:
    """Open the brain repo, or init one (writing ``.gitignore``) when there is none."""
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
def _sync_lock(repo: Repo) -> Iterator[None]:
    """One sync at a time per brain (hooks may fire together); released if the process dies."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock, dulwich's ref locks still apply
        yield
        return
    with open(os.path.join(repo.controldir(), "pinky-sync.lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncError(f"another pinky sync is running on {repo.path}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _set_origin(repo: Repo, remote: str | None) -> str | None:
    """Record ``remote`` as origin (absolute if a local path); return origin's URL or None."""
    config = repo.get_config()
    section = (b"remote", b"origin")
    if remote:
        url = os.path.abspath(remote) if os.path.exists(remote) else remote
        config.set(section, b"url", url.encode())
        config.set(section, b"fetch", b"+refs/heads/*:refs/remotes/origin/*")
        config.write_to_path()
        return url
    try:
        return config.get(section, b"url").decode()
    except KeyError:
        return None


def _ensure_gitignore(brain_dir: Path) -> None:
    """The index and local state are per machine: never commit them."""
    path = brain_dir / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [pattern for pattern in IGNORED if pattern not in present]
    if not missing:
        return
    if text and not text.endswith("\n"):
        text += "\n"
    _atomic_write(path, (text + "\n".join(missing) + "\n").encode())


def _author_bytes(author: str | None) -> bytes:
    """``author`` arg, else $PINKY_GIT_AUTHOR, else the pinky default; never global git config."""
    value = (author or os.environ.get(AUTHOR_ENV) or DEFAULT_AUTHOR).strip()
    if not re.fullmatch(r"[^<>\n]+ <[^<>\n]*>", value):
        raise InvalidInput(f"git author must look like 'Name <email>', got {value!r}")
    return value.encode()


def _head_branch(repo: Repo) -> bytes:
    """The branch HEAD points at; sync refuses a detached HEAD rather than guess."""
    target = repo.refs.read_ref(b"HEAD")
    if not target or not target.startswith(b"ref: refs/heads/"):
        raise SyncError(f"{repo.path} has a detached HEAD; check out a branch before syncing")
    return target[len(b"ref: ") :].strip()


def _head_sha(repo: Repo) -> bytes | None:
    """Commit HEAD points at, None while the branch is unborn."""
    try:
        return repo.refs[_head_branch(repo)]
    except KeyError:
        return None


def _snapshot(repo: Repo, commit: bytes | None) -> Snapshot:
    """Flatten a commit's tree into path -> (mode, sha)."""
    if commit is None:
        return {}
    tree = repo[commit].tree
    return {
        e.path.decode("utf-8", "surrogateescape"): (e.mode, e.sha)
        for e in repo.object_store.iter_tree_contents(tree)
    }


def _write_tree(repo: Repo, snapshot: Snapshot) -> bytes:
    """Store the nested tree objects for a flat snapshot; return the root tree id."""
    from dulwich.index import commit_tree

    blobs = [(p.encode("utf-8", "surrogateescape"), sha, mode) for p, (mode, sha) in snapshot.items()]
    return commit_tree(repo.object_store, blobs)


def _make_commit(repo: Repo, tree: bytes, parents: list[bytes], message: str, ident: bytes) -> bytes:
    """Write a commit object directly: no hooks, no signing, no global identity lookup."""
    from dulwich.objects import Commit

    now = int(time.time())
    offset = time.localtime(now).tm_gmtoff
    commit = Commit()
    commit.tree = tree
    commit.parents = parents
    commit.author = commit.committer = ident
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = offset
    commit.encoding = b"UTF-8"
    commit.message = message.encode() + b"\n"
    repo.object_store.add_object(commit)
    return commit.id


def _advance(repo: Repo, old: bytes | None, new: bytes, message: str) -> None:
    """Move the branch from ``old`` to ``new`` atomically, or fail if someone else moved it."""
    branch = _head_branch(repo)
    msg = message.encode()
    ok = (
        repo.refs.add_if_new(branch, new, message=msg)
        if old is None
        else repo.refs.set_if_equals(branch, old, new, message=msg)
    )
    if not ok:
        raise SyncError(f"{branch.decode()} moved during sync; run sync again")


# --- step 1: commit local changes --------------------------------------------------------------


def _commit_local(repo: Repo, ident: bytes) -> str | None:
    """Stage everything (adds, edits, deletions) and commit it; None when nothing changed."""
    from dulwich import porcelain

    porcelain.add(repo)
    head = _head_sha(repo)
    index = repo.open_index()
    staged = {
        path.decode("utf-8", "surrogateescape"): (entry.mode, entry.sha)
        for path, entry in index.iteritems()
    }
    before = _snapshot(repo, head)
    if staged == before:
        return None
    tree = _write_tree(repo, staged)
    message = _local_message(before, staged)
    _advance(repo, head, _make_commit(repo, tree, [head] if head else [], message, ident), message)
    return message


def _local_message(before: Snapshot, after: Snapshot) -> str:
    """``pinky sync: add 2, update 1, remove 0 (a.md, b.md, ...)`` so ``git log`` reads well."""
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    updated = sorted(p for p in set(after) & set(before) if after[p] != before[p])
    paths = added + updated + removed
    shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
    return f"pinky sync: add {len(added)}, update {len(updated)}, remove {len(removed)} ({shown})"


# --- step 2: fetch and merge ---------------------------------------------------------------------


def _pull(repo: Repo, url: str, ident: bytes, err: BinaryIO) -> _Merge:
    """Fetch origin and bring its branch in: checkout, fast-forward or a per-file merge."""
    refs, symrefs = _fetch(repo, url, err)
    remote_branch = _pick_remote_branch(repo, refs, symrefs)
    theirs = refs.get(remote_branch)
    ours = _head_sha(repo)
    if theirs is None:
        return _Merge([], [], remote_branch, None, "remote has no commits yet")
    if ours == theirs or _is_ancestor(repo, theirs, ours):
        return _Merge([], [], remote_branch, theirs)
    if ours is None or _is_ancestor(repo, ours, theirs):
        changed = _checkout(repo, _snapshot(repo, ours), _snapshot(repo, theirs))
        _advance(repo, ours, theirs, f"pinky sync: fast-forward to {theirs[:8].decode()}")
        _restage(repo, changed)
        return _Merge(changed, [], remote_branch, theirs)
    changed, conflicts = _three_way(repo, ours, theirs, remote_branch, ident)
    return _Merge(changed, conflicts, remote_branch, theirs)


def _fetch(repo: Repo, url: str, err: BinaryIO) -> tuple[dict[bytes, bytes], dict[bytes, bytes]]:
    """Fetch origin; any transport failure becomes one SyncError line naming the remote."""
    from dulwich import porcelain

    try:
        result = porcelain.fetch(
            repo, "origin", outstream=io.StringIO(), errstream=err, **_credentials(url)
        )
    except Exception as exc:
        raise SyncError(f"cannot fetch from remote {url}: {_cause(exc)}") from exc
    refs = {k: v for k, v in (result.refs or {}).items() if v is not None}
    return refs, dict(result.symrefs or {})


def _pick_remote_branch(repo: Repo, refs: dict[bytes, bytes], symrefs: dict[bytes, bytes]) -> bytes:
    """Same branch name as ours; a fresh repo follows the remote's HEAD (like clone)."""
    local = _head_branch(repo)
    remote_head = symrefs.get(b"HEAD")
    if _head_sha(repo) is None and remote_head in refs and remote_head != local:
        repo.refs.set_symbolic_ref(b"HEAD", remote_head)
        return remote_head
    if local in refs or remote_head not in refs:
        return local
    return remote_head


def _is_ancestor(repo: Repo, older: bytes | None, newer: bytes | None) -> bool:
    """True when ``newer`` already contains ``older``."""
    from dulwich.graph import can_fast_forward

    if older is None or newer is None:
        return False
    return can_fast_forward(repo, older, newer)


def _three_way(
    repo: Repo, ours: bytes, theirs: bytes, branch: bytes, ident: bytes
) -> tuple[list[str], list[str]]:
    """Merge per file from the merge base, commit with both parents, update the files."""
    from dulwich.graph import find_merge_base

    bases = find_merge_base(repo, [ours, theirs])
    base = _snapshot(repo, bases[0] if bases else None)
    ours_snap, theirs_snap = _snapshot(repo, ours), _snapshot(repo, theirs)
    short = theirs[:8].decode()
    merged, conflicts = _merge_snapshots(base, ours_snap, theirs_snap, _Blobs(repo), short)
    tree = _write_tree(repo, merged)
    name = branch.decode().removeprefix("refs/heads/")
    message = f"pinky sync: merge origin/{name} ({len(conflicts)} conflict copies)"
    commit = _make_commit(repo, tree, [ours, theirs], message, ident)
    changed = _checkout(repo, ours_snap, merged)
    _advance(repo, ours, commit, message)
    _restage(repo, changed)
    return changed, conflicts


class _Blobs:
    """Blob access for the merge code, which otherwise only sees path -> (mode, sha) maps."""

    def __init__(self, repo: Repo) -> None:
        self._repo = repo

    def read(self, sha: bytes) -> bytes:
        return self._repo.object_store[sha].data

    def write(self, data: bytes) -> bytes:
        from dulwich.objects import Blob

        blob = Blob.from_string(data)
        self._repo.object_store.add_object(blob)
        return blob.id


def _merge_snapshots(
    base: Snapshot, ours: Snapshot, theirs: Snapshot, blobs: _Blobs, short_sha: str
) -> tuple[Snapshot, list[str]]:
    """Per-file 3-way merge; returns the merged snapshot and the conflict copies it added.

    One side changed: take it. Deleted vs modified: keep the modified one. Append-only files:
    line union. Other files changed on both sides: keep ours, add theirs as a conflict copy.
    """
    merged: Snapshot = {}
    conflicts: list[str] = []
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b or o is None:
            chosen = t
        elif t is None:
            chosen = o
        else:
            chosen = _both_changed(path, o, t, blobs, short_sha, merged, conflicts)
        if chosen is not None:
            merged[path] = chosen
    return merged, conflicts


def _both_changed(
    path: str, o: Entry, t: Entry, blobs: _Blobs, short: str, merged: Snapshot, conflicts: list[str]
) -> Entry:
    """Resolve a file edited differently on both sides without conflict markers."""
    if path.startswith(ROLLUP_DIRS):
        return o  # rollups are regenerated from the (unioned) diaries: ours is as good
    ours_data, theirs_data = blobs.read(o[1]), blobs.read(t[1])
    if _is_append_only(path, ours_data, theirs_data):
        text = union_merge(ours_data.decode("utf-8"), theirs_data.decode("utf-8"))
        return (o[0], blobs.write(text.encode("utf-8")))
    copy = conflict_copy_name(path, short)
    merged[copy] = t
    conflicts.append(copy)
    return o


def conflict_copy_name(path: str, short_sha: str) -> str:
    """``notes/a.md`` -> ``notes/a.conflict-1a2b3c4d.md``: obvious, and still markdown."""
    head, _, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        stem, suffix = name, ""
    new = f"{stem}.conflict-{short_sha}" + (f".{suffix}" if suffix else "")
    return f"{head}/{new}" if head else new


def _is_append_only(path: str, ours: bytes, theirs: bytes) -> bool:
    """Diary files, or any text whose frontmatter declares ``append_only: true``."""
    try:
        texts = [ours.decode("utf-8"), theirs.decode("utf-8")]
    except UnicodeDecodeError:
        return False
    if path.startswith("diary/"):
        return True
    return any(_APPEND_ONLY_RE.search(_frontmatter(text)) for text in texts)


def _frontmatter(text: str) -> str:
    """The YAML block between the leading ``---`` lines, or '' when there is none."""
    if not text.startswith("---"):
        return ""
    end = text.find("\n---", 3)
    return text[3:end] if end != -1 else ""


def _split_blocks(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Split into (header, [(time key, bullet block)]); untimed bullets inherit the last time."""
    lines = text.splitlines()
    start = _body_start(lines)
    header = "".join(line + "\n" for line in lines[:start])
    blocks: list[list[str]] = []
    for line in lines[start:]:
        if _BULLET_RE.match(line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    keyed: list[tuple[str, str]] = []
    last = ""
    for block in blocks:
        body = "\n".join(block).rstrip()
        if not body:
            continue
        match = _TIME_RE.match(block[0])
        last = match.group(1) if match else last
        keyed.append((last, body))
    return header, keyed


def _body_start(lines: list[str]) -> int:
    """Index of the first bullet after the frontmatter (YAML lists are not diary lines)."""
    i = 0
    if lines and lines[0].strip() == "---":
        i = next((k + 1 for k in range(1, len(lines)) if lines[k].strip() == "---"), len(lines))
    while i < len(lines) and not _BULLET_RE.match(lines[i]):
        i += 1
    return i


# --- working tree ---------------------------------------------------------------------------------


def _checkout(repo: Repo, old: Snapshot, new: Snapshot) -> list[str]:
    """Make the files match ``new`` where they differ from ``old``; return those paths.

    Checks first that no file changed since the local commit, so nothing is overwritten.
    """
    root = Path(repo.path)
    changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    for path in changed:
        _check_untouched(repo, root, path, old.get(path))
    for path in changed:
        entry = new.get(path)
        if entry is None:
            _remove(root, path)
        else:
            _write_entry(repo, root, path, entry)
    return changed


def _safe_target(root: Path, path: str) -> Path:
    """Refuse tree paths that would escape the brain or touch ``.git``."""
    parts = path.split("/")
    if path.startswith("/") or ".." in parts or parts[0] == ".git" or "" in parts:
        raise SyncError(f"refusing unsafe path from remote: {path!r}")
    return root.joinpath(*parts)


def _check_untouched(repo: Repo, root: Path, path: str, entry: Entry | None) -> None:
    """The working file must still equal the committed one before sync replaces it."""
    target = _safe_target(root, path)
    if entry is None:
        current_ok = not target.exists()
    else:
        current_ok = target.is_file() and target.read_bytes() == repo.object_store[entry[1]].data
    if not current_ok:
        raise SyncError(f"{path} changed while syncing; run sync again")


def _write_entry(repo: Repo, root: Path, path: str, entry: Entry) -> None:
    """Write one blob to disk atomically, keeping the executable bit."""
    mode, sha = entry
    target = _safe_target(root, path)
    if mode & 0o170000 != 0o100000:
        return  # symlinks/submodules do not belong in a brain; leave them to git
    target.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(target, repo.object_store[sha].data, executable=bool(mode & 0o111))


def _remove(root: Path, path: str) -> None:
    """Delete a file and the directories it leaves empty."""
    target = _safe_target(root, path)
    target.unlink(missing_ok=True)
    parent = target.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def _atomic_write(path: Path, data: bytes, *, executable: bool = False) -> None:
    """temp + os.replace: a crash never leaves a half-written note."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o755 if executable else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _restage(repo: Repo, paths: list[str]) -> None:
    """Bring the index in line with the files sync just wrote (adds, edits, deletions)."""
    from dulwich import porcelain

    if paths:
        porcelain.add(repo, paths=list(paths))  # relative paths are taken from the repo root


# --- step 3: push ------------------------------------------------------------------------------------


def _push(repo: Repo, url: str, merge: _Merge, err: BinaryIO) -> bool:
    """Push our branch when origin lacks it; a rejection is a SyncError (retry next run).

    Compares with the fetched remote sha, not refs/remotes/origin: dulwich 1.2 updates the
    tracking ref even when the server rejects the ref.
    """
    from dulwich import porcelain
    from dulwich.porcelain import DivergedBranches

    head = _head_sha(repo)
    if head is None or head == merge.remote_sha:
        return False
    refspec = _head_branch(repo) + b":" + merge.branch
    try:
        result = porcelain.push(
            repo, "origin", refspec, outstream=io.BytesIO(), errstream=err, **_credentials(url)
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


def _push_note(url: str | None, pushed: bool) -> str | None:
    """Say plainly why nothing left the machine."""
    if url is None:
        return "no remote configured: committed locally, nothing to push (use --remote URL)"
    return None if pushed else "remote already up to date"


def _credentials(url: str) -> dict[str, str]:
    """HTTPS without credentials in the URL: look the host up in git's credential store."""
    from urllib.parse import urlparse

    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or parsed.username or not parsed.hostname:
        return {}
    from dulwich.client import get_credentials_from_store

    for username, password in get_credentials_from_store(parsed.scheme, parsed.hostname):
        return {"username": username, "password": password}
    return {}


def _cause(exc: BaseException) -> str:
    """One line from any dulwich/OS exception."""
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {' '.join(text.split())}"


def _cause_text(failed: dict[bytes, object]) -> str:
    """Render ``{ref: reason}`` push failures as one line."""
    return "; ".join(
        f"{ref.decode('utf-8', 'replace')}: {why}" for ref, why in failed.items()
    )

