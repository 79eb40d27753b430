"""`pinky setup-claude`: wire this project into Claude Code (the Claude Code half of `pinky init`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from pinky.cli.app import cli, emit_json
from pinky.config import load_config


def init_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The Claude Code options, shared by `pinky setup-claude` and (when wired) `pinky init`."""
    fn = click.option("--allow-tools", is_flag=True,
                      help="Allow the brain's MCP tools in .claude/settings.json (no permission prompts).")(fn)
    fn = click.option("--claude-md", type=click.Choice(["append", "print", "skip"]), default="skip",
                      show_default=True, help="Append the 'when to save knowledge' snippet to CLAUDE.md, "
                      "or print it.")(fn)
    fn = click.option("--mcp/--no-mcp", default=True, show_default=True,
                      help="Add the pinky server to the project's .mcp.json (other servers are kept).")(fn)
    return fn


def run_claude_setup(ctx: click.Context, *, mcp: bool, claude_md: str, allow_tools: bool) -> list[str]:
    from pinky.plugin_setup import extend_init

    config = load_config(**ctx.find_root().obj["overrides"])
    return extend_init(config, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)


@cli.command("setup-claude")
@init_options
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def setup_claude(ctx: click.Context, mcp: bool, claude_md: str, allow_tools: bool, as_json: bool) -> None:
    """Register the pinky MCP server in .mcp.json (relative paths) and optionally CLAUDE.md and allow rules.

    Idempotent; keeps every other server. The entry uses the same command as the plugin's
    bundled server, so Claude Code loads one copy, not two.

    Example:

        pinky setup-claude --claude-md append --allow-tools
    """
    done = run_claude_setup(ctx, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)
    if as_json:
        emit_json({"done": done})
        return
    for line in done or ["Claude Code wiring already up to date"]:
        click.echo(line)
