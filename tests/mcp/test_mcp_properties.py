"""Hostile tool arguments: nothing crashes the server, nothing is written outside the save dirs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_helpers import RawServer

NASTY = ["../../x", "../../../etc/passwd", "/etc/passwd", "/tmp/evil", "..\\..\\win", "C:\\Windows\\x", "~/.ssh/id",
         "a\x00b", "\x00", "\x1b[31mred", "line\nbreak", "tab\there", ".", "..", "", " ", "con", "global/../../x",
         "gotcha/../../../x", "%2e%2e%2fx", "\u202eevil", "x" * 400, "🦀 crab"]
text = st.one_of(st.sampled_from(NASTY), st.text(max_size=60),
                 st.builds(lambda a, b: a + b, st.sampled_from(NASTY), st.text(max_size=20)))
json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3),
                          max_leaves=8)
maybe = lambda strategy: st.none() | strategy  # noqa: E731
TYPES = st.sampled_from(["note", "gotcha", "pattern", "decision", "diary", "guide", "Gotcha", "../x", "", "evil"])
EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    root = tmp_path_factory.mktemp("mcp-props")
    outside_before = set(os.listdir(root.parent))
    with RawServer(root, PINKY_TIER="admin") as srv:
        srv.initialize()
        yield srv
        assert srv.proc.poll() is None, srv.stderr()
    _assert_only_save_dirs_written(root)
    new_dirs = {n for n in set(os.listdir(root.parent)) - outside_before if not n.startswith("pinky-home")}
    assert new_dirs <= {root.name}  # the autouse fixture makes the pinky-home ones


def _assert_only_save_dirs_written(root: Path) -> None:
    assert list(root.rglob("*.md")), "some saves should have succeeded"
    # and pinky-mcp's cache of its own tools/list answer (pinky.mcp.front), under the home
    allowed = [root / "documentation", root / "home" / "brain", root / "home" / "state",
               root / "home" / "cache" / "mcp"]
    local = [root / "home" / "state", root / "documentation" / ".pinky", root / "home" / "brain" / ".pinky",
             root / "home" / "cache" / "mcp"]
    for path in root.rglob("*"):
        if path.is_dir() or path.name.startswith(("brain.db", "stderr-")):
            continue
        resolved = path.resolve()
        assert any(resolved.is_relative_to(base) for base in allowed), path
        if not any(resolved.is_relative_to(base) for base in local):  # state, and the edit locks
            assert path.suffix == ".md" and "\x00" not in path.name, path


def _call(server: RawServer, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = {k: v for k, v in arguments.items() if v is not None}
    reply = server.request("tools/call", {"name": tool, "arguments": arguments})
    assert "result" in reply, reply  # a tool problem is a result with isError, never a protocol failure
    assert isinstance(reply["result"]["isError"], bool)
    assert reply["result"]["content"][0]["text"]
    if not reply["result"]["isError"]:
        assert isinstance(reply["result"]["structuredContent"], dict)
    return reply["result"]


@EXAMPLES
@given(title=text, body=text, tags=maybe(json_value), kind=maybe(TYPES), project=maybe(json_value),
       scope=maybe(st.sampled_from(["global", "project:x", "project:../..", "project:", "../../", "/abs"]) | text))
def test_save_never_crashes_or_escapes(server: RawServer, title: Any, body: Any, tags: Any, kind: Any,
                                       project: Any, scope: Any) -> None:
    result = _call(server, "brain_save", {"title": title, "body": body, "tags": tags, "type": kind,
                                          "project": project, "scope": scope})
    if not result["isError"]:
        saved = result["structuredContent"]
        path = Path(saved["path"]) if Path(saved["path"]).is_absolute() else server.root / saved["path"]
        assert path.is_file()


@EXAMPLES
@given(query=text, limit=json_value, scope=maybe(text), project=maybe(json_value), tags=maybe(json_value),
       kind=maybe(TYPES), fmt=maybe(st.sampled_from(["compact", "full", "huge"])))
def test_search_never_crashes(server: RawServer, query: Any, limit: Any, scope: Any, project: Any, tags: Any,
                              kind: Any, fmt: Any) -> None:
    _call(server, "brain_search", {"query": query, "limit": limit, "scope": scope, "project": project,
                                   "tags": tags, "type": kind, "format": fmt})


@EXAMPLES
@given(slug=text, version=maybe(text), body=maybe(text), since=text, reason=text)
def test_slug_tools_never_crash_or_touch_other_files(server: RawServer, slug: Any, version: Any, body: Any,
                                                     since: Any, reason: Any) -> None:
    _call(server, "brain_get", {"slug": slug})
    _call(server, "brain_related", {"slug": slug})
    _call(server, "brain_update", {"slug": slug, "expected_version": version, "body": body})
    _call(server, "brain_delete", {"slug": slug, "reason": reason})
    _call(server, "brain_briefing", {"since": since})
    reply = server.request("resources/read", {"uri": f"pinky://entry/{slug}"})
    assert "result" in reply or reply["error"]["code"] < 0


def test_huge_and_wrongly_typed_arguments_are_refused(server: RawServer) -> None:
    ten_mb = "x" * 10_000_000
    assert "body" in _call(server, "brain_save", {"title": "big", "body": ten_mb})["content"][0]["text"]
    assert "title" in _call(server, "brain_save", {"title": ten_mb, "body": "b"})["content"][0]["text"]
    assert "query" in _call(server, "brain_search", {"query": ten_mb})["content"][0]["text"]
    assert _call(server, "brain_save", {"title": "t", "body": "b", "tags": "one"})["isError"]
    assert _call(server, "brain_save", {"title": "t", "body": "b", "tags": [1, 2]})["isError"]
    assert _call(server, "brain_save", {"title": "t", "body": "b", "tags": ["x"] * 33})["isError"]
    assert _call(server, "brain_save", {"title": ["t"], "body": "b"})["isError"]
    assert _call(server, "brain_search", {"query": "q", "limit": 0})["isError"]
    assert _call(server, "brain_search", {"query": "q", "limit": True})["isError"] in (True, False)
    reply = server.request("tools/call", {"name": "brain_save", "arguments": "not an object"})
    assert "error" in reply or reply["result"]["isError"]
    assert _call(server, "brain_stats", {})["isError"] is False  # still serving after all that
