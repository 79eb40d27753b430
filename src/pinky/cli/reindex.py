"""pinky reindex: bring the index up to date, then the second-stage vectors (pinky.search.second_stage)."""

from __future__ import annotations

from typing import Any

import click

from pinky.cli.app import cli, emit_json, open_kb
from pinky.cli.progress import progress_shown


@cli.command()
@click.option("--full", is_flag=True, help="Drop the index and rebuild everything from the markdown.")
@click.option("--quality/--no-quality", default=None,
              help="Also give every chunk its second-stage vector (multilingual-e5-small, on all cores; "
                   "~3 notes/s on 2 for notes of ~250 words). Default: only when at most 32 chunks lack one.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the counts.")
@click.pass_context
def reindex(ctx: click.Context, full: bool, quality: bool | None, as_json: bool) -> None:
    """Bring the index up to date with the project's and the global markdown.

    Only changed files are parsed and only new chunk text is embedded. Second-stage vectors, which
    rank better but cost ~35x more to make, are filled here with --quality, else by `pinky-mcp` and
    `pinky-brain watch` in the background; search uses them as they come.

    Example:

        pinky-brain reindex --quality
    """
    kb = open_kb(ctx)
    with progress_shown() as progress:
        report = kb.reindex(full=full, progress=progress)
        refined = _refine(kb, quality, progress)
    data = report.as_dict()
    data["second_stage"] = refined
    if kb.rebuilt_reason:
        data["rebuilt"] = kb.rebuilt_reason
    if as_json:
        emit_json(data)
        if quality and not refined["available"]:
            ctx.exit(1)
        return
    click.echo(f"{report.added} added, {report.updated} updated, {report.removed} removed, "
               f"{report.unchanged} unchanged; {report.chunks_embedded} chunks embedded in {report.seconds:.2f}s")
    for note in ([f"rebuilt the index: {kb.rebuilt_reason}"] if kb.rebuilt_reason else []) + report.warnings:
        click.echo(f"warning: {note}", err=True)
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    if report.vectors != "ok":
        click.echo(f"warning: vectors {report.vectors}; search is full-text only", err=True)
    if refined["available"] and (refined["made"] or quality):
        click.echo(f"second-stage vectors: {refined['made']} chunks in {refined['seconds']:.1f}s; "
                   f"{refined['chunks']} of {refined['total']} chunks have one")
    elif refined["available"] and refined["chunks"] < refined["total"]:
        click.echo(f"second-stage vectors: {refined['chunks']} of {refined['total']} chunks have one; "
                   "`pinky-brain reindex --quality` makes the rest (pinky-mcp does it in the background)")
    if quality and not refined["available"]:
        raise click.ClickException(f"--quality: second-stage vectors unavailable: {refined['why']}")


REFINE_INLINE = 32  # a plain reindex makes the second-stage vectors itself up to this many (~10 s at most)


def _refine(kb: Any, wanted: bool | None, progress: Any) -> dict[str, Any]:
    """Second-stage vectors after a reindex: all with --quality, none with --no-quality, else a few."""
    import time

    status = kb.second_stage()
    made, started = 0, time.perf_counter()
    pending = status["total"] - status["chunks"]
    if status["available"] and pending and (wanted or (wanted is None and pending <= REFINE_INLINE)):
        report = (lambda done, total: progress("refine", done, total)) if progress else None
        made = kb.refine_pending(progress=report, threads="all")
        status = kb.second_stage()
    return {**status, "made": made, "seconds": round(time.perf_counter() - started, 2)}
