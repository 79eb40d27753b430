"""`--remote` and HTTPS: origin changes only once the new remote has answered, a password never
lands in the brain's git config, and a failure is one line on stderr."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from dulwich import client, porcelain
from dulwich.repo import Repo
from helpers import console_script

from pinky.errors import SyncError
from pinky.sync.run import sync


@pytest.fixture
def remote(tmp_path: Path) -> str:
    path = tmp_path / "remote.git"
    porcelain.init(str(path), bare=True).close()
    return str(path)


@pytest.fixture
def http_remote(tmp_path: Path) -> Iterator[str]:
    """A real smart-HTTP git server (dulwich.web) on localhost, serving one bare repository."""
    from dulwich.server import DictBackend
    from dulwich.web import make_wsgi_chain

    bare = porcelain.init(str(tmp_path / "served.git"), bare=True)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = make_server("127.0.0.1", 0, make_wsgi_chain(DictBackend({"/brain.git": bare})), handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/brain.git"
    server.shutdown()
    bare.close()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "git-credentials"
    monkeypatch.setattr(client, "DEFAULT_GIT_CREDENTIALS_PATHS", [str(path)])
    return path


def origin(brain: Path) -> str:
    with Repo(str(brain)) as repo:
        return repo.get_config().get((b"remote", b"origin"), b"url").decode()


def test_a_bad_remote_url_does_not_replace_origin(tmp_path: Path, remote: str) -> None:
    brain = tmp_path / "brain"
    brain.mkdir()
    (brain / "a.md").write_text("a\n")
    sync(brain, remote)
    with pytest.raises(SyncError, match="cannot fetch"):
        sync(brain, str(tmp_path / "typo.git"))
    assert origin(brain) == remote
    assert sync(brain).remote == remote  # the next plain run still syncs with the good one


def test_a_token_url_is_kept_out_of_the_git_config(tmp_path: Path, http_remote: str, store: Path) -> None:
    brain = tmp_path / "brain"
    brain.mkdir()
    (brain / "a.md").write_text("a\n")
    with_token = http_remote.replace("http://", "http://me:s3cr3t-t0ken@")
    report = sync(brain, with_token)
    assert report.pushed and report.remote == http_remote.replace("http://", "http://me@")
    assert "s3cr3t-t0ken" not in (brain / ".git" / "config").read_text()
    assert origin(brain) == http_remote.replace("http://", "http://me@")
    assert store.read_text() == f"http://me:s3cr3t-t0ken@{http_remote.split('/')[2]}\n"
    assert oct(store.stat().st_mode & 0o777) == "0o600"
    assert any(str(store) in note for note in report.notes)
    (brain / "b.md").write_text("b\n")
    assert sync(brain).pushed  # the password now comes from the store


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_http_failure_is_one_line_on_stderr(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "brain").mkdir(parents=True)
    (home / "brain" / "a.md").write_text("a\n")
    url = f"http://me:pw@127.0.0.1:{closed_port()}/brain.git"
    env = {**os.environ, "PINKY_HOME": str(home), "PINKY_HASH_EMBED": "1"}
    done = subprocess.run([*console_script("pinky"), "sync", "--remote", url], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Retrying" not in done.stderr and "pw@" not in done.stderr
    assert "cannot connect" in done.stderr and "Connection refused" in done.stderr
