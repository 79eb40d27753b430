"""The view's gate: every request is checked before any handler sees it.

The server binds to 127.0.0.1 only, but other users and processes of this machine reach 127.0.0.1 too, and a
page on another site, or a DNS name rebound to 127.0.0.1, must not read or change the brain through it. So
every request needs a Host of this server itself (`127.0.0.1:PORT` or `localhost:PORT`: a rebound name carries
its own), an Origin, when the browser sends one, of this server, and no cross-site fetch metadata.

Proof of the owner is this run's session secret in the `Authorization: Bearer …` header of each request, and
nothing else: no cookie grants anything. A cookie cannot keep a secret from another user of the machine,
since browsers keep cookies apart by host, not by port, and count every port of 127.0.0.1 as one site: a page
that user serves on 127.0.0.1:OTHER, once the owner's browser goes there, receives every cookie of
127.0.0.1. A header is set by the page's own script alone, from its origin's storage (origin: scheme, host
and port), which a page of another port can neither read nor make the browser send (a cross-origin request
with it needs a CORS preflight, never approved here; a redirect to another origin drops it). So the HTML
shell and the page's own static files are public and carry nothing of the brain; every API read, raw file
and change needs the header.

The page gets the secret from a one-time sign-in link, `/#sign-in=CODE` (the code is in the fragment, which
the browser never sends): its script posts the code to `/api/sign-in` and keeps the secret it gets back in
the origin's localStorage (reload, a new tab and the back button keep working; the secret dies with this
run). The server exchanges a code exactly once, within `CODE_TTL` seconds; a used or expired code never works
again (the browser is opened on a page only the owner can read, never on the code, and the session secret is
on no command line: `pinky.view.server`). A request that changes anything (any method but GET and HEAD) also
needs a JSON body. Every answer forbids framing, sniffing, referrers and scripts or styles from anywhere but
this server (a note's text can never run as a script, even if escaping failed).
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = ("GET", "HEAD")
SIGN_IN_PATH = "/api/sign-in"
SIGN_IN_FRAGMENT = "#sign-in="  # the link: http://127.0.0.1:PORT/#sign-in=CODE
OPEN_PATHS = ("/",)  # the HTML shell: no data, no secret (the script signs in and fetches everything)
OPEN_PREFIXES = ("/static/",)  # the page's own script, styles and vendored libraries: nothing of the brain
CODE_TTL = 600.0  # seconds a sign-in link works (once)
MAX_SIGN_IN_BYTES = 1024
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
SIGN_IN = ("not signed in: open the one-time sign-in link pinky-brain view printed or opened "
           "(run pinky-brain view again for a new one)")
SPENT = "this sign-in link was used already or has expired: run pinky-brain view again for a new one"


def sign_in_link(base: str, code: str) -> str:
    return f"{base}/{SIGN_IN_FRAGMENT}{code}"


class Keys:
    """This run's secrets: the session secret, and one-time sign-in codes that hand it out."""

    def __init__(self, ttl: float = CODE_TTL, on_sign_in: Callable[[], None] | None = None) -> None:
        self.session = secrets.token_urlsafe(32)
        self.ttl = ttl
        self.on_sign_in = on_sign_in
        self._codes: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self) -> str:
        """A new sign-in code: it works once, within `ttl` seconds."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = time.monotonic() + self.ttl
        return code

    def redeem(self, code: str) -> bool:
        """True once for a code issued and not yet expired; the code is spent either way."""
        with self._lock:
            now = time.monotonic()
            for old in [c for c, until in self._codes.items() if until < now]:
                del self._codes[old]
            match = next((c for c in self._codes if hmac.compare_digest(c.encode(), code.encode())), None)
            if match is None:
                return False
            del self._codes[match]
        if self.on_sign_in is not None:
            self.on_sign_in()
        return True

    def session_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.session.encode())


class Guard:
    """ASGI middleware: Host, Origin, fetch metadata and session checks, the sign-in, the security headers."""

    def __init__(self, app: ASGIApp, port: int, keys: Keys) -> None:
        self.app = app
        self.keys = keys
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def signed_in(self, headers: dict[str, str]) -> bool:
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self.keys.session_ok(secret.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await _plain(send, 403, refusal)
            return
        if scope["path"] == SIGN_IN_PATH and scope["method"] == "POST":
            await self._sign_in(send, await _code(receive))
            return
        if not self.is_open(scope) and not self.signed_in(headers):
            await _plain(send, 401, SIGN_IN)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, secured)

    @staticmethod
    def is_open(scope: Scope) -> bool:
        """The shell and the static files, which carry nothing of the brain, read by anyone."""
        path = scope["path"]
        return scope["method"] in SAFE_METHODS and (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES))

    def refusal(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why this request is refused whoever sends it, or None."""
        if headers.get("host", "").lower() not in self.hosts:
            return "refused: this server answers only to its own address (Host)"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "refused: a request from another site (Origin)"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none") \
                and not (scope["method"] in SAFE_METHODS and headers.get("sec-fetch-mode") == "navigate"):
            return "refused: a request from another site (Sec-Fetch-Site)"
        if scope["method"] not in SAFE_METHODS \
                and headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "refused: a change is sent as JSON"
        return None

    async def _sign_in(self, send: Send, code: str) -> None:
        """`POST /api/sign-in {"code": …}`: a live code gets this run's session secret, for the page to keep
        and send; any other is refused (and a code is spent by its first use, right or not for its user)."""
        if not code or not self.keys.redeem(code):
            await _plain(send, 403, SPENT)
            return
        body = json.dumps({"session": self.keys.session}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                *SECURITY_HEADERS]})
        await send({"type": "http.response.body", "body": body})


async def _code(receive: Receive) -> str:
    """The sign-in code of a `{"code": …}` body of at most `MAX_SIGN_IN_BYTES`, or "" for any other body."""
    raw = b""
    while True:
        message = await receive()
        raw += message.get("body", b"")
        if len(raw) > MAX_SIGN_IN_BYTES or message["type"] != "http.request" or not message.get("more_body"):
            break
    try:
        code = json.loads(raw) if len(raw) <= MAX_SIGN_IN_BYTES else None
    except ValueError:
        return ""
    value = code.get("code") if isinstance(code, dict) else None
    return value if isinstance(value, str) and value.isascii() else ""  # a code is URL-safe ASCII


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
