"""pinky-mcp's cache of the real server's own answers to `initialize` and `tools/list`, which the front
(pinky.mcp.front) serves at the next start before the real server is up.

$PINKY_HOME/cache/mcp/<install>.json, one file per installation and PINKY_TIER, with one answer per protocol
version, and valid only while every file of the pinky package and the SDK's packages keeps its size and mtime.
The cache is trusted only as a regular file owned by this user and writable by nobody else, opened without
following a link or waiting on a FIFO, whose answers match the SHA-256 kept in its first line; anything else is
ignored (read_cache gives {}). Standard library only: it is on the path to the front's first answer.
"""

from __future__ import annotations

import os
import sys

from pinky.base.locations import ENV_HOME, ENV_TIER, default_home

CACHE_FORMAT = 2
CACHE_MAGIC = b"pinky-mcp-cache"
MAX_CACHE_BYTES = 4 << 20
SDK_PACKAGES = ("mcp", "mcp_types", "pydantic", "pydantic_core")  # what else shapes the answers
READ_CHUNK = 1 << 16

TYPE_CHECKING = False  # not typing's: importing typing took a third of the front's start (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping


def _crc(text: str) -> str:
    import zlib

    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}{len(text):x}"


def _sha256(data: bytes) -> str:
    try:  # hashlib itself costs milliseconds to import, on the path to the first answer
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def package_signature(folders: list[str]) -> str:
    """Size and mtime of every .py file under `folders` (a missing one counts as such): what a cached answer
    depends on. Stats only; about 1 ms for pinky and the SDK."""
    lines: list[str] = []
    for folder in folders:
        _stat_tree(folder, lines)
    return _crc("\n".join(lines))


def _stat_tree(folder: str, lines: list[str]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        lines.append(f"{folder} -")
        return
    for entry in entries:
        if entry.name == "__pycache__":
            continue
        if entry.is_dir(follow_symlinks=False):
            _stat_tree(entry.path, lines)
        elif entry.name.endswith(".py"):
            info = entry.stat()
            lines.append(f"{entry.path} {info.st_size} {info.st_mtime_ns}")


def _sdk_markers() -> list[str]:
    """The __init__.py of each SDK package, found the way import would find it (a reinstall rewrites it)."""
    found = []
    for name in SDK_PACKAGES:
        for entry in sys.path:
            init = os.path.join(entry or ".", name, "__init__.py")
            if os.path.isfile(init):
                info = os.stat(init)
                found.append(f"{init} {info.st_size} {info.st_mtime_ns}")
                break
    return found


def cache_path(env: Mapping[str, str] | None = None) -> str:
    """This installation's cache file for the tier the environment asks for."""
    env = os.environ if env is None else env
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tier = (env.get(ENV_TIER) or "").strip().lower()
    home = env.get(ENV_HOME) or default_home()
    return os.path.join(os.path.expanduser(home), "cache", "mcp", f"{_crc(package + chr(0) + sys.executable)}-"
                                                                 f"{tier or 'default'}.json")


def current_signature() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return _crc(package_signature([package]) + "\n".join(_sdk_markers()) + sys.version)


def read_cache(path: str, signature: str) -> dict:
    """{"initialize": {version: result}, "tools": {version: result}} when the file is one to trust (see the
    module's docstring) and valid for `signature`; else {}."""
    import json

    data = _read_trusted(path)
    magic, _, rest = data.partition(b" ")
    digest, _, body = rest.partition(b"\n")
    if magic != CACHE_MAGIC or digest.decode("ascii", "replace") != _sha256(body):
        return {}
    try:
        cache = json.loads(body)
    except ValueError:
        return {}
    if not isinstance(cache, dict) or cache.get("format") != CACHE_FORMAT or cache.get("signature") != signature:
        return {}
    return {part: cache[part] for part in ("initialize", "tools") if isinstance(cache.get(part), dict)}


def _read_trusted(path: str) -> bytes:
    """The file's bytes when it is a regular file of this user's that no one else may write; else b""."""
    import stat

    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o022 or info.st_size > MAX_CACHE_BYTES or (
                hasattr(os, "geteuid") and info.st_uid != os.geteuid()):
            return b""
        chunks = []
        while chunk := os.read(fd, READ_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def write_cache(path: str, signature: str, answers: dict) -> None:
    import json

    from pinky.base.fileio import atomic_write

    body = json.dumps({"format": CACHE_FORMAT, "signature": signature, **answers}).encode()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, CACHE_MAGIC + f" {_sha256(body)}\n".encode() + body, mode=0o600, durable=False)
    except OSError as exc:  # only a cache: the next start relays again
        sys.stderr.write(f"pinky-mcp: could not write {path}: {exc}\n")
