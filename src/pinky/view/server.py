"""Run the view: a socket on 127.0.0.1, uvicorn in the foreground, the browser opened on a one-time sign-in link
(through a page only the owner can read)."""

from __future__ import annotations

import html
import logging
import os
import shutil
import socket
import tempfile
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pinky.config import Config

HOST = "127.0.0.1"  # never another interface: the brain is private to this machine's user
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
    folder = Path(tempfile.mkdtemp(prefix="pinky-view-"))
    path = folder / "sign-in.html"
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
    from pinky.view.guard import LOGIN_PATH, Keys

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
            pages.append(sign_in_page(f"{base}{LOGIN_PATH}?code={keys.issue()}"))
            if webbrowser.open(pages[-1].as_uri()):
                notify("Ctrl-C stops the server.")
                return
            _remove(pages)
            announce("no browser opened: open this one-time sign-in link yourself")
        announce(f"{base}{LOGIN_PATH}?code={keys.issue()}")
        notify("It works once, within 10 minutes. Ctrl-C stops the server.")

    threading.Thread(target=ready, name="pinky-view-ready", daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stopped on Ctrl-C and raises it again once it is down: that is the way out
        pass
    finally:
        _remove(pages)
        runtime.stop()
        sock.close()


def _remove(pages: list[Path]) -> None:
    while pages:
        shutil.rmtree(pages.pop().parent, ignore_errors=True)
