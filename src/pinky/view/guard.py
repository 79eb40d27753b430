"""The view's gate: every request is checked before any handler sees it.

The server binds to 127.0.0.1 only, but other users and processes of this machine reach 127.0.0.1 too, and a
page on another site, or a DNS name rebound to 127.0.0.1, must not read or change the brain through it. So
every request needs a Host of this server itself (`127.0.0.1:PORT` or `localhost:PORT`: a rebound name carries
its own), an Origin, when the browser sends one, of this server, and no cross-site fetch metadata; and every
request but the page's own static files needs proof of the owner: this run's session cookie. The owner gets it
from a one-time sign-in link (`/login?code=…`), opened in the browser or printed to the owner's terminal: the
server exchanges a code exactly once, within `CODE_TTL` seconds, for an HttpOnly, SameSite=Strict cookie and
redirects to the clean `/`; a used or expired code never works again (the browser is opened on a page only the
owner can read, never on the code, and the session secret itself is on no command line: `pinky.view.server`).
A request that changes anything (any method but GET and HEAD) must also carry this session's form key in the
`X-Pinky-Token` header (the page gets it in its HTML, which only the cookie's holder can load; a page of
another origin cannot set that header without a CORS preflight, which is never approved) and a JSON body.
Every answer forbids framing, sniffing, referrers and scripts or styles from anywhere but this server (a
note's text can never run as a script, even if escaping failed).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_HEADER = "x-pinky-token"
SAFE_METHODS = ("GET", "HEAD")
LOGIN_PATH = "/login"
OPEN_PREFIXES = ("/static/",)  # the page's own script, styles and vendored libraries: nothing of the brain
CODE_TTL = 600.0  # seconds a sign-in link works (once)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
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


class Keys:
    """This run's secrets: the session cookie's value, the form key for changes, and one-time sign-in codes."""

    def __init__(self, ttl: float = CODE_TTL, on_sign_in: Callable[[], None] | None = None) -> None:
        self.session = secrets.token_urlsafe(32)
        self.form = secrets.token_urlsafe(24)
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

    def form_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.form.encode())


class Guard:
    """ASGI middleware: Host, Origin, fetch metadata, session and form-key checks, and the security headers."""

    def __init__(self, app: ASGIApp, port: int, keys: Keys) -> None:
        self.app = app
        self.keys = keys
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.cookie = f"pinky_view_{port}"

    def signed_in(self, headers: dict[str, str]) -> bool:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no session
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and self.keys.session_ok(morsel.value)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await _plain(send, 403, refusal)
            return
        if scope["path"] == LOGIN_PATH and scope["method"] in SAFE_METHODS:
            await self._sign_in(send, parse_qs(scope.get("query_string", b"").decode("latin-1")).get("code", [""])[0])
            return
        if not scope["path"].startswith(OPEN_PREFIXES) and not self.signed_in(headers):
            await _plain(send, 401, SIGN_IN)
            return
        if scope["method"] not in SAFE_METHODS and not self.keys.form_ok(headers.get(TOKEN_HEADER)):
            await _plain(send, 403, "refused: a change needs the page's form key (reload the page)")
            return
        scope.setdefault("state", {})["form_key"] = self.keys.form

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, secured)

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
        """`/login?code=…`: a live code sets the session cookie and redirects to the clean `/`; any other is
        refused (and a code is spent by its first use, right or not for the one who used it)."""
        if not code or not self.keys.redeem(code):
            await _plain(send, 403, SPENT)
            return
        cookie = f"{self.cookie}={self.keys.session}; Path=/; HttpOnly; SameSite=Strict"
        headers = [(b"location", b"/"), (b"set-cookie", cookie.encode()), *SECURITY_HEADERS]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
