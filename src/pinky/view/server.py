"""Run the view: a socket on 127.0.0.1, uvicorn in the foreground, the browser opened on a one-time sign-in link
(through a page only the owner can read).

That page holds a live sign-in code, so it lives no longer than it must: it is removed once the browser signed
in, once its code expired, and when the server stops, by Ctrl-C (SIGINT), SIGTERM (`kill`, a service manager),
SIGHUP (the terminal closed) or an error. Only SIGKILL or a power cut leave it behind: its code has expired by
the next start, which removes such pages left by this user.
"""

from __future__ import annotations

import html
import logging
import os
import shutil
import signal
import socket
import stat
import tempfile
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pinky.config import Config

HOST = "127.0.0.1"  # never another interface: the brain is private to this machine's user
PAGE_PREFIX = "pinky-view-"
PAGE_NAME = "sign-in.html"
log = logging.getLogger("pinky.view")


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` 0: a free one, chosen by the system)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def sign_in_page(link: str) -> Path:
    """A page only this user can read (0600, in a fresh 0700 folder) that sends the browser on to `link`: the
    browser is opened on this file, so its command line (/proc/<pid>/cmdline, readable by every user) names
    the file, never the one-time code."""
    folder = Path(tempfile.mkdtemp(prefix=PAGE_PREFIX))
    path = folder / PAGE_NAME
    target = html.escape(link, quote=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(f'<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url={target}">\n'
                  f'<title>pinky-brain view</title>\n<p><a href="{target}">Open pinky-brain view</a></p>\n')
    return path


def serve(config: Config, *, port: int = 0, open_browser: bool = True,
          announce: Callable[[str], None] = print, notify: Callable[[str], None] = print) -> None:
    """Serve the view until Ctrl-C. `announce` gets the line to show once it listens: the one-time sign-in
    link (`--no-open`, or when no browser opens), else the plain address; `notify` gets each sign-in."""
    import uvicorn

    from pinky.runtime.process import Runtime
    from pinky.view.app import create_app
    from pinky.view.brain import Brain
    from pinky.view.guard import CODE_TTL, Keys, sign_in_link

    remove_stale_pages(CODE_TTL)
    sock = bind(port)
    port = sock.getsockname()[1]
    base = f"http://{HOST}:{port}"
    pages: list[Path] = []  # the sign-in page the browser was opened on, removed once used

    def signed_in() -> None:
        _remove(pages)  # before saying so: whoever reads the line finds the page gone
        notify("pinky-brain view: a browser signed in with a one-time link (that link works no more)")

    keys = Keys(on_sign_in=signed_in)
    runtime = Runtime(config, embed=True, warm_search=True)
    runtime.start()
    app = create_app(Brain(runtime, config), port, keys)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                           server_header=False, date_header=False))

    def ready() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.02)
        if not server.started:
            return
        if open_browser:
            announce(f"{base}/ (opening your browser with a one-time sign-in link)")
            pages.append(sign_in_page(sign_in_link(base, keys.issue())))
            expiry = threading.Timer(CODE_TTL, _remove, (pages,))  # its code works no more: nor does the page
            expiry.daemon = True
            expiry.start()
            if webbrowser.open(pages[-1].as_uri()):
                notify("Ctrl-C stops the server.")
                return
            _remove(pages)
            announce("no browser opened: open this one-time sign-in link yourself")
        announce(sign_in_link(base, keys.issue()))
        notify("It works once, within 10 minutes. Ctrl-C stops the server.")

    threading.Thread(target=ready, name="pinky-view-ready", daemon=True).start()
    try:
        with _stops_cleanly(server):
            server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stopped on Ctrl-C and raises it again once it is down: that is the way out
        pass
    finally:
        _remove(pages)
        runtime.stop()
        sock.close()


class _Terminated(SystemExit):
    """SIGTERM or SIGHUP, raised once uvicorn is down: the process exits as one ended by that signal does
    (128 + its number), after its `finally` blocks ran."""


@contextmanager
def _stops_cleanly(server: Any) -> Iterator[None]:
    """SIGTERM and SIGHUP stop the server as Ctrl-C does. uvicorn stops on SIGTERM, then raises the signal
    again with the handler it found: Python's default one ends the process on the spot, before any cleanup
    (the sign-in page stayed in /tmp). Ours raises `_Terminated` instead. SIGHUP, which uvicorn leaves
    alone, asks it to stop. Signals can only be handled in the main thread: elsewhere, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    hung_up: list[int] = []

    def terminated(number: int, frame: Any) -> None:
        raise _Terminated(128 + number)

    def hang_up(number: int, frame: Any) -> None:
        hung_up.append(number)
        server.should_exit = True

    before = {number: signal.signal(number, handler)
              for number, handler in ((signal.SIGTERM, terminated), (signal.SIGHUP, hang_up))}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    if hung_up:
        raise _Terminated(128 + hung_up[0])


def remove_stale_pages(older_than: float) -> None:
    """Remove the sign-in pages this user's earlier runs left behind (killed with SIGKILL) once their code has
    expired: folders named like ours, owned by this user, holding the page alone, not changed for
    `older_than` seconds. Another user's folder, a link, anything else is left alone."""
    root = Path(tempfile.gettempdir())
    try:
        candidates = list(root.glob(f"{PAGE_PREFIX}*"))
    except OSError:
        return
    for folder in candidates:
        try:
            info = folder.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() \
                    or time.time() - info.st_mtime < older_than \
                    or [p.name for p in folder.iterdir()] not in ([], [PAGE_NAME]):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _remove(pages: list[Path]) -> None:
    """Remove the sign-in pages in `pages` (called from the sign-in, the expiry timer and the way out)."""
    while True:
        try:
            page = pages.pop()
        except IndexError:  # empty, or emptied meanwhile by another of the three
            return
        shutil.rmtree(page.parent, ignore_errors=True)
