"""A brain that opens anywhere: a read-only checkout (a mounted volume, a package store, a repository
the user may not write) is searched, listed, checked and served by the MCP server; its index lives in
the user's cache folder, or its existing brain.db is read in place; saves and `init` fail naming the folder.

How the tests make a folder read-only for real: `chmod -R a-w`, and the pinky process runs without
the powers that let root ignore permissions. The tests often run as root (containers, CI), and root
writes into a mode-555 folder as if it were open. So as root each command runs under
`setpriv --bounding-set=-dac_override,-dac_read_search,-fowner --inh-caps=-all`: still uid 0 (the
files, HOME and the temporary folders stay its own), but without CAP_DAC_OVERRIDE the kernel applies the
mode bits to it like to anyone, and `os.access` answers the same way. As another user, chmod alone
does it. Without setpriv (and as root) the tests are skipped: nothing else here can take that power away.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import base, hook_env
from mcp_helpers import RawServer

DROP_ROOT_POWERS = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all", "--")
NOTE = "The connection pool times out after 30 seconds when the worker shuts down."


def unprivileged() -> tuple[str, ...]:
    """The prefix that makes a command obey file modes (empty when it already does)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a folder cannot be made read-only for pinky")
    probe = subprocess.run([*DROP_ROOT_POWERS, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop root's file powers here: {probe.stderr.decode(errors='replace')}")
    return DROP_ROOT_POWERS


def pinky(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """The real `pinky` CLI, obeying file modes like any user."""
    full_env = {**os.environ, **env}
    return subprocess.run([*unprivileged(), *console_script("pinky"), *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd, env=full_env, timeout=120)


def make_read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)


def make_writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("PINKY_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def checkout(tmp_path: Path, cache: Path) -> Iterator[Path]:
    """An initialised project with one note, indexed (brain.db), then made read-only."""
    root = tmp_path / "demo-project"
    root.mkdir()
    subprocess.run([*console_script("pinky"), "init"], cwd=root, check=True, capture_output=True)
    subprocess.run([*console_script("pinky"), "save", "-t", "Pool timeout on shutdown", "--type", "gotcha"],
                   input=NOTE, text=True, cwd=root, check=True, capture_output=True)
    assert (root / "brain.db").is_file()
    make_read_only(root)
    yield root
    make_writable(root)


def cached_index(cache: Path, root: Path) -> Path:
    found = list((cache / "indexes").glob(f"{root.name}-*/brain.db"))
    assert len(found) == 1, found
    assert re.fullmatch(rf"{re.escape(root.name)}-[0-9a-f]{{12}}", found[0].parent.name)
    return found[0]


def test_the_read_only_folder_really_refuses_writes(checkout: Path) -> None:
    """The simulation itself: a command run as the tests run pinky cannot create a file there."""
    made = subprocess.run([*unprivileged(), "touch", str(checkout / "probe")], capture_output=True)
    assert made.returncode != 0
    assert not (checkout / "probe").exists()


def test_search_and_list_read_the_existing_index_in_place(checkout: Path, cache: Path) -> None:
    """A WAL index with no -shm beside it, in a folder where SQLite cannot make one: `mode=ro` alone fails
    ("attempt to write a readonly database"), so it is read as immutable."""
    assert not (checkout / "brain.db-shm").exists() and not (checkout / "brain.db-wal").exists()
    found = pinky("search", "pool timeout", cwd=checkout)
    assert found.returncode == 0, found.stderr
    assert "gotcha/pool-timeout-on-shutdown" in found.stdout
    notes = [line for line in found.stderr.splitlines() if line.strip()]
    assert len(notes) == 1, found.stderr
    assert str(checkout / "brain.db") in notes[0] and "read-only" in notes[0] and str(cache) in notes[0]
    listed = pinky("list", cwd=checkout)
    assert listed.returncode == 0, listed.stderr
    assert "gotcha/pool-timeout-on-shutdown" in listed.stdout
    got = pinky("get", "pool-timeout-on-shutdown", cwd=checkout)
    assert got.returncode == 0 and "30 seconds" in got.stdout, got.stderr
    assert not (cache / "indexes").exists() or not list((cache / "indexes").rglob("brain.db")), \
        "reading needs no copy of the index"


def test_a_project_without_an_index_gets_one_in_the_user_cache(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "shipped-docs"
    (root / "documentation" / "gotcha").mkdir(parents=True)
    (root / "pinky.toml").write_text("# a pinky project\n")
    (root / "documentation" / "gotcha" / "pool.md").write_text(f"---\ntitle: Pool timeout\n---\n{NOTE}\n")
    make_read_only(root)
    try:
        found = pinky("search", "pool timeout", cwd=root)
        assert found.returncode == 0, found.stderr
        assert "gotcha/pool" in found.stdout
        index = cached_index(cache, root)
        assert f"{root} cannot hold the index (read-only): it is kept in {index}" in found.stderr
        assert not (root / "brain.db").exists()
        again = pinky("search", "worker shuts down", cwd=root)
        assert again.returncode == 0 and "gotcha/pool" in again.stdout, again.stderr
    finally:
        make_writable(root)


def test_the_default_cache_folder_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PINKY_CACHE_DIR the index goes to platformdirs' user cache folder (XDG_CACHE_HOME on Linux)."""
    monkeypatch.delenv("PINKY_CACHE_DIR", raising=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_CACHE_HOME names the user cache folder on Linux only")
    root = tmp_path / "docs"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("")
    (root / "documentation" / "pool.md").write_text(f"# Pool timeout\n{NOTE}\n")
    make_read_only(root)
    try:
        found = pinky("search", "pool", cwd=root, XDG_CACHE_HOME=str(tmp_path / "xdg"))
        assert found.returncode == 0 and "pool" in found.stdout, found.stderr
        cached_index(tmp_path / "xdg" / "pinky-brain", root)
    finally:
        make_writable(root)


def test_a_save_into_the_project_names_the_folder_and_offers_the_global_brain(checkout: Path, cache: Path) -> None:
    refused = pinky("save", "-t", "Another gotcha", cwd=checkout, stdin="text")
    assert refused.returncode == 1
    error = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
    assert error == [f"Error: cannot write into {checkout / 'documentation'}: permission denied (a read-only "
                     "checkout or mount?); save into the global brain instead (--scope global)"], refused.stderr
    assert "Traceback" not in refused.stderr
    saved = pinky("save", "-t", "Pool sizing rule", "--scope", "global", cwd=checkout,
                  stdin="Size the pool to twice the worker count.")
    assert saved.returncode == 0, saved.stderr
    assert "global/note/pool-sizing-rule" in saved.stdout
    index = cached_index(cache, checkout)  # the first change copied the read-only index
    both = pinky("search", "pool", cwd=checkout)
    assert both.returncode == 0, both.stderr
    assert "global/note/pool-sizing-rule" in both.stdout and "gotcha/pool-timeout-on-shutdown" in both.stdout
    assert f"it is kept in {index}" in both.stderr
    assert "no vector yet" not in both.stderr


def test_reindex_of_a_read_only_project_builds_the_copy(checkout: Path, cache: Path) -> None:
    brain = Path(os.environ["PINKY_HOME"]) / "brain"
    brain.mkdir(parents=True, exist_ok=True)
    (brain / "sizing.md").write_text("# Pool sizing\n\nTwice the worker count.\n")
    done = pinky("reindex", cwd=checkout)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 added"), done.stdout  # the copy caught up with the global brain
    cached_index(cache, checkout)
    full = pinky("reindex", "--full", cwd=checkout)
    assert full.returncode == 0, full.stderr
    found = pinky("search", "pool", cwd=checkout)
    assert "gotcha/pool-timeout-on-shutdown" in found.stdout, found.stderr


def test_an_index_file_that_is_read_only_in_a_writable_folder(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run([*console_script("pinky"), "init"], cwd=root, check=True, capture_output=True)
    subprocess.run([*console_script("pinky"), "save", "-t", "Pool timeout"], input=NOTE, text=True, cwd=root,
                   check=True, capture_output=True)
    (root / "brain.db").chmod(0o444)
    found = pinky("search", "pool", cwd=root)
    assert found.returncode == 0 and "pool-timeout" in found.stdout, found.stderr
    saved = pinky("save", "-t", "Second note", cwd=root, stdin="the folder itself is writable")
    assert saved.returncode == 0, saved.stderr
    assert (root / "documentation" / "note" / "second-note.md").is_file()
    assert "second-note" in pinky("search", "writable folder", cwd=root).stdout


def test_init_in_a_read_only_folder_names_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mounted"
    folder.mkdir()
    make_read_only(folder)
    try:
        for args, named in ((("init",), folder), (("init", "sub"), folder)):
            refused = pinky(*args, cwd=folder)
            assert refused.returncode == 1
            assert refused.stderr.startswith(f"Error: cannot write into {named}: permission denied;"), refused.stderr
            assert ".tmp" not in refused.stderr and "Traceback" not in refused.stderr
    finally:
        make_writable(folder)


def test_doctor_in_a_read_only_project_passes_and_says_where_the_index_is(checkout: Path, cache: Path) -> None:
    checked = pinky("doctor", cwd=checkout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "FAIL" not in checked.stdout
    project = [line for line in checked.stdout.splitlines() if line.startswith("ok    project:")]
    assert len(project) == 1 and "read-only" in project[0] and str(cache) in project[0], checked.stdout


def test_doctor_says_once_that_the_index_cannot_be_opened(tmp_path: Path, checkout: Path) -> None:
    """An index named where nobody may write: one FAIL line with the fix, not one per check."""
    closed = tmp_path / "closed"
    closed.mkdir()
    make_read_only(closed)
    try:
        checked = pinky("doctor", cwd=checkout, PINKY_DB=str(closed / "brain.db"))
        assert checked.returncode == 1
        fails = [line for line in checked.stdout.splitlines() if line.startswith("FAIL")]
        assert len(fails) == 1 and fails[0].startswith(f"FAIL  index: cannot open the index {closed / 'brain.db'}")
        assert f"({closed} cannot be written by this user)" in fails[0]
        assert "fix: make" in checked.stdout
    finally:
        make_writable(closed)


def test_the_mcp_server_serves_a_read_only_project(tmp_path: Path, checkout: Path, cache: Path) -> None:
    env = {"PINKY_DB": "", "PINKY_SAVE_DIR": "", "CLAUDE_PROJECT_DIR": str(checkout), "PINKY_CACHE_DIR": str(cache),
           "PINKY_HOME": os.environ["PINKY_HOME"]}
    with RawServer(tmp_path, prefix=unprivileged(), **env) as server:
        server.initialize()
        found = server.call("brain_search", query="pool timeout")
        assert not found.get("isError"), found
        assert "gotcha/pool-timeout-on-shutdown" in found["content"][0]["text"]
        refused = server.call("brain_save", title="Another gotcha", body="text", type="gotcha")
        assert refused.get("isError"), refused
        assert f"cannot write into {checkout / 'documentation'}" in refused["content"][0]["text"]
        assert "--scope global" in refused["content"][0]["text"]
        saved = server.call("brain_save", title="Pool sizing rule", body="Twice the worker count.", scope="global")
        assert not saved.get("isError"), saved
        stats = server.call("brain_stats")
        assert not stats.get("isError"), stats
        note = stats["structuredContent"]["index_note"]
        assert note and "read-only" in note and str(cache) in note
        assert note in stats["content"][0]["text"]
        both = server.call("brain_search", query="pool")
        assert "global/note/pool-sizing-rule" in both["content"][0]["text"]
        assert "gotcha/pool-timeout-on-shutdown" in both["content"][0]["text"]
        assert "read-only" in server.stderr()
    assert "Traceback" not in server.stderr()


def test_the_prompt_hook_recalls_from_the_read_only_index(checkout: Path) -> None:
    payload = base(checkout, "UserPromptSubmit", prompt="why does the connection pool time out on shutdown?")
    result = subprocess.run([*unprivileged(), *console_script("pinky-hooks"), "user-prompt"], input=json.dumps(payload),
                            capture_output=True, text=True, cwd=checkout, env=hook_env(checkout), timeout=30)
    assert result.returncode == 0, result.stderr
    assert "pool-timeout-on-shutdown" in result.stdout, result.stdout + result.stderr


def test_a_read_only_index_its_owner_is_writing_is_read_with_the_owners_wal(checkout: Path) -> None:
    """The owner (another user, here this process with its powers) holds the index open in WAL mode with a
    commit still in the -wal: `mode=ro` reads through the owner's -shm and sees that commit."""
    make_writable(checkout)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(checkout / 'brain.db')!r}, isolation_level=None)\n"
        "c.execute('PRAGMA wal_autocheckpoint=0')\n"
        "c.execute(\"UPDATE entry SET title = 'Pool timeout, edited by its owner'\")\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        assert (checkout / "brain.db-wal").stat().st_size > 0 and (checkout / "brain.db-shm").exists()
        make_read_only(checkout)
        found = pinky("search", "pool timeout", cwd=checkout)
        assert found.returncode == 0, found.stderr
        assert "Pool timeout, edited by its owner" in found.stdout
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
