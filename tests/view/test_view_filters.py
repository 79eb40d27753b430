"""The view's search box narrows as `pinky-brain search` does: its query parameters are the request's fields
under their CLI flags' names (pinky.base.operations), read by the running `pinky view` over real HTTP."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

from view_helpers import View, make_brain, running_view, sign_in


def _get(view: View, owner: dict[str, str], path: str) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=10)
    conn.request("GET", path, headers=owner)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 200, (path, response.status, body[:300])
    return json.loads(body)


def test_the_search_and_the_latest_list_take_the_filters_by_their_flag_names(tmp_path: Path) -> None:
    make_brain(tmp_path / "proj")
    with running_view(tmp_path / "proj", tmp_path / "home") as view:
        owner = sign_in(view)
        slugs = lambda found, key: {item["slug"] for item in found[key]}  # noqa: E731
        assert slugs(_get(view, owner, "/api/search?q=postgres&type=gotcha"), "hits") == {"gotcha/pool-timeout"}
        assert slugs(_get(view, owner, "/api/search?q=postgres&type=decision"), "hits") == {"decision/use-pgbouncer"}
        assert slugs(_get(view, owner, "/api/search?q=&tag=pool&tag=postgres"), "entries") == {"gotcha/pool-timeout"}
        assert slugs(_get(view, owner, "/api/search?q=&tag=pool&tag=redis"), "entries") == set()
        assert _get(view, owner, "/api/search?q=postgres&limit=1")["hits"].__len__() == 1
