"""Entries: create, read and update notes, edit their frontmatter, and find near-duplicates
(soft delete and restore are `pinky.knowledge.archive`).

Markdown is written first (atomically: readers see the old file or the new one, never half of
one), then the index is updated. `version` is the content hash of the file, so an update only
lands on the text the caller read (optimistic concurrency); an edit rewrites only the frontmatter
fields it changes (`pinky.text.frontmatter_edit`). Update, delete and restore hold a lock
beside the note (`pinky.knowledge.edit_locks`, shared by every process and every PINKY_HOME that edits
the same folder) and look at the file again under it, so of two racing edits exactly one lands and
the other gets a Conflict or NotFound. Every path is checked to stay inside its root once links are
followed.

Secrets: what is written (title, body, an archive reason) passes `pinky.base.redact` first, and `get`
redacts the text it returns too, for notes written by hand or before a format was known; the
`redacted` field of the returned Entry names the kinds replaced.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinky.base.dates import now_utc, valid_day
from pinky.base.declare import specified
from pinky.base.fileio import (
    atomic_write,
    ensure_inside,
    read_regular,
    unwritable,
    write_numbered,
)
from pinky.base.layout import slug_for
from pinky.base.operations import EntryHead, SaveRequest
from pinky.base.redact import redact, redact_kinds
from pinky.base.validate import (
    MAX_BODY_CHARS,
    clean_text,
    clean_title,
    normalise_tag,
    resolve_scope,
    validate_questions,
    validate_slug,
    validate_tags,
    validate_type,
)
from pinky.errors import Conflict, InvalidInput, NotFound, NotInProject, ReadOnlyFolder
from pinky.indexing import healing, indexer
from pinky.indexing.index import Index
from pinky.knowledge import duplicates, supersession
from pinky.knowledge.edit_locks import edit_lock
from pinky.search import gaps
from pinky.search import hybrid as search
from pinky.store import entries as store_entries
from pinky.store import retrieval
from pinky.text.frontmatter_edit import rewrite
from pinky.text.markdown import content_hash, render, split_frontmatter

if TYPE_CHECKING:
    from pinky.config import Config

__all__ = ["Entry", "SaveRequest", "get", "save", "save_scope", "update"]

# Cosine similarity above which a new note most likely repeats an existing one (USE: paraphrases of
# one fact score ~0.8-0.95, notes on merely related topics ~0.4-0.7).
MAX_STEM = 60
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """ASCII file stem for a title: 'El pool de PG se cuelga' -> 'el-pool-de-pg-se-cuelga'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    stem = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")[:MAX_STEM].strip("-")
    return stem or "entry"


@dataclass(frozen=True)
class Entry(EntryHead):
    """A whole note: its head (`EntryHead`: slug, path, title, type, scope, project, tags), dates, code files,
    body and the `version` an update must name."""

    created: str | None
    last_verified: str | None
    files: list[str] = field(metadata=specified(doc="Code files this entry is about."))
    body: str
    version: str = field(metadata=specified(doc="Content hash; pass it as expected_version to brain_update."))
    meta: dict[str, Any] = field(default_factory=dict, metadata=specified(doc="All frontmatter fields."))
    redacted: list[str] = field(default_factory=list, metadata=specified(doc=(
        "Kinds of secret (github-token, password, secret, ...) replaced by [REDACTED:<kind>] markers: in the "
        "text written (brain_save, brain_update) or in the text shown (brain_get). Empty when none.")))
    classification: dict[str, Any] | None = None  # a save's suggested type and tags (pinky.knowledge.classify)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["classification"] is None:
            del data["classification"]
        return data


def _listed(value: Any) -> Any:
    """A tuple of strings as the list the checks and the frontmatter expect; anything else as given (checked later)."""
    return list(value) if isinstance(value, tuple) else value


def find(index: Index, slug: str) -> Any:
    """The index row of the entry a (possibly shortened) slug names."""
    name = validate_slug(slug)
    rows = store_entries.resolve_slug(index.conn, name)
    if len(rows) > 1:
        raise NotFound(f"slug {name!r} is ambiguous: {', '.join(r['slug'] for r in rows[:5])}")
    if not rows:
        raise NotFound(f"no entry with slug {name!r}; search for it first (brain_search, or pinky-brain search)")
    return rows[0]


def _file_of(index: Index, row: Any) -> Path:
    base = index.root_dir(row["root"])  # the file, and its folders, must not be links out of the root
    return Path(ensure_inside(base / row["path"], base, done="read or written"))


def _gone(row: Any) -> NotFound:
    return NotFound(f"entry {row['slug']!r} was deleted or moved meanwhile; search for it again")


def file_of(index: Index, slug: str) -> Path:
    """The markdown file of the entry a slug names."""
    return _file_of(index, find(index, slug))


def save(index: Index, request: SaveRequest, *, embed: bool = True, draft: bool = False,
         classify: bool = False) -> Entry:
    """Write a new note atomically into the right root, then index it at once. A draft (written by
    the Stop hook's capture, not by a person or the agent) says so in its frontmatter.

    With a `key` or `subject`, the current entries of the same scope with the same one are superseded
    (`pinky.knowledge.supersession`); a `subject` makes a default `note` a `status`. With `classify`, a type left
    None and missing tags are suggested and applied, given tags mapped onto the existing vocabulary
    (`pinky.knowledge.classify`); the result's `classification` says what was suggested and applied."""
    title, hidden = _redacted(clean_title(request.title), [])
    body = clean_text(request.body, "body", MAX_BODY_CHARS)
    settles = _settles(index.config, request.candidate)
    type, tags, suggestion = request.type, _listed(request.tags), None
    if classify:
        from pinky.knowledge.classify import for_save

        type, tags, suggestion = for_save(index, title, body, type, tags, request.subject)
    fact, found = supersession.fact_meta(request.key, request.subject)
    tag_list, hidden = _tags(tags, hidden + found)
    type = "note" if type is None else type
    kind = "status" if request.subject is not None and type == "note" else validate_type(type)
    meta: dict[str, Any] = {"title": title, "type": kind, "tags": tag_list, **fact}
    body, hidden = _redacted(body, hidden)
    resolved = save_scope(index.config, request.scope, request.project, request.unscoped_outside_project)
    root = "global" if resolved == "global" else "project"
    if root == "project":
        meta["project"] = resolved.split(":", 1)[1]
    elif request.project:
        meta["project"] = request.project
    today = now_utc()
    meta["created"] = today.isoformat()
    meta["last_verified"] = today.date().isoformat()
    if request.files:
        meta["files"], hidden = _redacted_list(validate_tags(_listed(request.files), "files"), hidden)
    if request.questions:
        meta["questions"], hidden = _redacted_list(validate_questions(_listed(request.questions)), hidden)
    if draft:
        meta["draft"] = True
    older = supersession.older_versions(index, str(resolved), fact) if fact else []
    if older:
        meta["supersedes"] = older[0]["slug"] if len(older) == 1 else [row["slug"] for row in older]
        meta["valid_from"] = today.date().isoformat()
    directory = Path(ensure_inside(index.root_dir(root) / meta["type"], index.root_dir(root)))
    try:
        path = Path(write_numbered(directory, slugify(meta["title"]), render(meta, body)))
    except OSError as exc:
        if not unwritable(exc):
            raise
        raise ReadOnlyFolder(index.root_dir(root), f"{exc.strerror.lower() if exc.strerror else exc} (a read-only "
                             "checkout or mount?)", offer_global=root == "project") from None
    fallback = slug_for(root, path.relative_to(index.root_dir(root)).as_posix())
    saved = healing.after_write(index, path, lambda slug: get(index, slug or fallback), embed=embed)
    if older:
        mark_superseded(index, older, saved.slug, today.date().isoformat(), embed)
    if index.config.telemetry:
        gaps.close_answered(index, saved.slug, f"{title}\n{body}")
    _settle(settles, request.candidate)
    return replace(saved, redacted=hidden, classification=suggestion.as_dict() if suggestion else None)


def _settles(config: Config, candidate: str | None) -> Path | None:
    """The list of past-session candidates a save takes `candidate` off; refused before anything is written."""
    if candidate is None:
        return None
    from pinky.capture.candidates import open_candidate

    return open_candidate(str(config.state_dir), str(config.save_dir) if config.save_dir else None, candidate)


def _settle(candidates: Path | None, candidate: str | None) -> None:
    """Once the note is written, the past-session candidate it settles leaves the list."""
    if candidates is not None and candidate is not None:
        from pinky.capture.candidates import dismiss

        dismiss(candidates, [candidate])


def save_scope(config: Config, scope: str | None, project: str | None, outside_project: str = "global") -> str:
    """Where a save lands, as 'global' or 'project:<name>': the `project` named (a `scope` that says otherwise
    is refused); else the `scope` given ('project' is the one the caller runs in); else, with neither, the
    project the caller runs in (an initialised one, or PINKY_PROJECT: knowledge is committed with the code),
    and outside any project the global brain, or, with `outside_project="ask"` (a person at the CLI, who may
    have meant a repository not yet initialised), NotInProject. Every front end leaves both None for that default."""
    resolved = resolve_scope(scope, project, config.project)
    if resolved is not None:
        return resolved
    if config.project_explicit or config.in_project:
        return f"project:{config.project}"
    if outside_project == "ask":
        raise NotInProject("a save without --scope")
    return "global"


def mark_superseded(index: Index, older: list[Any], new_slug: str, day: str, embed: bool) -> list[str]:
    """Mark each older entry superseded by `new_slug` as of `day`; returns the slugs marked.

    One that is gone, has malformed frontmatter or was superseded by another entry meanwhile is left
    as it is."""

    def change(meta: dict[str, Any]) -> bool:
        if meta.get("superseded_by") not in (None, "", new_slug):
            return False
        meta["superseded_by"] = new_slug
        meta.setdefault("valid_until", day)
        return True

    marked = []
    for row in older:
        try:
            if edit_meta(index, row, change, embed=embed):  # vectors from the cache: the text is the same
                marked.append(row["slug"])
        except (NotFound, InvalidInput):
            continue
    return marked


def edit_meta(index: Index, row: Any, change: Callable[[dict[str, Any]], bool | None], *,
              embed: bool = True) -> bool:
    """Edit a note's frontmatter under its edit lock: `change(meta)` edits the dict (returning False
    leaves the file as it is), only the lines of the fields it changed are rewritten
    (`pinky.text.frontmatter_edit`), then the note is indexed. True when the file was written.

    NotFound when the note is gone, InvalidInput when its frontmatter is malformed; `change` may raise."""
    path = _file_of(index, row)
    with edit_lock(index, row["root"], row["path"]):
        try:
            text = read_regular(path).decode("utf-8")
        except FileNotFoundError:
            raise _gone(row) from None
        except UnicodeDecodeError:
            raise InvalidInput(f"{path} is not valid UTF-8; fix it by hand first") from None
        meta, _, _, error = split_frontmatter(text)
        if error:
            raise InvalidInput(f"{path} has malformed frontmatter ({error}); fix it by hand first")
        if change(meta) is False:
            return False
        atomic_write(path, rewrite(text, meta))
        healing.after_write(index, path, lambda slug: slug, embed=embed)
    return True


def _redacted(text: str, kinds: list[str]) -> tuple[str, list[str]]:
    """`text` with its secrets replaced, and `kinds` plus the kinds replaced in it."""
    clean, found = redact_kinds(text)
    return clean, sorted({*kinds, *found})


def _redacted_list(values: list[str], kinds: list[str]) -> tuple[list[str], list[str]]:
    """Each value with its secrets replaced (a token pasted as a tag or a path), and the kinds so far."""
    cleaned = []
    for value in values:
        value, kinds = _redacted(value, kinds)
        cleaned.append(value)
    return list(dict.fromkeys(cleaned)), kinds


def _tags(values: Any, kinds: list[str]) -> tuple[list[str], list[str]]:
    """Tags as kept: redacted (before any case change hides a key's shape), then normalised."""
    cleaned, kinds = _redacted_list(validate_tags(values), kinds)
    return list(dict.fromkeys(normalise_tag(tag) for tag in cleaned)), kinds


def get(index: Index, slug: str) -> Entry:
    """A whole entry, read fresh from its markdown file (the version is its content hash)."""
    row = find(index, slug)
    path = _file_of(index, row)
    if not path.exists():
        indexer.index_file(index, path, embed=False)
        raise NotFound(f"entry {slug!r} was removed from disk")
    if content_hash(path.read_bytes()) != row["content_hash"]:
        indexer.index_file(index, path, embed=False)
        row = store_entries.entry_by(index.conn, "id", row["id"])
    title, hidden = _redacted(row["title"], [])
    body, hidden = _redacted(row["body"], hidden)  # a secret in an old or hand-written note is not shown
    return Entry(
        slug=row["slug"], path=index.display_path(row["root"], row["path"]), title=title,
        type=row["type"], scope=row["scope"], project=row["project"], tags=json.loads(row["tags"]),
        created=row["created"], last_verified=row["last_verified"], files=json.loads(row["files"]),
        body=body, version=row["content_hash"], meta=json.loads(row["meta"]), redacted=hidden,
    )


def update(index: Index, slug: str, expected_version: str, *, title: str | None = None, body: str | None = None,
           tags: list[str] | None = None, type: str | None = None, last_verified: str | None = None,
           questions: list[str] | None = None, fields: dict[str, str | None] | None = None) -> Entry:
    """Change an entry only if nobody changed it since `expected_version` (its content hash). None keeps a
    field as it is; `questions=[]` removes them. `fields`: hygiene fields of the frontmatter
    (`EDITABLE_FIELDS`: dates and slugs) set to a value, or removed with None (how undo puts one back)."""
    if not isinstance(expected_version, str) or not expected_version.strip():
        raise InvalidInput("expected_version is required: take it from brain_get / pinky-brain get")
    hygiene_fields = _hygiene_fields(fields)
    row = find(index, slug)
    path = _file_of(index, row)
    with edit_lock(index, row["root"], row["path"]):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise _gone(row) from None
        current = content_hash(raw)
        if current != expected_version.strip():
            raise Conflict(f"entry {row['slug']!r} changed: its version is {current}, not "
                           f"{expected_version}; read it again and reapply your change")
        text = raw.decode("utf-8", errors="replace")
        meta, old_body, _, error = split_frontmatter(text)
        if error:
            raise InvalidInput(f"{path} has malformed frontmatter ({error}); fix it by hand first")
        title, hidden = (None, []) if title is None else _redacted(clean_title(title), [])
        tag_list, hidden = (None, hidden) if tags is None else _tags(tags, hidden)
        changes = {"title": title,
                   "type": None if type is None else validate_type(type),
                   "tags": tag_list,
                   "last_verified": None if last_verified is None else valid_day(last_verified, "last_verified")}
        meta.update({key: value for key, value in changes.items() if value is not None})
        for name, value in hygiene_fields.items():  # in place when present: an undo restores the file's order
            if value is None:
                meta.pop(name, None)
            else:
                meta[name] = value
        if questions is not None:
            asked, hidden = _redacted_list(validate_questions(questions), hidden)
            meta.pop("questions", None)
            meta.update({"questions": asked} if asked else {})
        new_body = old_body if body is None else clean_text(body, "body", MAX_BODY_CHARS)
        new_body, hidden = _redacted(new_body, hidden)  # an old secret in a kept body goes too
        atomic_write(path, rewrite(text, meta, new_body))
        updated = healing.after_write(index, path, lambda _: get(index, row["slug"]))
    if index.config.telemetry and body is not None:  # a new body may answer what searches missed
        gaps.close_answered(index, updated.slug, f"{updated.title}\n{new_body}")
    return replace(updated, redacted=hidden)


EDITABLE_FIELDS = {"last_verified": "date", "valid_from": "date", "valid_until": "date",
                   "supersedes": "slug", "superseded_by": "slug"}


def _hygiene_fields(fields: dict[str, str | None] | None) -> dict[str, str | None]:
    """`update`'s `fields` checked: known names only, dates as days, slugs as one line each."""
    checked: dict[str, str | None] = {}
    for name, value in (fields or {}).items():
        kind = EDITABLE_FIELDS.get(name)
        if kind is None:
            raise InvalidInput(f"field {name!r} cannot be set this way; one of {', '.join(EDITABLE_FIELDS)}")
        if value is None:
            checked[name] = None
        elif kind == "date":
            checked[name] = valid_day(value, name)
        else:
            slug = validate_slug(value)
            if len(slug) > MAX_STEM * 8 or any(ord(c) < 32 for c in slug):
                raise InvalidInput(f"{name} must be one slug on one line, got {value!r}")
            checked[name] = redact(slug)
    return checked


def similar(index: Index, slug: str, *, threshold: float | None = None, limit: int = 3) -> list[search.Hit]:
    """Entries that likely say the same as this one (pinky.knowledge.duplicates): candidates to merge.

    Compares the entry's title and body (as the embedder sees a note) with every chunk vector, then
    judges each close one by meaning and shared words; `threshold` judges by the cosine alone instead.
    Empty when vectors are unavailable. Cheap enough to run on every save."""
    row = find(index, slug)
    if not index.vector_status()[0]:
        return []
    from pinky.text.model_input import embed_input

    query = index.embedder.embed([embed_input(row["title"], "", row["body"][:4000])])[0].astype("float32")
    if not query.any():
        return []
    floor = duplicates.CLOSE_SIMILARITY if threshold is None else threshold
    close = {entry: (chunk, round(score, 4)) for entry, score, chunk in
             reversed(search.vector_hits(index, query, retrieval.Filters())) if entry != row["id"] and score >= floor}
    if threshold is None:
        close = {entry: found for entry, found in close.items() if _says_the_same(index, row, entry, found[1])}
    matches = sorted(close.values(), key=lambda found: -found[1])
    # a superseded entry is not a duplicate to merge: a newer one (often this one) replaced it
    return [hit for hit in search.hits_for(index, matches, row["title"]) if not hit.superseded_by][:limit]


def _says_the_same(index: Index, row: Any, other_id: str, cosine: float) -> bool:
    other = store_entries.entry_by(index.conn, "id", other_id)
    return other is not None and duplicates.likely_duplicate(cosine, (row["title"], row["body"]),
                                                             (other["title"], other["body"]))
