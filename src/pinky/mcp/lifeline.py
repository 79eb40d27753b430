"""The real MCP server dies with the front that started it, and acts on nothing once the front is gone.

Why: the client (Claude Code) starts `pinky-mcp`, the front (pinky.mcp.front), which relays to the real server in
a child process. A client that loses its server (kill -9) retries the saves it got no answer for; a child that
outlived the front went on reading the requests already queued in its input and wrote them (about 40 notes after
a kill), and the retries wrote them again.

How: the front starts the child with the read end of a pipe whose write end only the front holds, named by
PINKY_MCP_LIFELINE. The pipe never carries data: it reaches end-of-file when the front dies, however it dies. In
the child, a thread blocked on it ends the process at once, and every tool call checks it (a poll, microseconds)
under the runtime's lock, before it touches the brain: a request the front relayed but can no longer answer is not
carried out. On Linux the child also asks the kernel for SIGKILL when the front's thread that spawned it ends
(PR_SET_PDEATHSIG; the front spawns on its main thread, which lives as long as the front).

The front holds such a pipe too when the plugin's stand-in server (plugin/runtime/pinky_mcp_standin.py, which
serves a first session while the runtime is prepared) started it: without the parent's pid, as the stand-in
spawns from a thread that ends (PR_SET_PDEATHSIG would fire then).

Standard library only: the front imports this before anything else.
"""

from __future__ import annotations

import os
import sys

ENV = "PINKY_MCP_LIFELINE"  # "<fd of the pipe's read end>:<pid of the parent, for PR_SET_PDEATHSIG, or nothing>"
GONE_EXIT = 70  # the exit code of a child whose front died (nobody reads it; it shows in a trace)

_fd: int | None = None  # in the child: the pipe's read end
_keep: list[int] = []  # in the front: the write ends, never closed


def open_lifeline(env: dict[str, str]) -> int:
    """In the front: a pipe for the child, its entry added to `env`; returns the read end, which the child must
    inherit (pass_fds) and the front then closes. The write end stays open, unseen, for the front's life."""
    read_end, write_end = os.pipe()  # both close-on-exec: only pass_fds hands the read end to the child
    env[ENV] = f"{read_end}:{os.getpid()}"
    _keep.append(write_end)
    return read_end


def hold() -> bool:
    """In the child: when started by a front, die with it (see the module's docstring). False when not."""
    global _fd
    raw = os.environ.pop(ENV, "")  # not for the processes this one starts
    fd_text, _, pid_text = raw.partition(":")
    if not fd_text.isdigit() or int(fd_text) <= 2 or not _is_pipe(int(fd_text)):
        return False
    _fd = int(fd_text)
    if pid_text.isdigit():
        _kill_with_parent(int(pid_text))
    import threading

    threading.Thread(target=_watch, name="pinky-lifeline", daemon=True).start()
    if front_gone():
        _leave()
    return True


def _is_pipe(fd: int) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def front_gone() -> bool:
    """Whether the front that started this process has gone (False when there is none)."""
    if _fd is None:
        return False
    import select

    try:
        return bool(select.select([_fd], [], [], 0)[0])  # readable: end-of-file, as the front never writes
    except (OSError, ValueError):
        return True


def check() -> None:
    """Leave at once when the front has gone: what it relayed and could not answer must not be acted on."""
    if front_gone():
        _leave()


def _watch() -> None:
    assert _fd is not None
    try:
        while os.read(_fd, 1):
            pass
    except OSError:
        pass
    _leave()


def _leave() -> None:
    os.write(2, b"pinky-mcp: the process that started this one has gone; stopping\n")
    os._exit(GONE_EXIT)


def _kill_with_parent(front_pid: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != front_pid:  # it died before the request took effect
        _leave()
