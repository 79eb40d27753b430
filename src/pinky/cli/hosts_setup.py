"""`pinky-brain setup <host>`: register pinky-brain's MCP server and hooks in an agent host's own config (a thin
adapter over pinky.setup.core)."""

from __future__ import annotations

import os
import shutil
import sys

import click

from pinky.cli.app import cli, emit_json
from pinky.hosts.catalog import Host, names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pinky.setup.core import Plan


def repository_root(start: str) -> str:
    """The folder holding .git (or pinky.toml) above `start`; `start` itself when there is none."""
    folder = os.path.abspath(start)
    while True:
        if any(os.path.exists(os.path.join(folder, mark)) for mark in (".git", "pinky.toml")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.abspath(start)
        folder = parent


def refuse_beside_the_plugin(project: str | None) -> None:
    """Claude Code with the pinky plugin enabled already has the server and the hooks: a second registration
    showed every brain tool twice and two session digests (issue 36 item 7)."""
    from pathlib import Path

    from pinky.errors import Conflict
    from pinky.setup.claude_doctor import load_quiet, plugin_enabled, settings_files

    if plugin_enabled([load_quiet(path) for path in settings_files(Path(project) if project else None)]):
        raise Conflict("the pinky plugin is enabled in Claude Code and brings the server and the hooks itself: "
                       "setting them up too shows every brain tool twice; disable the plugin first (claude plugin "
                       "disable pinky@pinky-market), or pass --force")


class HostName(click.ParamType):
    """A registered host's name (pinky.hosts.catalog): checked when the command runs, so the registry of this
    process counts, not the one at import."""

    name = "host"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "{" + "|".join(names()) + "}"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if isinstance(value, str) and value in names():
            return value
        self.fail(f"unknown host {value!r}; use one of {', '.join(names())}", param, ctx)


@cli.command("setup")
@click.argument("host", type=HostName())
@click.option("--project", is_flag=True, help="Write the repository's own config (.codex/, .gemini/, ...) instead "
              "of the user's.")
@click.option("--remove", is_flag=True, help="Take out what setup wrote (the original bytes when nothing else "
              "changed).")
@click.option("--dry-run", is_flag=True, help="Print the change as a unified diff and write nothing.")
@click.option("--force", is_flag=True, help="Set up Claude Code even though the pinky plugin is enabled (every brain "
              "tool would appear twice).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def setup_host(host: str, project: bool, remove: bool, dry_run: bool, force: bool, as_json: bool) -> None:
    """Register pinky-brain's MCP server (pinky-mcp) and its hooks (pinky-hooks --host HOST) in HOST's config,
    merged with what is there; idempotent. User level unless --project.

    Example:

        pinky-brain setup codex
        pinky-brain setup gemini --dry-run
    """
    from pinky.hosts.catalog import host as find_host
    from pinky.setup import core, host_entries

    found = find_host(host)
    where = repository_root(os.getcwd()) if project else None
    if found.pinky_plugin and not remove and not force:
        refuse_beside_the_plugin(where)
    if dry_run:
        result = core.plan(found, project=where, remove=remove)
        diff = "".join(change.diff() for change in result.changes if change.changed)
        if as_json:
            emit_json({**result.as_dict(), "dry_run": True, "diff": diff})
        else:
            click.echo(diff or "nothing to change", nl=not diff)
        return
    written = [] if remove or project else host_entries.plugin_launchers()
    result = core.run(found, project=where, remove=remove)
    result.notes[:0] = written
    if remove and found.rules_file:  # Copilot CLI too: the AGENTS.md blocks its older hooks wrote
        _remove_rules(result, found, project)
    if not remove and found.command and shutil.which(found.command) is None:
        click.echo(f"pinky-brain: {found.display} is not installed here (no `{found.command}` on PATH); its config "
                   "is written for when it is", err=True)
    if as_json:
        emit_json(result.as_dict())
        return
    for line in core.summary(result):
        click.echo(line)
    sys.stdout.flush()


def _remove_rules(result: Plan, found: Host, project: bool) -> None:
    """--remove of a host whose hooks keep a rules file (Cursor, Copilot CLI, Windsurf): the file, or the AGENTS.md
    block, goes too, here and (the user-level hooks ran anywhere) in every repository the hooks wrote one."""
    from pinky.hosts.rules import remove_everywhere
    from pinky.setup import core

    state_dir = os.path.dirname(os.path.dirname(core.state_path()))
    changed, refused = remove_everywhere(state_dir, found, repository_root(os.getcwd()), only_here=project)
    result.notes += [f"removed pinky's digest from {path}" for path in changed]
    for line in refused:
        click.echo(f"pinky-brain: {line}", err=True)
