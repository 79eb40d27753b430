"""The shape of the code, read with `ast`: imports run one way, SQL stays in store/, modules stay small,
and every third-party import is a declared dependency."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "pinky"
ADAPTERS = ("pinky.cli", "pinky.hooks", "pinky.mcp_", "pinky.__main__")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
MAX_FACADE_LINES = 200
SQL_WORDS = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def is_adapter(name: str) -> bool:
    return name.startswith(ADAPTERS)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks: imported for annotations, never at run time."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            found |= {id(child) for stmt in node.body for child in ast.walk(stmt)}
    return found


def imported(name: str, tree: ast.Module, *, runtime_only: bool = False) -> set[str]:
    """Every pinky module `name` imports, at top level or inside functions (a lazy import is still a
    dependency), resolving `from pinky.x import y` to the submodule y when there is one. With
    `runtime_only`, imports made only for type checking are left out."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    skipped = _type_checking_nodes(tree) if runtime_only else set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {module for module in found if module in MODULES and module != name}


GRAPH = {name: imported(name, tree) for name, tree in TREES.items()}
RUNTIME_GRAPH = {name: imported(name, tree, runtime_only=True) for name, tree in TREES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycles() -> None:
    """Imports executed at run time (a type-only import cannot make a cycle; it still counts below)."""
    assert cycles(RUNTIME_GRAPH) == []


def test_a_cycle_would_be_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_core_module_imports_an_adapter() -> None:
    wrong = {name: sorted(m for m in deps if is_adapter(m))
             for name, deps in GRAPH.items() if not is_adapter(name) and any(is_adapter(m) for m in deps)}
    assert wrong == {}


def test_sql_is_written_only_in_store() -> None:
    outside = [f"{path.relative_to(ROOT)}:{n}" for path in PACKAGE.rglob("*.py") if "store" not in path.parts
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if SQL_WORDS.search(line)]
    assert outside == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_stay_small(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(TREES[name])
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == [], f"{name}: {long}"


def test_the_knowledge_base_stays_a_thin_facade() -> None:
    facade = next(node for node in TREES["pinky.kb"].body if isinstance(node, ast.ClassDef))
    assert facade.end_lineno - facade.lineno + 1 <= MAX_FACADE_LINES


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def test_every_third_party_import_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_requirement_name(spec) for spec in project["dependencies"]}
    declared |= {_requirement_name(spec) for extra in project.get("optional-dependencies", {}).values()
                 for spec in extra}
    owners = importlib.metadata.packages_distributions()
    undeclared = set()
    for tree in TREES.values():
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for top in {n.split(".")[0] for n in names}:
                if top in sys.stdlib_module_names or top.startswith("_") or top == "pinky":
                    continue
                dists = {_requirement_name(d) for d in owners.get(top, [top])}
                if not dists & declared:
                    undeclared.add(f"{top} ({', '.join(sorted(dists))})")
    assert undeclared == set()


def test_a_missing_dependency_would_be_found() -> None:
    assert _requirement_name("sqlean.py>=3.45") == "sqlean-py"
    assert "yaml" not in sys.stdlib_module_names  # PyYAML must come through a declared package
