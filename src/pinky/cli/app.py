"""The `pinky` click group and what every command shares: the error boundary, config, JSON output."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import click

from pinky import __version__
from pinky.base.command import NAME
from pinky.base.locations import ENV_DB, ENV_HOME, ENV_LOG, ENV_PROJECT, ENV_SAVE_DIR
from pinky.config import load_config
from pinky.errors import PinkyError


class ReaderGone(Exception):
    """stdout's reader closed the pipe (`pinky search … | head -1`). Not an OSError on purpose: click
    turns an EPIPE OSError into exit status 1, and a shell expects 141 from a process that lost its reader."""


class PinkyGroup(click.Group):
    """Turns every PinkyError into one clear line on stderr and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PinkyError as exc:
            raise click.ClickException(str(exc)) from None
        except BrokenPipeError:
            raise ReaderGone from None
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            raise click.ClickException(f"{exc.strerror or exc}{where}") from None


@click.group(cls=PinkyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=NAME)
@click.option("--db", envvar=ENV_DB, metavar="PATH",
              help=f"The SQLite index. [env var: {ENV_DB}; default: the project's brain.db, or "
                   "$PINKY_HOME/global.db outside a project]")
@click.option("--home", envvar=ENV_HOME, metavar="DIR",
              help=f"Where global state lives; the global brain is DIR/brain. [env var: {ENV_HOME}; default: ~/.pinky]")
@click.option("--save-dir", envvar=ENV_SAVE_DIR, metavar="DIR",
              help=f"The project's knowledge folder. [env var: {ENV_SAVE_DIR}; default: documentation/ next to the "
                   "project's pinky.toml]")
@click.option("--project", envvar=ENV_PROJECT, metavar="NAME",
              help=f"Project name for project-scoped notes. [env var: {ENV_PROJECT}; default: the repo folder name]")
@click.pass_context
def cli(ctx: click.Context, db: str | None, home: str | None, save_dir: str | None, project: str | None) -> None:
    """pinky-brain: local memory for coding agents (markdown + SQLite hybrid search).

    Example:

        pinky-brain init && pinky-brain reindex && pinky-brain search "postgres pool timeout"
    """
    logging.basicConfig(level=os.environ.get(ENV_LOG, "WARNING").upper(), stream=sys.stderr,
                        format="pinky: %(message)s")
    ctx.obj = {"overrides": {"db": db, "home": home, "save_dir": save_dir, "project": project}}


def config_of(ctx: click.Context, **extra: Any) -> Any:
    """The configuration for this invocation: the global flags, then the environment, then pinky.toml."""
    return load_config(**ctx.find_root().obj["overrides"], **extra)


def open_kb(ctx: click.Context, *, say_where: bool = True, **extra: Any) -> Any:
    """The knowledge base; `say_where`: a line on stderr when the index is not in the project (read-only)."""
    from pinky.kb import KnowledgeBase

    kb = KnowledgeBase(config_of(ctx, **extra))
    ctx.call_on_close(kb.close)
    if say_where and kb.config.db_note:
        click.echo(f"note: {kb.config.db_note}", err=True)
    return kb


def ready_kb(ctx: click.Context) -> Any:
    """The knowledge base, indexed first when the index is new or was rebuilt (it would know no entry), and
    in a read-only project when the markdown changed since its index was made (a stat walk): the owner's
    new and edited notes are found, and a removed word is not, without a reindex nobody here may run in
    place (the catch-up goes to this user's copy, `Index.own_file`)."""
    from pinky.cli.progress import progress_shown

    kb = open_kb(ctx)
    if kb.rebuilt_reason or kb.is_empty() or (kb.config.db_moved_from is not None and any(kb.drift().values())):
        with progress_shown() as progress:  # a first search in a project of 400 notes embeds them all
            kb.reindex(progress=progress)
    return kb


def emit_json(data: Any) -> None:
    from pinky.base.shown import plain_names

    click.echo(json.dumps(plain_names(data), ensure_ascii=False, indent=2, default=str))
