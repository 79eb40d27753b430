"""Helpers shared by test modules (fixtures live in conftest.py; no test module imports another)."""

from __future__ import annotations

import functools
import gc
import os
import shutil
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_note(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def usage_watched_since(root: Path, since: str = "2024-01-01T00:00:00+00:00") -> None:
    """A usage ledger (pinky.base.usage) that has recorded use in knowledge folder `root` since `since`: what
    `pinky prune` needs before it calls a note unused for months."""
    ledger = root / ".pinky" / "usage.log"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text(f'{{"since": "{since}"}}\n', encoding="utf-8")


def console_script(name: str) -> list[str]:
    """The installed entry point next to this interpreter, else `python -m` of its module."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which(name)
    if found:
        return [found]
    module = {"pinky": "pinky", "pinky-mcp": "pinky.mcp.front", "pinky-hooks": "pinky.hooks"}[name]
    return [sys.executable, "-m", module]


def migrated_database(path: Path):  # type: ignore[no-untyped-def]
    """A brain.db at `path` with the whole schema, opened through the project's connection factory."""
    from pinky.store.connect import open_database
    from pinky.store.migrations import migrate

    db = open_database(path)
    migrate(db.conn)
    return db


def add_entry(conn, slug: str, *, root: str = "project", path: str | None = None, type: str = "note",  # type: ignore[no-untyped-def]
              title: str | None = None, body: str = "", tags: tuple[str, ...] = (), files: tuple[str, ...] = (),
              links: tuple[str, ...] = (), mentions: tuple[str, ...] = (), scope: str | None = None,
              created: str | None = None, last_verified: str | None = None, mtime_ns: int = 0,
              meta: dict | None = None, chunks: list[str] | None = None, has_vec_table: bool = False) -> str:
    """Insert an entry (and one chunk per text) the way the indexer does, through store.entries.upsert_entry."""
    import hashlib
    import json

    from pinky.base.layout import entry_id
    from pinky.store.entries import upsert_entry

    rel = path or (slug.removeprefix("global/") + ".md")
    eid = entry_id(root, rel)
    row = {
        "id": eid, "root": root, "path": rel, "slug": slug,
        "scope": scope or ("global" if root == "global" else "project:demo"), "type": type,
        "project": None if root == "global" else "demo", "tags": json.dumps(list(tags)),
        "files": json.dumps(list(files)), "created": created, "last_verified": last_verified,
        "title": title or slug.rsplit("/", 1)[-1], "body": body, "meta": json.dumps(meta or {}),
        "content_hash": f"hash-{eid}", "mtime_ns": mtime_ns, "size": len(body), "parse_error": None,
        "indexed_at": "2026-11-25T00:00:00+00:00",
    }
    texts = chunks if chunks is not None else [body or row["title"]]
    chunk_rows = [{"ord": n, "heading": "", "line": 1, "text": text,
                   "hash": hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]}
                  for n, text in enumerate(texts)]
    from pinky.text.linkrefs import LinkRef

    refs = [LinkRef("wiki", target, 1) for target in links] + [LinkRef("files", f, 1) for f in files]
    upsert_entry(conn, row, refs, mentions, chunk_rows, has_vec_table)
    return eid


def damage(path: Path, how: str, *, seed: int = 5) -> None:
    """Break a SQLite file the way disks and copies do: `truncate` cuts off its second half; `garbage`
    overwrites a quarter of its pages (never the header page, always the first table's root) with random
    bytes; `index-key` flips 8 bytes inside one key of the index `chunk_hash`, which every page check
    (quick_check) still finds sound: only integrity_check sees a row missing from that index."""
    import random

    size = path.stat().st_size
    if how == "index-key":
        _flip_index_key(path, "chunk_hash")
        return
    if how == "truncate":
        with open(path, "r+b") as handle:
            handle.truncate(size // 2)
        return
    rng = random.Random(seed)
    pages = size // 4096
    assert pages > 1, f"{path} has {pages} pages in the file itself (the rest still in its WAL?)"
    with open(path, "r+b") as handle:
        # Page 2 (index 1) is the root of the first table made: always hit it, so the damage never
        # lands only in the content of large blobs (a vector chunk), which no page check can see.
        for page in {1, *rng.sample(range(1, pages), max(1, pages // 4))}:
            handle.seek(page * 4096)
            handle.write(rng.randbytes(4096))


def _flip_index_key(path: Path, index: str) -> None:
    """Flip the last 8 bytes of the first key on a leaf page of `index` (a column of 24-character hex
    hashes): the page stays well formed and in order (keys differ long before their last 8 bytes), but
    the key no longer matches its table row."""
    import sqlite3

    with sqlite3.connect(path) as conn:  # sqlite_master and page headers need no extension
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (index,)).fetchone()[0]
    conn.close()
    with open(path, "r+b") as handle:
        while True:  # down the leftmost children to a leaf
            handle.seek((page - 1) * page_size)
            data = handle.read(page_size)
            kind, header = data[0], 12 if data[0] == 0x02 else 8
            first_cell = int.from_bytes(data[header:header + 2], "big")
            if kind == 0x0A:
                break
            assert kind == 0x02, f"page {page} of {index} is not an index page ({kind:#x})"
            page = int.from_bytes(data[first_cell:first_cell + 4], "big")
        _, at = _varint(data, first_cell)  # payload size, then the record: header size, serial types, values
        header_size, _ = _varint(data, at)
        serial, _ = _varint(data, _varint(data, at)[1])
        assert serial >= 13 and serial % 2 == 1 and (serial - 13) // 2 >= 16, f"{index}'s key is not a long text"
        end = at + header_size + (serial - 13) // 2
        handle.seek((page - 1) * page_size + end - 8)
        handle.write(bytes(b ^ 0x01 for b in data[end - 8:end]))


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's big-endian varint at `at`: (value, offset after it)."""
    value = 0
    for n in range(9):
        byte = data[at + n]
        if n == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + n + 1
    raise AssertionError("unreachable")


def deleted_files_open(pid: int, name: str = "brain.db") -> list[str]:
    """Files named like `name` that process `pid` still holds open although they were deleted (Linux)."""
    import os

    fds = Path(f"/proc/{pid}/fd")
    found = []
    for fd in fds.iterdir() if fds.is_dir() else []:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if name in target and target.endswith("(deleted)"):
            found.append(target)
    return found


def notes(root: Path, count: int, *, words: int = 300, seed: int = 1) -> dict[str, str]:
    """`count` notes of `words` words under `root/gotcha/`, each with one word no other note has;
    returns {that word: the note's slug}."""
    import random

    rng = random.Random(seed)
    vocabulary = "pool timeout retry cache memory leak deploy docker token auth session search vector".split()
    unique = {}
    for n in range(count):
        word = f"uniq{n}x{rng.randint(1000, 9999)}"
        body = " ".join(f"{rng.choice(vocabulary)}{rng.randint(0, 999)}" for _ in range(words))
        write_note(root, f"gotcha/note-{n}.md", f"---\ntitle: Note {n}\n---\n{word} {body}\n")
        unique[word] = f"gotcha/note-{n}"
    return unique


B62 = string.ascii_letters + string.digits


def fake(n: int, seed: int, alphabet: str = B62) -> str:
    """A deterministic random-looking string (upper, lower and digits when the alphabet has them), built
    at run time so no literal credential sits in the repository."""
    import random

    rng = random.Random(seed)
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (
            any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)
        ):
            return s


def near_duplicates(size: int, *, vocabulary: int = 12, seed: int = 7) -> tuple[str, str]:
    """Two note bodies of about `size` characters that say the same thing, but for one port (8080 in the
    first, 9090 in the second) and a sentence reworded: what `pinky check` must report. Sentences of
    common words and of `vocabulary` others (a few: every word recurs thousands of times, the case
    that made a word-by-word diff quadratic)."""
    import random

    rng = random.Random(seed)
    common = "the a to of and is in it for on with as at by that this from be are".split()
    rare = [f"{stem}{n}" for n in range(vocabulary // 8 + 1)
            for stem in ("pool", "cache", "retry", "deploy", "token", "queue", "index", "shard")][:vocabulary]
    sentences = []
    while sum(len(s) + 1 for s in sentences) < size:
        words = [rng.choice(common) if rng.random() < 0.45 else rng.choice(rare) for _ in range(rng.randint(8, 20))]
        sentences.append(" ".join(words).capitalize() + ".")
    first, second = list(sentences), list(sentences)
    middle = len(sentences) // 2
    first[middle] = "The API listens on port 8080 behind the balancer."
    second[middle] = "The API listens on port 9090 behind the balancer."
    second[middle // 2] = "This sentence was written again in other words entirely, as people do."
    return " ".join(first), " ".join(second)


def all_breadcrumbs(conn: Any) -> list[tuple[str, str, int]]:
    """(slug as written, file, line) of every breadcrumb in an index, by file and line: what the tests check
    (the product reads breadcrumbs per file or per entry, never all of them)."""
    return [tuple(r) for r in conn.execute(
        "SELECT target, source_file, line FROM link WHERE kind = 'breadcrumb' ORDER BY source_file, line")]


# --- linear time: the same work on N and 2N characters ---------------------------------------------------------

SIZE = 50_000  # characters: each shape is timed at SIZE and at 2 * SIZE (100 KB)
RATIO = 2.5  # the time for 2N over the time for N: ~2 when linear, ~4 when quadratic
FLOOR = 1e-3  # seconds: below this a run is too short for its ratio to mean anything
TRIES = 3
CONFIRM = 0.2  # seconds: a failure on a shorter run is timed again on the next size (caches, a busy machine)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _timed(work: Callable[..., Any], *args: Any) -> float:
    started = time.thread_time()
    work(*args)
    return time.thread_time() - started


def scaling(work: Callable[..., Any], make: Callable[[int], Any], size: int = SIZE) -> tuple[int, float, float]:
    """(n, time of `work` on `make(n)`, time on `make(2n)`): the pair with the best ratio of up to TRIES
    pairs timed back to back (a busy machine runs the same work at half speed for a while: both halves
    of a pair see the same machine; three more pairs confirm a failure). `make` returns a text, or a
    tuple of the arguments.

    On size/16, then size/4, then `size` characters: a quadratic scan fails on a few KB instead of
    running for minutes; a failure of a few milliseconds is confirmed on the next size.
    CPU time of this thread: other processes do not count."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        for n in (size // 16, size // 4, size):
            small_args, large_args = make(n), make(2 * n)
            small_args = small_args if isinstance(small_args, tuple) else (small_args,)
            large_args = large_args if isinstance(large_args, tuple) else (large_args,)
            best = (float("inf"), 0.0, 0.0)
            for _ in range(2 * TRIES):
                small, large = _timed(work, *small_args), _timed(work, *large_args)
                best = min(best, (large / max(small, FLOOR), small, large))
                if best[0] <= RATIO:
                    break
            if best[0] > RATIO and best[2] > CONFIRM:
                break  # slow enough to trust; a larger size would cost a quadratic scan minutes
        return n, best[1], best[2]
    finally:
        if enabled:
            gc.enable()


def nonlinear(work: Callable[[str], Any], units: tuple[str, ...]) -> list[str]:
    """A line for each unit whose text costs more than RATIO times the time when it doubles."""
    slow = []
    for unit in units:
        n, small, large = scaling(work, functools.partial(_repeat, unit))
        if large > RATIO * max(small, FLOOR):
            slow.append(f"{unit!r} x {n:,} chars: {small * 1000:.1f} ms, x {2 * n:,}: {large * 1000:.1f} ms")
    return slow


# --- the fault suites: a short variant in CI, a long one on demand --------------------------------------------------

FAULTS_LONG = os.environ.get("PINKY_FAULTS_LONG") == "1"


def rounds(short: Any, long: Any) -> list[Any]:
    """A short variant (CI) and a long one, run only with PINKY_FAULTS_LONG=1, as parameters of a fault test."""
    import pytest

    skip = pytest.mark.skipif(not FAULTS_LONG, reason="the long fault suite runs with PINKY_FAULTS_LONG=1")
    return [pytest.param(short, id="short"), pytest.param(long, id="long", marks=[pytest.mark.faults_long, skip])]


def report(capsys: Any, line: str) -> None:
    """A figure of a fault test, printed past pytest's capture: what the long suites are read for."""
    with capsys.disabled():
        print(f"\n[faults] {line}", flush=True)
