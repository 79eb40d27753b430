"""`pinky view` against a real second user of the machine: `pinky-brain view` (run as root here) opens a real
headless Chromium through $BROWSER on its one-time sign-in link, and `nobody` (via `setpriv --reuid=nobody
--regid=nogroup --clear-groups`) then tries what any local user can: every API read and raw file with the right
Host, a change, and the sign-in link read from the browser's command line in /proc. All of it is refused:
the command line names a page only the owner could read (removed once used), never the code; a link
printed with `--no-open` works once; reads need the owner's session (the HTML shell, public, holds none)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from view_helpers import CHROMIUM, View, make_brain, running_view, wait_for

AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")

# What the other user runs: a plain interpreter, no pinky, only the port and the browser's pid known.
INTRUDER = r"""
import http.client, json, re, sys
port, pid = int(sys.argv[1]), sys.argv[2]
out = {"reads": {}, "writes": {}}
def ask(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{port}", **(headers or {})})
    answer = conn.getresponse()
    result = answer.status, answer.read().decode("utf-8", "replace"), answer.getheader("set-cookie")
    conn.close()
    return result
for path in ("/api/about", "/api/search?q=pool", "/api/search?q=", "/api/note?slug=pool-timeout",
             "/api/diary", "/api/review", "/api/overview", "/api/graph?slug=pool-timeout",
             "/api/timeline?slug=pool-timeout", "/raw/project/gotcha/pool-timeout.md"):
    status, text, _ = ask("GET", path, headers={"Origin": f"http://127.0.0.1:{port}"})
    out["reads"][path] = [status, text[:200]]
status, text, _ = ask("GET", "/")
out["shell"] = [status, text]
for token in ("", "Bearer guess"):
    status, text, _ = ask("POST", "/api/verify", body=json.dumps({"slug": "old-cache-flag"}),
                          headers={"Content-Type": "application/json", "Authorization": token,
                                   "Origin": f"http://127.0.0.1:{port}"})
    out["writes"][token or "none"] = [status, text[:200]]
try:
    cmdline = open(f"/proc/{pid}/cmdline", "rb").read().decode("utf-8", "replace")
except OSError as exc:
    cmdline = ""
    out["cmdline_error"] = str(exc)
links = re.findall(r"http://127\.0\.0\.1:\d+/#sign-in=[A-Za-z0-9_-]+", cmdline)
out["links"] = links
out["pages"] = {}
for page in re.findall(r"file://(/[^\x00]+)", cmdline):
    try:
        out["pages"][page] = open(page).read()
    except OSError as exc:
        out["pages"][page] = type(exc).__name__
out["with_link"] = []
for link in links:
    status, text, cookie = ask("POST", "/api/sign-in", body=json.dumps({"code": link.split("=", 1)[1]}),
                               headers={"Content-Type": "application/json"})
    out["with_link"].append([status, text[:200], cookie])
print(json.dumps(out))
"""


def _skip_unless_root_with_setpriv() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a command as another user (setpriv --reuid=nobody)")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is missing")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI", pytrace=False)
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[View, int, list[str]]]:
    """`pinky-brain view` opening a real headless Chromium on its sign-in link; the browser's pid; the server's
    stderr lines."""
    _skip_unless_root_with_setpriv()
    docs = make_brain(tmp_path / "proj")
    pidfile, profile = tmp_path / "browser.pid", tmp_path / "profile"
    browser = tmp_path / "browser.sh"  # $BROWSER: what webbrowser.open runs with the link as its argument
    browser.write_text(f"#!/bin/sh\n{CHROMIUM} --headless=new --no-sandbox --disable-gpu --no-first-run "
                       f"--disable-background-networking --disable-component-update --disable-sync "
                       f"--user-data-dir={profile} --remote-debugging-port=0 \"$1\" >/dev/null 2>&1 &\n"
                       f"echo $! > {pidfile}\n")
    browser.chmod(0o755)
    lines: list[str] = []
    with running_view(docs.parent, tmp_path / "home", browser=str(browser)) as view:
        assert view.code == ""  # opening a browser prints the address alone, not a link
        assert view.process.stderr is not None
        stderr = view.process.stderr
        threading.Thread(target=lambda: lines.extend(iter(stderr.readline, "")), daemon=True).start()
        assert wait_for(lambda: any("a browser signed in" in line for line in lines), 60), lines
        pid = int(pidfile.read_text())
        try:
            yield view, pid, lines
        finally:
            subprocess.run(["kill", str(pid)], check=False)


def test_another_user_reads_nothing_and_the_link_on_the_browsers_command_line_is_spent(
        opened: tuple[View, int, list[str]]) -> None:
    view, pid, _ = opened
    with open(f"/proc/{pid}/cmdline", "rb") as own:  # the browser was opened on the owner's sign-in page
        cmdline = own.read().decode()
    assert "sign-in=" not in cmdline and "file:///" in cmdline and "sign-in.html" in cmdline
    page = Path(cmdline.split("file://", 1)[1].split("\0")[0])
    assert not page.exists() and not page.parent.exists()  # removed once the browser signed in
    result = subprocess.run([*AS_NOBODY, "/usr/bin/python3", "-c", INTRUDER, str(view.port), str(pid)],
                            capture_output=True, text=True, timeout=120, cwd="/")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    for path, (status, text) in seen["reads"].items():
        assert status == 401, (path, status, text)
        assert "ool" not in text and "documentation" not in text and "/tmp" not in text, (path, text)
    for token, (status, text) in seen["writes"].items():
        assert status in (401, 403), (token, status, text)
    status, shell = seen["shell"]  # the page's shell is public: nothing of the brain, no secret
    assert status == 200 and "Pool" not in shell and "postgres" not in shell and "/tmp" not in shell
    assert seen["links"] == [] and seen["with_link"] == [], seen  # no code on the command line
    assert seen["pages"] and all(text in ("FileNotFoundError", "PermissionError") for text in seen["pages"].values())


def test_the_sign_in_page_is_the_owners_alone() -> None:
    from pinky.view.server import sign_in_page

    page = sign_in_page("http://127.0.0.1:1/#sign-in=abc&x=<y>")
    try:
        assert page.stat().st_mode & 0o777 == 0o600 and page.parent.stat().st_mode & 0o777 == 0o700
        text = page.read_text()
        assert 'content="0;url=http://127.0.0.1:1/#sign-in=abc&amp;x=&lt;y&gt;"' in text
    finally:
        shutil.rmtree(page.parent)


def test_a_printed_link_works_once_whoever_uses_it(tmp_path: Path) -> None:
    """With --no-open the link is printed to the owner's terminal; should it leak, it works once only: the
    second use, by anyone, is refused (and the owner, refused, knows to start again)."""
    _skip_unless_root_with_setpriv()
    docs = make_brain(tmp_path / "proj")
    with running_view(docs.parent, tmp_path / "home") as view:
        first = subprocess.run([*AS_NOBODY, "/usr/bin/python3", "-c", USE_LINK, view.url], capture_output=True,
                               text=True, timeout=60, cwd="/")
        again = subprocess.run([*AS_NOBODY, "/usr/bin/python3", "-c", USE_LINK, view.url], capture_output=True,
                               text=True, timeout=60, cwd="/")
    assert first.stdout.startswith("200 session") and again.stdout.startswith("403"), (first.stdout, again.stdout)


USE_LINK = r"""
import json, sys, urllib.error, urllib.request
base, code = sys.argv[1].split("/#sign-in=")
ask = urllib.request.Request(base + "/api/sign-in", data=json.dumps({"code": code}).encode(),
                             headers={"Content-Type": "application/json"})
try:
    answer = urllib.request.urlopen(ask)
    print(answer.status, *json.loads(answer.read()))
except urllib.error.HTTPError as exc:
    print(exc.code)
"""
