"""`pinky view`'s gate, over real HTTP against the running `pinky view` process: no session, a foreign Origin, a
missing or wrong form key, another Host name (DNS rebinding), a cross-site fetch and a path leading out of the
roots change nothing on disk and read nothing; the owner's session from its own page does change the note."""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import write_note
from view_helpers import View, make_brain, redeem, running_view, sign_in, snapshot

_RNG = random.Random(24)
READS = ("/api/search?q=deploy+pushes", "/api/search?q=", "/api/note?slug=deploy-token", "/api/overview",
         "/api/graph?slug=deploy-token", "/api/timeline?slug=deploy-token", "/api/review", "/api/diary",
         "/api/past-sessions",
         "/raw/project/gotcha/deploy-token.md")
LEAK = "ghp_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(33)) + "a1Z"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[View, Path]]:
    project = tmp_path_factory.mktemp("view-security") / "proj"
    docs = make_brain(project)
    os.symlink(project / "secret.txt", docs / "leak.png")
    write_note(docs, "gotcha/deploy-token.md",  # written by hand (or pulled): save would have redacted it
               f"---\ntitle: 'Deploy pushes with {LEAK}'\ntype: gotcha\nsubject: 'the runner token {LEAK}'\n"
               f"links: [{{to: decision/use-pgbouncer, rel: relates_to}}]\n---\n\npush the release with {LEAK}\n")
    write_note(docs, "note/twice.md", "---\ntitle: Archived twice\n---\n\nThe second text.\n")
    write_note(docs, ".archive/note/twice.2026-01-02T030405Z.md",  # an older copy of it, archived before
               "---\ntitle: Archived twice\narchived_at: '2026-01-02T03:04:05+00:00'\narchive_reason: old\n---\n\n"
               "The first text.\n")
    write_note(docs, "diary/2026-11-21.md", f"# 2026-11-21\n\n- 09:00 [0ldsess1] deploy with {LEAK}, "
               "see [[deploy-token]]\n")
    with running_view(project, tmp_path_factory.mktemp("home")) as view:
        yield view, docs


@pytest.fixture(scope="module")
def owner(served) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The owner's header: the session secret (from the one-time link, used once here) as a bearer token."""
    return sign_in(served[0])


def request(view: View, method: str, path: str, *, body: object = None, headers: dict[str, str] | None = None,
            host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One raw request: the path is sent exactly as given (`..` included), the Host header as given."""
    conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host if host is not None else f"127.0.0.1:{view.port}")
    data = bytes(body) if isinstance(body, _Raw) else json.dumps(body).encode() if body is not None else b""
    sent = {**({"Content-Type": "application/json"} if body is not None else {}), **(headers or {})}
    for name, value in sent.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    out = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    conn.close()
    return out


def test_a_change_needs_the_session_header_and_its_own_origin(served, owner) -> None:  # type: ignore[no-untyped-def]
    view, docs = served
    before = snapshot(docs)
    own = f"http://127.0.0.1:{view.port}"
    secret = owner["Authorization"].removeprefix("Bearer ")
    attempts = [
        {},  # nothing
        {"Origin": own},
        {"Cookie": f"pinky_view_{view.port}={secret}", "Origin": own},  # the secret as a cookie: no cookie counts
        {"X-Pinky-Token": secret, "Origin": own},
        {"Authorization": secret},  # no scheme
        {"Authorization": f"Basic {secret}"},
        {"Authorization": owner["Authorization"] + "x"},  # a wrong session
        {**owner, "Origin": "http://evil.example"},
        {**owner, "Origin": f"http://127.0.0.1:{view.port + 1}"},  # another port of the same host
        {**owner, "Origin": "null"},
        {**owner, "Origin": own, "Sec-Fetch-Site": "cross-site"},
        {**owner, "Origin": own, "Sec-Fetch-Site": "same-site"},
    ]
    for headers in attempts:
        for path, body in (("/api/verify", {"slug": "old-cache-flag"}),
                           ("/api/archive", {"slug": "pool-timeout", "reason": "gone"}),
                           ("/api/merge", {"keep": "pool-timeout", "other": "use-pgbouncer"})):
            status, _, text = request(view, "POST", path, body=body, headers=headers)
            assert status in (401, 403), (headers, path, text)
    status, _, _ = request(view, "POST", "/api/verify", headers={**owner,
                           "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403  # a form post is never a change, even with the token
    assert snapshot(docs) == before


def test_another_host_name_is_refused_even_for_reading(served, owner) -> None:  # type: ignore[no-untyped-def]
    view, docs = served
    before = snapshot(docs)
    for host in (f"evil.example:{view.port}", "127.0.0.1", f"127.0.0.1.nip.io:{view.port}", ""):
        status, _, text = request(view, "GET", "/api/note?slug=pool-timeout", host=host, headers=owner)
        assert status == 403 and b"Host" in text and b"postgres" not in text, host
        status, _, _ = request(view, "POST", "/api/verify", body={"slug": "old-cache-flag"}, host=host,
                               headers=owner)
        assert status == 403
    status, _, text = request(view, "GET", "/api/note?slug=pool-timeout", host=f"localhost:{view.port}",
                              headers=owner)
    assert status == 200 and b"postgres" in text
    assert snapshot(docs) == before


def test_no_path_leads_out_of_the_roots(served, owner) -> None:  # type: ignore[no-untyped-def]
    view, _ = served
    for path in ("/raw/project/../../secret.txt", "/raw/project/%2e%2e/%2e%2e/secret.txt",
                 "/raw/project/..%2f..%2fsecret.txt", "/raw/project/leak.png", "/raw/project//etc/passwd",
                 "/raw/global/../../../../etc/passwd", "/raw/elsewhere/x.png", "/raw/project/.pinky/locks/x",
                 "/static/../../kb.py", "/static/%2e%2e/app.py", "/static/vendor/../../brain.py",
                 "/../../secret.txt"):
        status, _, text = request(view, "GET", path, headers=owner)
        assert status == 404, (path, status)
        assert b"outside the brain" not in text and b"import" not in text and b"root:" not in text, path
    status, headers, text = request(view, "GET", "/raw/project/gotcha/pool-timeout.md", headers=owner)
    assert status == 200 and headers["content-disposition"] == "attachment" and b"Pool timeout" in text


def test_the_sign_in_code_works_once_and_no_answer_sets_a_cookie(served, owner) -> None:  # type: ignore[no-untyped-def]
    """The code of the printed link is exchanged once (by `owner`): again, by anyone, it is refused; made-up,
    cut or misshapen codes never work, and no answer ever sets a cookie. The HTML shell is the same for anyone,
    with nothing of the brain and no secret in it."""
    view, _ = served  # `owner` used the printed link
    assert view.url == f"{view.base}/#sign-in={view.code}"
    status, text, cookie = redeem(view, view.code)
    assert status == 403 and cookie is None and "used already or has expired" in text
    for wrong in ("", "guess", view.code[:-1], view.code + "x", "é" + view.code, "\ud800"):
        status, text, cookie = redeem(view, wrong)
        assert status == 403 and cookie is None and "session" not in text, wrong
    for body in (b"{", b"[]", b'{"code": 5}', b"x" * 5000):
        status, headers, text = request(view, "POST", "/api/sign-in", headers={"Content-Type": "application/json"},
                                        body=_Raw(body))
        assert status == 403 and "set-cookie" not in headers and b"session" not in text, body[:20]
    secret = owner["Authorization"].removeprefix("Bearer ").encode()
    shells = [request(view, "GET", "/", headers=headers) for headers in ({}, owner)]
    for status, headers, page in shells:
        assert status == 200 and secret not in page and b"pool" not in page.lower() and "set-cookie" not in headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert shells[0][2] == shells[1][2]


class _Raw(bytes):
    """A request body sent as these bytes, not as JSON."""


def test_without_the_session_nothing_of_the_brain_is_read(served) -> None:  # type: ignore[no-untyped-def]
    """Reads need the owner too: the API and the raw files answer 401 with nothing of the brain, with the right
    Host and Origin and a guessed cookie or header; the page's shell, script and styles are public."""
    view, _ = served
    own = {"Origin": f"http://127.0.0.1:{view.port}", "Sec-Fetch-Site": "same-origin"}
    for path in (*READS, "/api/about", "/api/actions", "/api/contradictions", "/api/duplicates"):
        for headers in ({}, own, {**own, "Cookie": f"pinky_view_{view.port}=guess"},
                        {**own, "Authorization": "Bearer guess"}):
            status, _, text = request(view, "GET", path, headers=headers)
            assert status == 401, (path, headers, status)
            assert b"ool" not in text and b"documentation" not in text and b"deploy" not in text, (path, text)
    status, _, text = request(view, "GET", "/static/app.js")
    assert status == 200 and b"function" in text


def test_a_body_over_the_limit_is_refused_before_it_is_read(served, owner) -> None:  # type: ignore[no-untyped-def]
    """A Content-Length of 300 MB is refused at once with 413: the body is never sent, and a server that read
    it whole before its check would wait for it (and this socket time out)."""
    view, docs = served
    before = snapshot(docs)
    with socket.create_connection(("127.0.0.1", view.port), timeout=10) as sock:
        sock.sendall((f"POST /api/verify HTTP/1.1\r\nHost: 127.0.0.1:{view.port}\r\n"
                      f"Authorization: {owner['Authorization']}\r\n"
                      "Content-Type: application/json\r\nContent-Length: 300000000\r\n\r\n").encode())
        answer = b""
        while b"too large" not in answer and (part := sock.recv(4096)):
            answer += part
    assert answer.startswith(b"HTTP/1.1 413") and b"too large" in answer, answer[:200]
    assert snapshot(docs) == before


def test_a_lone_surrogate_in_a_body_is_a_clean_400(served, owner) -> None:  # type: ignore[no-untyped-def]
    view, docs = served
    before = snapshot(docs)
    for path, raw in (("/api/archive", b'{"slug": "pool-timeout", "reason": "gone \\udfff"}'),
                      ("/api/verify", b'{"slug": "old-cache-flag\\ud800"}'),
                      ("/api/archive", b'{"slug": "pool-timeout", "reason": "gone", "\\ud83d": 1}')):
        conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=10)
        conn.request("POST", path, body=raw, headers={**owner, "Content-Type": "application/json"})
        response = conn.getresponse()
        text = response.read()
        conn.close()
        assert response.status == 400 and b"Unicode" in text and b"Traceback" not in text, (raw, text)
    assert snapshot(docs) == before


def test_a_cross_site_read_of_the_api_is_refused(served, owner) -> None:  # type: ignore[no-untyped-def]
    view, _ = served
    status, _, text = request(view, "GET", "/api/search?q=pool", headers={**owner, "Sec-Fetch-Site": "cross-site",
                                                                         "Sec-Fetch-Mode": "no-cors"})
    assert status == 403 and b"pool" not in text
    status, _, _ = request(view, "GET", "/api/search?q=pool", headers={**owner, "Origin": "http://evil.example"})
    assert status == 403


def test_it_listens_on_127_0_0_1_only(served) -> None:  # type: ignore[no-untyped-def]
    view, _ = served
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", view.port), timeout=2).close()


def test_the_owners_session_from_its_own_page_changes_the_note(served, owner) -> None:  # type: ignore[no-untyped-def]
    """The control: the same request with the session, the form key and its own Origin does verify the entry,
    and undoes."""
    view, docs = served
    path = docs / "gotcha" / "old-cache-flag.md"
    original = path.read_bytes()
    own = {**owner, "Origin": f"http://127.0.0.1:{view.port}", "Sec-Fetch-Site": "same-origin"}
    status, _, text = request(view, "POST", "/api/verify", body={"slug": "old-cache-flag"}, headers=own)
    assert status == 200, text
    assert b"last_verified" in path.read_bytes()
    done = json.loads(text)["done"]
    status, _, text = request(view, "POST", "/api/undo", body={"id": done["id"]}, headers=own)
    assert status == 200, text
    assert b"last_verified" not in path.read_bytes()
    status, _, text = request(view, "POST", "/api/undo", body={"id": done["id"]}, headers=own)
    assert status == 400 and b"undone already" in text
    assert path.read_bytes() == original


def test_undoing_an_archive_brings_back_the_copy_it_made_beside_an_older_one(served, owner) -> None:  # type: ignore[no-untyped-def]
    """The archive keeps every copy of a note: the undo restores the one this archive made, and the older copy
    stays (a plain restore of the slug refuses to choose between them)."""
    view, docs = served
    path, older = docs / "note" / "twice.md", docs / ".archive" / "note" / "twice.2026-01-02T030405Z.md"
    original, kept = path.read_bytes(), older.read_bytes()
    own = {**owner, "Origin": f"http://127.0.0.1:{view.port}", "Sec-Fetch-Site": "same-origin"}
    status, _, text = request(view, "POST", "/api/archive", body={"slug": "twice", "reason": "gone"}, headers=own)
    assert status == 200 and not path.exists(), text
    status, _, text = request(view, "POST", "/api/undo", body={"id": json.loads(text)["done"]["id"]}, headers=own)
    assert status == 200, text
    assert path.read_bytes() == original
    assert [p.name for p in older.parent.iterdir()] == [older.name] and older.read_bytes() == kept


def test_every_answer_hides_a_credential_a_hand_written_note_holds(served, owner) -> None:  # type: ignore[no-untyped-def]
    """What the page shows is what the CLI and MCP show: the title, a frontmatter field, the body, a diary line
    and the file itself come with the token replaced by a [REDACTED:...] marker."""
    view, _ = served
    for path in READS:
        status, _, text = request(view, "GET", path, headers=owner)
        assert status == 200, (path, text[:200])
        assert LEAK.encode() not in text and LEAK[4:20].encode() not in text, path
    _, _, note = request(view, "GET", "/api/note?slug=deploy-token", headers=owner)
    assert json.loads(note)["meta"]["subject"].startswith("the runner token [REDACTED:")


def test_a_sign_in_code_works_once_and_not_after_it_expires() -> None:
    """The exchange itself (`pinky.view.guard.Keys`): a code is redeemed once, a made-up or expired one never,
    and each sign-in is told to the owner once."""
    from pinky.view.guard import Keys

    told: list[int] = []
    keys = Keys(on_sign_in=lambda: told.append(1))
    code = keys.issue()
    assert keys.redeem(code) and not keys.redeem(code) and not keys.redeem("guess") and not keys.redeem("")
    assert told == [1]
    expired = Keys(ttl=-1.0)
    assert not expired.redeem(expired.issue())
    assert keys.session != code and len(keys.session) >= 40
