"""Processes for tests/sync/test_sync_races.py: syncs of one brain, and a writer appending meanwhile.

    python sync_race_worker.py sync BRAIN REMOTE ROLE ROUNDS    # edit, then sync, ROUNDS times
    python sync_race_worker.py write STOPFILE BRAIN ...         # append lines until STOPFILE exists
    python sync_race_worker.py scribble KIND STOPFILE BRAIN ... # the same, taking no lock (KIND: path or fd)

`sync` edits, each round, the ordinary note both sides edit (note/shared.md), the append-only note
(log/journal.md, one line, acknowledged) and its own share of many guide files (so the other side's
checkout writes many files), then syncs: one line per run, `ok <json report>`, `err <message>`, or
`crash <traceback on one line>` for anything but a SyncError. `write` appends a line to each brain's
journal in turn, through pinky's own append (as the diary does), and prints `ack <line>` after each.
`scribble` is a writer that takes no lock, as an editor or a shell's `>>` does, appending to each brain's journal
and to an ordinary note (note/scratch.md): `path` opens the file by its name for each line, and may be slow
between the open and the write (as a busy machine makes any writer); `fd` opens each file once and keeps writing
to what it opened (`exec 3>>journal.md`, a logger).
A plain script, not a test module.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from pathlib import Path

JOURNAL = "log/journal.md"
JOURNAL_HEAD = "---\ntitle: Journal\ntype: note\nappend_only: true\n---\n\n# Journal\n\n"
GUIDES = int(os.environ.get("RACE_GUIDES", "60"))


def edit(brain: Path, role: str, n: int) -> str:
    from pinky.base import fileio

    fileio.atomic_write(brain / "note" / "shared.md", f"---\ntitle: Shared\n---\n\n{role} wrote round {n}\n")
    for i in range(GUIDES):
        fileio.atomic_write(brain / "guide" / f"{role}-{i:03d}.md", f"# Guide {role} {i}\n\nround {n}\n")
    line = f"- 12:00 {role} round {n}"
    fileio.append(brain / JOURNAL, line + "\n")
    return line


def one_sync(brain: Path, remote: str) -> str:
    from pinky.errors import SyncError
    from pinky.sync.run import sync

    try:
        report = sync(brain, remote)
    except SyncError as exc:
        return "err " + " ".join(str(exc).split())
    except Exception:
        return "crash " + " | ".join(traceback.format_exc().splitlines())
    return "ok " + json.dumps({"conflicts": report.conflicts, "pulled": report.pulled_paths})


def syncs(brain: Path, remote: str, role: str, rounds: int) -> None:
    for n in range(rounds):
        print("ack", edit(brain, role, n), flush=True)
        print(one_sync(brain, remote), flush=True)


def write(stop: Path, brains: list[Path]) -> None:
    """Append to each brain's journal every few ms, and at once when a checkout there is seen under way (the
    other side's first guide file was just replaced): the moment a sync writes the files of a merge."""
    from pinky.base import fileio

    n, seen = 0, {brain: _inode(brain) for brain in brains}
    due = dict.fromkeys(brains, 0.0)
    while not stop.exists():
        for brain in brains:
            inode, now = _inode(brain), time.monotonic()
            if inode == seen[brain] and now < due[brain]:
                continue
            seen[brain], due[brain] = inode, now + random.uniform(0.05, 0.5)
            line = f"- 12:30 writer line {n} into {brain.parent.name}"
            fileio.append(brain / JOURNAL, line + "\n")
            print("ack", line, flush=True)
            n += 1
        time.sleep(0.0005)


SCRIBBLED = (JOURNAL, "note/scratch.md")


def scribble(kind: str, stop: Path, brains: list[Path]) -> None:
    """Append a line to each brain's journal and scratch note in turn, taking no lock, until `stop` exists.
    `path` opens every file by its name, waits up to 50 ms (a slow writer), then writes and closes them;
    `fd` opens each file once and writes to it every few ms."""
    held: dict[Path, int] = {}
    n = 0
    while not stop.exists():
        files = [brain / rel for brain in brains for rel in SCRIBBLED]
        if kind == "fd":
            for file in files:
                if file not in held:
                    held[file] = os.open(file, os.O_WRONLY | os.O_APPEND)
            opened = [held[file] for file in files]
        else:
            opened = [os.open(f, os.O_WRONLY | os.O_APPEND) for f in files]
            time.sleep(random.uniform(0, 0.05))
        for fd, file in zip(opened, files, strict=True):
            minute = random.choice(("11:59", "12:00", "12:30"))  # some sort before the syncs' lines
            line = f"- {minute} {kind} scribbler line {n} into {file.parent.parent.parent.name}"
            os.write(fd, (line + "\n").encode())
            if kind == "path":
                os.close(fd)
            print("ack", line, flush=True)
            n += 1
        time.sleep(random.uniform(0.001, 0.01))


def _inode(brain: Path) -> int:
    other = "b" if brain.parent.name.endswith("a") else "a"
    try:
        return os.stat(brain / "guide" / f"{other}-000.md").st_ino
    except OSError:
        return 0


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "sync":
        syncs(Path(args[0]), args[1], args[2], int(args[3]))
    elif mode == "write":
        write(Path(args[0]), [Path(a) for a in args[1:]])
    elif mode == "scribble":
        scribble(args[0], Path(args[1]), [Path(a) for a in args[2:]])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
