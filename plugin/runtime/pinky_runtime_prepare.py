"""Preparing the runtime: a venv in <data>/runtime/<key>, made with the standard tools (python -m venv, then pip
install of the package source the plugin ships in package/), so pip's own configuration applies: PIP_INDEX_URL,
PIP_FIND_LINKS, PIP_NO_INDEX, pip.conf.

It is built under a file lock, so hooks and the MCP server starting together prepare once; hooks and the server
start it as a detached process (it outlives a short session). A failure is recorded and not retried by them for
RETRY_AFTER_FAILURE seconds; the ready marker records how long preparing took, for the stand-in server's
estimate. A new runtime prunes all but KEEP_OLD older ones.

The standard library is imported inside the functions that use it: the launcher imports this module with the
pycache prefix pointing at its own bytecode cache (see launch.py), and stdlib modules imported at module level
would be compiled into that cache too.
"""

import os
import sys

from pinky_runtime_lookup import (
    READY,
    LauncherError,
    entry_script,
    is_ready,
    remember_python,
    runtime_home,
    venv_python,
    write_atomic,
)

KEEP_OLD = 1  # runtimes kept besides the newest (~200 MB each): a session started before an update uses it
RETRY_AFTER_FAILURE = 600  # seconds: hooks and the server do not retry a failed preparation sooner
EXPECTED_SECONDS = 30  # a first guess of how long preparing takes, until one has been timed


# --- building it ------------------------------------------------------------------------------------


def prepare(data: str, root: str, key: str, out) -> str:  # noqa: ANN001 - a text stream
    """Build the runtime for `key` unless it is ready; returns its folder. Under the lock, so concurrent
    callers wait for the one that builds and then find it ready."""
    import fcntl
    import time

    home = runtime_home(data)
    os.makedirs(home, exist_ok=True)
    venv = os.path.join(home, key)
    lock = os.open(os.path.join(home, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by close(), also when this process dies
        if is_ready(venv):
            return venv
        started = time.monotonic()
        out.write(f"pinky: preparing runtime {venv} ({time.strftime('%Y-%m-%d %H:%M:%S')}, {sys.executable})\n")
        out.flush()
        try:
            build(venv, os.path.join(root, "package"), home, out)
        except LauncherError as exc:
            record_failure(data, key, str(exc))
            raise
        seconds = round(time.monotonic() - started, 1)
        write_atomic(os.path.join(venv, READY), f"key {key}\npython {sys.version.split()[0]}\nseconds {seconds}\n")
        remember_python(data, venv)
        forget_failure(data)
        prune(home, venv)
        out.write(f"pinky: runtime ready in {seconds} s\n")
        out.flush()
        return venv
    finally:
        os.close(lock)


def build(venv: str, package: str, home: str, out) -> None:  # noqa: ANN001 - a text stream
    """python -m venv, then pip install of a clean copy of the package source (no bytecode, symlinks
    followed), then an import check. The venv is made where it stays: pip writes its path into scripts."""
    import shutil
    import tempfile

    if os.path.lexists(venv):
        shutil.rmtree(venv)  # a build that died half-way (we hold the lock, so nobody is building it)
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    _run([sys.executable, "-m", "venv", venv], out, "python -m venv",
         f" (on Debian or Ubuntu: apt install python{version}-venv)")
    with tempfile.TemporaryDirectory(prefix=".build-", dir=home) as temp:
        source = os.path.join(temp, "pinky-brain")
        shutil.copytree(package, source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        _run([venv_python(venv), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
              "--progress-bar", "off", source], out, "pip install",
             " (pip needs the package index, or PIP_INDEX_URL / PIP_FIND_LINKS / pip.conf pointing at a mirror"
             " or a wheelhouse that also holds hatchling)")
    _run([venv_python(venv), "-c", "import pinky.cli, pinky.hooks, pinky.mcp.server"], out, "import check")


def _run(command: list[str], out, what: str, hint: str = "") -> None:  # noqa: ANN001 - a text stream
    """Run a step with its output copied to `out`; a failure becomes one line with the step's last words."""
    import subprocess

    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace")
    last = "no output"
    assert process.stdout is not None
    for line in process.stdout:
        out.write(line)
        if line.strip():
            last = line.strip()
    out.flush()
    if process.wait():
        raise LauncherError(f"{what} failed (exit {process.returncode}): {last[:300]}{hint}")


def prune(home: str, keep: str) -> None:
    """Delete half-built runtimes and build folders, and all but the newest KEEP_OLD older runtimes (called
    under the lock, so nothing is being built). The launcher's own bytecode cache (`pycache`) stays."""
    import shutil

    old = []
    for entry in os.scandir(home):
        if not entry.is_dir(follow_symlinks=False) or entry.name in ("keys", "pycache") or entry.path == keep:
            continue
        if entry.name.startswith("."):  # a .build- folder left by a killed build
            shutil.rmtree(entry.path, ignore_errors=True)
            continue
        marker = os.path.join(entry.path, READY)
        if os.path.isfile(marker):
            old.append((os.stat(marker).st_mtime, entry.path))
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
    for _, path in sorted(old, reverse=True)[KEEP_OLD:]:
        shutil.rmtree(path, ignore_errors=True)


# --- bookkeeping: the log, the failure record, the lock, the background start -------------------------


def log_path(data: str) -> str:
    return os.path.join(runtime_home(data), "prepare.log")


def record_failure(data: str, key: str, message: str) -> None:
    import time

    write_atomic(os.path.join(runtime_home(data), "failed"), f"{key}\n{time.time()}\n{message}")


def forget_failure(data: str) -> None:
    try:
        os.unlink(os.path.join(runtime_home(data), "failed"))
    except FileNotFoundError:
        pass


def recent_failure(data: str, key: str, max_age: float | None = RETRY_AFTER_FAILURE) -> str | None:
    """The message of the last failed preparation of `key`, if it is recent enough to not retry yet."""
    import time

    try:
        with open(os.path.join(runtime_home(data), "failed"), encoding="utf-8") as handle:
            failed_key, when, message = handle.read().split("\n", 2)
    except (OSError, ValueError):
        return None
    if failed_key != key or (max_age is not None and time.time() - float(when) > max_age):
        return None
    return message


def preparing_now(data: str) -> bool:
    """Whether some process holds the preparation lock."""
    import fcntl

    path = os.path.join(runtime_home(data), ".lock")
    if not os.path.exists(path):
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def start_preparing(data: str, key: str) -> str:
    """Make sure a detached process prepares the runtime (it outlives a short session); say what is going on."""
    import subprocess

    failure = recent_failure(data, key)
    if failure:
        return (f"pinky could not prepare its runtime: {failure}. Log: {log_path(data)}. "
                "Run `pinky` in the agent's shell (or start a new session in 10 minutes) to try again")
    if not preparing_now(data):
        os.makedirs(runtime_home(data), exist_ok=True)
        with open(log_path(data), "ab") as log:
            subprocess.Popen([sys.executable, entry_script(), data, "prepare"], cwd=runtime_home(data),
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                             start_new_session=True)
    return ("pinky is preparing its runtime in the background (the first start after installing or updating "
            f"the plugin installs its Python packages; log: {log_path(data)})")


def expected_seconds(data: str) -> float:
    """How long preparing took the last time, from the ready markers; a default before the first build."""
    timed = []
    for entry in os.scandir(runtime_home(data)):
        try:
            with open(os.path.join(entry.path, READY), encoding="utf-8") as handle:
                timed += [float(line.split()[1]) for line in handle if line.startswith("seconds ")]
        except (OSError, ValueError, IndexError):
            continue
    return max(timed) if timed else EXPECTED_SECONDS
