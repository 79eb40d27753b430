"""The names clients depend on: every CLI command"s option names and every MCP tool"s argument names,
recorded. Options and arguments are derived from the core"s request types (pinky.search.request,
pinky.knowledge.entries); a change there that renamed, dropped or added a flag or an argument fails here
until the recorded list says so on purpose."""

from __future__ import annotations

from typing import Any

import click
import pytest

OPTIONS = {
    "check": "--json",
    "delete": "--reason",
    "doctor": "--fix --full --json",
    "edit": "",
    "eval": "--baseline --from-usage --json --out --save-baseline --tolerance",
    "export": "--scope --since --tag --type",
    "feedback": "--json --query",
    "gaps": "--all --json --limit -n",
    "gc": "--json",
    "get": "--json",
    "graph": "--at --depth --dot --json --rel -d",
    "history": "--json",
    "import": "--json --root",
    "import-sessions": "--candidates --dismiss --json",
    "init": "--allow-tools --claude-md --json --mcp --no-mcp",
    "install-cli": "--dir --force --json",
    "link": "--rel --since",
    "list": "--all --archived --at --json --limit --scope --since --tag --type -n",
    "merge": "--json",
    "mv": "--json",
    "prune": "--apply --json --months",
    "reindex": "--full --json --no-quality --quality",
    "research": "--json --max-tokens",
    "restore": "--version",
    "rollup": "--json --month --scope --week",
    "save": "--candidate --file --json --key --project --question --scope --subject --tag --title --type -t",
    "search": "--all --at --json --limit --mode --project --scope --since --tag --type -n",
    "setup": "--dry-run --force --json --project --remove",
    "setup-claude": "--allow-tools --claude-md --json --mcp --no-mcp",
    "stats": "--json",
    "sync": "--allow --json --remote",
    "tags rename": "--json",
    "timeline": "--json",
    "unlink": "--rel --until",
    "update": "--body --expected-version --json --no-questions --question --tag --title --type -t",
    "verify": "",
    "view": "--no-open --port",
    "watch": "--no-embed",
}

ARGUMENTS = {
    "brain_briefing": "format offset since",
    "brain_check": "offset slug",
    "brain_delete": "reason slug",
    "brain_export": "file scope since tags type",
    "brain_feedback": "query slug verdict",
    "brain_gaps": "include_closed limit offset",
    "brain_get": "offset slug timeline",
    "brain_import": "file root",
    "brain_list": "at include_superseded limit offset project scope since tags type",
    "brain_reindex": "full",
    "brain_related": "at depth offset rel slug",
    "brain_research": "max_tokens topic",
    "brain_save": "body candidate files key project questions scope subject tags title type",
    "brain_search": ("at context_file format hypothetical include_superseded limit mode offset project query scope "
                     "since tags type"),
    "brain_stats": "",
    "brain_sync": "remote",
    "brain_tags": "offset",
    "brain_update": "body expected_version last_verified questions slug tags title type verified",
}


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    if not isinstance(command, click.Group):
        return {" ".join(path): command}
    ctx = click.Context(command)
    found: dict[str, click.Command] = {}
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        assert sub is not None
        found.update(_commands(sub, (*path, name)))
    return found


def test_every_command_keeps_its_option_names() -> None:
    from pinky.cli.main import cli

    names = {path: " ".join(sorted(name for param in command.params if isinstance(param, click.Option)
                                   for name in (*param.opts, *param.secondary_opts)))
             for path, command in _commands(cli).items()}
    assert names == OPTIONS


@pytest.mark.parametrize("command", ["search", "save", "list", "update"])
def test_a_derived_command_still_lists_every_option_in_its_help(command: str) -> None:
    from click.testing import CliRunner

    from pinky.cli.main import cli

    shown = CliRunner().invoke(cli, [command, "--help"]).output
    for name in OPTIONS[command].split():
        assert f"{name} " in shown or f"{name}," in shown, (command, name, shown)


def test_every_tool_keeps_its_argument_names() -> None:
    from pinky.mcp.common import with_cause
    from pinky.mcp.sdk import make_tool
    from pinky.mcp.tiers import tools_for

    listed: dict[str, Any] = {}
    for spec in tools_for("admin"):
        tool = make_tool(with_cause(spec.fn), title=spec.title, annotations=spec.annotations)
        listed[spec.name] = " ".join(sorted(tool.parameters.get("properties", {})))
    assert listed == ARGUMENTS
