"""`Brain: <slug>` breadcrumbs: a comment in code naming the brain entry that explains it.

    pool.close(timeout=5)  # Brain: gotcha/pg-pool-hangs (several: `Brain: a, b`)

One parser, used by the code scan (reindex) and by the pre-read/pre-write hooks. Bytes in,
so a file is never decoded just to look for crumbs; stdlib only, for the hooks.
"""

from __future__ import annotations

MARK = b"Brain:"
MAX_CRUMBS = 20
# How far past its mark a breadcrumb list is read: 20 slugs fit. Reading to the end of the line from
# every mark was quadratic on a long line of marks (a 256 KB one cost each pre-read hook ~3 s).
MAX_LIST = 4096
SLUG_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")


def breadcrumbs(data: bytes) -> list[str]:
    """Slugs named by `Brain: <slug>` (or `Brain: a, b`) anywhere in `data`, at most MAX_CRUMBS."""
    found: list[str] = []
    at = data.find(MARK)
    while at >= 0 and len(found) < MAX_CRUMBS:
        before = data[at - 1 : at]
        start = at + len(MARK)
        following = data.find(MARK, start, start + MAX_LIST)  # a list ends at the next mark: each byte is read once
        limit = following if following >= 0 else start + MAX_LIST
        end = data.find(b"\n", start, limit)
        line = data[start : end if end >= 0 else limit]
        if end < 0 and following < 0 and len(data) > limit:  # the list goes on: drop the slug cut in half
            line = line[: max(line.rfind(b","), line.rfind(b" "), 0)]
        if not (before.isalnum() or before == b"_"):  # `MyBrain:` is not a breadcrumb
            for slug in _listed_slugs(line):
                if slug not in found:
                    found.append(slug)
        at = following if following >= 0 else data.find(MARK, limit)
    return found[:MAX_CRUMBS]


def _listed_slugs(text: bytes) -> list[str]:
    """`a, b` -> [a, b]. The list ends where prose starts (`a explains why` -> [a]), at anything that
    is not a slug, or at a second `Brain:` on the line (the caller reads that one)."""
    slugs: list[str] = []
    for part in text.split(b","):
        words = part.split()
        if not words or words[0] == MARK:
            break
        token = words[0].rstrip(b".;:)")
        if not token or not all(c in SLUG_CHARS for c in token) or token.startswith(b"/"):
            break
        slugs.append(token.decode("ascii"))
        if len(words) > 1:
            break
    return slugs


def breadcrumbs_by_line(data: bytes) -> list[tuple[int, str]]:
    """(1-based line number, slug) of every breadcrumb in a file's bytes."""
    found: list[tuple[int, str]] = []
    if MARK not in data:
        return found
    for number, line in enumerate(data.split(b"\n"), start=1):
        if MARK in line:
            found += [(number, slug) for slug in breadcrumbs(line)]
    return found
