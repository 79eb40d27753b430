"""The always-applied rules file, for hosts whose hooks cannot show the model anything (Cursor, Copilot CLI,
Windsurf): the session digest lives in a file the host itself puts in front of the model instead.

- Cursor: `.cursor/rules/pinky-brain.mdc` with `alwaysApply: true` (https://cursor.com/docs/context/rules).
- Windsurf: `.windsurf/rules/pinky-brain.md` with `trigger: always_on`
  (https://docs.windsurf.com/windsurf/cascade/memories#rules).
- Copilot CLI (and any host that reads AGENTS.md): a block between two markers in AGENTS.md, which a rewrite
  replaces whole and nothing else of the file is touched.

A file of pinky's own is listed in the repository's `.git/info/exclude` (local to the clone: the user's .gitignore
is not changed), so it never reaches a commit and never conflicts in a merge. The digest is capped at MAX_CHARS,
credentials hidden (`pinky.base.shown`), and written atomically, only when its text changed: rewriting it at every
session start leaves the file alone when nothing is new.
"""

from __future__ import annotations

import os

from pinky.base.fileio import atomic_write
from pinky.base.shown import shown
from pinky.hosts.catalog import Host

MAX_CHARS = 2000
BEGIN = "<!-- pinky-brain:digest:begin (rewritten by pinky-brain's hooks; edit outside this block) -->"
END = "<!-- pinky-brain:digest:end -->"
HEADER = {
    "cursor": "---\ndescription: pinky-brain's digest of this project's brain (rewritten by its hooks)\n"
              "globs:\nalwaysApply: true\n---\n",
    "windsurf": "---\ntrigger: always_on\ndescription: pinky-brain's digest of this project's brain (rewritten by its "
                "hooks)\n---\n",
}


def rules_text(digest: str) -> str:
    """The digest as the rules file holds it: credentials hidden, at most MAX_CHARS, ending in a newline."""
    text = shown(digest.strip())
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1].rstrip() + "…"
    return text + "\n"


def rules_path(root: str, host: Host) -> str | None:
    """Where `host`'s rules file lives in the repository at `root`; None for a host that needs none."""
    return os.path.join(root, *host.rules_file.split("/")) if host.rules_file else None


def write_rules(root: str, host: Host, digest: str) -> str | None:
    """Write (or refresh) `host`'s rules file under `root` with `digest`; the path written, or None when the file
    already held exactly this (or the host needs none). OSError when the file cannot be written."""
    path = rules_path(root, host)
    if path is None:
        return None
    body = rules_text(digest)
    try:
        with open(path, encoding="utf-8") as handle:
            old: str | None = handle.read()
    except FileNotFoundError:
        old = None
    if os.path.basename(path) == "AGENTS.md":
        new = replace_block(old or "", body)
    else:
        new = HEADER.get(host.name, "") + body
    if new == old:
        return None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, new.encode("utf-8"))
    if os.path.basename(path) != "AGENTS.md":
        exclude_locally(root, host.rules_file or "")
    return path


def replace_block(text: str, body: str) -> str:
    """`text` with the marked block holding `body`: replaced whole where it is, appended where it is not."""
    block = f"{BEGIN}\n{body}{END}\n"
    start = text.find(BEGIN)
    end = text.find(END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:
        after = text[end + len(END):]
        return text[:start] + block + (after[1:] if after.startswith("\n") else after)
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    return text + separator + block


def remove_rules(root: str, host: Host) -> str | None:
    """Take pinky's rules out again (the file, or the block of AGENTS.md); the path changed, or None."""
    path = rules_path(root, host)
    if path is None or not os.path.exists(path):
        return None
    if os.path.basename(path) != "AGENTS.md":
        os.unlink(path)
        return path
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    after = text[end + len(END):]
    kept = text[:start].rstrip("\n") + ("\n" if text[:start].strip() else "") + (after[1:] if after[:1] == "\n"
                                                                                   else after)
    atomic_write(path, kept.encode("utf-8"))
    return path


def exclude_locally(root: str, relative: str) -> bool:
    """List `relative` in the clone's `.git/info/exclude` (once); False where `root` is no git work tree."""
    info = os.path.join(root, ".git", "info")
    if not relative or not os.path.isdir(os.path.join(root, ".git")):
        return False
    exclude = os.path.join(info, "exclude")
    line = "/" + relative
    try:
        with open(exclude, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = ""
    if line in text.splitlines():
        return True
    os.makedirs(info, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write(("\n" if text and not text.endswith("\n") else "") + line + "\n")
    return True
