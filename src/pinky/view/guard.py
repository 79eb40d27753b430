"""The view's gate: every request is checked before any handler sees it.

The server binds to 127.0.0.1 only, and a page on another site, or a DNS name rebound to 127.0.0.1,
must not read or change the brain through it. So every request needs a Host of this server itself
(`127.0.0.1:PORT` or `localhost:PORT`: a rebound name carries its own), an Origin, when the browser
sends one, of this server, and no cross-site fetch metadata; a request that changes anything (any
method but GET and HEAD) must also carry this run's token in the `X-Pinky-Token` header (a page of
another origin cannot set that header without a CORS preflight, which is never approved) and a JSON
body. The token reaches the page from the URL `pinky view` opens: `/?token=…` sets a SameSite=Strict,
HttpOnly cookie and redirects to `/`, and the page is served with the token only to a request that
carries that cookie. Every answer forbids framing, sniffing, referrers and scripts or styles from
anywhere but this server (a note's text can never run as a script, even if escaping failed).
"""

from __future__ import annotations

import hmac
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


class Guard:
    """ASGI middleware: Host, Origin, fetch metadata and token checks, and the security headers."""

    def __init__(self, app: ASGIApp, port: int, token: str) -> None:
        self.app = app
        self.token = token
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.cookie = f"pinky_view_{port}"

    def token_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.token.encode())

    def has_cookie(self, headers: dict[str, str]) -> bool:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and self.token_ok(morsel.value)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await _plain(send, 403, refusal)
            return
        if scope["method"] in SAFE_METHODS and scope["path"] == "/":
            given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
            if given is not None:
                await self._enter(send, given)
                return
        scope.setdefault("state", {})["with_token"] = self.has_cookie(headers)

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, secured)

    def refusal(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why this request is refused, or None."""
        if headers.get("host", "").lower() not in self.hosts:
            return "refused: this server answers only to its own address (Host)"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "refused: a request from another site (Origin)"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none") \
                and not (scope["method"] in SAFE_METHODS and headers.get("sec-fetch-mode") == "navigate"):
            return "refused: a request from another site (Sec-Fetch-Site)"
        if scope["method"] not in SAFE_METHODS:
            if not self.token_ok(headers.get(TOKEN_HEADER)):
                return "refused: a change needs this run's token (open the URL pinky-brain view printed)"
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                return "refused: a change is sent as JSON"
        return None

    async def _enter(self, send: Send, given: str) -> None:
        """`/?token=…`: the right token sets the cookie; either way the address bar loses the token."""
        headers = [(b"location", b"/"), *SECURITY_HEADERS]
        if self.token_ok(given):
            cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            headers.append((b"set-cookie", cookie.encode()))
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
