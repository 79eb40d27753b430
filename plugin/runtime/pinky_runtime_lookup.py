"""Which runtime this plugin needs, where it lives, and whether it is ready: all that a hook's hot path asks.

The runtime is a venv in <data>/runtime/<key>. <key> hashes the package source the plugin ships in package/
(pyproject.toml and src/) and the Python version: a plugin update with new content gets a new runtime, an
unchanged one reuses the old. It counts as ready only once <key>/pinky-ready exists, which is written last.

A hook runs on every Read and Edit, so this module imports nothing beyond os and sys (and fcntl for the lease a
process takes on the runtime it runs from) and compares file stats with a cached signature instead of hashing
the source on every start.
"""

import os
import sys

READY = "pinky-ready"  # written last into a runtime: its presence is what "ready" means
SOURCE_ITEMS = ("pyproject.toml", "src")  # what the key covers (the README changes nothing that runs)
SKIPPED = ("__pycache__", ".pyc")  # bytecode left by tests or earlier runs is not source


KEY_TRUSTED = 30.0  # seconds a hook takes the runtime key as last checked (runtime_key's trust_for)


class LauncherError(Exception):
    """A problem the user can fix, said in one line."""


# --- a hook's hot path ----------------------------------------------------------------------------------


def run_hook_here(argv: list[str]) -> int | None:
    """A hook in its common case, without importing the launcher (pinky_launcher, whose import cost a tenth of
    a bare interpreter start): the runtime named by the key checked in the last KEY_TRUSTED seconds is ready,
    and this interpreter is its own. Runs the hook (pinky.hooks.dispatch, pinky_launcher.ENTRY_POINTS' "hooks")
    and returns its exit code, failing open like the launcher; None in every other case: the launcher decides."""
    if len(argv) < 2 or argv[1] != "hooks" or not argv[0]:
        return None
    data = argv[0]
    try:
        venv = os.path.join(runtime_home(data), runtime_key(data, plugin_root(), trust_for=KEY_TRUSTED))
        if sys.prefix != venv or not is_ready(venv) or not lease(venv):
            return None
    except (OSError, LauncherError):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.argv = ["pinky-hooks", *argv[2:]]
    try:
        from pinky.hooks.dispatch import main

        return main() or 0
    except BaseException as exc:  # a hook must never stand in the agent's way
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        sys.stderr.write(f"pinky-brain hook: {type(exc).__name__}: {exc} (ignored; the action proceeds)\n")
        return 0


# --- where things are --------------------------------------------------------------------------------


def plugin_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def entry_script() -> str:
    """What `run` execs on: launch.py, next to this module."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")


def runtime_home(data: str) -> str:
    return os.path.join(data, "runtime")


def venv_python(venv: str) -> str:
    return os.path.join(venv, "bin", "python")


def python_tag() -> str:
    """The interpreter a runtime is built for; part of the key, since compiled wheels depend on it."""
    return f"{sys.implementation.cache_tag}-{sys.platform}-{os.uname().machine}"


def is_ready(venv: str) -> bool:
    # exists() follows the venv's python symlink: a runtime whose base interpreter was removed is not ready.
    return os.path.isfile(os.path.join(venv, READY)) and os.path.exists(venv_python(venv))


_leases: list[int] = []  # the open files whose shared locks say "a process runs from this runtime"


def lease(venv: str) -> bool:
    """Hold a shared lock on the runtime's ready marker for this process's life (and across an exec): prune()
    deletes no runtime whose marker someone holds, so a server running for hours keeps its files. False when the
    runtime went away in the meantime (it was pruned between the readiness check and this lock)."""
    import fcntl

    try:
        fd = os.open(os.path.join(venv, READY), os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while prune() holds it to move the runtime away
    except OSError:
        return False
    if not os.path.isfile(os.path.join(venv, READY)):  # moved away while this process waited
        os.close(fd)
        return False
    os.set_inheritable(fd, True)
    _leases.append(fd)
    return True


def remember_python(data: str, venv: str, replace: bool = True) -> None:
    """Point `run` at this runtime's interpreter, so the next start skips the search for a Python.
    replace=False keeps a pointer that still works: a session started before a plugin update uses the old
    runtime through one extra exec, without moving the pointer back and forth."""
    pointer = os.path.join(runtime_home(data), "python")
    try:
        with open(pointer, encoding="utf-8") as handle:
            current = handle.read().strip()
        if current == venv_python(venv) or (not replace and os.path.exists(current)):
            return
    except OSError:
        pass
    write_atomic(pointer, venv_python(venv) + "\n")


def write_atomic(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


# --- the key: which runtime this plugin's package source needs ----------------------------------------


def source_files(package: str) -> list[tuple[str, str]]:
    """(relative path, path) of every file the key covers, sorted. package/src may be a symlink (it is one
    in the repository; Claude Code's copy of the plugin holds the files themselves)."""
    found: list[tuple[str, str]] = []
    for item in SOURCE_ITEMS:
        path = os.path.join(package, item)
        if os.path.isdir(path):
            _walk(path, item, found)
        elif os.path.isfile(path):
            found.append((item, path))
    if not any(rel == "pyproject.toml" for rel, _ in found):
        raise LauncherError(f"the plugin has no package source in {package} (reinstall the plugin)")
    return sorted(found)


def _walk(directory: str, rel: str, found: list[tuple[str, str]]) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(SKIPPED):
                continue
            child = f"{rel}/{entry.name}"
            if entry.is_dir():
                _walk(entry.path, child, found)
            elif entry.is_file():
                found.append((child, entry.path))


def stat_signature(files: list[tuple[str, str]]) -> str:
    """Cheap stand-in for the content: when no size or mtime changed, the content key has not either."""
    lines = []
    for rel, path in files:
        st = os.stat(path)
        lines.append(f"{rel} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines)


def content_key(files: list[tuple[str, str]]) -> str:
    import hashlib

    digest = hashlib.sha256(python_tag().encode())
    for rel, path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(f"\0{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def _name_for(text: str) -> str:
    """A short stable file name for a path (FNV-1a; hashlib costs a millisecond to import)."""
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def runtime_key(data: str, root: str, trust_for: float = 0) -> str:
    """The key for the package source under `root`, from a per-root cache of its stat signature; the
    source is hashed only when a file's size or mtime changed (a new plugin copy, or an edit).

    trust_for > 0 (hooks, which run on every Read and Edit): a cache checked less than that many seconds ago is
    taken without the walk over the source's files (stat of each: most of the launcher's own cost). A
    key found that way is one the source had moments ago, and the caller checks its runtime is ready: an
    edit in place is noticed by the next full check, the previous runtime serving meanwhile."""
    cache = key_cache(data, root)
    if trust_for > 0:
        try:
            with open(cache, encoding="utf-8") as handle:
                checked, parts = os.fstat(handle.fileno()).st_mtime, handle.read().split("\n", 3)
            import time

            if len(parts) == 4 and parts[0] == root and 0 <= time.time() - checked < trust_for:
                return parts[2]
        except OSError:
            pass
    files = source_files(os.path.join(root, "package"))
    signature, tag = stat_signature(files), python_tag()
    try:
        with open(cache, encoding="utf-8") as handle:
            parts = handle.read().split("\n", 3)
    except OSError:
        parts = []
    if len(parts) == 4 and parts[0] == root and parts[1] == tag and parts[3] == signature:
        try:
            os.utime(cache)  # checked now: the hooks of the next `trust_for` seconds take it as it is
        except OSError:
            pass  # they check it in full, as here
        return parts[2]
    key = content_key(files)
    try:
        write_atomic(cache, "\n".join((root, tag, key, signature)))
    except OSError:
        pass  # only a cache: the next start hashes again
    return key


def key_cache(data: str, root: str) -> str:
    """The file that caches the key of the package source under `root` for this interpreter."""
    return os.path.join(runtime_home(data), "keys", _name_for(f"{root}\0{python_tag()}") + ".txt")
