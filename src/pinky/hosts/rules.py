"""The always-applied rules file, for hosts whose hooks cannot show the model anything (Cursor, Copilot CLI,
Windsurf): the session digest lives in a file the host itself puts in front of the model instead.

- Cursor: `.cursor/rules/pinky-brain.mdc` with `alwaysApply: true` (https://cursor.com/docs/context/rules).
- Windsurf: `.windsurf/rules/pinky-brain.md` with `trigger: always_on`
  (https://docs.windsurf.com/windsurf/cascade/memories#rules).
- Copilot CLI (and any host that reads AGENTS.md): a block between two markers in AGENTS.md, which a rewrite
  replaces whole and nothing else of the file is touched.

A file of pinky's own is listed in the repository's `.git/info/exclude` (local to the clone: the user's .gitignore
is not changed), so it never reaches a commit and never conflicts in a merge. The digest is capped at MAX_CHARS,
credentials hidden (`pinky.base.shown`), and written only when its text changed: rewriting it at every session start
leaves the file alone when nothing is new.

These files are read by other tools and AGENTS.md is committed, so they hold notes only: never the diary's prompts
and shell commands, and no note of the user's global brain in AGENTS.md. No text can end the block early: the
markers are whole lines, and marker and comment text in the digest is neutralised. Every read and write goes through
`pinky.base.repofiles`: a link that leads out of the repository, or a FIFO, is refused (one line), and a rewrite of
AGENTS.md loses no line another writer appends meanwhile. `pinky-brain setup <host> --remove` takes the block and the
files out again (`remove_rules`).
"""

from __future__ import annotations

import os

from pinky.base import repofiles
from pinky.base.locations import Locations
from pinky.base.shown import shown
from pinky.hosts.host import Host, named

MAX_CHARS = 2000
AGENTS = "AGENTS.md"
BEGIN = "<!-- pinky-brain:digest:begin (rewritten by pinky-brain's hooks; edit outside this block) -->"
END = "<!-- pinky-brain:digest:end -->"
def neutral(text: str) -> str:
    """`text` unable to end (or open) the block, or to open an HTML comment that hides what follows it."""
    return text.replace("<!--", "< !--").replace("-->", "-- >").replace("pinky-brain:digest:", "pinky-brain digest:")


def rules_text(digest: str) -> str:
    """The digest as the rules file holds it: credentials hidden, markers neutralised, at most MAX_CHARS, ending in
    a newline."""
    text = neutral(shown(digest.strip()))
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1].rstrip() + "…"
    return text + "\n"


def rules_path(root: str, host: Host) -> str | None:
    """Where `host`'s rules file lives in the repository at `root`; None for a host that needs none."""
    return os.path.join(root, *host.rules_file.split("/")) if host.rules_file else None


def write_rules(root: str, host: Host, digest: str) -> str | None:
    """Write (or refresh) `host`'s rules file under `root` with `digest`; the path written, or None when the file
    already held exactly this (or the host needs none). OSError when the file cannot be written, OutsideRepository
    (an OSError) when it is a link out of the repository or no regular file."""
    if host.rules_file is None:
        return None
    body = rules_text(digest)
    if host.rules_file == AGENTS:
        changed = repofiles.rewrite(root, AGENTS, lambda old: replace_block(old or "", body))
    else:
        new = host.rules_header + body
        changed = repofiles.rewrite(root, host.rules_file, lambda old: new)
        if changed:
            exclude_locally(root, host.rules_file)
    return rules_path(root, host) if changed else None


def rules_digest(loc: Locations, host: Host) -> str:
    """The digest a rules file holds: notes only (no diary lines), and only this project's in AGENTS.md, which
    teams commit."""
    from pinky.hosts.digest import DEFAULT_DIGEST_CHARS, DEFAULT_REVERIFY_DAYS, build_digest

    return build_digest(loc, since=None, session_id="", budget=DEFAULT_DIGEST_CHARS,
                        reverify_days=DEFAULT_REVERIFY_DAYS, diary=False, global_notes=host.rules_file != AGENTS)


def refresh_rules(loc: Locations, host: Host, digest: str | None = None) -> str | None:
    """Write `host`'s rules file in the project `loc` points at, with the notes-only digest (built here when not
    given), tool names spelled as `host` calls them; the path written, or None (unchanged, not a project, or a host
    that needs none). What the hooks of those hosts call."""
    if not loc.in_project or host.rules_file is None:
        return None
    written = write_rules(loc.base_dir, host, named(rules_digest(loc, host) if digest is None else digest, host))
    if written:
        try:
            remember(loc.state_dir, host, loc.base_dir)
        except OSError:
            pass  # then `setup --remove` finds this file only when run in this repository
    return written


# --- where the hooks wrote, for --remove ---------------------------------------------------------------------


def _record(state_dir: str) -> str:
    return os.path.join(state_dir, "hosts", "rules-written.jsonl")


def _records(state_dir: str) -> list[tuple[str, str]]:
    """(host, repository) of every rules file the hooks wrote, as remembered; a line cut by a crash is skipped."""
    import json

    from pinky.base.fileio import read_regular

    try:
        lines = read_regular(_record(state_dir), limit=repofiles.MAX_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            name, root = json.loads(line)
        except (ValueError, TypeError):
            continue
        if isinstance(name, str) and isinstance(root, str):
            found.append((name, root))
    return found


def written_roots(state_dir: str, host: Host) -> list[str]:
    """The repositories whose rules file (or AGENTS.md block) `host`'s hooks wrote, as remembered."""
    return list(dict.fromkeys(root for name, root in _records(state_dir) if name == host.name))


def remember(state_dir: str, host: Host, root: str) -> None:
    """Note that `host`'s rules were written in `root` (once), so `setup <host> --remove` finds them there. The
    record is the owner's alone (0600 in a 0700 folder): it names the user's repositories."""
    import json

    if root in written_roots(state_dir, host):
        return
    path = _record(state_dir)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps([host.name, root]) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def remove_everywhere(state_dir: str, host: Host, here: str, *, only_here: bool = False) -> tuple[list[str], list[str]]:
    """`setup <host> --remove`: take `host`'s rules out of the repository `here` and (unless `only_here`, for
    `--project`) of every repository its hooks wrote them in; (the paths changed, one line per repository where it
    was refused). The record then forgets `host`."""
    changed, refused = [], []
    for root in dict.fromkeys([here, *([] if only_here else written_roots(state_dir, host))]):
        try:
            path = remove_rules(root, host) if os.path.isdir(root) else None
        except OSError as exc:
            refused.append(f"{host.display}'s rules were left in {root}: {exc}")
            continue
        if path:
            changed.append(path)
    if not only_here:
        _forget(state_dir, host)
    return changed, refused


def _forget(state_dir: str, host: Host) -> None:
    import json

    from pinky.base.fileio import atomic_write

    kept = [json.dumps([name, root]) + "\n" for name, root in _records(state_dir) if name != host.name]
    if os.path.exists(_record(state_dir)):
        atomic_write(_record(state_dir), "".join(kept), mode=0o600, durable=False)


def _lines(text: str) -> tuple[list[str], str]:
    """`text` as lines with their endings, and the line ending it uses."""
    return text.splitlines(keepends=True), "\r\n" if "\r\n" in text else "\n"


def _block(lines: list[str]) -> tuple[int, int] | None:
    """(first, last) line of the marked block: the first END line with a BEGIN line above it (the nearest), so a
    marker line left alone by hand (a BEGIN without its END, an END without its BEGIN) is never taken for one."""
    bare = [line.rstrip("\r\n") for line in lines]
    after = -1
    for end in (i for i, line in enumerate(bare) if line == END):
        start = next((i for i in range(end - 1, after, -1) if bare[i] == BEGIN), None)
        if start is not None:
            return start, end
        after = end
    return None


def replace_block(text: str, body: str) -> str:
    """`text` with the marked block holding `body`: replaced whole where it is, appended where it is not."""
    lines, newline = _lines(text)
    block = newline.join([BEGIN, *body.rstrip("\n").split("\n"), END]) + newline
    found = _block(lines)
    if found:
        return "".join(lines[:found[0]]) + block + "".join(lines[found[1] + 1:])
    separator = "" if not text or text.endswith(newline * 2) else newline if text.endswith(newline) else newline * 2
    return text + separator + block


def without_block(text: str) -> str | None:
    """`text` with the marked block taken out (and the blank line before it); None when nothing else is left."""
    lines, newline = _lines(text)
    found = _block(lines)
    if found is None:
        return text
    before = "".join(lines[:found[0]]).rstrip("\r\n")
    kept = before + (newline if before.strip() else "") + "".join(lines[found[1] + 1:])
    return kept if kept.strip() else None


def remove_rules(root: str, host: Host) -> str | None:
    """Take pinky's rules out again (the file and its exclude line, or the block of AGENTS.md); the path changed,
    or None. OutsideRepository as write_rules."""
    if host.rules_file is None:
        return None
    if host.rules_file == AGENTS:
        return rules_path(root, host) if repofiles.rewrite(root, AGENTS, lambda old: old and without_block(old)) \
            else None
    removed = repofiles.remove(root, host.rules_file)
    exclude_locally(root, host.rules_file, remove=True)
    return removed and rules_path(root, host)


def exclude_locally(root: str, relative: str, *, remove: bool = False) -> bool:
    """List `relative` in the clone's `.git/info/exclude` (once), or take it out with `remove`; False where `root`
    is no git work tree of its own (or its exclude file is a link out of it)."""
    line = "/" + relative

    def change(text: str | None) -> str | None:
        lines = (text or "").splitlines()
        if remove:
            return "".join(f"{kept}\n" for kept in lines if kept != line) if line in lines else text
        if line in lines:
            return text
        return (text or "") + ("\n" if text and not text.endswith("\n") else "") + line + "\n"

    if not relative or not os.path.isdir(os.path.join(root, ".git")):
        return False
    try:
        repofiles.rewrite(root, ".git/info/exclude", change)
    except repofiles.OutsideRepository:
        return False
    return True
