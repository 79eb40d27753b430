"""A process for tests/test_faults_healing.py to kill: it repeats one operation until it is killed,
printing `ack <what>` after each one that returned (what the caller was told has happened).

    python fault_worker.py save|update|reindex|sync [slug ...]

Or it races another worker, attempt by attempt (see `lockstep`), one line per attempt:

    python fault_worker.py updates|deletes slug ...   # update (or delete) each note once, in order
    python fault_worker.py contend slug rounds        # update one note again and again

Run in a project folder (the cwd), with PINKY_HOME and the hashing embedder set by the test.
A plain script, not a test module.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path


def ack(*what: object) -> None:
    # One write per line: print() writes its pieces one by one, and a kill between them left "ack" alone.
    sys.stdout.write(" ".join(["ack", *map(str, what)]) + "\n")
    sys.stdout.flush()


def lockstep(n: int) -> None:
    """Meet the other worker before attempt `n` (files in race/, named by $FAULT_ROLE and $FAULT_PEER),
    then wait 0-3 ms, so the two attempts start together and either may reach the note first."""
    Path("race", f"{os.environ['FAULT_ROLE']}-{n}").touch()
    while not Path("race", f"{os.environ['FAULT_PEER']}-{n}").exists():
        time.sleep(0.0002)
    time.sleep(random.uniform(0, 0.003))


def race(kb: object, operation: str, args: list[str]) -> None:
    from pinky.errors import PinkyError

    slugs = args if operation != "contend" else [args[0]] * int(args[1])
    for n, slug in enumerate(slugs):
        lockstep(n)
        version = ""
        try:
            if operation == "deletes":
                kb.delete(slug, "racing an update")  # type: ignore[attr-defined]
            else:
                version = kb.get(slug).version  # type: ignore[attr-defined]
                kb.update(slug, version, body=f"update {n} by {os.getpid()}")  # type: ignore[attr-defined]
            print("ok", slug, version, flush=True)
        except PinkyError as exc:
            print(type(exc).__name__, slug, version, flush=True)


def main() -> None:
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    operation, args = sys.argv[1], sys.argv[2:]
    kb = KnowledgeBase(load_config())
    if operation in ("updates", "deletes", "contend"):
        race(kb, operation, args)
        return
    start = int(os.environ.get("FAULT_START", "0"))  # each worker of a test numbers on from the last one
    if operation == "reindex":
        from pinky.indexing import indexer

        indexer.BULK_FILES = 1  # every reindex writes as a large one does: kills land in the rollback-journal build
    for n in range(start, start + 1_000_000):
        if operation == "save":
            ack(kb.save(f"Fault save {n}", f"kiwi{n} saved by the worker, round {n}").slug)
        elif operation == "update":
            slug = args[n % len(args)]
            kb.update(slug, kb.get(slug).version, body=f"mango{n} written by update {n}")
            ack(slug, n)
        elif operation == "reindex":
            note = Path("documentation") / "gotcha" / f"note-{n % 5}.md"
            with open(note, "a", encoding="utf-8") as handle:  # something for the incremental runs to do
                handle.write(f"\nguava{n} appended before reindex {n}\n")
            kb.reindex(full=n % 2 == 0)
            ack("reindex", n)
        elif operation == "sync":
            from pinky.services.brain_sync import sync_global

            kb.save(f"Fault sync {n}", f"papaya{n} saved then synced", scope="global")
            sync_global(kb, args[0] if n == start else None)
            ack("sync", n)
        else:
            raise SystemExit(f"unknown operation {operation}")


if __name__ == "__main__":
    main()
