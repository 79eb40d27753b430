"""The whole brain as a picture: every note up to a few thousand, clusters beyond (pure, no I/O).

Clusters are communities of the link graph found by label propagation (each note takes the label
most of its neighbours carry, in a fixed order, until nothing changes or ROUNDS pass: linear in the
links, deterministic), so notes that link to each other stay together. Notes with no link, and
communities too small to be worth a node of their own, are grouped by type instead. A cluster is
named after its most linked note and opens as a graph of its own members.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

DRAW_ALL_UP_TO = 2500  # notes drawn one by one; above, clusters
ROUNDS = 12
MIN_CLUSTER = 8  # smaller communities join their type's group


def picture(overview: dict[str, Any], cluster: str | None = None, limit: int = DRAW_ALL_UP_TO,
            groups: dict[str, str] | None = None) -> dict[str, Any]:
    """What the graph view draws: notes and links when there are at most `limit` notes (or the members of
    `cluster`), else one node per cluster with the number of links between clusters. `groups`: the
    communities, when already found."""
    nodes, edges = overview["nodes"], overview["edges"]
    if cluster is None and len(nodes) <= limit:
        return _with_code({"mode": "notes", "nodes": nodes, "edges": edges, "total": len(nodes), "cut": 0},
                          overview.get("code", []))
    groups = groups if groups is not None else communities(nodes, edges)
    if cluster is not None:
        members = {slug for slug, group in groups.items() if group == cluster}
        return _with_code(_members(nodes, edges, members, limit), overview.get("code", []))
    return _clusters(nodes, edges, groups)


def _with_code(drawn: dict[str, Any], code: list[dict[str, Any]]) -> dict[str, Any]:
    """A picture of notes with the code files they name (squares on the page), and those links: the note page
    lists a note's code, so the graph shows it too. Clusters stay notes alone."""
    notes = {node["id"] for node in drawn["nodes"]}
    links = [edge for edge in code if edge["note"] in notes]
    files = sorted({edge["file"] for edge in links} - notes)
    return {**drawn, "nodes": [*drawn["nodes"], *({"id": path, "kind": "file", "path": path} for path in files)],
            "edges": [*drawn["edges"], *({k: v for k, v in edge.items() if k not in ("file", "note")}
                                         for edge in links)]}


def communities(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, str]:
    """slug -> cluster id (`c:<slug of its most linked note>`, or `t:<type>` for the loose ones)."""
    neighbours: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        neighbours[edge["from"]].append(edge["to"])
        neighbours[edge["to"]].append(edge["from"])
    order = sorted(neighbours, key=lambda slug: (-len(neighbours[slug]), slug))
    label = {slug: slug for slug in order}
    for _ in range(ROUNDS):
        changed = 0
        for slug in order:
            votes = Counter(label[other] for other in neighbours[slug])
            best = max(votes.items(), key=lambda kv: (kv[1], kv[0] == label[slug], kv[0]))[0]
            if best != label[slug]:
                label[slug], changed = best, changed + 1
        if not changed:
            break
    sizes = Counter(label.values())
    degree = {slug: len(neighbours[slug]) for slug in order}
    heads: dict[str, str] = {}
    for slug in order:  # most linked first: the first member seen names its community
        heads.setdefault(label[slug], slug)
    kinds = {node["id"]: node["type"] for node in nodes}
    return {node["id"]: (f"c:{heads[label[node['id']]]}"
                         if node["id"] in label and sizes[label[node["id"]]] >= MIN_CLUSTER and degree[node["id"]]
                         else f"t:{kinds[node['id']]}") for node in nodes}


def _clusters(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], groups: dict[str, str]) -> dict[str, Any]:
    titles = {node["id"]: node["title"] for node in nodes}
    members: dict[str, list[str]] = defaultdict(list)
    for slug, group in groups.items():
        members[group].append(slug)
    between: Counter[tuple[str, str]] = Counter()
    for edge in edges:
        first, second = groups.get(edge["from"]), groups.get(edge["to"])
        if first and second and first != second:
            between[(min(first, second), max(first, second))] += 1
    shown = [{"id": group, "size": len(slugs), "type": "cluster",
              "title": (f"{titles[group[2:]]} and {len(slugs) - 1:,} more" if group.startswith("c:")
                        else f"{len(slugs):,} unlinked or loosely linked {group[2:]} notes")}
             for group, slugs in sorted(members.items(), key=lambda kv: -len(kv[1]))]
    links = [{"from": a, "to": b, "rel": "links", "count": count} for (a, b), count in between.items()]
    return {"mode": "clusters", "nodes": shown, "edges": links, "total": len(nodes), "cut": 0}


def _members(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], members: set[str], limit: int) -> dict[str, Any]:
    inside = [edge for edge in edges if edge["from"] in members and edge["to"] in members]
    degree: Counter[str] = Counter()
    for edge in inside:
        degree[edge["from"]] += 1
        degree[edge["to"]] += 1
    kept = set(sorted(members, key=lambda slug: (-degree[slug], slug))[:limit])
    return {"mode": "notes", "nodes": [node for node in nodes if node["id"] in kept],
            "edges": [edge for edge in inside if edge["from"] in kept and edge["to"] in kept],
            "total": len(members), "cut": len(members) - len(kept)}
