"""The past sessions of a project that the agent hosts kept on this machine, found and matched to the project.

Claude Code keeps each session at `$CLAUDE_CONFIG_DIR/projects/<munged cwd>/<session id>.jsonl` (the config dir
defaults to ~/.claude; every event records its `cwd`), Codex CLI at `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`
(its first line, `session_meta`, records the `cwd` and the `git` remote), Gemini CLI at
`~/.gemini/tmp/<project>/chats/*.jsonl` (a header with the session id and the sha256 of the project folder, then a
first user message listing the workspace folders). Only the head of each file is read to tell whose it is.

A session belongs to the project when the folder it ran in lies inside the project and no nearer pinky project holds
it. A checkout that was moved or renamed is still matched where the host recorded enough to tell: a Codex session
whose folder no longer exists, with the project's git remote (`origin`) recorded. Claude Code records no remote,
and its sessions of a moved checkout are left alone. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pinky.base.locations import find_project_root
from pinky.capture.foreign import _workspace
from pinky.capture.transcript import Transcript
from pinky.errors import NotFound

__all__ = ["PastSession", "claude_folder", "find_sessions", "git_remote", "host_stores"]

HEAD_EVENTS = 64  # lines read to learn a session's folder: it is on the first few of every host's format
HOSTS = ("claude", "codex", "gemini")


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


def host_stores(home: str | None = None) -> dict[str, list[Path]]:
    """Each host's session files on this machine (`home`: the user's home folder, for tests)."""
    home = home or os.path.expanduser("~")
    claude = Path(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")) / "projects"
    codex = Path(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")) / "sessions"
    gemini = Path(home) / ".gemini" / "tmp"
    return {"claude": sorted(claude.glob("*/*.jsonl")), "codex": sorted(codex.glob("*/*/*/rollout-*.jsonl")),
            "gemini": sorted(gemini.glob("*/chats/*.jsonl"))}


def find_sessions(root: str, home: str | None = None) -> list[PastSession]:
    """The sessions of the project at `root` that the hosts kept on this machine, oldest file first per host."""
    munged = (claude_folder(os.path.abspath(root)), claude_folder(os.path.realpath(root)))  # as typed, or linked
    root = os.path.realpath(root)
    remote = git_remote(root)
    found = []
    stores = host_stores(home)
    for host, paths in stores.items():
        if host == "claude":
            elsewhere = _claude_elsewhere(paths, munged, root, remote)
            paths = [p for p in paths if p.parent.name.startswith(munged) or p.parent in elsewhere]
        for path in paths:
            session = read_head(host, path)
            if session is not None and belongs(session, root, remote):
                found.append(session)
    return found


def _claude_elsewhere(paths: list[Path], munged: tuple[str, ...], root: str, remote: str | None) -> set[Path]:
    """Claude Code's folders named after another path that still hold this project's sessions (a cwd reached
    through a symbolic link, a name Claude Code shortened): one session's head read per folder, as a folder is
    one cwd."""
    first: dict[Path, Path] = {}
    for path in paths:
        if not path.parent.name.startswith(munged):
            first.setdefault(path.parent, path)
    held = set()
    for folder, path in first.items():
        session = read_head("claude", path)
        if session is not None and belongs(session, root, remote):
            held.add(folder)
    return held


def claude_folder(cwd: str) -> str:
    """The folder name Claude Code gives a cwd's sessions: every character but a letter or digit becomes `-`."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


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


def read_head(host: str, path: Path) -> PastSession | None:
    """The session a file holds, from its first lines; None when it is unreadable or says nothing of its folder."""
    try:
        size = path.stat().st_size
        with Transcript(path) as transcript:
            events = []
            for _, _, item in _first(transcript.lines(0)):
                if isinstance(item, dict):
                    events.append(item)
                    if _enough(host, item):
                        break
    except (OSError, NotFound):
        return None
    if host == "claude":
        return _claude(path, size, events)
    if host == "codex":
        return _codex(path, size, events)
    return _gemini(path, size, events)


def _enough(host: str, event: dict) -> bool:
    """Whether this line tells all the head is read for: Codex's session_meta, Claude Code's first cwd."""
    if host == "codex":
        return event.get("type") == "session_meta"
    return host == "claude" and isinstance(event.get("cwd"), str) and not event.get("isSidechain")


def _first(lines: Iterator[tuple[int, int, dict | str]]) -> Iterator[tuple[int, int, dict | str]]:
    for count, line in enumerate(lines):
        if count >= HEAD_EVENTS:
            return
        yield line


def _claude(path: Path, size: int, events: list[dict]) -> PastSession | None:
    for event in events:
        if isinstance(event.get("cwd"), str) and not event.get("isSidechain"):
            sid = event.get("sessionId")
            return PastSession("claude", path, sid if isinstance(sid, str) and sid else path.stem, event["cwd"], size)
    return None


def _codex(path: Path, size: int, events: list[dict]) -> PastSession | None:
    meta = next((e["payload"] for e in events if e.get("type") == "session_meta" and isinstance(e.get("payload"),
                                                                                               dict)), None)
    if meta is None or not isinstance(meta.get("id") or meta.get("session_id"), str):
        return None
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    remote = git.get("repository_url") if isinstance(git.get("repository_url"), str) else None
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    return PastSession("codex", path, f"codex:{meta.get('id') or meta.get('session_id')}", cwd, size, remote=remote)


def _gemini(path: Path, size: int, events: list[dict]) -> PastSession | None:
    header = next((e for e in events if isinstance(e.get("sessionId"), str) and "type" not in e), None)
    if header is None:
        return None
    texts: list[object] = []
    for event in events:  # the context listing the workspace comes as a message, or inside a `$set` of them
        update = event.get("$set")
        listed = update.get("messages") if isinstance(update, dict) else None
        messages: list = listed if isinstance(listed, list) else [event]
        for message in messages:
            content = message.get("content") if isinstance(message, dict) and message.get("type") == "user" else None
            texts += [c.get("text") for c in content if isinstance(c, dict)] if isinstance(content, list) else [content]
    digest = header.get("projectHash") if isinstance(header.get("projectHash"), str) else None
    return PastSession("gemini", path, f"gemini:{header['sessionId']}", _workspace(texts), size, project_hash=digest)
