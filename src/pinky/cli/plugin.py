"""`pinky setup-claude`: wire this project into Claude Code without the plugin (the Claude Code half of
`pinky init`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from pinky.cli.app import cli, emit_json
from pinky.config import load_config


def claude_options(*, mcp: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The Claude Code options of `pinky init` (no server entry by default: the plugin brings one) and
    `pinky setup-claude` (whose point is the server entry)."""

    def add(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option("--allow-tools", is_flag=True,
                          help="Allow the brain's MCP tools in .claude/settings.json (no permission prompts).")(fn)
        fn = click.option("--claude-md", type=click.Choice(["append", "print", "skip"]), default="skip",
                          show_default=True, help="Append the 'when to save knowledge' snippet to CLAUDE.md, "
                          "or print it.")(fn)
        return click.option("--mcp/--no-mcp", default=mcp, show_default=True,
                            help="Add the pinky server to the project's .mcp.json (other servers are kept); for "
                            "setups without the Claude Code plugin, which brings its own.")(fn)

    return add


def run_claude_setup(ctx: click.Context, *, mcp: bool, claude_md: str, allow_tools: bool) -> list[str]:
    from pinky.app.claude_setup import extend_init

    config = load_config(**ctx.find_root().obj["overrides"])
    return extend_init(config, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)


@cli.command("setup-claude")
@claude_options(mcp=True)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def setup_claude(ctx: click.Context, mcp: bool, claude_md: str, allow_tools: bool, as_json: bool) -> None:
    """Register `pinky-mcp` in the project's .mcp.json, and optionally the CLAUDE.md snippet and allow rules:
    for Claude Code without the pinky plugin (the plugin brings the server and the hooks itself).

    Idempotent; keeps every other server. The entry needs no paths: the server finds the project.

    Example:

        pinky setup-claude --claude-md append --allow-tools
    """
    done = run_claude_setup(ctx, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)
    if as_json:
        emit_json({"done": done})
        return
    for line in done or ["Claude Code wiring already up to date"]:
        click.echo(line)
