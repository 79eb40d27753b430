"""Files only their owner may read: everything pinky keeps in `$PINKY_HOME/state`.

The state folder keeps what the user typed and ran (the hook journals of hosts without a transcript), what
setup found in their config files (the original bytes of a 0600 `~/.claude.json`, tokens included) and
which projects they opened: another user of the machine must not read it, nor even list it. Files are
created 0600 and folders 0700 whatever the umask (a mode passed to open/mkdir can only be narrowed by it),
and ones an older pinky left wider are tightened at their next write.

Stdlib only, like `pinky.base.fileio`: the hooks write their state through this module.
"""

from __future__ import annotations

import os

from pinky.base import fileio

O_BINARY = getattr(os, "O_BINARY", 0)

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def private_folders(folder: str | os.PathLike[str], top: str | os.PathLike[str]) -> None:
    """Make `folder` exist with every folder from `top` down to it (`top` included) the owner's alone (0700).

    Why: the state folder keeps what the user typed, ran and configured (prompts, shell commands, the original
    bytes of a 0600 config file): another user of the machine must not even list it. A folder is created
    0700 whatever the umask, and an existing one (an older pinky made them 0755) is tightened: one chmod per
    level, a few microseconds. A folder that is not this user's to change is left as it is."""
    target, base = os.path.abspath(folder), os.path.abspath(top)
    chain = [target]
    while chain[-1] != base and chain[-1].startswith(base.rstrip(os.sep) + os.sep):
        chain.append(os.path.dirname(chain[-1]))
    os.makedirs(os.path.dirname(chain[-1]), exist_ok=True)  # above `top` ($PINKY_HOME): as the umask says
    for each in reversed(chain):  # each one 0700 from its creation: never open for a moment
        try:
            os.mkdir(each, PRIVATE_FOLDER)
        except FileExistsError:
            pass
        try:
            os.chmod(each, PRIVATE_FOLDER)  # not narrowed by the umask, and tightens an older 0755 one
        except OSError:
            pass


def write_private(path: str | os.PathLike[str], data: bytes | str, top: str | os.PathLike[str] | None = None,
                  *, durable: bool = False) -> None:
    """`atomic_write` of a file only its owner may read (0600), in folders only they may enter (0700) from
    `top` (the state folder; default: the file's own folder) down. The file is replaced, so one an older
    pinky left 0644 is 0600 once written again."""
    target = os.fspath(path)
    private_folders(os.path.dirname(os.path.abspath(target)), top or os.path.dirname(os.path.abspath(target)))
    fileio.atomic_write(target, data, mode=PRIVATE_FILE, durable=durable)


def append_private(path: str | os.PathLike[str], data: bytes | str, top: str | os.PathLike[str] | None = None,
                   *, limit: int | None = None) -> bool:
    """Append to a file only its owner may read, like `write_private` (an existing file wider than 0600 is
    tightened); one O_APPEND write under the file's flock, so concurrent appenders never interleave. With
    `limit`, nothing is appended to a file of that many bytes or more; False then."""
    target = os.fspath(path)
    private_folders(os.path.dirname(os.path.abspath(target)), top or os.path.dirname(os.path.abspath(target)))
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | O_BINARY, PRIVATE_FILE)
    try:
        fileio.lock_descriptor(fd)
        status = os.fstat(fd)
        if status.st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
        if limit is not None and status.st_size >= limit:
            return False
        os.write(fd, data.encode("utf-8") if isinstance(data, str) else data)
        return True
    finally:
        os.close(fd)
