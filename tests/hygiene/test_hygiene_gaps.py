"""Knowledge gaps: a search whose best hit is weak is counted (its hash, its text only when asked), a later save
that answers it closes it, and nothing is recorded with telemetry off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_helpers import in_process

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search.gaps import answers, is_weak, query_hash, word_hashes


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    base.save("Kafka offsets", "Consumer offsets reset when the group id changes.")
    yield base
    base.close()


def test_the_pure_parts() -> None:
    assert query_hash("  Terraform   DRIFT ") == query_hash("terraform drift")
    assert word_hashes("How does the retries work") == word_hashes("retry works")  # stop words and plurals
    assert is_weak(0.0, 0.0) and is_weak(0.5, 0.25)
    assert not is_weak(1.0, 0.0) and not is_weak(0.0, 0.9)
    gap = word_hashes("terraform drift detection nightly")
    assert answers(gap, word_hashes("Detect terraform drift: run plan nightly in CI"))
    assert not answers(gap, word_hashes("terraform modules")) and not answers(set(), word_hashes("anything"))


def test_a_weak_search_is_a_gap_until_a_save_answers_it(kb: KnowledgeBase) -> None:
    kb.search("terraform drift detection", record_usage=True)
    kb.search("Terraform  drift detection", record_usage=True)
    kb.search("kafka consumer offsets", record_usage=True)  # answered: no gap
    kb.search("terraform drift detection")  # a search that records nothing (the CLI's)
    (gap,) = kb.hygiene.gaps()
    assert gap["count"] == 2 and gap["query"] is None and gap["query_hash"] == query_hash("terraform drift detection")
    saved = kb.save("Terraform drift", "Drift detection: run terraform plan nightly and alert on changes.")
    assert kb.hygiene.gaps() == []
    (closed,) = kb.hygiene.gaps(include_closed=True)
    assert closed["closed_by"] == saved.slug


def test_an_update_that_answers_a_gap_closes_it(kb: KnowledgeBase) -> None:
    kb.search("grafana alert silences", record_usage=True)
    stub = kb.save("Monitoring", "todo")
    assert len(kb.hygiene.gaps()) == 1
    kb.update(stub.slug, stub.version, body="Grafana alert silences: create them from the alert rule page.")
    assert kb.hygiene.gaps() == []


def test_query_text_is_kept_only_when_asked(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_LOG_QUERIES", "1")
    with KnowledgeBase(load_config()) as kb:
        kb.search("Istio  sidecar memory", record_usage=True)
        assert [g["query"] for g in kb.hygiene.gaps()] == ["istio sidecar memory"]
    monkeypatch.setenv("PINKY_TELEMETRY", "0")
    with KnowledgeBase(load_config()) as kb:
        kb.search("linkerd proxy", record_usage=True)
        assert [g["query"] for g in kb.hygiene.gaps()] == ["istio sidecar memory"]


def test_cli_gaps(kb: KnowledgeBase) -> None:
    kb.search("terraform drift", record_usage=True)
    shown = CliRunner().invoke(cli, ["gaps"])
    assert shown.exit_code == 0 and f"query #{query_hash('terraform drift')}" in shown.output
    assert '"count": 1' in CliRunner().invoke(cli, ["gaps", "--json"]).output


@pytest.mark.anyio
async def test_mcp_search_records_and_brain_gaps_lists(tmp_path: Path) -> None:
    async with in_process(tmp_path, "write") as (client, _):
        await client.call_tool("brain_save", {"title": "Pool", "body": "postgres pool size is 10"})
        await client.call_tool("brain_search", {"query": "helm chart rollback"})
        found = await client.call_tool("brain_gaps", {})
        assert found.structured_content["count"] == 1 and found.structured_content["gaps"][0]["count"] == 1
        await client.call_tool("brain_save", {"title": "Helm rollback", "body": "helm rollback of a chart: ..."})
        assert (await client.call_tool("brain_gaps", {})).structured_content["count"] == 0
