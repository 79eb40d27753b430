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
    from pinky.setup.claude_setup import extend_init

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

        pinky-brain setup-claude --claude-md append --allow-tools
    """
    done = run_claude_setup(ctx, mcp=mcp, claude_md=claude_md, allow_tools=allow_tools)
    if as_json:
        emit_json({"done": done})
        return
    for line in done or ["Claude Code wiring already up to date"]:
        click.echo(line)


@cli.command("install-cli")
@click.option("--dir", "directory", metavar="DIR", help="Where to put `pinky-brain` [default: ~/.local/bin].")
@click.option("--force", is_flag=True, help="Replace a `pinky-brain` in DIR that this command did not write.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def install_cli_command(directory: str | None, force: bool, as_json: bool) -> None:
    """Make `pinky-brain` a command of your own shell: for the Claude Code plugin, whose CLI is otherwise only
    on the agent's PATH, and for a pip/pipx install whose bin folder is not on PATH.

    With the plugin, it writes a small launcher into DIR that runs the plugin's own bin/pinky-brain and finds
    the plugin again after every update. With pip or pipx, it links the `pinky-brain` console script (or says
    the shell already finds it). It then says whether DIR is on PATH, and the line that adds it if not.
    Idempotent; it replaces only a launcher it wrote (or a link into a removed install) unless --force.

    Example:

        ~/src/pinky-brain/plugin/bin/pinky-brain install-cli
        pinky-brain install-cli --dir ~/bin
    """
    from pinky.setup.cli_install import install_cli

    done = install_cli(directory, force=force)
    if as_json:
        emit_json(done.as_dict())
        return
    for line in done.lines():
        click.echo(line)
