"""Hermetic tests: a temporary PINKY_HOME, no inherited PINKY_* settings, the hashing embedder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files of real agent CLI sessions (marker `host_cli(rank)`) come first, lowest rank first: they mostly wait
    on their CLIs, so under `make test` (one file per process) they overlap the rest of the suite instead of
    ending it. `faults_long` tests (hundreds of MB, many pathological notes) run only with PINKY_FAULTS_LONG=1."""
    def rank(item: pytest.Item) -> int:
        marker = item.get_closest_marker("host_cli")
        return marker.args[0] if marker and marker.args else (99 if marker is None else 50)

    items.sort(key=rank)  # stable: the order within a file and among the other files stays
    if os.environ.get("PINKY_FAULTS_LONG") == "1":
        return
    skip = pytest.mark.skip(reason="an expensive fault variant: set PINKY_FAULTS_LONG=1 to run it")
    for item in items:
        if "faults_long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("PINKY_", "CLAUDE")) and not name.startswith("PINKY_TEST_"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("pinky-home")
    monkeypatch.setenv("PINKY_HOME", str(home))
    monkeypatch.setenv("PINKY_CACHE_DIR", str(home / "cache"))  # a read-only project's index: never ~/.cache
    monkeypatch.setenv("PINKY_HASH_EMBED", "1")
    return home


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised project folder (the cwd): pinky.toml, an empty documentation/, brain.db next to it."""
    root = tmp_path / "demo-project"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def anyio_backend() -> str:
    """The MCP tests run on asyncio, the loop the SDK and pinky-mcp use."""
    return "asyncio"
