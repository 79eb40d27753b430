"""The answers pinky-mcp's front ships for `initialize` and `tools/list` (pinky.mcp.answers, answers.json): they are
what the real server answers, byte for byte, for every tier and protocol version of the handshake, and the first
start of an install, before any session wrote the front's cache, lists the tools before the MCP SDK is imported
(issue 36 item 3: on a busy machine that start took 7-16 s and Codex and Claude Code gave up)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mcp_helpers import RawServer, server_env, slow_sdk_env
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from pinky.mcp import answer_cache, answers, server, tiers

LATEST = HANDSHAKE_PROTOCOL_VERSIONS[-1]


def raw_lines(command: list[str], root: Path, tier: str, version: str) -> tuple[bytes, bytes]:
    """The raw stdout lines answering initialize and tools/list, from `command` started with PINKY_TIER=`tier`."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    env = server_env(root, **({"PINKY_TIER": tier} if tier else {}))
    done = subprocess.run(command, input="".join(json.dumps(m) + "\n" for m in lines).encode(), capture_output=True,
                          env=env, cwd=root, timeout=300)
    by_id = {json.loads(line).get("id"): line for line in done.stdout.splitlines()}
    assert 1 in by_id and 2 in by_id, done.stderr.decode()[-2000:]
    return by_id[1], by_id[2]


def test_the_committed_answers_are_the_generated_ones(tmp_path: Path) -> None:
    text = Path(answers.FILE).read_text(encoding="utf-8")
    assert answers.dumps(answers.generate(str(tmp_path))) == text, \
        "mcp/answers.json is stale: run `python -m pinky.mcp.answers`"


@pytest.mark.parametrize(("tier", "versions"), [("", HANDSHAKE_PROTOCOL_VERSIONS), ("read", (LATEST,)),
                                                ("admin", (HANDSHAKE_PROTOCOL_VERSIONS[0],))])
def test_a_first_start_serves_the_real_servers_answers_byte_for_byte(tmp_path: Path, tier: str,
                                                                      versions: tuple[str, ...]) -> None:
    """The front with no cache (a first start) against the real server alone, for the default tier at every
    handshake version and the other tiers at one each (test_the_committed_answers_are_the_generated_ones compares
    every tier at the newest version)."""
    assert not Path(answer_cache.cache_path(server_env(tmp_path))).exists()
    real = [sys.executable, "-m", "pinky.mcp.server"]
    pinky_mcp = [str(Path(sys.executable).parent / "pinky-mcp")]

    def compare(version: str) -> None:
        folder = tmp_path / version
        folder.mkdir()
        assert raw_lines(pinky_mcp, folder, tier, version) == raw_lines(real, folder, tier, version), version

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(compare, versions))


def test_every_tier_and_version_has_a_shipped_answer() -> None:
    for tier in ("", *tiers.TIERS):
        shipped = answers.shipped(tier)
        assert set(shipped["initialize"]) == set(shipped["tools"]) == set(HANDSHAKE_PROTOCOL_VERSIONS)
        names = [tool["name"] for tool in shipped["tools"][LATEST]["tools"]]
        assert names == [spec.name for spec in tiers.tools_for(tier or server.DEFAULT_TIER)]
    assert answers.DEFAULT_TIER == server.DEFAULT_TIER and answers.TIER_NAMES == tiers.TIERS


def test_the_first_start_lists_the_tools_before_the_sdk_is_imported(tmp_path: Path) -> None:
    """No cache yet (the first session after an install or update) on a machine where importing the MCP SDK
    takes 4 s: both answers come before it, and the real server's arrive within the session to write the cache."""
    slow = slow_sdk_env(tmp_path / "busy", seconds=4)
    marker = Path(slow["PINKY_TEST_SDK_MARKER"])
    cache = Path(answer_cache.cache_path(server_env(tmp_path)))
    assert not cache.exists()
    with RawServer(tmp_path, **slow) as session:
        init = session.request("initialize", {"protocolVersion": LATEST, "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "1"}})
        session.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        tools = session.request("tools/list")
        assert not marker.exists(), "the first start answered only after the MCP SDK was imported"
        assert init["result"]["serverInfo"]["name"] == "pinky-brain" and len(tools["result"]["tools"]) > 10
    assert cache.is_file(), "the real server's answers were not cached for the next start"
    assert not [m for m in session.other if m.get("method") == "notifications/tools/list_changed"]


def test_the_first_start_lists_prompts_and_resources_before_the_sdk_is_imported(tmp_path: Path) -> None:
    """Copilot CLI 1.0.102 asks for prompts/list, resources/list and resources/templates/list too before its first
    request to the model: with a slow SDK import and two CPU hogs its first session had no brain tool. The front
    answers them at once, with what the real server answers."""
    slow = slow_sdk_env(tmp_path / "busy", seconds=4)
    marker = Path(slow["PINKY_TEST_SDK_MARKER"])
    with RawServer(tmp_path, **slow) as session:
        session.request("initialize", {"protocolVersion": LATEST, "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}})
        session.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        served = {method: session.request(method)["result"] for method in answers.STATIC}
        assert not marker.exists(), "the first start answered the lists only after the MCP SDK was imported"
    real = answers.real_answers("", LATEST, str(tmp_path))[2]
    assert served == real and set(served) == set(answers.STATIC)
