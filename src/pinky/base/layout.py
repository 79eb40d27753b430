"""How knowledge is laid out inside a root: entry types, which files are notes, slugs.

One rule for each question, used by the indexer, the watcher, sync and the hooks alike.
Stdlib only, and nothing slow at import: the hooks import it (hashlib, ~2 ms to load its
OpenSSL module, is loaded by `entry_id` when it is first called).
"""

from __future__ import annotations

ENTRY_TYPES: tuple[str, ...] = ("gotcha", "pattern", "bug", "decision", "diary", "guide", "note", "status")
ROOTS: tuple[str, ...] = ("project", "global")
ARCHIVE_DIR = ".archive"
DIARY_DIR = "diary"
GLOBAL_PREFIX = "global/"


def folder_type(rel: str) -> str | None:
    """The entry type a note's first folder names: `gotcha/x.md` (where `pinky save` puts a gotcha, and
    where a note without `type:` is taken to be one) or `gotchas/x.md`; None at the top or elsewhere."""
    if "/" not in rel:
        return None
    folder = rel.split("/", 1)[0].lower()
    folder = folder[:-1] if folder.endswith("s") and folder[:-1] in ENTRY_TYPES else folder
    return folder if folder in ENTRY_TYPES else None


def is_skipped(name: str) -> bool:
    """Hidden and `_`-prefixed names are not knowledge (`.archive/`, `.git/`, `_template.md`, `.#swap`)."""
    return not name or name.startswith((".", "_"))


def is_note(rel: str) -> bool:
    """A markdown file the indexer takes: `.md`, and no skipped folder or file name on the way."""
    parts = rel.replace("\\", "/").split("/")
    return rel.lower().endswith(".md") and not any(is_skipped(part) for part in parts)


def entry_id(root: str, rel: str) -> str:
    """Stable id of the entry at `rel` under `root` ('project' or 'global')."""
    import hashlib  # not at the top: the hooks import this module and never need it

    return hashlib.sha1(f"{root}:{rel}".encode()).hexdigest()[:16]


def slug_for(root: str, rel: str) -> str:
    """Short, stable, derived from the path: 'gotcha/pool-timeout'; global ones say so."""
    stem = rel[:-3] if rel.lower().endswith(".md") else rel
    return stem if root == "project" else GLOBAL_PREFIX + stem


def slug_candidates(name: str) -> list[str]:
    """Every full slug a short name may stand for, most literal first.

    A slug typed by a person, a `Brain: <slug>` breadcrumb or a `[[link]]` may leave out
    `global/`, the type folder, or `.md`: spelled out, each candidate is an exact (indexed)
    lookup instead of a LIKE scan over every entry."""
    bare = name.strip()
    bare = (bare[:-3] if bare.lower().endswith(".md") else bare).strip("/")
    if bare.startswith("./"):
        bare = bare[2:]
    if not bare:
        return []
    out = [bare]
    for prefix in ("", *(f"{kind}/" for kind in ENTRY_TYPES)):
        out += [prefix + bare, GLOBAL_PREFIX + prefix + bare]
    return list(dict.fromkeys(candidate for candidate in out if candidate))


def names_of(slug: str, rel: str) -> list[str]:
    """How a breadcrumb may name this entry: its slug, without `global/`, without the type folder, its stem."""
    bare = slug.removeprefix(GLOBAL_PREFIX)
    names = [slug, bare]
    if "/" in bare:
        names.append(bare.split("/", 1)[1])
    stem = rel.rsplit("/", 1)[-1]
    names.append(stem[:-3] if stem.lower().endswith(".md") else stem)
    return list(dict.fromkeys(names))
