"""Git sync of the global brain between machines, through dulwich (no git binary needed).

The brain is a plain git repository; a run commits local changes, fetches ``origin``,
merges per file (diary lines are unioned, never conflict-marked) and pushes.

Credentials are whatever dulwich's transports support (dulwich 1.2):

* SSH (``ssh://host/path`` or ``user@host:path``): dulwich runs the system ``ssh``, so keys,
  ``~/.ssh/config`` and the ssh-agent work as they do for git. ``GIT_SSH_COMMAND`` / ``GIT_SSH``
  and ``core.sshCommand`` are honoured.
* HTTPS: a password or token from the ``--remote`` URL (that run), ``$PINKY_GIT_PASSWORD``, or a
  git credential *store* file (``~/.git-credentials`` / ``$XDG_CONFIG_HOME/git/credentials``),
  which ``credentials`` looks up itself; ``origin`` never holds a password. dulwich does not run
  ``credential.helper`` programs (keychain, GCM).
* Local paths and ``file://`` URLs (a bare repository on a shared disk) need nothing.

One concern per module: ``merge`` holds the per-file merge rules and the union merge (pure),
``repo`` the local repository steps, ``worktree`` the files on disk, ``remote`` fetch, merge
and push; this module (`sync`) runs them in order. dulwich is imported inside functions only:
``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pinky.base import fileio
from pinky.base.locations import ENV_GIT_AUTHOR
from pinky.errors import InvalidInput, SyncError
from pinky.sync.credentials import remember, split_password
from pinky.sync.locks import clear_after_dead_push, clear_stale_locks, clear_stale_temps
from pinky.sync.merge import UNION_LIMIT_BYTES
from pinky.sync.remote import Merge, pull, push
from pinky.sync.repo import (
    commit_local,
    head_sha,
    is_fresh,
    open_or_init,
    remember_conflicts,
    remote_url,
    set_origin,
    snapshot,
    sync_lock,
    take_conflicts,
)
from pinky.sync.report import SyncReport

if TYPE_CHECKING:
    from dulwich.repo import Repo

DEFAULT_AUTHOR = "pinky <pinky@localhost>"
IGNORED = ("brain.db*", ".pinky/")
_OBJECT_ID = re.compile(rb"[0-9a-f]{40}")  # what dulwich's KeyError for a missing object holds
_AUTHOR = re.compile(r"(?<![^<>\n])[^<>\n]+ <[^<>\n]*>")  # Name <email>, as git writes it


def sync(
    brain_dir: Path,
    remote: str | None = None,
    *,
    author: str | None = None,
    errstream: BinaryIO | None = None,
    union_limit: int = UNION_LIMIT_BYTES,
    allow: Sequence[str] = (),
) -> SyncReport:
    """Commit local changes, fetch and merge ``origin``, push; create the repo on first run.

    ``remote`` (re)sets ``origin``, once it has answered a fetch, and without its password (see
    ``credentials``). Without any remote the brain is committed locally only.
    Merge rules, per file from the merge base: a side that changed wins; deleted vs modified keeps
    the modified file; ``diary/`` and ``append_only: true`` files up to ``union_limit`` bytes are
    line-unioned; rollups (``diary/weekly``, ``diary/monthly``) keep ours, as they are regenerated; any
    other file edited on both sides keeps ours, theirs beside it as ``<stem>.conflict-<sha>.md`` (no markers).
    A file that would push a new credential is held back, untouched (``pinky.sync.secrets``) unless ``allow``ed.

    Raises SyncError when the remote is unreachable or rejects the push: local files and
    commits are kept, and the next run finishes the job (a failed push is retried).
    """
    from pinky.sync.secrets import allow_paths

    started = time.time()
    brain_dir = Path(brain_dir).absolute()
    err: BinaryIO = errstream if errstream is not None else io.BytesIO()
    ident = _author_bytes(author)
    fresh = is_fresh(brain_dir)
    repo, initialised = open_or_init(brain_dir)
    notes: list[str | None] = []
    given = remote_url(remote) if remote else None
    with repo, sync_lock(repo), _locked_as_sync_error():
        notes += _clean_up(repo, started)
        url = given or set_origin(repo, None)

        def record() -> None:  # the remote answered: now it may become origin
            if given:
                set_origin(repo, given)
                notes.append(remember(given))

        allowed = allow_paths(brain_dir, allow)
        held: dict[str, list[str]] = {}
        merge, message, pushed = _exchange(repo, url, fresh, ident, err, record, union_limit, held)
        notes.append(_held_note(held))
        conflicts = take_conflicts(repo)  # this run's, and those of a run that failed after its merge
    notes += [merge.note if merge else None, _push_note(url, pushed)]
    return SyncReport(
        cloned=bool(fresh and url),
        initialised=initialised,
        committed=message is not None,
        commit_message=message,
        pulled_paths=merge.changed if merge else [],
        pushed=pushed,
        conflicts=conflicts,
        remote=split_password(url)[0] if url else None,
        notes=[n for n in notes if n],
        held_back=_held_items(held),
        allowed=allowed,
    )


def _exchange(repo: Repo, url: str | None, fresh: bool, ident: bytes, err: BinaryIO, record: Callable[[], None],
              union_limit: int, held: dict[str, list[str]]) -> tuple[Merge | None, str | None, bool]:
    """Commit, pull, commit what the merge added, push: (the merge, the commit message, pushed).
    Files held back from a commit are recorded in ``held``."""
    merge = _remembered(repo, pull(repo, url, ident, err, record, union_limit)) if fresh and url else None
    _ensure_gitignore(Path(repo.path))
    message = commit_local(repo, ident, held)
    if url and not fresh:
        merge = _remembered(repo, pull(repo, url, ident, err, record, union_limit, held))
    if merge and merge.changed:  # a conflict copy written beside a held-back file: commit it too
        message = commit_local(repo, ident, held) or message
    pushed = push(repo, url, merge, err) if url and merge else False
    return merge, message, pushed


def _remembered(repo: Repo, merge: Merge) -> Merge:
    """Record the merge's conflict copies at once: if a later step fails (the push), the next run lists them."""
    remember_conflicts(repo, merge.conflicts)
    return merge


def _clean_up(repo: Repo, started: float) -> list[str | None]:
    """What a killed run left: stale git locks, and temporary files (never committed); a note on each."""
    swept = clear_stale_temps(Path(repo.path), snapshot(repo, head_sha(repo)))
    return [_cleared_note(_clear_locks(Path(repo.controldir()), started)),
            f"removed {swept} temporary file(s) left by an interrupted write" if swept else None]


def _clear_locks(control: Path, started: float) -> list[str]:
    """The git locks a killed sync left: in the brain, and those its push left in a local remote."""
    return clear_stale_locks(control, started) + clear_after_dead_push(control)


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
    fileio.atomic_write(path, text + "\n".join(missing) + "\n")


def _author_bytes(author: str | None) -> bytes:
    """``author`` arg, else $PINKY_GIT_AUTHOR, else the pinky default; never global git config."""
    value = (author or os.environ.get(ENV_GIT_AUTHOR) or DEFAULT_AUTHOR).strip()
    if not _AUTHOR.fullmatch(value):
        raise InvalidInput(f"git author must look like 'Name <email>', got {value!r}")
    return value.encode()


@contextmanager
def _locked_as_sync_error() -> Iterator[None]:
    """A git lock that a live process holds, or an object missing, is one clear line, not a traceback."""
    from dulwich.file import FileLocked

    try:
        yield
    except FileLocked as exc:
        lock = os.fsdecode(exc.lockfilename)
        raise SyncError(f"{lock} is held by another git process; run sync again when it is done") from None
    except KeyError as exc:  # dulwich's missing object: a repository that changed under the run
        sha = exc.args[0] if exc.args else None
        if not (isinstance(sha, bytes) and _OBJECT_ID.fullmatch(sha)):
            raise
        raise SyncError(f"git object {sha.decode()} is missing (a repository changed during the sync); "
                        "run sync again") from exc


def _held_items(held: dict[str, list[str]]) -> list[dict[str, Any]]:
    """``{path, kinds, why}`` for each held-back file: why each kind counts as a credential."""
    from pinky.base.secret_words import explain

    return [{"path": path, "kinds": kinds, "why": explain(kinds)} for path, kinds in sorted(held.items())]


def _held_note(held: dict[str, list[str]]) -> str | None:
    if not held:
        return None
    items = [f"{path} ({', '.join(kinds)})" for path, kinds in sorted(held.items())]
    shown = "; ".join(items[:3]) + ("; ..." if len(items) > 3 else "")
    first = min(held)
    return (f"held back {len(held)} file(s) that look like they hold a credential (left as they are, not "
            f"committed, not pushed): {shown}; remove the secret, or push it as it is with "
            f"`pinky-brain sync --allow {first}`")


def _cleared_note(cleared: list[str]) -> str | None:
    if not cleared:
        return None
    shown = ", ".join(cleared[:3]) + (", ..." if len(cleared) > 3 else "")
    return f"removed {len(cleared)} stale git lock file(s) left by an interrupted sync: {shown}"


def _push_note(url: str | None, pushed: bool) -> str | None:
    """Say plainly why nothing left the machine."""
    if url is None:
        return "no remote configured: committed locally, nothing to push (use --remote URL)"
    return None if pushed else "remote already up to date"
