"""Run the view: a socket on 127.0.0.1, uvicorn in the foreground, the browser opened on the token URL."""

from __future__ import annotations

import logging
import secrets
import socket
import threading
import webbrowser
from collections.abc import Callable
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


def serve(config: Config, *, port: int = 0, open_browser: bool = True,
          announce: Callable[[str], None] = print) -> None:
    """Serve the view until Ctrl-C; `announce` gets the URL (with this run's token) once it listens."""
    import uvicorn

    from pinky.app.runtime import Runtime
    from pinky.view.app import create_app
    from pinky.view.brain import Brain

    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    url = f"http://{HOST}:{port}/?token={token}"
    runtime = Runtime(config, embed=True, warm_search=True)
    runtime.start()
    app = create_app(Brain(runtime, config), port, token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                           server_header=False, date_header=False))

    def ready() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.02)
        if server.started:
            announce(url)
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=ready, name="pinky-view-ready", daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stopped on Ctrl-C and raises it again once it is down: that is the way out
        pass
    finally:
        runtime.stop()
        sock.close()
