"""`pinky view` for the tests: a small brain on disk, the real `pinky view` process serving it, its files."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers import console_script, write_note

HOSTILE_TITLE = "<script>window.__pwned=1</script> Hostile <img src=x onerror=\"window.__pwned=2\">"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def make_brain(project: Path) -> Path:
    """A project with linked notes, a stale entry, a hostile note and a diary day; returns its documentation/."""
    docs = project / "documentation"
    project.mkdir(parents=True, exist_ok=True)
    (project / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
    write_note(docs, "gotcha/pool-timeout.md",
               "---\ntitle: Pool timeout on shutdown\ntype: gotcha\ntags: [postgres, pool]\ncreated: '2026-01-05'\n"
               "last_verified: '2099-01-01'\nfiles: [src/db/pool.py]\n"
               "links: [{to: decision/use-pgbouncer, rel: depends_on, since: '2026-01-10'}]\n---\n\n"
               "# Pool timeout\n\nThe postgres **pool** hangs on shutdown; call `pool.close(timeout=5)`.\n\n"
               "See [[use-pgbouncer]].\n")
    write_note(docs, "decision/use-pgbouncer.md",
               "---\ntitle: Use PgBouncer in front of postgres\ntype: decision\ncreated: '2026-01-10'\n"
               "last_verified: '2099-01-01'\n---\n\nWe put PgBouncer between the app and postgres.\n")
    write_note(docs, "gotcha/old-cache-flag.md",
               "---\ntitle: The cache flag is read once\ntype: gotcha\ncreated: '2020-01-02'\n---\n\n"
               "The cache flag is read at start; restart to change it.\n")
    write_note(docs, "note/hostile.md",
               f"---\ntitle: '{HOSTILE_TITLE}'\ntags: ['<b>bold</b>']\nlast_verified: '2099-01-01'\n---\n\n"
               "<script>window.__pwned = 3</script>\n\n<img src=x onerror=\"window.__pwned=4\">\n\n"
               "[click me](javascript:window.__pwned=5)\n")
    write_note(docs, "note/old-links.md",  # a link written in Latin-1 %-escapes: not valid UTF-8 to decode
               "---\ntitle: Old links\nlast_verified: '2099-01-01'\n---\n\nSee [old page](caf%E9.md) and "
               "![old picture](caf%E9.png), then [[pool-timeout]].\n")
    write_note(docs, "diary/weekly/2026-W47.md", "# Week 2026-W47\n\n- asked about the pool: [[pool-timeout]]\n")
    write_note(docs, "diary/2026-11-20.md",
               "# 2026-11-20\n\n- 10:02 [abc12345] asked: why does the pool hang? see [[pool-timeout]]\n")
    (project / "src" / "db").mkdir(parents=True)
    (project / "src" / "db" / "pool.py").write_text("pool.close(timeout=5)  # Brain: gotcha/pool-timeout\n")
    (project / "secret.txt").write_text("outside the brain\n")
    return docs


def view_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env.update(PINKY_HOME=str(home), PINKY_HASH_EMBED="1", PINKY_QUALITY="off")
    return env


@dataclass
class View:
    url: str  # the one-time sign-in link it printed (http://127.0.0.1:PORT/#sign-in=CODE)
    base: str  # http://127.0.0.1:PORT
    port: int
    code: str  # "" when it opened a browser instead of printing the link
    process: subprocess.Popen[str]


def redeem(view: View, code: str) -> tuple[int, str, str | None]:
    """What the page's script does with a sign-in link's code: POST it to /api/sign-in. The status, the body
    and any Set-Cookie header of the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=10)
    conn.request("POST", "/api/sign-in", body=json.dumps({"code": code}),
                 headers={"Content-Type": "application/json", "Origin": view.base})
    response = conn.getresponse()
    result = response.status, response.read().decode(), response.getheader("set-cookie")
    conn.close()
    return result


def sign_in(view: View, code: str | None = None) -> dict[str, str]:
    """Use the sign-in code (once) as the page does: the header the owner's page sends afterwards."""
    status, body, cookie = redeem(view, code if code is not None else view.code)
    assert status == 200 and cookie is None, (status, body, cookie)
    return {"Authorization": "Bearer " + json.loads(body)["session"]}


@contextmanager
def running_view(project: Path, home: Path, *, browser: str | None = None,
                 env_extra: dict[str, str] | None = None) -> Iterator[View]:
    """`pinky reindex`, then `pinky view --no-open` in `project` (or, given `browser`, `pinky view` opening that
    command as $BROWSER), with `env_extra` in its environment; stopped with Ctrl-C (SIGINT) at the end."""
    env = {**view_env(home), **(env_extra or {})}
    subprocess.run([*console_script("pinky"), "reindex"], cwd=project, env=env, check=True, capture_output=True)
    if browser is not None:
        env["BROWSER"] = browser
    process = subprocess.Popen([*console_script("pinky"), "view", *(() if browser else ("--no-open",))],
                               cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:(\d+))/\S*", line)
        assert found, f"no URL printed: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        code = re.search(r"(?:sign-in|code)=(\S+)", found.group(0))
        yield View(found.group(0), found.group(1), int(found.group(2)), code.group(1) if code else "", process)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (the archive included, the lock files not) and its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".pinky" not in p.parts}


def wait_for(check, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)
