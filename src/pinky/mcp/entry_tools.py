"""The tools of one entry, each in one place with its output model and its text: brain_get, brain_save,
brain_update and brain_delete. Their output models derive from the core's `Entry` (and a save's `Suggestion`
and similar `Hit`s); what a tool adds is declared here.

No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from pinky.base.operations import UpdateRequest
from pinky.base.secret_words import describe, explain
from pinky.base.shown import plain
from pinky.kb import Entry, Hit, KnowledgeBase, SaveRequest, Suggestion
from pinky.mcp.budget import Pages
from pinky.mcp.common import BodyOffset, ResultOut, Slug, State, result, run_core, tool, writes
from pinky.mcp.declared import result_model, signature_from

WithTimeline = Annotated[bool, Field(description="Add its history: changes, links, diary lines.")]


class EntryMetaOut(result_model(Entry, skip=("body", "meta", "classification")), ResultOut):  # type: ignore[misc]
    redactions: list[dict[str, str]] = Field(default_factory=list, description=(
        "Why each kind in `redacted` was taken for a credential: {kind, reason}."))


class TimelineEventOut(BaseModel):
    date: str
    kind: str = Field(description="created, changed (a git commit), linked, unlinked or diary.")
    text: str
    commit: str | None = None


class EntryOut(result_model(Entry, only=("body", "meta")), EntryMetaOut):  # type: ignore[misc]
    timeline: list[TimelineEventOut] | None = Field(None, description=(
        "With timeline=true: created, each change from git, links added and closed, diary lines naming it."))


class SimilarOut(result_model(Hit, only=("slug", "title", "path", "score"))):  # type: ignore[misc]
    score: float = Field(description="Cosine similarity of the texts (1 = the same).")


class SavedOut(EntryMetaOut, result_model(Suggestion)):  # type: ignore[misc]  # the entry, what was suggested
    saved_to: str = Field(description="Where the file went, in words: the project's knowledge folder "
                          "(committed with the code) or the global brain.")
    supersedes: list[str] = Field(default_factory=list, description=(
        "Older entries with the same key or subject that this one replaced: they leave default results."))
    similar: list[SimilarOut] = Field(default_factory=list, description=(
        "Existing entries that say nearly the same thing: if this repeats one, update that one instead."))


class DeleteOut(ResultOut):
    slug: str
    archived_to: str
    reason: str
    restore: str = Field(description="How to bring it back.")


def _entry_meta(entry: Entry) -> EntryMetaOut:
    fields = {k: getattr(entry, k) for k in EntryMetaOut.model_fields if k not in ("redactions", "page")}
    return EntryMetaOut(**fields, redactions=explain(entry.redacted))


@tool("read", "Read an entry")
async def brain_get(state: State, slug: Slug, timeline: WithTimeline = False,
                    offset: BodyOffset = 0) -> Annotated[CallToolResult, EntryOut]:
    """Read a whole entry by slug: body, metadata and the `version` that brain_update needs."""

    def work(kb: KnowledgeBase) -> Any:
        entry = kb.get(slug)
        kb.hygiene.opened(entry.slug)  # telemetry: a search hit read whole (pinky eval --from-usage)
        return entry, kb.graph.timeline(slug)["events"] if timeline else None

    entry, events = await run_core(state.runtime, work)
    out = EntryOut(**_entry_meta(entry).model_dump(), body=entry.body[offset:], meta=entry.meta, timeline=events)
    return result(state, lambda shown: entry_text(shown, body=True) + timeline_text(shown.timeline),
                  out, drop_none=("timeline",), pages=Pages(("body",), offset, tool="brain_get"))


@tool("write", "Save knowledge", writes(destructive=False))
@signature_from(SaveRequest)
async def brain_save(state: State, **fields: Any) -> Annotated[CallToolResult, SavedOut]:
    """Save what a future session would otherwise rediscover: a non-obvious fix, a convention, a
    decision and why, a setup step. Searchable at once. Search first to avoid duplicates; brain_update
    changes an entry.

    Signature rewritten by @signature_from: the SDK serves SaveRequest's fields as keyword arguments.
    """

    def work(kb: KnowledgeBase) -> Any:
        saved = kb.save(SaveRequest(**fields), embed=False, classify=True)
        return saved, kb.similar(saved.slug)

    entry, similar = await run_core(state.runtime, work)
    state.runtime.embed_soon()
    replaced = entry.meta.get("supersedes") or []
    out = SavedOut(**_entry_meta(entry).model_dump(), saved_to=saved_to(entry),
                   supersedes=replaced if isinstance(replaced, list) else [replaced],
                   similar=[SimilarOut(slug=h.slug, title=h.title, path=h.path, score=h.score) for h in similar],
                   **(entry.classification or {}))
    text = saved_text(entry, similar) + classified_text(entry.classification)
    text += "".join(f"\nSupersedes {slug} (it leaves default results)." for slug in out.supersedes)
    if fields.get("candidate"):
        text += f"\nCandidate {fields['candidate']} is settled: it leaves the past-session list."
    return result(state, text, out)


@tool("write", "Update an entry", writes(destructive=True))
@signature_from(UpdateRequest)
async def brain_update(state: State, **fields: Any) -> Annotated[CallToolResult, EntryMetaOut]:
    """Correct or refresh an entry (verified=true: you checked a stale one still holds). If it
    changed since the version you read, nothing is written: re-read it and reapply.

    Signature rewritten by @signature_from: the SDK serves UpdateRequest's fields as keyword arguments.
    """
    request = UpdateRequest(**fields)
    changes = request.changes()
    if all(value is None for value in changes.values()):
        raise ToolError("nothing to change: give at least one of title, body, tags, type, last_verified, verified, "
                        "questions")

    def work(kb: KnowledgeBase) -> Any:
        return kb.update(request.slug, request.expected_version or "", **changes)

    entry = await run_core(state.runtime, work)
    state.runtime.embed_soon()
    text = f"Updated {entry.slug} → {entry.path}; new version {entry.version}."
    if entry.redacted:
        text += "\n" + redacted_line(entry.redacted, written=True)
    return result(state, text, _entry_meta(entry))


@tool("write", "Archive an entry", writes(destructive=True))
async def brain_delete(
    state: State,
    slug: Slug,
    reason: Annotated[str, Field(min_length=1, max_length=2000, description="Wrong, outdated, duplicate...")],
) -> Annotated[CallToolResult, DeleteOut]:
    """Archive a wrong, outdated or duplicate entry: it leaves search; the result says how to
    restore it."""

    def work(kb: KnowledgeBase) -> tuple[str, str, str]:
        resolved = kb.get(slug).slug
        archived = kb.delete(resolved, reason)
        return resolved, str(archived), kb.hygiene.restore_command(archived)

    resolved, archived, restore = await run_core(state.runtime, work)
    out = DeleteOut(slug=resolved, archived_to=archived, reason=reason, restore=restore)
    return result(state, f"Archived {resolved} → {archived}. Undo with: {restore}", out)


# --- their text ---------------------------------------------------------------------------------


def entry_text(entry: Any, *, body: bool) -> str:
    lines = [f"{plain(entry.title)} [{entry.type}] — {plain(entry.path)}",
             f"slug: {plain(entry.slug)} · scope: {plain(entry.scope)} · version: {entry.version}"]
    if entry.tags:
        lines.append("tags: " + ", ".join(map(plain, entry.tags)))
    if entry.files:
        lines.append("files: " + ", ".join(map(plain, entry.files)))
    if entry.last_verified:
        lines.append(f"last verified: {entry.last_verified}")
    if entry.redacted:
        lines.append(redacted_line(entry.redacted, written=False))
    if body:
        lines += ["", entry.body.rstrip()]
    return "\n".join(lines)


def timeline_text(events: list[TimelineEventOut] | None) -> str:
    if events is None:
        return ""
    lines = [f"{e.date[:16].replace('T', ' ')}  {e.kind}: {e.text}" for e in events]
    return "\n\nTimeline:\n" + ("\n".join(lines) or "no history")


def redacted_line(kinds: list[str], *, written: bool) -> str:
    """Say which secrets were replaced, and why each counts: in what was written, or only in what is shown."""
    what = "before writing" if written else "in this text (the file still holds them: edit it to remove them)"
    return f"Secrets replaced by [REDACTED:<kind>] markers {what}: {describe(kinds)}."


def saved_to(entry: Any) -> str:
    if entry.scope == "global":
        return "the global brain (shared by every project, synced with `pinky-brain sync`)"
    return f"project {entry.project}'s knowledge folder (commit it with the code)"


def saved_text(entry: Any, similar: list[Any]) -> str:
    text = (f"Saved {entry.slug} → {entry.path}, in {saved_to(entry)}; version {entry.version}.\n"
            f"Change it with brain_update(slug='{entry.slug}', expected_version='{entry.version}', ...).")
    if entry.redacted:
        text += "\n" + redacted_line(entry.redacted, written=True)
    if similar:
        text += ("\nLikely a duplicate of: " + "; ".join(f"{h.slug} ({h.score:.2f})" for h in similar)
                 + f". If it repeats one, add what is new to that entry (brain_update) and brain_delete {entry.slug}.")
    return text


def classified_text(classification: dict[str, Any] | None) -> str:
    """What a save suggested and applied (pinky.knowledge.classify), as sentences; '' when nothing was."""
    if not classification:
        return ""
    applied = []
    if classification["type_applied"]:
        applied.append(f"type {classification['suggested_type']}")
    if classification["tags_applied"]:
        applied.append("tags " + ", ".join(classification["suggested_tags"]))
    text = f"\nNo {' or '.join(a.split()[0] for a in applied)} given: wrote the suggested {' and '.join(applied)} " \
           "(from the note's words and its nearest entries; brain_update changes them)." if applied else ""
    renamed = classification.get("renamed_tags") or {}
    if renamed:
        text += "\nTags written as the existing ones: " + ", ".join(f"{a} → {b}" for a, b in renamed.items()) + "."
    return text
