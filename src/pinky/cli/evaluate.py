"""`pinky eval`: retrieval quality on the user's own brain, gated against a baseline (pinky.evaluation.golden)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from pinky.cli.app import cli, emit_json, ready_kb


@cli.command("eval")
@click.argument("golden", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the whole report (and the comparison) as JSON.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="A report saved earlier: exit 1 when a figure fell by more than the tolerance.")
@click.option("--tolerance", default="0.01", show_default=True,
              help="How far (absolute, 0-1) a figure may fall below the baseline before it fails.")
@click.option("--save-baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Write this run's report to FILE, to compare later runs with.")
@click.option("--from-usage", is_flag=True,
              help="Propose golden lines from searches whose hits were then opened or marked useful.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="With --from-usage: write the proposals to FILE instead of standard output.")
@click.pass_context
def evaluate(ctx: click.Context, golden: Path | None, as_json: bool, baseline: Path | None, tolerance: str,
             save_baseline: Path | None, from_usage: bool, out: Path | None) -> None:
    """Score search on golden queries: R@5, R@10, MRR@10, nDCG@10, latency.

    GOLDEN is JSON lines: {"query", "expected": [slugs or paths], "category"?, "mode"?, filters?}.

    Example:

        pinky-brain eval golden.jsonl --baseline eval-baseline.json --tolerance 0.02
    """
    from pinky.evaluation import golden as gold

    if from_usage:
        if golden is not None:
            raise click.UsageError("give either GOLDEN or --from-usage, not both")
        _propose(ctx, out)
        return
    if golden is None:
        raise click.UsageError("missing GOLDEN (a JSON-lines file of queries), or --from-usage")
    if out is not None:
        raise click.UsageError("--out goes with --from-usage; use --save-baseline to keep a report")
    limit = gold.tolerance_of(tolerance)
    queries = gold.load_golden(golden)
    previous = gold.load_baseline(baseline) if baseline is not None else None
    report = gold.run(ready_kb(ctx), queries, str(golden))
    comparison = gold.compare(report, previous, limit) if previous is not None else None
    if save_baseline is not None:
        save_baseline.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if as_json:
        emit_json({**report, "comparison": comparison} if comparison else report)
    else:
        _print_report(report)
        if save_baseline is not None:
            click.echo(f"baseline written to {save_baseline}")
    if comparison is not None:
        _gate(comparison, baseline, quiet=as_json)


def _print_report(report: dict[str, Any]) -> None:
    from pinky.evaluation.metrics import METRICS

    second = f" + {report['second_stage']}" if report.get("second_stage") else ""
    click.echo(f"{report['golden']}: {report['queries']} queries, embedder {report['embedder']}{second}")
    click.echo(f"{'':<28}{'queries':>8}" + "".join(f"{name:>9}" for name in METRICS))
    rows = [("overall", {"queries": report["queries"], **report["overall"]})]
    rows += [(f"  {name}", figures) for name, figures in report["categories"].items()]
    for label, figures in rows:
        click.echo(f"{label[:28]:<28}{figures['queries']:>8}" + "".join(f"{figures[m]:>9.3f}" for m in METRICS))
    click.echo(f"latency: p50 {report['latency_ms']['p50']:.1f} ms, p95 {report['latency_ms']['p95']:.1f} ms")
    for item in report["results"]:
        missed = [slug for slug, rank in item["ranks"].items() if rank is None]
        if missed:
            click.echo(f"missed (line {item['line']}): {item['query']!r} -> not in the top 10: {', '.join(missed)}")


def _gate(comparison: dict[str, Any], baseline: Path | None, *, quiet: bool) -> None:
    for item in comparison["worse_queries"]:
        before, after = item["ndcg@10"]
        click.echo(f"worse: {item['query']!r} nDCG@10 {before:.4f} -> {after:.4f} (-{item['drop']:.4f})", err=True)
    if comparison["passed"]:
        if not quiet:
            click.echo(f"no figure fell by more than {comparison['tolerance']} against {baseline}")
        return
    for line in comparison["regressions"]:
        click.echo(f"regression: {line}", err=True)
    raise click.ClickException(f"{len(comparison['regressions'])} figure(s) fell by more than "
                               f"{comparison['tolerance']} against {baseline}")


def _propose(ctx: click.Context, out: Path | None) -> None:
    from pinky.evaluation import golden as gold

    kb = ready_kb(ctx)
    lines = gold.proposals_from_usage(kb.index)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if not lines:
        why = "" if kb.config.telemetry else " (PINKY_TELEMETRY=0: nothing is recorded)"
        click.echo(f"no search yet whose hits were then opened (brain_get) or marked useful{why}", err=True)
    if out is not None:
        out.write_text(text, encoding="utf-8")
        click.echo(f"{len(lines)} proposed golden queries written to {out}; check each before relying on it")
    else:
        click.echo(text, nl=False)
