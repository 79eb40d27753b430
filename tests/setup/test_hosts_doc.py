"""documentation/HOSTS.md's table is the one the host modules give: a host, a hook or a limit added to its module
in src/pinky/hosts/ shows in the documentation (regenerate with `python -m pinky.setup.hosts_doc`)."""

from __future__ import annotations

from pathlib import Path

from pinky.hosts.catalog import all_hosts
from pinky.setup.hosts_doc import table

ROOT = Path(__file__).resolve().parents[2]


def test_hosts_md_holds_the_catalogs_table() -> None:
    text = (ROOT / "documentation" / "HOSTS.md").read_text(encoding="utf-8")
    assert table() in text, "documentation/HOSTS.md is out of step: python -m pinky.setup.hosts_doc"
    for host in all_hosts():
        assert f"`pinky-brain setup {host.name}`" in text
        for limit in host.limits:
            assert limit.source in text


def test_readme_links_hosts_md_and_names_setup() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "documentation/HOSTS.md" in readme and "pinky-brain setup <host>" in readme
