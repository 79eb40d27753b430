"""The `pinky` command line: thin adapters over pinky.kb.KnowledgeBase.

Only click and the config are imported at start; each command imports what it needs.
The group lives in `app`; importing the command modules here registers their commands.
"""

from __future__ import annotations

from pinky.cli import core as _core  # noqa: F401  (registers the commands)
from pinky.cli import plugin as _plugin  # noqa: F401  (pinky setup-claude)
from pinky.cli import sync as _sync  # noqa: F401  (pinky sync, pinky rollup)
from pinky.cli.app import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="pinky")
