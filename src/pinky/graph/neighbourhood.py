"""The N-hop neighbourhood of an entry: entries and code files within `depth` links, either way.

A breadth-first walk over the link table, one query per direction and level: notes' outgoing
links (to notes and to code files), links into notes (from notes and from code breadcrumbs), and
the links touching the code files reached. Bounded: depth at most 3, at most FANOUT edges per
node and MAX_NODES nodes in all (`truncated` says when a bound cut the walk short).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pinky.base.shown import shown
from pinky.errors import InvalidInput
from pinky.graph.links import day_of, relations
from pinky.indexing.index import Index
from pinky.knowledge import entries
from pinky.store import link_queries

MAX_DEPTH = 3
FANOUT = 25
MAX_NODES = 250


@dataclass
class Walk:
    """What the walk found so far. Nodes are keyed `e:<entry id>` and `f:<code path>`."""

    depth: dict[str, int] = field(default_factory=dict)
    edges: dict[tuple[str, str, str, str], Any] = field(default_factory=dict)
    truncated: bool = False


def neighbourhood(index: Index, slug: str, *, depth: int = 1, rels: Sequence[str] | None = None,
                  at: str | None = None) -> dict[str, Any]:
    """Nodes (entries and code files) and edges within `depth` links of an entry, as JSON-ready data."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be a whole number from 1 to {MAX_DEPTH}, got {depth!r}")
    me = entries.find(index, slug)
    day, wanted = day_of(at), relations(rels)
    walk = Walk(depth={f"e:{me['id']}": 0})
    frontier = [f"e:{me['id']}"]
    for level in range(1, depth + 1):
        frontier = _step(index.conn, walk, frontier, level, day, wanted)
        if not frontier:
            break
    return _render(index, walk, me["slug"], depth, day)


def _step(conn: Any, walk: Walk, frontier: list[str], level: int, day: str,
          wanted: set[str] | None) -> list[str]:
    """One level further: every edge of the frontier's nodes (bounded), and the nodes new at this level."""
    notes = [node[2:] for node in frontier if node.startswith("e:")]
    files = [node[2:] for node in frontier if node.startswith("f:")]
    budget = FANOUT * len(frontier) * 2
    parts = [link_queries.links_from(conn, notes, day, budget), link_queries.links_to(conn, notes, day,
                                                                                      budget)] if notes else []
    parts += [link_queries.links_of_files(conn, files, budget)] if files else []
    walk.truncated |= any(len(part) == budget for part in parts)  # the query's own bound cut it short
    rows = [row for part in parts for row in part]
    per_node: dict[str, int] = {}
    fresh: list[str] = []
    current = set(frontier)
    for row in rows:
        if wanted is not None and row["rel"] not in wanted:
            continue
        ends = _ends(row)
        if ends is None:
            continue  # unresolved: not part of the graph (pinky doctor lists it)
        here = ends[0] if ends[0] in current else ends[1]
        there = ends[1] if here == ends[0] else ends[0]
        per_node[here] = per_node.get(here, 0) + 1
        if per_node[here] > FANOUT:
            walk.truncated = True
            continue
        if there not in walk.depth:
            if len(walk.depth) >= MAX_NODES:
                walk.truncated = True
                continue
            walk.depth[there] = level
            fresh.append(there)
        walk.edges.setdefault((ends[0], ends[1], row["kind"], row["rel"]), row)
    return fresh


def _ends(row: Any) -> tuple[str, str] | None:
    """(from node, to node) of a link row; None when it names no entry or file."""
    start = f"e:{row['source_id']}" if row["source_id"] else f"f:{row['source_file']}"
    if row["target_id"]:
        return start, f"e:{row['target_id']}"
    return (start, f"f:{row['target_file']}") if row["target_file"] else None


def _render(index: Index, walk: Walk, root: str, depth: int, day: str) -> dict[str, Any]:
    found = link_queries.entry_nodes(index.conn, [node[2:] for node in walk.depth if node.startswith("e:")])
    names: dict[str, str] = {}
    nodes: list[dict[str, Any]] = []
    for node, level in sorted(walk.depth.items(), key=lambda item: item[1]):
        if node.startswith("f:"):
            names[node] = node[2:]
            nodes.append({"id": node[2:], "kind": "file", "depth": level, "path": node[2:]})
        elif (row := found.get(node[2:])) is not None:
            names[node] = row["slug"]
            nodes.append({"id": row["slug"], "kind": "entry", "depth": level, "title": shown(row["title"]),
                          "type": row["type"], "path": index.display_path(row["root"], row["path"])})
    edges = [{"from": names[a], "to": names[b], "kind": kind, "rel": rel, "line": row["line"],
              "since": row["since"], "until": row["until"]}
             for (a, b, kind, rel), row in walk.edges.items() if a in names and b in names]
    return {"root": root, "depth": depth, "at": day, "nodes": nodes, "edges": edges, "truncated": walk.truncated}


def overview(index: Index, *, at: str | None = None) -> dict[str, Any]:
    """Every current entry (diaries aside: they name everything) and every link between two of them that
    holds on `at` (default today), one edge per (from, to, relation): the whole brain at a glance. Beside
    them, `code`: the links between those entries and code files (`files:` and breadcrumbs), one per
    (from, to, relation), each with `file` (the code file's path) and `note` (the entry's slug)."""
    day = day_of(at)
    rows = link_queries.current_entry_nodes(index.conn)
    slugs = {row["id"]: row["slug"] for row in rows}
    nodes = [{"id": row["slug"], "title": shown(row["title"]), "type": row["type"], "scope": row["scope"]}
             for row in rows]
    edges, seen = [], set()
    for source, target, kind, rel in link_queries.entry_edges(index.conn, day):
        key = (source, target, rel)
        if source in slugs and target in slugs and source != target and key not in seen:
            seen.add(key)
            edges.append({"from": slugs[source], "to": slugs[target], "kind": kind, "rel": rel})
    code, seen_code = [], set()
    for entry_id, path, kind, rel, from_file in link_queries.entry_file_edges(index.conn):
        if entry_id in slugs and (entry_id, path, rel, from_file) not in seen_code:
            seen_code.add((entry_id, path, rel, from_file))
            ends = (path, slugs[entry_id]) if from_file else (slugs[entry_id], path)
            code.append({"from": ends[0], "to": ends[1], "kind": kind, "rel": rel, "file": path,
                         "note": slugs[entry_id]})
    return {"at": day, "nodes": nodes, "edges": edges, "code": code}
