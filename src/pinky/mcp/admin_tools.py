"""brain_stats, brain_reindex and brain_sync in one place: the tools, their output models and their text.

brain_reindex's and brain_sync's output models derive from the core's `ReindexReport` and `SyncReport`;
`KnowledgeBase.stats` answers in a plain dict, so brain_stats's model is declared here.
No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from pinky.kb import KnowledgeBase, ReindexReport
from pinky.mcp.budget import Pages
from pinky.mcp.common import ResultOut, State, result, run_core, tool, writes
from pinky.mcp.declared import result_model
from pinky.services.brain_sync import SyncReport, sync_global


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


class ReindexOut(result_model(ReindexReport, complete=True), ResultOut):  # type: ignore[misc]
    pass


class SyncOut(result_model(SyncReport, skip=("allowed",), complete=True), ResultOut):  # type: ignore[misc]  # no `allow` here
    brain: str
    reindexed: int


@tool("read", "Brain size and health")
async def brain_stats(state: State) -> Annotated[CallToolResult, StatsOut]:
    """Size and health of the index: entries, chunks, vectors (pending too), per type and scope,
    the embedder, the background catch-up."""

    def work(kb: KnowledgeBase) -> StatsOut:
        fields = {k: v for k, v in kb.stats().items() if k in StatsOut.model_fields}
        save_dir = str(kb.config.save_dir) if kb.config.save_dir is not None else None
        return StatsOut(**fields, save_dir=save_dir, global_dir=str(kb.config.global_dir),
                        tier=state.tier, background=dict(state.runtime.status))

    out = await run_core(state.runtime, work)
    return result(state, stats_text, out)


@tool("admin", "Reindex the brain", writes(destructive=False, idempotent=True))
async def brain_reindex(
    state: State,
    full: Annotated[bool, Field(description="Rebuild from scratch instead of catching up.")] = False,
) -> Annotated[CallToolResult, ReindexOut]:
    """Bring the index up to date with the markdown on disk (after edits by hand or a git pull);
    full=true rebuilds it from scratch. The server already catches up at start, so this is rarely needed."""
    report = await run_core(state.runtime, lambda kb: kb.reindex(full=full), exclusive=True)
    out = ReindexOut(**report.as_dict())
    return result(state, reindex_text(out), out, pages=Pages(
        ("errors", "warnings"), narrower="`pinky-brain reindex` in a terminal lists every one."))


@tool("admin", "Sync the global brain", writes(destructive=False, open_world=True))
async def brain_sync(
    state: State,
    remote: Annotated[str | None, Field(description="Set the git remote (path, ssh or https URL).",
                                        max_length=2000)] = None,
) -> Annotated[CallToolResult, SyncOut]:
    """Synchronise the global brain (~/.pinky/brain) with its git remote: commit local notes, pull what
    other machines saved, push, and index what arrived. Entries edited on two machines are kept as
    `.conflict-…` copies and listed in `conflicts`."""
    data = await run_core(state.runtime, lambda kb: sync_global(kb, remote), exclusive=True)
    out = SyncOut.model_validate({key: data.get(key) for key in SyncOut.model_fields})
    return result(state, sync_text(out), out, pages=Pages(
        ("pulled_paths", "conflicts", "notes"), narrower="`pinky-brain sync` in a terminal lists every one."))


def stats_text(out: StatsOut) -> str:
    second = (f" · second stage {out.second_stage_model}: {out.second_stage_vectors} of {out.chunks} chunks"
              if out.second_stage_model else "")
    return (f"{out.entries} entries, {out.chunks} chunks, {out.vectors} vectors "
            f"({out.pending_vectors} pending) · embedder {out.embedder}{second} · index {out.db_path}"
            + (f"\n{out.index_note}" if out.index_note else ""))


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
