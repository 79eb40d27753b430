"""The past sessions of a project that the agent hosts kept on this machine, found and matched to the project.

Where each host keeps its sessions and how the head of one tells its folder is the host's own (`Host.session_files`,
`head_done`, `read_past`, in its module under pinky.hosts); the hosts are passed in, as this layer is below them.
Only the head of each file is read to tell whose it is.

A session belongs to the project when the folder it ran in lies inside the project and no nearer pinky project holds
it. A checkout that was moved or renamed is still matched where the host recorded enough to tell: a Codex session
whose folder no longer exists, with the project's git remote (`origin`) recorded. Claude Code records no remote,
and its sessions of a moved checkout are left alone. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pinky.base.locations import find_project_root
from pinky.capture.transcript import Transcript
from pinky.errors import NotFound

__all__ = ["PastSession", "SessionSource", "belongs", "find_sessions", "git_remote", "read_head"]

HEAD_EVENTS = 64  # lines read to learn a session's folder: it is on the first few of every host's format


class SessionSource(Protocol):
    """What a host (pinky.hosts.host.Host) offers an import: its session files and how their head reads."""

    name: str
    display: str

    def head_done(self, event: dict) -> bool: ...

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any: ...

    def past_sessions(self, root: str, remote: str | None, home: str, state: str | None = None) -> list[Any]: ...

    def translator(self, cwd: str | None = None) -> Any: ...


@dataclass(frozen=True)
class PastSession:
    """One session file: its host, where it is, the id the host's Stop hook gives pinky (`codex:<id>` for the
    hosts other than Claude Code), the folder it ran in, and its size in bytes."""

    host: str
    path: Path
    session_id: str
    cwd: str | None
    size: int
    remote: str | None = None  # the git remote the host recorded (Codex)
    project_hash: str | None = None  # Gemini's sha256 of the project folder
    display: str = ""  # how the host is named to the user
    source: Any = field(default=None, compare=False, repr=False)  # the host that read it (its translator)


def find_sessions(root: str, hosts: Sequence[SessionSource], home: str | None = None,
                  state: str | None = None) -> list[PastSession]:
    """The sessions of the project at `root` that `hosts` kept on this machine, oldest file first per host
    (`state`: pinky's state folder, where a session kept in a host's database is written out as a file)."""
    home = home or os.path.expanduser("~")
    remote = git_remote(os.path.realpath(root))
    return [session for host in hosts for session in host.past_sessions(root, remote, home, state)]


def belongs(session: PastSession, root: str, remote: str | None) -> bool:
    """Whether the session ran in the project at `root` (a real path) or in a moved checkout of it."""
    if session.project_hash and session.project_hash == hashlib.sha256(root.encode()).hexdigest():
        return True
    if not session.cwd:
        return False
    cwd = os.path.realpath(session.cwd) if os.path.exists(session.cwd) else os.path.normpath(session.cwd)
    if cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep):
        nearest = find_project_root(cwd) if os.path.isdir(cwd) else None
        return nearest is None or os.path.realpath(nearest) == root
    moved = not os.path.exists(session.cwd)
    return bool(moved and remote and session.remote and _same_remote(session.remote, remote))


def _same_remote(a: str, b: str) -> bool:
    def plain(url: str) -> str:
        url = url.strip().rstrip("/").removesuffix(".git")
        return url.split("://", 1)[-1].split("@", 1)[-1].replace(":", "/").lower()
    return plain(a) == plain(b)


def git_remote(root: str) -> str | None:
    """The project's `origin` URL, None without git or a remote."""
    try:
        done = subprocess.run(["git", "-C", root, "remote", "get-url", "origin"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def read_head(host: SessionSource, path: Path) -> PastSession | None:
    """The session a file holds, from its first lines; None when it is unreadable or says nothing of its folder."""
    try:
        size = path.stat().st_size
        with Transcript(path) as transcript:
            events = []
            for _, _, item in _first(transcript.lines(0)):
                if isinstance(item, dict):
                    events.append(item)
                    if host.head_done(item):
                        break
    except (OSError, NotFound):
        return None
    session = host.read_past(path, size, events)
    return session if isinstance(session, PastSession) else None


def _first(lines: Iterator[tuple[int, int, dict | str]]) -> Iterator[tuple[int, int, dict | str]]:
    for count, line in enumerate(lines):
        if count >= HEAD_EVENTS:
            return
        yield line
