"""Export and import: the whole brain (or what filters keep) as JSON lines, and back, without loss.

One object a line: `{"pinky_export": 1, "slug", "root", "path", "scope", "project", "type", "title",
"content_hash", "text"}`, where `text` is the note file exactly as it is on disk (frontmatter and body),
so an import into an empty brain writes every file back byte for byte at the same place under its
root. (A project note takes the scope of the project it is imported into, unless its frontmatter names
its `project`; `rescoped` lists the notes whose scope changed that way.) Import never overwrites: a note
whose exact text is already in the brain is skipped (`duplicates`); one whose path is taken by a
different note gets a numbered name (`renamed`, and it says so). An import never rewrites a note to
hide a secret: one that holds a credential is written as it is and listed in `secrets` (pinky hides
it on display, and `pinky sync` holds it back from the push); `redacted` stays empty, for
compatibility.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pinky import indexer
from pinky.errors import InvalidInput
from pinky.fileio import create_new, ensure_inside, write_numbered
from pinky.index import Index
from pinky.layout import ROOTS, is_note, slug_for
from pinky.markdown import content_hash
from pinky.secret_scan import find_secrets
from pinky.store import entries as eq
from pinky.store import hygiene as hq
from pinky.store import retrieval as rq
from pinky.validate import MAX_BODY_CHARS

FORMAT = 1
MAX_TEXT_CHARS = 2 * MAX_BODY_CHARS  # body and frontmatter; a bigger note is not something pinky wrote


def export_records(index: Index, filters: rq.Filters) -> Iterator[dict[str, Any]]:
    """One record per entry the filters keep (superseded ones too unless filtered), read from its file."""
    where, params = filters.sql()
    for row in hq.export_rows(index.conn, where, params):
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


def parse_record(line: str) -> Record:
    """A checked export record; InvalidInput saying what is wrong with it."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict) or data.get("pinky_export") != FORMAT:
        raise InvalidInput(f'not a pinky export record (it needs "pinky_export": {FORMAT})')
    root, rel, text = data.get("root"), data.get("path"), data.get("text")
    if root not in ROOTS:
        raise InvalidInput(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
    if not isinstance(rel, str) or not is_note(rel) or rel.startswith("/") or ".." in PurePosixPath(rel).parts \
            or "\\" in rel or "\x00" in rel:
        raise InvalidInput(f"path {str(rel)[:80]!r} is not a note path inside a knowledge folder")
    if not isinstance(text, str) or "\x00" in text or len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"text must be a string without NUL bytes, at most {MAX_TEXT_CHARS:,} characters")
    scope = data.get("scope")
    return Record(root, rel, slug_for(root, rel), text, scope if isinstance(scope, str) else None)


def secret_kinds(text: str) -> list[str]:
    """The kinds of credential a note's text holds (pinky.redact), to report; the text is not changed."""
    return sorted({finding.kind for finding in find_secrets(text)})


def import_lines(index: Index, lines: Iterable[str], *, root: str | None = None,
                 embed: bool = True) -> dict[str, Any]:
    """Write every record not already in the brain into its root (or `root`), then index them."""
    if root is not None and root not in ROOTS:
        raise InvalidInput(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
    report: dict[str, Any] = {"imported": [], "renamed": [], "duplicates": [], "redacted": [], "secrets": [],
                               "rescoped": [], "errors": []}
    known = hq.slugs_by_hash(index.conn)
    written: list[tuple[Path, Record]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = parse_record(line)
            path = _write_record(index, record, root or record.root, known, report)
        except InvalidInput as exc:
            report["errors"].append(f"line {number}: {exc}")
            continue
        if path is not None:
            written.append((path, record))
    if written:  # one catch-up, batched, instead of a transaction per file
        indexer.reindex(index, embed=embed)
    for path, record in written:
        row = eq.entry_at(index.conn, root or record.root, path.relative_to(index.root_dir(root or record.root))
                          .as_posix())
        if row is not None and record.scope and row["scope"] != record.scope:  # another project's name here
            report["rescoped"].append({"slug": row["slug"], "was": record.scope, "now": row["scope"]})
    return report


def _write_record(index: Index, record: Record, root: str, known: dict[str, str],
                  report: dict[str, Any]) -> Path | None:
    roots = index.config.roots()
    if root not in roots:
        raise InvalidInput(f"{record.slug}: a project note, and there is no project here; run inside a pinky "
                           "project, or import it into the global brain (--root global)")
    text, kinds = record.text, secret_kinds(record.text)
    digest = content_hash(text.encode("utf-8"))
    if digest in known:
        report["duplicates"].append({"slug": record.slug, "same_as": known[digest]})
        return None
    base = roots[root]
    target = Path(ensure_inside(base / record.path, base))
    if not create_new(target, text):
        if target.read_bytes() == text.encode("utf-8"):
            report["duplicates"].append({"slug": record.slug, "same_as": slug_for(root, record.path)})
            return None
        target = Path(write_numbered(target.parent, target.stem, text))
        report["renamed"].append({"slug": record.slug,
                                  "new_slug": slug_for(root, target.relative_to(base).as_posix())})
    slug = slug_for(root, target.relative_to(base).as_posix())
    known[digest] = slug
    report["imported"].append(slug)
    if kinds:
        report["secrets"].append({"slug": slug, "kinds": kinds})
    return target
