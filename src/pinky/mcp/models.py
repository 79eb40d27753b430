"""Output models of the pinky-mcp tools: each one is a tool's declared outputSchema.

Field descriptions reach the client in the schema, so they say what a field is for.
No `from __future__ import annotations`: pydantic and the SDK read these at runtime.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pinky.hygiene.contradictions import MAX_CHECK_CHARS
from pinky.kb import EntryHead, Hit
from pinky.mcp.declared import result_model


class PageOut(BaseModel):
    offset: int = Field(description="Where this page starts (the `offset` given).")
    next_offset: int | None = Field(default=None, description=(
        "Call the tool again with the same arguments and this `offset` for the next page; null: no next page."))
    left_out: dict[str, int] = Field(default_factory=dict, description=(
        "Per list (or long text, in characters) cut to fit: how much this page left out."))
    shortened: list[str] = Field(default_factory=list, description=(
        "Values shortened to fit (dotted paths): what no page brings back; ask for less instead."))
    limit_chars: int = Field(description=(
        "The size limit of a result, text and structuredContent together (PINKY_MAX_RESULT_CHARS)."))


class ResultOut(BaseModel):
    """What every tool's output has: `page`, present only when the result was cut to fit the size limit."""

    page: PageOut | None = Field(default=None, description=(
        "Only when the result was cut to fit the size limit: what was left out and the offset of the next page."))


class HitOut(result_model(Hit, skip=("parts",))):  # type: ignore[misc]  # a search hit's fields, from Hit
    body: str | None = Field(None, description="The whole entry (format='full' only).")


class SearchOut(ResultOut):
    query: str
    mode: str = Field(description="What ran: hybrid, bm25 (keyword) or vector (semantic); bm25 when vectors "
                      "are unavailable.")
    notice: str | None = None
    count: int
    hits: list[HitOut]
    truncated: bool = Field(False, description="True when bodies were cut to fit the size budget.")


class EntryMetaOut(result_model(EntryHead), ResultOut):  # type: ignore[misc]  # the head from EntryHead
    created: str | None = None
    last_verified: str | None = None
    files: list[str] = Field(default_factory=list, description="Code files this entry is about.")
    version: str = Field(description="Content hash; pass it as expected_version to brain_update.")
    redacted: list[str] = Field(default_factory=list, description=(
        "Kinds of secret (github-token, password, secret, ...) replaced by [REDACTED:<kind>] markers: in the "
        "text written (brain_save, brain_update) or in the text shown (brain_get). Empty when none."))
    redactions: list[dict[str, str]] = Field(default_factory=list, description=(
        "Why each kind in `redacted` was taken for a credential: {kind, reason}."))


class SimilarOut(BaseModel):
    slug: str
    title: str
    path: str
    score: float = Field(description="Cosine similarity of the texts (1 = the same).")


class SavedOut(EntryMetaOut):
    saved_to: str = Field(description="Where the file went, in words: the project's knowledge folder "
                          "(committed with the code) or the global brain.")
    supersedes: list[str] = Field(default_factory=list, description=(
        "Older entries with the same key or subject that this one replaced: they leave default results."))
    similar: list[SimilarOut] = Field(default_factory=list, description=(
        "Existing entries that say nearly the same thing: if this repeats one, update that one instead."))
    suggested_type: str | None = Field(None, description=(
        "When no type was given: the type the note's words and its nearest entries point to (null: none)."))
    suggested_tags: list[str] = Field(default_factory=list, description=(
        "When no type or no tags were given: tags from the nearest entries and the existing vocabulary."))
    type_applied: bool = Field(False, description="True when the suggested type was written (no type was given).")
    tags_applied: bool = Field(False, description="True when the suggested tags were written (no tags were given).")
    renamed_tags: dict[str, str] = Field(default_factory=dict, description=(
        "Given tags written as the existing tag they match (case, plural, hyphen/underscore/space)."))


class ListedOut(BaseModel):
    slug: str
    title: str
    type: str
    scope: str
    project: str | None = None
    tags: list[str]
    path: str
    created: str | None = None
    last_verified: str | None = None
    modified: str = Field(description="When the file last changed (UTC).")
    superseded_by: str | None = Field(None, description="Set when a newer entry replaced this one.")
    age_days: int | None = None
    stale: bool = False


class ListOut(ResultOut):
    count: int
    entries: list[ListedOut] = Field(description="Most recently changed first.")


class TimelineEventOut(BaseModel):
    date: str
    kind: str = Field(description="created, changed (a git commit), linked, unlinked or diary.")
    text: str
    commit: str | None = None


class EntryOut(EntryMetaOut):
    body: str
    meta: dict[str, Any] = Field(default_factory=dict, description="All frontmatter fields.")
    timeline: list[TimelineEventOut] | None = Field(None, description=(
        "With timeline=true: created, each change from git, links added and closed, diary lines naming it."))


class DeleteOut(ResultOut):
    slug: str
    archived_to: str
    reason: str
    restore: str = Field(description="How to bring it back.")


class BriefingItemOut(BaseModel):
    slug: str
    title: str
    type: str
    path: str
    created: str | None = None
    modified: str
    scope: str | None = None
    project: str | None = None
    tags: list[str] | None = None
    summary: str | None = None


class DiaryLineOut(BaseModel):
    date: str
    time: str
    session: str
    kind: str
    text: str


class BriefingOut(ResultOut):
    since: str
    until: str
    counts: dict[str, int]
    new: list[BriefingItemOut]
    updated: list[BriefingItemOut]
    diary: list[DiaryLineOut]
    truncated: bool = Field(description="True when more entries or diary lines follow this page (page.next_offset).")
    needs_review: dict[str, Any] = Field(default_factory=dict, description=(
        "stale (unverified past their type's threshold: check, then brain_update verified=true) and flagged "
        "(marked wrong or outdated with brain_feedback): fix or verify these before relying on them."))
    candidates: list[dict[str, Any]] = Field(default_factory=list, description=(
        "What past sessions learned (pinky-brain import-sessions), never saved: brain_save the ones worth a note."))


class LinkHowOut(BaseModel):
    kind: str = Field("wiki", description="How it is written: wiki ([[…]]), md (a relative .md link), typed "
                      "(frontmatter links:), files, breadcrumb.")
    rel: str = Field("relates", description="The relation: relates, depends_on, supersedes, contradicts, caused_by, "
                     "fixed_by, or a project's own.")
    line: int | None = Field(None, description="Line of the note (or code file) the link is written on.")
    since: str | None = None
    until: str | None = Field(None, description="Set when the link was closed (it held until that day).")


class LinkOut(LinkHowOut):
    target: str = Field(description="The link as written.")
    slug: str | None = Field(None, description="The entry it resolves to; null when it names no entry (broken).")
    title: str | None = None
    path: str | None = None


class EntryRefOut(LinkHowOut):
    slug: str
    title: str
    path: str


class CodeRefOut(BaseModel):
    file: str
    line: int | None = None
    repo: str | None = None
    source: str = Field(description="frontmatter (files:) or breadcrumb (a `Brain: <slug>` comment in code).")


class NodeOut(BaseModel):
    id: str = Field(description="An entry's slug, or a code file's path.")
    kind: str = Field(description="entry or file.")
    depth: int = Field(description="How many links from the entry asked about.")
    title: str | None = None
    type: str | None = None
    path: str


class EdgeOut(LinkHowOut):
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    source: str = Field(alias="from", description="Node id the link is written in (a note, or code for a breadcrumb).")
    to: str = Field(description="Node id it points at.")


class GraphOut(BaseModel):
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    truncated: bool = Field(description="True when the bounded walk (fan-out, node count) left links out.")


class RelatedOut(ResultOut):
    slug: str
    title: str
    path: str
    at: str | None = Field(None, description="The day whose links are shown (typed links hold from since to until).")
    links: list[LinkOut]
    backlinks: list[EntryRefOut]
    code: list[CodeRefOut]
    graph: GraphOut | None = Field(None, description="With depth > 1: every entry and code file within that "
                                   "many links, either way.")




class ResearchEntryOut(BaseModel):
    slug: str
    title: str
    type: str
    path: str = Field(description="The markdown file; cite it.")
    score: float
    tags: list[str]
    stale: bool
    excerpt: str = Field(description="The start of the body (whole when short).")
    excerpt_cut: bool = Field(False, description="True when the excerpt was shortened to fit the budget.")


class ResearchLinkOut(BaseModel):
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    source: str = Field(alias="from", description="The entry the link is written in.")
    to: str
    rel: str
    from_title: str
    to_title: str
    both_in_top: bool = Field(description="True when both ends are among the dossier's entries.")


class ResearchOut(ResultOut):
    topic: str
    max_tokens: int
    used_tokens: int = Field(description="Size of the packed sections, at about 4 characters a token.")
    mode: str = Field(description="What the search behind it ran: hybrid, or bm25 without vectors.")
    entries: list[ResearchEntryOut] = Field(description="The best entries about the topic, best first.")
    contradictions: list[dict[str, Any]] = Field(description=(
        "Open contradictions involving those entries: {a, b, reason, differences} (as brain_check)."))
    links: list[ResearchLinkOut] = Field(description="Links and backlinks of those entries.")
    gaps: list[dict[str, Any]] = Field(description=(
        "Open knowledge gaps made mostly of the topic's words: {query (null unless PINKY_LOG_QUERIES=1), "
        "count, last_seen}."))
    diary: list[dict[str, Any]] = Field(description=(
        "Diary lines of the last 90 days naming an entry or holding the topic's words: {date, time, kind, text}."))
    cut: dict[str, int] = Field(description=(
        "How many items of each section did not fit the budget; `excerpts`: entries kept with a shorter excerpt."))
    notice: str | None = None


class StatsOut(ResultOut):
    entries: int
    chunks: int
    vectors: int = 0
    pending_vectors: int = 0
    usage_events: int = 0
    unused: int = Field(0, description="Entries no search returned for `unused_days` (pruning candidates).")
    unused_days: int = 180
    unused_sample: list[str] = Field(default_factory=list, description="The oldest unused entries' slugs.")
    by_type: dict[str, int] = Field(default_factory=dict)
    by_scope: dict[str, int] = Field(default_factory=dict)
    embedder: str | None = None
    dims: int = 0
    vectors_available: bool = False
    second_stage_model: str | None = Field(None, description="The second-stage retriever, when it can rank here.")
    second_stage_vectors: int = Field(0, description="Chunks with a second-stage vector (the rest rank by the first).")
    db_path: str
    index_note: str | None = None  # set when a read-only project's index lives in the user cache
    save_dir: str | None = Field(description="The project's knowledge folder; null outside a project.")
    global_dir: str
    tier: str
    background: dict[str, Any] = Field(default_factory=dict, description="Catch-up reindex and embedder state.")


class ReindexOut(ResultOut):
    added: int
    updated: int
    removed: int
    unchanged: int
    chunks_embedded: int
    seconds: float
    errors: list[str] = Field(description="Files not indexed, and why (binary, not UTF-8).")
    warnings: list[str] = Field(default_factory=list, description=(
        "Files indexed despite a problem (malformed YAML, an unknown type)."))
    vectors: str


class SyncOut(ResultOut):
    brain: str
    remote: str | None
    cloned: bool
    initialised: bool
    committed: bool
    commit_message: str | None
    pulled_paths: list[str]
    pushed: bool
    conflicts: list[str]
    notes: list[str]
    reindexed: int
    held_back: list[dict[str, Any]] = Field(default_factory=list, description=(
        "Files that look like they hold a credential, kept out of the commit and the push and left as they "
        "are: {path, kinds, why}. The user removes the secret, or runs `pinky-brain sync --allow PATH`."))


# --- hygiene: tags, gaps, contradictions, feedback, export and import ---------------------------------


class TagOut(BaseModel):
    tag: str
    count: int


class TagsOut(ResultOut):
    count: int
    tags: list[TagOut]


class GapOut(BaseModel):
    query: str | None = Field(default=None, description="The search's text (kept only with PINKY_LOG_QUERIES=1).")
    query_hash: str
    count: int = Field(description="How many searches asked it and found nothing good.")
    best_score: float | None = None
    first_seen: str
    last_seen: str
    closed_by: str | None = Field(default=None, description="The entry whose save answered it.")
    closed_at: str | None = None


class GapsOut(ResultOut):
    count: int
    gaps: list[GapOut]


class DifferenceOut(BaseModel):
    kind: str = Field(description="number | version | port | flag | negation | differs (same key, other text)")
    a: str = Field(description="The span in the first entry ('' when it has none there).")
    b: str
    context_a: str
    context_b: str


class PairOut(BaseModel):
    a: str = Field(description="Slug of the first entry.")
    b: str
    a_path: str
    b_path: str
    reason: str = Field(description="Why they were compared: 'similar (0.93)', or the same key or subject.")
    differences: list[DifferenceOut]


class CheckOut(ResultOut):
    checked: int
    count: int
    pairs: list[PairOut]
    skipped: int = Field(0, description=f"Pairs not compared: one check compares {MAX_CHECK_CHARS:,} characters.")
    notice: str | None = None


class FeedbackOut(ResultOut):
    slug: str
    verdict: str
    recorded: bool = Field(description="False when telemetry is off (PINKY_TELEMETRY=0).")
    flagged: bool = Field(description="True for wrong/outdated: listed for review until the entry is fixed.")
    query: str | None = Field(default=None, description="The search the verdict is recorded against.")


class ExportOut(ResultOut):
    count: int
    file: str | None = Field(default=None, description="Where the JSON lines were written (when `file` was given).")
    jsonl: str | None = Field(default=None, description=(
        "The JSON lines themselves (when no `file` was given), credentials hidden as in every result; "
        "a `file` gets every note's exact text; a larger export needs `file`."))


class ImportOut(ResultOut):
    imported: list[str] = Field(description="Slugs of the notes written.")
    renamed: list[dict[str, str]] = Field(description=(
        "Notes written under another name: slug, new_slug, why (the path was taken, or was not one line)."))
    duplicates: list[dict[str, str]] = Field(description="Notes skipped: the same text is already in the brain.")
    redacted: list[dict[str, Any]] = Field(description="Always empty: an import never rewrites a note (see secrets).")
    secrets: list[dict[str, Any]] = Field(default_factory=list, description=(
        "Notes written as they are that hold a credential, with its kinds: hidden on display, held back by sync."))
    rescoped: list[dict[str, str]] = Field(description="Project notes now in this project's scope (another name).")
    errors: list[str] = Field(description="Lines refused, each as 'line N: why'; the others were imported.")

