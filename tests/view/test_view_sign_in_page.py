"""The sign-in page `pinky-brain view` opens the browser on (0600, in a 0700 temporary folder) holds a live
sign-in code: it must not outlive the server. A real `pinky view` process, a $BROWSER that only notes the page
it was given (so the page is never used), and a real signal: Ctrl-C (SIGINT), `kill` (SIGTERM) and a closed
terminal (SIGHUP) all remove it (SIGTERM left it in /tmp: uvicorn raised the signal again once it was down,
with Python's default handler, which ends the process before any cleanup). SIGKILL cannot be caught: the
next start removes such a page of this user's once its code has expired, and nothing else."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from view_helpers import make_brain, running_view, wait_for


def _browser(tmp_path: Path) -> tuple[Path, Path]:
    """A $BROWSER that writes the address it is given to a file and exits 0 (webbrowser.open: it opened)."""
    opened, script = tmp_path / "opened.txt", tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}.part && mv {opened}.part {opened}\n')
    script.chmod(0o755)
    return opened, script


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_the_sign_in_page_is_removed_when_the_server_is_stopped(tmp_path: Path, stop: signal.Signals) -> None:
    docs = make_brain(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    opened, browser = _browser(tmp_path)
    with running_view(docs.parent, tmp_path / "home", browser=str(browser), env_extra={"TMPDIR": str(temp)}) as view:
        assert wait_for(opened.exists, 30)
        page = Path(opened.read_text().removeprefix("file://"))
        assert page.parent.parent == temp and page.stat().st_mode & 0o777 == 0o600
        assert f"url=http://127.0.0.1:{view.port}/" in page.read_text()  # a live code: what must not stay behind
        view.process.send_signal(stop)
        code = view.process.wait(30)
        assert not page.exists() and list(temp.iterdir()) == []
        assert code == (0 if stop == signal.SIGINT else 128 + stop), view.process.stderr.read()  # type: ignore[union-attr]
        assert "Traceback" not in view.process.stderr.read()  # type: ignore[union-attr]


def test_a_page_left_by_a_killed_server_is_removed_by_the_next_start_once_its_code_expired(tmp_path: Path) -> None:
    docs = make_brain(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    opened, browser = _browser(tmp_path)
    with running_view(docs.parent, tmp_path / "home", browser=str(browser), env_extra={"TMPDIR": str(temp)}) as view:
        assert wait_for(opened.exists, 30)
        view.process.send_signal(signal.SIGKILL)
        view.process.wait(30)
    killed = Path(opened.read_text().removeprefix("file://")).parent
    assert killed.exists()  # SIGKILL: nothing can run
    young = temp / "pinky-view-young"  # another run's page, its code perhaps still live
    crowded = temp / "pinky-view-crowded"  # holds more than a sign-in page: not ours to judge
    theirs = temp / "pinky-view-theirs"  # another user's
    for folder in (young, crowded, theirs):
        folder.mkdir(mode=0o700)
        (folder / "sign-in.html").write_text("old")
    (crowded / "notes.txt").write_text("mine")
    linked = temp / "pinky-view-linked"
    linked.symlink_to(killed)
    if os.geteuid() == 0:
        shutil.chown(theirs, "nobody")
    an_hour_ago = time.time() - 3600
    for folder in (killed, crowded, theirs):
        os.utime(folder, (an_hour_ago, an_hour_ago))
    with running_view(docs.parent, tmp_path / "home", env_extra={"TMPDIR": str(temp)}):
        pass
    assert not killed.exists()
    assert young.exists() and crowded.exists() and linked.is_symlink()
    assert theirs.exists() or os.geteuid() != 0
