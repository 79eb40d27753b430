"""Docs that tests keep honest: every command, option and environment variable is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from pinky.cli import cli

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = (ROOT / "documentation" / "CLI.md").read_text(encoding="utf-8")
ALL_DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *ROOT.glob("documentation/*.md")])


def _sections() -> dict[str, str]:
    parts = re.split(r"^## pinky-brain ([\w-]+).*$", CLI_DOC, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_has_help_and_a_section(name: str) -> None:
    command = cli.commands[name]
    assert command.help and "Example" in command.help, f"{name} needs help text with an Example"
    assert name in _sections(), f"documentation/CLI.md has no '## pinky-brain {name}' section"


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_option_is_documented(name: str) -> None:
    section = _sections().get(name, "")
    for param in cli.commands[name].params:
        if isinstance(param, click.Option):
            assert param.help, f"pinky {name} {param.opts[0]} has no help"
            longest = max(param.opts, key=len)
            assert longest in section, f"pinky {name} {longest} is not in its CLI.md section"


def test_every_environment_variable_is_documented() -> None:
    names = set()
    for path in (ROOT / "src").rglob("*.py"):
        names |= set(re.findall(r"\bPINKY_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    missing = sorted(n for n in names if n not in ALL_DOCS)
    assert not missing, f"undocumented environment variables: {missing}"
