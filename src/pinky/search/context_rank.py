"""Context-aware ranking: when a search says which file the agent is working on, the entries tied to
that file (its `files:` lists it, or it carries their `Brain:` breadcrumb) and the entries one
link from those rank a little higher, and each boosted hit says why.

The boost is bounded and scale-free: a fraction of the spread between the best and the worst
score of the query's candidates (BOOST_LINKED for entries tied to the file, BOOST_ONE_HOP one link
further), so it reorders close calls and never lifts an entry the query does not match at all
(only the query's own candidates are boosted).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pinky.base.dates import now_utc
from pinky.indexing.index import Index
from pinky.store import link_queries

BOOST_LINKED = 0.15
BOOST_ONE_HOP = 0.05
MAX_NEIGHBOURS = 200


@dataclass(frozen=True)
class Boost:
    weight: float
    why: str


def project_path(index: Index, context_file: str) -> str:
    """The file as the code scan names it: relative to the project root, '/' separated."""
    path = context_file.strip().replace("\\", "/")
    root = index.config.project_root
    if os.path.isabs(path) and root is not None:
        try:
            path = os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")
        except ValueError:  # another drive (Windows)
            return path
    while path.startswith("./"):
        path = path[2:]
    return path


def _suffixes(rel: str) -> list[str]:
    """`src/db/pool.py`, `db/pool.py`, `pool.py`: how a `files:` entry may name the file."""
    parts = rel.split("/")
    return ["/".join(parts[n:]) for n in range(len(parts)) if parts[n]]


def boosts_for(index: Index, context_file: str) -> dict[str, Boost]:
    """Entry id -> boost for the entries tied to `context_file` and those one link from them."""
    rel = project_path(index, context_file)
    if not rel or rel.startswith("../"):
        return {}
    conn = index.conn
    linked: dict[str, str] = {}
    for eid, how in link_queries.entries_linked_to_file(conn, _suffixes(rel)):
        if linked.get(eid) != "breadcrumb":  # a breadcrumb names the very line: the better reason
            linked[eid] = how
    boosts = {eid: Boost(BOOST_LINKED, f"linked to {rel} ({how})") for eid, how in linked.items()}
    if not linked:
        return boosts
    today = now_utc().date().isoformat()
    ids = list(linked)
    rows = link_queries.links_from(conn, ids, today, MAX_NEIGHBOURS) + link_queries.links_to(conn, ids, today,
                                                                                             MAX_NEIGHBOURS)
    names = link_queries.entry_nodes(conn, ids)
    for row in rows:
        near, other = (row["source_id"], row["target_id"]) if row["source_id"] in linked else (row["target_id"],
                                                                                                row["source_id"])
        if other and other not in boosts and near in names:
            boosts[other] = Boost(BOOST_ONE_HOP, f"one link from {names[near]['slug']}, which is linked to {rel}")
    return boosts


def boosted(fused: list[tuple[str, float]], boosts: dict[str, Boost]) -> list[tuple[str, float]]:
    """The fused ranking with the boosts added (scaled by the spread of its scores), best first."""
    if not boosts or not fused:
        return fused
    scores = [score for _, score in fused]
    spread = (max(scores) - min(scores)) or abs(scores[0]) or 1.0
    moved = [(entry, score + boosts[entry].weight * spread if entry in boosts else score) for entry, score in fused]
    return sorted(moved, key=lambda pair: -pair[1])

