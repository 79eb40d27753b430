"""The readable text block of each pinky-mcp tool result, and the messages for refused calls.

Clients that ignore structuredContent show the model only this text, so it carries what the
model needs to act (slugs, paths, versions) within a size budget. No SDK import here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pinky.base.locations import ENV_TIER
from pinky.base.secret_words import describe
from pinky.base.shown import plain
from pinky.errors import PinkyError
from pinky.mcp.models import BriefingOut, ListOut, ReindexOut, RelatedOut, SearchOut, StatsOut, SyncOut

COMPACT_TEXT_BUDGET = 8_000
FULL_TEXT_BUDGET = 80_000
FULL_BODY_CHARS = 20_000  # one hit's body in brain_search format='full'


def one_line(text: str, limit: int = 240) -> str:
    flat = plain(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


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


def redacted_line(kinds: list[str], *, written: bool) -> str:
    """Say which secrets were replaced, and why each counts: in what was written, or only in what is shown."""
    what = "before writing" if written else "in this text (the file still holds them: edit it to remove them)"
    return f"Secrets replaced by [REDACTED:<kind>] markers {what}: {describe(kinds)}."


def full_bodies(body_of: Callable[[str], str], slugs: list[str], budget: int) -> tuple[dict[str, str], bool]:
    """Whole bodies for brain_search format='full', at most FULL_BODY_CHARS each and `budget` in all (they
    go in both the text and structuredContent); True when one was cut. A hit gone meanwhile has none."""
    bodies: dict[str, str] = {}
    total, truncated = 0, False
    for slug in slugs:
        try:
            body = body_of(slug)
        except PinkyError:
            continue
        room = max(0, min(FULL_BODY_CHARS, budget - total))
        if len(body) > room:
            body, truncated = body[:room] + "\n…[truncated: read it whole with brain_get]", True
        bodies[slug] = body
        total += len(body)
    return bodies, truncated


def search_text(out: SearchOut) -> str:
    if not out.hits:
        lines = [f'No entries match "{one_line(out.query, 80)}".']
        if out.notice:
            lines.append(f"({out.notice})")
        lines.append("Try other words, drop filters, or save what you learn with brain_save.")
        return "\n".join(lines)
    lines = [f'{out.count} result(s) for "{one_line(out.query, 80)}" ({out.mode}):']
    if out.notice:
        lines.append(f"({out.notice})")
    used = 0
    budget = FULL_TEXT_BUDGET if any(h.body is not None for h in out.hits) else COMPACT_TEXT_BUDGET
    for n, hit in enumerate(out.hits, 1):
        where = f"{hit.path}:{hit.line}" if hit.line else hit.path
        text = hit.body.strip() if hit.body is not None else one_line(hit.snippet)
        notes = "".join([f"; STALE: unverified for {hit.age_days} days" if hit.stale else "",
                         f"; superseded by {hit.superseded_by}" if hit.superseded_by else ""])
        block = f"{n}. {hit.title} [{hit.type}] — {where}  (slug: {hit.slug}{notes})\n   {text}"
        if hit.why:
            block += f"\n   ({hit.why})"
        if used + len(block) > budget:
            lines.append(f"… {len(out.hits) - n + 1} more in structuredContent")
            break
        lines.append(block)
        used += len(block)
    return "\n".join(lines)


def related_text(out: RelatedOut) -> str:
    lines = [f"{out.title} — {out.path} (slug: {out.slug})"]
    rel = lambda link: f" ({link.rel})" if link.kind == "typed" else ""  # noqa: E731
    lines.append("links: " + (", ".join((lk.slug or f"{lk.target} (unresolved)") + rel(lk) for lk in out.links)
                              or "none"))
    lines.append("backlinks: " + (", ".join(b.slug + rel(b) for b in out.backlinks) or "none"))
    lines.append("code: " + (", ".join(c.file + (f":{c.line}" if c.line else "") for c in out.code) or "none"))
    return "\n".join(lines)


def briefing_text(out: BriefingOut) -> str:
    lines = [f"Since {out.since}: {out.counts['new']} new, {out.counts['updated']} updated, "
             f"{out.counts['diary_lines']} diary lines."]
    for label, items in (("New", out.new), ("Updated", out.updated)):
        if items:
            lines.append(f"{label}:")
            lines += [f"- {i.title} [{i.type}] — {i.path} (slug: {i.slug})" for i in items]
    if out.diary:
        lines.append("Diary:")
        lines += [f"- {d.date} {d.time} [{d.session}] {d.kind}: {one_line(d.text, 200)}" for d in out.diary]
    review = out.needs_review
    if review.get("flagged"):
        lines.append("Flagged wrong or outdated (fix, or brain_update verified=true):")
        lines += [f"- {i['slug']}: {i['verdict']} since {i['at'][:10]}" for i in review["flagged"]]
    if review.get("stale"):
        lines.append(f"Needs re-verification ({review['stale_count']} stale; check, then brain_update verified=true):")
        lines += [f"- {i['slug']} ({i['age_days']} days)" for i in review["stale"]]
    if out.candidates:
        lines.append("Learned in past sessions, not saved (brain_save candidate=ID what is worth a note; "
                     "pinky-brain import-sessions --dismiss ID drops the rest):")
        lines += [f"- {c['id']} {c['when'][:10]} [{c['session']}] {c['kind']} (a {c['type']}?): "
                  f"{one_line(c['evidence'], 300)}" for c in out.candidates]
    return "\n".join(lines)


def list_text(out: ListOut) -> str:
    if not out.entries:
        return "No entries match. Drop a filter, or save knowledge with brain_save."
    lines = [f"{out.count} entr{'y' if out.count == 1 else 'ies'}, most recently changed first:"]
    lines += [f"- {e.modified[:10]} {e.slug} [{e.type}, {e.scope}] {one_line(e.title, 120)} — {e.path}"
              for e in out.entries]
    return "\n".join(lines)


def stats_text(out: StatsOut) -> str:
    second = (f" · second stage {out.second_stage_model}: {out.second_stage_vectors} of {out.chunks} chunks"
              if out.second_stage_model else "")
    return (f"{out.entries} entries, {out.chunks} chunks, {out.vectors} vectors "
            f"({out.pending_vectors} pending) · embedder {out.embedder}{second} · index {out.db_path}"
            + (f"\n{out.index_note}" if out.index_note else ""))


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


def reindex_text(out: ReindexOut) -> str:
    text = (f"Reindexed in {out.seconds}s: {out.added} added, {out.updated} updated, {out.removed} removed, "
            f"{out.unchanged} unchanged, {out.chunks_embedded} chunks embedded.")
    if out.errors:
        text += "\nErrors:\n" + "\n".join(out.errors[:20])
    return text


def sync_text(out: SyncOut) -> str:
    parts = [f"Synced {out.brain} with {out.remote or 'no remote'}:",
             f"committed: {out.commit_message}" if out.committed else "nothing new to commit",
             f"pulled {len(out.pulled_paths)} files, reindexed {out.reindexed}",
             "pushed" if out.pushed else "not pushed"]
    parts += [f"CONFLICT: {path} (both versions kept; compare and delete the copy)" for path in out.conflicts]
    parts += [f"HELD BACK: {item['path']} ({', '.join(item['kinds'])}): not pushed; ask the user to remove the "
              f"secret, or to run `pinky-brain sync --allow {item['path']}`" for item in out.held_back]
    parts += [note for note in out.notes if not note.startswith("held back ")]
    return "\n".join(parts)


# --- refused calls ------------------------------------------------------------------------------


def unavailable_text(name: str, tier: str, needed: str) -> str:
    return (f"{name} is not available: this server runs with {ENV_TIER}={tier}; "
            f"it needs {ENV_TIER}={needed} or higher")


def unknown_tool_text(name: str, available: list[str]) -> str:
    return f"unknown tool {name[:100]!r}; available tools: {', '.join(available)}"


def invalid_arguments_text(tool: str, errors: Sequence[Mapping[str, Any]]) -> str:
    """One line naming each bad argument (pydantic's `errors()`), without echoing huge values."""
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = "" if err["type"] == "missing" or isinstance(got, dict) else f" (got {_short_repr(got)})"
        parts.append(f"{where}: {err['msg']}{shown}")
    return f"invalid arguments for {tool}: {'; '.join(parts)}. Fix them and call again."


def _short_repr(value: Any) -> str:
    if isinstance(value, str) and len(value) > 40:
        return f"a string of {len(value):,} characters"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
