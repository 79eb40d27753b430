"""pinky-mcp on the wire: the real process, raw JSON-RPC lines, every protocol version Claude Code speaks."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import console_script
from mcp_helpers import RawServer, server_env

from pinky.mcp.server import log_level, tier_from_env

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ALL_TOOLS = {"brain_search", "brain_save", "brain_stats", "brain_get", "brain_update", "brain_delete",
             "brain_briefing", "brain_related", "brain_list", "brain_reindex", "brain_sync", "brain_tags",
             "brain_export", "brain_import", "brain_feedback", "brain_gaps",
             "brain_check", "brain_research"}

# The seed's "Testing it by hand" lines, verbatim.
HAND_TEST = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"brain_stats","arguments":{}}}',
]


def hand_test(root: Path, lines: list[str], **extra_env: str) -> tuple[list[dict[str, Any]], str]:
    """`printf '%s\\n' LINE... | pinky-mcp`, through a real shell pipe as the seed does it."""
    printf = "printf '%s\\n' " + " ".join(shlex.quote(line) for line in lines)
    command = f"{printf} | {' '.join(shlex.quote(part) for part in console_script('pinky-mcp'))}"
    done = subprocess.run(["sh", "-c", command], cwd=root, env=server_env(root, **extra_env),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode(errors="replace")


# --- the seed's hand test ------------------------------------------------------------------------


def test_hand_test_prints_server_info_tools_and_stats(tmp_path: Path) -> None:
    messages, _ = hand_test(tmp_path, HAND_TEST, PINKY_DB="brain.db")
    by_id = {m["id"]: m for m in messages}
    assert set(by_id) == {1, 2, 3} and len(messages) == 3
    assert by_id[1]["result"]["serverInfo"]["name"] == "pinky-brain"
    assert by_id[1]["result"]["protocolVersion"] == "2024-11-05"
    names = {t["name"] for t in by_id[2]["result"]["tools"]}
    assert {"brain_search", "brain_save", "brain_stats"} <= names
    stats = by_id[3]["result"]
    assert stats["isError"] is False
    assert stats["structuredContent"]["entries"] == 0 and stats["structuredContent"]["chunks"] == 0
    assert "entries" in stats["content"][0]["text"]
    assert (tmp_path / "brain.db").exists()  # PINKY_DB=brain.db is relative to the cwd


def test_hand_test_answers_a_slow_call_before_exiting_on_eof(tmp_path: Path) -> None:
    """stdin closes right after the last line; calls already read must still be answered."""
    lines = [HAND_TEST[0]] + [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "brain_save", "arguments": {"title": f"note {n}", "body": "x" * 5000}}})
        for n in range(10, 30)
    ]
    messages, _ = hand_test(tmp_path, lines, PINKY_PROJECT="demo")
    assert sorted(m["id"] for m in messages) == [1, *range(10, 30)]
    assert [m for m in messages if m["id"] != 1 and m["result"]["isError"]] == []
    assert len(list((tmp_path / "documentation" / "note").glob("*.md"))) == 20


# --- protocol versions, ids, errors --------------------------------------------------------------


def test_every_protocol_version_is_echoed(tmp_path: Path) -> None:
    servers = [RawServer(tmp_path) for _ in PROTOCOL_VERSIONS]  # started together: one cold start of wall time
    try:
        for server, version in zip(servers, PROTOCOL_VERSIONS, strict=True):
            reply = server.initialize(version)
            assert reply["result"]["protocolVersion"] == version
            assert reply["result"]["serverInfo"]["name"] == "pinky-brain"
            tools = server.request("tools/list")["result"]["tools"]
            admin = {"brain_reindex", "brain_sync", "brain_export", "brain_import"}
            assert {t["name"] for t in tools} == ALL_TOOLS - admin
            stats = server.call("brain_stats")
            assert stats["isError"] is False and "entries" in stats["structuredContent"]
            assert server.request("ping")["result"] == {}
    finally:
        for server in servers:
            assert server.close() == 0


def test_unknown_version_falls_back_to_the_latest_we_speak(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        assert server.initialize("2099-01-01")["result"]["protocolVersion"] in PROTOCOL_VERSIONS


def test_ids_errors_and_malformed_lines_keep_the_server_serving(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        first = server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "1"}}, request_id="init-1")
        assert first["id"] == "init-1"
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        assert server.request("tools/list", request_id="7")["id"] == "7"  # a string that looks like a number
        assert server.request("tools/list", request_id=7)["id"] == 7

        server.send("this is not json")
        parse_error = server.receive()
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
        server.send('{"jsonrpc":"2.0","id":41}')  # JSON, but not a request
        invalid = server.receive()
        assert invalid["id"] == 41 and invalid["error"]["code"] == -32600
        server.send("")  # blank lines are ignored

        unknown = server.request("no/such/method", request_id="x")
        assert unknown["error"]["code"] == -32601

        tool = server.request("tools/call", {"name": "brain_nope", "arguments": {}})["result"]
        assert tool["isError"] is True and "brain_search" in tool["content"][0]["text"]
        bad = server.call("brain_search", query="pool", limit=500)
        assert bad["isError"] is True and "limit" in bad["content"][0]["text"]
        assert server.call("brain_search", query="pool")["isError"] is False  # still serving
    for line in server.raw_stdout:  # stdout carried nothing but JSON-RPC
        assert json.loads(line)["jsonrpc"] == "2.0"


def test_undecodable_requests_and_invalid_ids_get_their_errors(tmp_path: Path) -> None:
    """Issue 10: a lone surrogate got -32700 with id null (the caller never learnt which call
    failed), and float, bool and null ids or jsonrpc "1.0" were read as notifications and dropped."""
    with RawServer(tmp_path) as server:
        server.request("initialize", {}, request_id=1)
        server.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"brain_search",'
                    '"arguments":{"query":"a\\ud800b"}}}')
        surrogate = server.answer(2)
        assert surrogate["error"]["code"] == -32700 and "surrogate" in surrogate["error"]["message"]
        server.send('{"jsonrpc":"1.0","id":3,"method":"ping"}')
        assert server.answer(3)["error"]["code"] == -32600
        for bad_id in ("3.5", "8.0", "true", "null"):
            server.send(f'{{"jsonrpc":"2.0","id":{bad_id},"method":"ping"}}')
            refused = server.receive()
            assert refused["id"] is None and refused["error"]["code"] == -32600, bad_id
            assert "id must be a string or an integer" in refused["error"]["message"]
        server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')  # a real notification: no answer
        assert server.request("ping", request_id=4)["result"] == {}
        assert server.other == []


def test_deep_nesting_is_refused_as_nesting_under_its_id(tmp_path: Path) -> None:
    """Issue 22: a request nested 300 deep was told it held "a lone surrogate"."""
    deep = "[" * 300 + "]" * 300
    with RawServer(tmp_path) as server:
        server.request("initialize", {}, request_id=1)
        server.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"brain_search",'
                    f'"arguments":{{"query":"pool","tags":{deep}}}}}}}')
        refused = server.answer(2)
        assert refused["error"]["code"] == -32700 and "nests" in refused["error"]["message"]
        assert "surrogate" not in refused["error"]["message"]
        assert server.request("ping", request_id=3)["result"] == {}


@pytest.mark.parametrize(("params", "says"), [
    ({"name": "session_briefing", "arguments": {"sincee": "2h"}}, "unknown argument 'sincee'; session_briefing "
                                                                    "takes since"),
    ({"name": "research_topic", "arguments": {}}, "missing required argument topic"),
    ({"name": "research_topic"}, "missing required argument topic"),
    ({"name": "no_such_prompt", "arguments": {}}, "unknown prompt 'no_such_prompt'; available prompts: save_knowledge"),
])
def test_prompts_get_with_bad_arguments_is_invalid_params(tmp_path: Path, params: dict[str, Any], says: str) -> None:
    """Issue 22: prompts/get with an unknown argument answered error code 0 ("Error rendering prompt")."""
    with RawServer(tmp_path) as server:
        server.initialize()
        refused = server.request("prompts/get", params)
        assert refused["error"]["code"] == -32602 and says in refused["error"]["message"], refused
        fine = server.request("prompts/get", {"name": "session_briefing", "arguments": {"since": "2h"}})
        assert "since='2h'" in fine["result"]["messages"][0]["content"]["text"]


def test_every_tool_error_carries_its_cause(tmp_path: Path) -> None:
    """Issue 22: an exception other than a core error reached the model as a bare 'Error executing tool
    brain_export', with no cause; the log keeps the traceback."""
    (tmp_path / "not-a-folder").mkdir()
    with RawServer(tmp_path, PINKY_TIER="admin") as server:
        server.initialize()
        failed = server.call("brain_export", file=str(tmp_path / "not-a-folder" / ("x" * 300 + ".jsonl")))
        text = failed["content"][0]["text"]
        assert failed["isError"] and "file system error" in text and "not-a-folder" in text, text
        assert server.call("brain_stats")["isError"] is False


def test_stdout_stays_pure_with_debug_logging(tmp_path: Path) -> None:
    messages, stderr = hand_test(tmp_path, HAND_TEST, PINKY_LOG="debug")
    assert len(messages) == 3 and all(m["jsonrpc"] == "2.0" for m in messages)
    assert "pinky" in stderr  # the debug logs went to stderr


# --- tiers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tier", "expected"), [
    ("read", {"brain_search", "brain_get", "brain_related", "brain_briefing", "brain_list", "brain_stats",
              "brain_tags", "brain_gaps", "brain_check", "brain_research"}),
    ("admin", ALL_TOOLS),
])
def test_tiers_choose_the_tools(tmp_path: Path, tier: str, expected: set[str]) -> None:
    lines = [HAND_TEST[0], HAND_TEST[1],
             '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"brain_save",'
             '"arguments":{"title":"t","body":"b"}}}']
    messages, _ = hand_test(tmp_path, lines, PINKY_TIER=tier)
    by_id = {m["id"]: m for m in messages}
    assert {t["name"] for t in by_id[2]["result"]["tools"]} == expected
    saved = by_id[4]["result"]
    if tier == "read":
        assert saved["isError"] is True and "PINKY_TIER" in saved["content"][0]["text"]
        assert not (tmp_path / "home" / "brain").exists()
    else:
        assert saved["isError"] is False


def test_a_bad_tier_stops_with_a_clear_message(tmp_path: Path) -> None:
    done = subprocess.run(console_script("pinky-mcp"), input=b"", capture_output=True, timeout=60,
                          env=server_env(tmp_path, PINKY_TIER="root"), cwd=tmp_path)
    assert done.returncode == 2 and b"PINKY_TIER" in done.stderr and done.stdout == b""


def test_tool_metadata_every_tool_has_schemas_and_annotations(tmp_path: Path) -> None:
    messages, _ = hand_test(tmp_path, HAND_TEST[:2], PINKY_TIER="admin")
    for tool in messages[1]["result"]["tools"]:
        assert tool["outputSchema"]["type"] == "object", tool["name"]
        assert tool["inputSchema"]["type"] == "object"
        assert len(tool["description"]) > 80 and "\n" not in tool["description"]
        assert "readOnlyHint" in tool["annotations"] and tool.get("title")
    search = next(t for t in messages[1]["result"]["tools"] if t["name"] == "brain_search")
    props = search["inputSchema"]["properties"]
    assert props["query"]["maxLength"] == 2000
    assert (props["limit"]["minimum"], props["limit"]["maximum"], props["limit"]["default"]) == (1, 100, 10)
    assert search["inputSchema"]["required"] == ["query"]


def test_python_dash_m_runs_the_server(tmp_path: Path) -> None:
    command = f"printf '%s\\n' {shlex.quote(HAND_TEST[0])} | {shlex.quote(sys.executable)} -m pinky.mcp.server"
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, env=server_env(tmp_path), capture_output=True,
                          timeout=60)
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "pinky-brain"


def test_importing_the_core_does_not_import_the_sdk() -> None:
    code = "import sys, pinky.cli, pinky.kb, pinky.briefing; print(any(m.split('.')[0] == 'mcp' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- configuration helpers (no process) ----------------------------------------------------------


@pytest.mark.parametrize(("env", "level"), [
    ({}, 30), ({"PINKY_LOG": "info"}, 20), ({"PINKY_LOG": "DEBUG"}, 10), ({"RUST_LOG": "warn"}, 30),
    ({"RUST_LOG": "hyper=trace,pinky=info"}, 20), ({"RUST_LOG": "error,other=debug"}, 40),
    ({"PINKY_LOG": "off"}, 60), ({"PINKY_LOG": "error", "RUST_LOG": "debug"}, 40), ({"PINKY_LOG": "loud"}, 30),
])
def test_log_level_from_env(env: dict[str, str], level: int) -> None:
    assert log_level(env) == level


def test_tier_from_env() -> None:
    assert tier_from_env({}) == "write"
    assert tier_from_env({"PINKY_TIER": " Admin "}) == "admin"
    with pytest.raises(Exception, match="PINKY_TIER"):
        tier_from_env({"PINKY_TIER": "superuser"})


def test_help_is_for_users_and_stray_arguments_are_refused() -> None:
    command = console_script("pinky-mcp")
    shown = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: pinky-mcp")
    assert "PINKY_TIER" in shown.stdout and "pinky.toml" in shown.stdout and "_lowlevel" not in shown.stdout
    stray = subprocess.run([*command, "--port", "80"], capture_output=True, text=True, timeout=60)
    assert stray.returncode == 2 and stray.stdout == "" and "--help" in stray.stderr
