"""Export and import: the whole brain (or what filters keep) as JSON lines, and back, without loss.

One object a line: `{"pinky_export": 1, "slug", "root", "path", "scope", "project", "type", "title",
"content_hash", "text"}`, where `text` is the note file exactly as it is on disk (frontmatter and body),
so an import into an empty brain writes every file back byte for byte at the same place under its
root. A project note belongs to the project it is imported into: a `project:` field that names
another project is set to this one (the only change an import makes to a note's text), and `rescoped`
lists the notes whose scope changed. Import never overwrites: a note whose exact text is already in
the root it goes to is skipped (`duplicates`; the same text in the other root does not count, so
`--root global` inside a project that holds it still fills the global brain); one whose path is taken
by a different note gets a numbered name (`renamed`, and it says so). A path holding a line break or
another control character (`pinky.base.shown.plain`) is renamed too, each such character becoming `-`
(`renamed`, with the reason): its text is written whole, and no name can put a line of its own into
what the agent reads. An import never rewrites a note to
hide a secret: one that holds a credential is written as it is and listed in `secrets` (pinky hides
it on display, and `pinky sync` holds it back from the push); `redacted` stays empty, for
compatibility.

A bad record never stops an import: each one is refused with its line number and the reason (not
JSON, nested too deeply, not UTF-8, a lone surrogate, a name too long for a file system, a path
under an existing file, ...), the rest is written, and everything written is indexed. The file itself
must be an export: a regular file (or, for the CLI, standard input or a pipe) of at most
PINKY_MAX_IMPORT_BYTES, read a line at a time with no line over MAX_LINE_BYTES, so /dev/zero or a
FIFO nobody writes to is refused at once instead of filling the memory or blocking for ever.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from pinky.base.fileio import UnsafeFile, create_new, ensure_inside, open_regular, write_numbered
from pinky.base.layout import ROOTS, is_note, slug_for
from pinky.base.locations import ENV_MAX_IMPORT_BYTES
from pinky.base.secret_scan import find_secrets
from pinky.base.shown import is_plain, plain
from pinky.base.validate import MAX_BODY_CHARS
from pinky.errors import InvalidInput
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.store import entries, hygiene_queries, retrieval
from pinky.text.frontmatter_edit import BOM, rewrite
from pinky.text.markdown import content_hash, split_frontmatter

FORMAT = 1
MAX_TEXT_CHARS = 2 * MAX_BODY_CHARS  # body and frontmatter; a bigger note is not something pinky wrote
# A record of MAX_TEXT_CHARS characters is at most ~1.2 MB as a JSON line (every character escaped
# as \u00XX); a longer line is refused without being held whole in memory.
MAX_LINE_BYTES = 2 << 20
# A file name pinky can write: the note's name plus the ~40 bytes of the temporary file it is
# written through must fit the 255 bytes file systems allow.
MAX_NAME_BYTES = 200
Known = dict[tuple[str, str], str]  # (root, content hash) -> a slug holding that text in that root


def export_records(index: Index, filters: retrieval.Filters) -> Iterator[dict[str, Any]]:
    """One record per entry the filters keep (superseded ones too unless filtered), read from its file."""
    where, params = filters.sql()
    for row in hygiene_queries.export_rows(index.conn, where, params):
        base = index.root_dir(row["root"])
        path = Path(ensure_inside(base / row["path"], base, done="read"))
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue  # deleted since the last reindex
        yield {"pinky_export": FORMAT, "slug": row["slug"], "root": row["root"], "path": row["path"],
               "scope": row["scope"], "project": row["project"], "type": row["type"], "title": row["title"],
               "content_hash": content_hash(raw), "text": raw.decode("utf-8", errors="replace")}


@dataclass(frozen=True)
class Record:
    root: str
    path: str
    slug: str
    text: str
    scope: str | None = None
    was: str | None = None  # the path exported, when it was not one line (`path` is then its plain form)


TAKEN = "a different note has that name"
NOT_ONE_LINE = "its path held a line break or control character, each now `-`"


def open_export(path: str | os.PathLike[str], limit: int, *, pipes: bool = False) -> BinaryIO:
    """An export file opened for `export_lines`; InvalidInput for anything that is not one.

    A regular file of at most `limit` bytes; with `pipes` (the CLI) also a pipe or FIFO, read until it
    ends. Never a device, a socket or a folder, and without `pipes` not a FIFO either: it is checked
    before it is opened, and opened without blocking, so nothing waits for a writer that never comes."""
    target = os.fspath(path)
    try:
        mode = os.stat(target).st_mode
        if pipes and stat.S_ISFIFO(mode):
            return open(target, "rb")  # noqa: SIM115 - the caller closes it
        handle = open_regular(target)
    except UnsafeFile as exc:
        raise InvalidInput(f"{exc}: import reads a file written by `pinky-brain export`; nothing was "
                           "imported") from None
    except FileNotFoundError:
        raise InvalidInput(f"{target} does not exist; nothing was imported") from None
    size = os.fstat(handle.fileno()).st_size
    if size > limit:
        handle.close()
        raise InvalidInput(f"{target} is {size:,} bytes, over the import limit of {limit:,} ({ENV_MAX_IMPORT_BYTES}); "
                           f"nothing was imported: raise {ENV_MAX_IMPORT_BYTES} if this really is an export")
    return handle


def export_lines(handle: BinaryIO, limit: int) -> Iterator[bytes | InvalidInput]:
    """The lines of an export file, one item per line (so their numbers hold): its bytes, or why it
    cannot be a record. Never holds more than MAX_LINE_BYTES of a line; stops after `limit` bytes
    (a stream: a regular file was measured by open_export), saying the rest was not read."""
    total = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        total += len(line)
        too_long = len(line) > MAX_LINE_BYTES
        while too_long and line and not line.endswith(b"\n") and total <= limit:  # skip the rest of it
            line = handle.readline(MAX_LINE_BYTES)
            total += len(line)
        if total > limit:
            yield InvalidInput(f"stopped after {limit:,} bytes, the import limit ({ENV_MAX_IMPORT_BYTES}): the rest "
                               "was not read")
            return
        yield InvalidInput(f"longer than {MAX_LINE_BYTES:,} bytes: not a record `pinky-brain export` writes") \
            if too_long else line


def parse_record(line: str | bytes) -> Record:
    """A checked export record; InvalidInput saying what is wrong with it."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"not UTF-8 (byte 0x{line[exc.start]:02x} at position {exc.start})") from None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply: a record is one flat object") from None
    if not isinstance(data, dict) or type(data.get("pinky_export")) is not int or data["pinky_export"] != FORMAT:
        raise InvalidInput(f'not a pinky-brain export record (it needs "pinky_export": {FORMAT})')
    root, rel, text = data.get("root"), data.get("path"), data.get("text")
    if root not in ROOTS:
        raise InvalidInput(f"root must be one of {', '.join(ROOTS)}, got {str(root)[:40]!r}")
    if not isinstance(rel, str) or not is_note(rel) or rel.startswith("/") or ".." in PurePosixPath(rel).parts \
            or "\\" in rel or "\x00" in rel:
        raise InvalidInput(f"path {str(rel)[:80]!r} is not a note path inside a knowledge folder")
    if not isinstance(text, str) or "\x00" in text or len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"text must be a string without NUL bytes, at most {MAX_TEXT_CHARS:,} characters")
    _check_unicode("path", rel)
    _check_unicode("text", text)
    longest = max(PurePosixPath(rel).parts, key=lambda part: len(part.encode("utf-8")))
    if len(longest.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidInput(f"path {rel[:60]!r}… has a name of {len(longest.encode('utf-8'))} bytes; pinky writes "
                           f"names of at most {MAX_NAME_BYTES} (file systems allow 255 with its temporary file)")
    scope = data.get("scope") if isinstance(data.get("scope"), str) else None
    if not is_plain(rel):
        safe = "".join(c if is_plain(c) else "-" for c in rel)
        return Record(root, safe, slug_for(root, safe), text, scope, was=rel)
    return Record(root, rel, slug_for(root, rel), text, scope)


def secret_kinds(text: str) -> list[str]:
    """The kinds of credential a note's text holds (pinky.base.redact), to report; the text is not changed."""
    return sorted({finding.kind for finding in find_secrets(text)})


def _check_unicode(name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{name} holds a lone surrogate (\\u{ord(value[exc.start]):04x} at character "
                           f"{exc.start}), which is not Unicode text") from None


def import_file(index: Index, file: str, *, root: str | None = None, embed: bool = True,
                pipes: bool = False, progress: indexer.Progress | None = None) -> dict[str, Any]:
    """Import an export file (see open_export; with `pipes`, `-` is standard input): opened first, so
    what is not an export is refused before anything else happens; then the index catches up with
    the markdown (what is on disk decides what is a duplicate) and the records are imported."""
    limit = index.config.max_import_bytes
    if pipes and file == "-":
        import sys

        handle = sys.stdin.buffer
    else:
        handle = open_export(Path(file).expanduser(), limit, pipes=pipes)
    with handle:
        indexer.reindex(index, embed=False, progress=progress)
        return import_lines(index, export_lines(handle, limit), root=root, embed=embed, progress=progress)


def import_lines(index: Index, lines: Iterable[str | bytes | InvalidInput], *, root: str | None = None,
                 embed: bool = True, progress: indexer.Progress | None = None) -> dict[str, Any]:
    """Write every record not already in its root (or in `root`) there, then index them.

    A line that cannot be imported (an InvalidInput item is one `export_lines` already refused) is
    listed in `errors` with its number and why, and the next one is read; what was written is indexed
    even when something unexpected stops the loop."""
    if root is not None and root not in ROOTS:
        raise InvalidInput(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
    report: dict[str, Any] = {"imported": [], "renamed": [], "duplicates": [], "redacted": [], "secrets": [],
                               "rescoped": [], "errors": []}
    known = hygiene_queries.slugs_by_hash(index.conn)
    written: list[tuple[str, str, str | None]] = []  # root, path under it, the scope it was exported with
    try:
        for number, line in enumerate(lines, 1):
            found = _import_line(index, line, root, known, report)
            if isinstance(found, str):
                report["errors"].append(f"line {number}: {found}")
            elif found is not None:
                written.append(found)
    finally:
        if written:  # one catch-up, batched, instead of a transaction per file
            indexer.reindex(index, embed=embed, progress=progress)
    for where, rel, scope in written:
        row = entries.entry_at(index.conn, where, rel)
        if row is not None and scope and row["scope"] != scope:  # another project's name here
            report["rescoped"].append({"slug": row["slug"], "was": scope, "now": row["scope"]})
    return report


def _import_line(index: Index, line: str | bytes | InvalidInput, root: str | None, known: Known,
                 report: dict[str, Any]) -> tuple[str, str, str | None] | str | None:
    """(root, path, exported scope) of the note a line wrote; None when it wrote none (blank, a
    duplicate); why, when the line was refused."""
    try:
        if isinstance(line, InvalidInput):
            raise line
        if not line.strip():
            return None
        record = parse_record(line)
    except InvalidInput as exc:
        return str(exc)
    where = root or record.root
    try:
        path = _write_record(index, record, where, known, report)
    except InvalidInput as exc:
        return str(exc)
    except OSError as exc:
        return f"{record.slug}: cannot write it ({exc.strerror or exc})"
    except Exception as exc:  # one odd record must not cost the others theirs
        return f"{record.slug}: not imported ({type(exc).__name__}: {exc})"
    if path is None:
        return None
    return where, path.relative_to(index.root_dir(where)).as_posix(), record.scope


def in_project(text: str, project: str | None) -> str:
    """A note's text with its `project:` field naming `project`: unchanged when it names no project, or
    this one, or its frontmatter cannot be read (the indexer then gives it this project's scope)."""
    if not project or "project" not in text:
        return text
    meta, _, _, error = split_frontmatter(text.removeprefix(BOM))
    if error or meta.get("project") in (None, project):
        return text
    return rewrite(text, {**meta, "project": project})


def _write_record(index: Index, record: Record, root: str, known: Known,
                  report: dict[str, Any]) -> Path | None:
    roots = index.config.roots()
    if root not in roots:
        raise InvalidInput(f"{record.slug}: a project note, and there is no project here; run inside a pinky "
                           "project, or import it into the global brain (--root global)")
    text = in_project(record.text, index.config.project) if root == "project" else record.text
    kinds = secret_kinds(text)
    digest = content_hash(text.encode("utf-8"))
    for same in (digest, content_hash(record.text.encode("utf-8"))):  # as exported, or as it is written here
        if (root, same) in known:
            report["duplicates"].append({"slug": record.slug, "same_as": known[root, same]})
            return None
    base = roots[root]
    target = Path(ensure_inside(base / record.path, base))
    for folder in target.relative_to(base).parents:
        if (base / folder).is_file():
            raise InvalidInput(f"{record.slug}: {folder.as_posix()} is a file in {root}, so the note cannot go "
                               "under it")
    if record.was is not None:
        report["renamed"].append({"slug": plain(slug_for(root, record.was)), "new_slug": record.slug,
                                  "why": NOT_ONE_LINE})
    if not create_new(target, text):
        if target.read_bytes() == text.encode("utf-8"):
            report["duplicates"].append({"slug": record.slug, "same_as": slug_for(root, record.path)})
            return None
        target = Path(write_numbered(target.parent, target.stem, text))
        report["renamed"].append({"slug": record.slug, "new_slug": slug_for(root, target.relative_to(base).as_posix()),
                                  "why": TAKEN})
    slug = slug_for(root, target.relative_to(base).as_posix())
    known[root, digest] = slug
    report["imported"].append(slug)
    if kinds:
        report["secrets"].append({"slug": slug, "kinds": kinds})
    return target
