"""What a caller asks of the brain, declared once: the fields of a search (`SearchRequest`, whose
`Selection` list and export share) and of a save (`SaveRequest`), each with its type, default, limits and
one line of description (`pinky.base.declare`); and `EntryHead`, the fields every answer about an entry
starts with (`pinky.knowledge.entries.Entry`, `pinky.search.hybrid.Hit`). The core reads these values
(`pinky.search.request`, `pinky.knowledge.entries`); the CLI's options and the MCP tools' arguments are
derived from them, so a new field is one line here (and its use in the core), not one more parameter in
every front end.

Stdlib only: `pinky-brain --help` builds its options from these without loading the core. No `from __future__
import annotations`: the front ends read each field's type as it is, without evaluating strings.
"""

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from pinky.base.declare import declared, specified
from pinky.base.layout import ENTRY_TYPES
from pinky.base.validate import (
    MAX_BODY_CHARS,
    MAX_HYPOTHETICAL_CHARS,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MAX_QUESTIONS,
    MAX_TAGS,
    MAX_TITLE_CHARS,
)

SEARCH_MODES = ("hybrid", "keyword", "semantic", "bm25", "vector")  # keyword = bm25, semantic = vector
EVERY_TYPE = tuple(ENTRY_TYPES)


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which entries: a scope or project, a type, tags (all must match), freshness (`since`: an ISO date/time or
    a span like 30d), and which versions: the current ones (default), those valid `at` a day, or all of them
    (`include_superseded`)."""

    scope: str | None = declared(None, flag="--scope", doc="global or project:<name>.",
                                 help="'global', 'project' (this project) or 'project:<name>'.")
    project: str | None = declared(None, flag="--project", help="Only this project (same as --scope project:<name>).")
    type: str | None = declared(None, flag="--type", choices=EVERY_TYPE, help="Only entries of this type.")
    tags: Sequence[str] | None = declared(None, flag="--tag", max_length=MAX_TAGS,
                                          doc="Only entries with all of these.",
                                          help="Only entries with this tag (repeat: all must match).")
    since: str | None = declared(None, flag="--since", max_length=60, doc="ISO date or span back (30d).",
                                 help="Only entries verified, created or changed since then: 2026-11-01, or a span "
                                      "like 30d.")
    at: str | None = declared(None, flag="--at", metavar="DATE", max_length=40, doc="A date: what was valid then.",
                              help="What was valid on that day (superseded entries included).")
    include_superseded: bool = declared(False, flag="--all", doc="Also replaced entries.",
                                        help="Also entries a newer one superseded.")


# What an export selects by: a Selection but the fields an export fixes itself (every version of every entry, so
# neither `at` nor `include_superseded`; `scope: project:<name>` says what `project` would). The CLI's `export` and
# the MCP's `brain_export` both take exactly these.
EXPORT_SKIPS = ("project", "at", "include_superseded")


@dataclass(frozen=True)
class SearchRequest(Selection):
    """One search. `mode`: hybrid, bm25 (keyword) or vector (semantic). `context_file`: the file being worked
    on; entries linked to it rank higher. `hypothetical`: a draft answer whose embedding joins the query's on
    the vector side (HyDE by the calling agent). `record_usage`: count the hits as retrieved (telemetry).
    `explain`: each hit carries `parts`, its score and rank on each side (`pinky.search.fusion.explain_parts`)."""

    query: str = declared(min_length=1, max_length=MAX_QUERY_CHARS)
    _: KW_ONLY
    limit: int = declared(10, flag="--limit", short="-n", low=1, high=MAX_LIMIT, show_default=True,
                          help="How many results (1-100).")
    mode: str = declared("hybrid", flag="--mode", choices=SEARCH_MODES, show_default=True,
                         doc="keyword: exact identifiers, error codes; semantic: meaning, across languages.",
                         help="Which retrieval to run (keyword = bm25, semantic = vector).")
    context_file: str | None = declared(None, max_length=1000,
                                        doc="The file you are changing: entries tied to it rank higher.")
    hypothetical: str | None = declared(None, min_length=1, max_length=MAX_HYPOTHETICAL_CHARS,
                                        doc="A short draft of the answer you expect, in a note's words.")
    record_usage: bool = declared(False, tool=False)
    explain: bool = declared(False, tool=False)


@dataclass(frozen=True)
class SaveRequest:
    """One new note, as every front end asks for it (`pinky-brain save`, `brain_save`, `KnowledgeBase.save`).
    `scope`: 'global', 'project' or 'project:<name>'; with neither a scope nor a `project`, where it lands is
    `pinky.knowledge.entries.save_scope`'s to say. `files`: code paths it is about. `key`: the one fact it
    states, `subject`: what its status describes; either supersedes the current entry with the same one.
    `questions`: questions it answers, searched as a field of their own. A `type` of None is a note, or,
    when the save classifies, the type it suggests (and tags left out are suggested too). `candidate`: the id of
    the past-session candidate (`pinky.capture.candidates`) the note settles, taken off that list."""

    title: str = declared(flag="--title", short="-t", min_length=1, max_length=MAX_TITLE_CHARS,
                          doc="Short, specific, one line.", help="Short, descriptive title (max 300 characters).")
    body: str = declared(max_length=MAX_BODY_CHARS, doc="Markdown: the problem, the fix, why.")
    _: KW_ONLY
    type: str | None = declared(None, flag="--type", choices=EVERY_TYPE, doc=(
        "gotcha: trap and fix; pattern: how we do X; decision: choice and why; guide: steps. Default: suggested."),
        help="The kind of knowledge. [default: suggested from the note's words and its nearest entries, else note]")
    tags: Sequence[str] | None = declared(None, flag="--tag", max_length=MAX_TAGS, doc="Default: suggested.",
                                          help="A tag (repeatable, at most 32). [default: suggested tags]")
    project: str | None = declared(None, flag="--project", doc="Default: this project.",
                                   help="Save into the project scope of this name.")
    scope: str | None = declared(None, flag="--scope", doc="global: holds across projects; or project:<name>.",
                                 help="global writes into the global brain ($PINKY_HOME/brain); project or "
                                      "project:<name> into a project's. [default: this project]")
    files: Sequence[str] | None = declared(None, flag="--file", max_length=MAX_TAGS,
                                           doc="Code files (repo-relative) it is about.",
                                           help="A code path this note is about (repeatable).")
    key: str | None = declared(None, flag="--key", max_length=200, doc=(
        "ONE fact that can change (ci.node-version): replaces the entry with this key."),
        help="The one fact it states ('ci.node-version'): supersedes the entry with the same key.")
    subject: str | None = declared(None, flag="--subject", max_length=200, doc=(
        "Current state of something (deploy pipeline): replaces its last status."),
        help="What its status describes ('deploy pipeline'): supersedes the last status of it.")
    questions: Sequence[str] | None = declared(None, flag="--question", max_length=MAX_QUESTIONS, doc=(
        "Questions it answers, as a future session would ask."),
        help="A question the note answers (repeatable, at most 20): searched as a field of its own.")
    candidate: str | None = declared(None, flag="--candidate", max_length=40,
                                     doc="Id of a briefing candidate it settles: off that list.",
                                     help="The id of a past-session candidate this note settles (`pinky-brain "
                                          "import-sessions --candidates`): it leaves the list.")
    # Not an argument: who asks. An agent's save with no scope outside any project lands in the global brain (the
    # pinky-mcp contract); a person at the CLI is asked to say which (`pinky-brain init`, or --scope global).
    unscoped_outside_project: str = declared("global", tool=False)


@dataclass(frozen=True)
class UpdateRequest:
    """A change to one entry, as `pinky-brain update` and `brain_update` ask for it: what is given changes, what is
    not stays. `expected_version`: the version the caller read, and a file changed since is a conflict (an agent
    always says which it read; the CLI, when not told, takes the one it reads now). `verified`: the caller checked
    it still holds today, which sets `last_verified` to today."""

    slug: str = declared(min_length=1, max_length=500)
    _: KW_ONLY
    expected_version: str | None = declared(None, flag="--expected-version", min_length=1, max_length=100,
                                            tool_required=True, doc="The version you read.",
                                            help="Write only if the entry still has this version (from "
                                                 "pinky-brain get).")
    title: str | None = declared(None, flag="--title", short="-t", max_length=MAX_TITLE_CHARS, help="A new title.")
    body: str | None = declared(None, max_length=MAX_BODY_CHARS, doc="Replaces the whole body.")
    tags: Sequence[str] | None = declared(None, flag="--tag", max_length=MAX_TAGS,
                                          help="Replace the tags with these (repeatable).")
    type: str | None = declared(None, flag="--type", choices=EVERY_TYPE, help="A new type.")
    last_verified: str | None = declared(None, max_length=40, doc="A date it was confirmed.")
    verified: bool = declared(False, doc="true: you checked it still holds today.")
    questions: Sequence[str] | None = declared(None, flag="--question", max_length=MAX_QUESTIONS, doc=(
        "Questions it answers, as a future session would ask."), help="Replace the questions it answers (repeatable).")

    def changes(self) -> dict[str, Any]:
        """What changes, as `KnowledgeBase.update` takes it (None: stays); `verified` is today's last_verified."""
        verified_on = self.last_verified
        if self.verified and verified_on is None:
            from pinky.base.dates import now_utc

            verified_on = now_utc().date().isoformat()
        return {"title": self.title, "body": self.body, "tags": None if self.tags is None else list(self.tags),
                "type": self.type, "last_verified": verified_on,
                "questions": None if self.questions is None else list(self.questions)}


@dataclass(frozen=True)
class EntryHead:
    """What names an entry and says where it lives: the fields an Entry (a whole note) and a Hit (a search
    result) both start with, and the MCP tools' results describe from here."""

    slug: str = field(metadata=specified(doc="Stable handle: pass it to brain_get / brain_related / brain_update."))
    path: str = field(metadata=specified(doc="The markdown file; cite it."))
    title: str
    type: str
    scope: str
    project: str | None
    tags: list[str]
