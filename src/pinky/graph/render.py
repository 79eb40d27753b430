"""A neighbourhood (nodes and edges from `pinky.graph.neighbourhood`) as a readable tree or as Graphviz DOT.

Pure functions over the JSON-ready data, shared by `pinky graph` and `brain_related`.
"""

from __future__ import annotations

import json
from typing import Any


def edge_label(edge: dict[str, Any]) -> str:
    """`depends_on` for a typed link, else how it is written (wiki, md, files, breadcrumb)."""
    label = edge["rel"] if edge["kind"] == "typed" else edge["kind"]
    if edge.get("until"):
        label += f" (until {edge['until']})"
    return label


def _describe(node: dict[str, Any]) -> str:
    if node["kind"] == "file":
        return node["id"]
    return f"{node['id']}  {node.get('title', '')}".rstrip()


def tree(graph: dict[str, Any]) -> list[str]:
    """Lines of a tree from the root: each node once, under the node it was first reached from."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    children: dict[str, list[tuple[str, str]]] = {}
    for edge in graph["edges"]:
        where = f":{edge['line']}" if edge["kind"] == "breadcrumb" and edge.get("line") else ""
        children.setdefault(edge["from"], []).append((edge["to"], f"→ {edge_label(edge)}"))
        children.setdefault(edge["to"], []).append((edge["from"], f"← {edge_label(edge)}{where}"))
    root = graph["root"]
    lines = [_describe(nodes[root]) if root in nodes else root]
    placed = {root}
    _branch(root, "", nodes, children, placed, lines)
    if graph.get("truncated"):
        lines.append("… more links than shown (the walk is bounded; narrow it with --rel or a smaller --depth)")
    return lines


def _branch(node: str, indent: str, nodes: dict[str, Any], children: dict[str, list[tuple[str, str]]],
            placed: set[str], lines: list[str]) -> None:
    level = nodes[node]["depth"] if node in nodes else 0
    mine = [(other, label) for other, label in children.get(node, [])
            if other in nodes and nodes[other]["depth"] == level + 1 and other not in placed]
    unique = list(dict.fromkeys(other for other, _ in mine))
    placed.update(unique)
    for n, other in enumerate(unique):
        label = ", ".join(dict.fromkeys(label for o, label in mine if o == other))  # every link between the two
        last = n == len(unique) - 1
        lines.append(f"{indent}{'└─' if last else '├─'} {label} {_describe(nodes[other])}")
        _branch(other, indent + ("   " if last else "│  "), nodes, children, placed, lines)


def dot(graph: dict[str, Any]) -> str:
    """Graphviz DOT: entries as boxes labelled with their titles, code files as notes, edges labelled."""
    quote = json.dumps  # a JSON string is a valid DOT quoted string
    lines = ["digraph pinky {", "  rankdir=LR;", "  node [fontname=Helvetica];"]
    for node in graph["nodes"]:
        if node["kind"] == "file":
            lines.append(f"  {quote(node['id'])} [shape=note];")
        else:
            bold = ", penwidth=2" if node["id"] == graph["root"] else ""
            label = quote(f"{node['id']}\n{node['title']}")
            lines.append(f"  {quote(node['id'])} [shape=box, label={label}{bold}];")
    for edge in graph["edges"]:
        style = ", style=dashed" if edge["kind"] in ("files", "breadcrumb") else ""
        lines.append(f"  {quote(edge['from'])} -> {quote(edge['to'])} [label={quote(edge_label(edge))}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
