"""The `pinky` command line: thin adapters over pinky.kb.KnowledgeBase.

Only click and the config are imported at start; each command imports what it needs.
The group lives in `app`; importing the command modules here registers their commands.
"""

from __future__ import annotations

import os
import sys

import click

from pinky.base.command import NAME
from pinky.cli import entry_commands as _entry_commands  # noqa: F401  (pinky search, save, update, get, delete, restore)
from pinky.cli import evaluate as _evaluate  # noqa: F401  (pinky eval)
from pinky.cli import graph_commands as _graph_commands  # noqa: F401  (pinky graph, timeline, link, unlink, mv)
from pinky.cli import hosts_setup as _hosts_setup  # noqa: F401  (pinky setup <host>)
from pinky.cli import hygiene_commands as _hygiene_commands  # noqa: F401  (pinky tags, verify, feedback, prune, gaps, check)
from pinky.cli import import_sessions as _import_sessions  # noqa: F401  (pinky import-sessions)
from pinky.cli import listing as _listing  # noqa: F401  (pinky list, pinky edit)
from pinky.cli import plugin as _plugin  # noqa: F401  (pinky setup-claude, install-cli)
from pinky.cli import reindex as _reindex  # noqa: F401  (pinky reindex)
from pinky.cli import research_command as _research_command  # noqa: F401  (pinky research)
from pinky.cli import sync as _sync  # noqa: F401  (pinky sync, pinky rollup)
from pinky.cli import upkeep_commands as _upkeep_commands  # noqa: F401  (pinky init, stats, doctor, gc, watch)
from pinky.cli import view as _view  # noqa: F401  (pinky view)
from pinky.cli.app import ReaderGone, cli

__all__ = ["cli", "main"]

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process killed by SIGPIPE


def main() -> None:
    """Console scripts `pinky` and `pinky-brain`: every failure is one line on stderr."""
    prog = os.path.basename(sys.argv[0]) if sys.argv else NAME  # usage lines name what was typed
    prog = prog if prog in ("pinky", NAME) else NAME
    try:
        code = cli.main(prog_name=prog, standalone_mode=False)
        sys.stdout.flush()
    except (BrokenPipeError, ReaderGone):
        _quiet_broken_pipe()
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else prog
        click.echo(f"Error: {exc.format_message()} (see `{where} --help`)", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _quiet_broken_pipe() -> None:
    """`pinky search … | head -1`: the reader left; no traceback, and no second error at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_BROKEN_PIPE)
