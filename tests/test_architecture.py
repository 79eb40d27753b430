"""The shape of the code, read with `ast`: the folders are layers and imports run one way (down), adapters reach
the core through the KnowledgeBase and the facades, SQL stays in store/, modules stay small, and every third-party
import is a declared dependency."""

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
ADAPTERS = ("pinky.cli", "pinky.hooks", "pinky.mcp", "pinky.view", "pinky.__main__")
# The layers, bottom-up. A unit (a folder of src/pinky, or a module at its top) may import only from the units of
# the layers below its own: nothing imports sideways or up. `__init__` is the package itself (its version).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "__init__"),
    ("base",),          # stdlib only: locations, layout, files, dates, checks, redaction (the hooks' hot path)
    ("text",),          # markdown, links, chunks, the FTS vocabulary, what a model reads of a chunk and its hash
    ("config",),
    ("capture",),       # diary, transcript, recorder, rollup: files the hooks write, no index
    ("embed", "store"),  # the embedders and their runtime; all SQL (neither needs the other)
    ("indexing",),      # markdown -> index
    ("search",),        # ranking
    ("knowledge",),     # entries: save, get, update, archive, supersession
    ("sync",),          # git sync of the global brain: files and commits, no index
    ("hosts",),         # the agent hosts: catalog, payload adapters, their transcripts, the rules file
    ("setup",),         # pinky-brain setup <host>: the hosts' MCP and hook config
    ("hygiene", "graph"),
    ("evaluation", "maintenance", "briefing"),
    ("research",),
    ("kb",),            # the KnowledgeBase: the one API of the front ends
    ("runtime", "services"),  # the long-running process; what the front ends share over kb: doctor, sync
    ("view",),          # pinky view's web page: a front end, one layer below the CLI that starts it
    ("cli", "mcp", "hooks"),
    ("__main__",),
)
LAYER_OF = {unit: n for n, units in enumerate(LAYERS) for unit in units}
# What an adapter may import from the core: the KnowledgeBase and the facades, the pure layers below them, and
# the application services; anything else is named below with the reason it may.
ADAPTER_REACH = ("pinky.kb", "pinky.config", "pinky.errors", "pinky.base", "pinky.text", "pinky.services",
                 "pinky.runtime", "pinky.capture", "pinky.hosts", "pinky.evaluation", "pinky.research",
                 "pinky.hygiene.api", "pinky.graph.api", "pinky.graph.render", "pinky.setup")
ADAPTER_EXCEPTIONS = {
    ("pinky.hooks", "pinky.store.readonly"): "the hot hooks read a read-only connection: no KnowledgeBase to load",
    ("pinky.hooks", "pinky.search.recall"): "recall on every prompt, through that read-only connection",
    ("pinky.hooks", "pinky.hygiene.evergreen"): "the CLAUDE.md guard: a pure text check on the pre-write path",
    ("pinky.mcp", "pinky.hygiene.contradictions"): "the size bound brain_check's output schema states",
    ("pinky.mcp", "pinky.hygiene.differences"): "the Difference brain_check's pairs' model derives from",
}
MAX_FLAT_MODULES = 10
# Modules near the cap (400-450 lines), and why they are not split: knowledge/entries.py and search/hybrid.py
# are being reshaped by issue 32's item 1 (one declaration per operation), which shrinks them;
# store/migrations.py is history, appended to and never edited; indexing/index.py (the Index class). On the
# hooks' path, where a hook that loads one half would load the other too (each module ~0.1-0.2 ms at every
# hook): base/redact.py (the credential patterns and their one scanner), base/fileio.py (atomic files and
# locks), capture/transcript.py (the streaming reader and the summary the Stop hook makes of it) and
# capture/recorder.py (the recording and the offsets it keeps). Issue 40 item 6 split the others by subject.
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


def unit_of(name: str) -> str:
    """The folder (or top-level module) a module belongs to: pinky.search.fusion -> search, pinky.kb -> kb."""
    parts = name.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


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
    """Type-only imports included: a cycle drawn by annotations is still two modules that need each other."""
    assert cycles(GRAPH) == []
    assert cycles(RUNTIME_GRAPH) == []


def test_every_folder_and_top_level_module_has_a_layer() -> None:
    units = {unit_of(name) for name in MODULES}
    assert units - set(LAYER_OF) == set(), "place the new folder or module in LAYERS"
    assert set(LAYER_OF) - units == set(), "LAYERS names a folder that is gone"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{name} -> {dep}" for name, deps in graph.items() for dep in deps
                  if unit_of(name) != unit_of(dep) and LAYER_OF[unit_of(dep)] >= LAYER_OF[unit_of(name)])


def test_each_layer_imports_only_the_layers_below_it() -> None:
    """Lazy and type-only imports count: they are dependencies as much as the ones at the top of a file."""
    assert upward_imports(GRAPH) == []


def test_an_upward_or_sideways_import_would_be_found() -> None:
    upward = {"pinky.store.entries": {"pinky.search.hybrid"}}
    assert upward_imports(upward) == ["pinky.store.entries -> pinky.search.hybrid"]
    assert upward_imports({"pinky.hygiene.api": {"pinky.graph.api"}}) == ["pinky.hygiene.api -> pinky.graph.api"]
    assert upward_imports({"pinky.search.hybrid": {"pinky.search.fusion", "pinky.store.retrieval"}}) == []


def test_adapters_reach_the_core_through_the_knowledge_base_and_the_facades() -> None:
    wrong = sorted(f"{name} -> {dep}" for name, deps in GRAPH.items() if is_adapter(name) for dep in deps
                   if not is_adapter(dep) and not dep.startswith(ADAPTER_REACH) and dep != "pinky"
                   and (".".join(name.split(".")[:2]), dep) not in ADAPTER_EXCEPTIONS)
    assert wrong == []
    used = {(".".join(name.split(".")[:2]), dep) for name, deps in GRAPH.items() for dep in deps}
    assert set(ADAPTER_EXCEPTIONS) <= used, "an exception nobody needs any more: remove it"


def test_few_modules_are_left_at_the_top_of_the_package() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(flat) <= MAX_FLAT_MODULES, flat
    inits = [p for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE and p.read_text(encoding="utf-8").strip()]
    assert inits == [], "a folder's __init__.py stays empty: import its modules by their names"


def test_the_doctor_asks_the_core_through_the_knowledge_base() -> None:
    """services/doctor.py once read kb.db.conn with the store's queries; it asks KnowledgeBase.health now."""
    for name in ("pinky.services.doctor", "pinky.services.index_checks"):
        assert sorted(dep for dep in GRAPH[name] if dep.startswith("pinky.store")) == []
        assert ".conn" not in MODULES[name].read_text(encoding="utf-8")


def short_store_aliases(tree: ast.Module) -> list[str]:
    """`from pinky.store import retrieval as rq`: a module read under a two-letter name is a name to learn."""
    return [f"{alias.name} as {alias.asname}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("pinky.store") for alias in node.names
            if alias.asname and len(alias.asname) <= 3]


def test_store_modules_go_by_their_full_names() -> None:
    files = {p: ast.parse(p.read_text(encoding="utf-8")) for folder in ("src", "tests", "benchmarks")
             for p in sorted((ROOT / folder).rglob("*.py"))}
    assert {str(p.relative_to(ROOT)): found for p, tree in files.items() if (found := short_store_aliases(tree))} == {}
    assert short_store_aliases(ast.parse("from pinky.store import vectors as vq")) == ["vectors as vq"]


def test_no_module_is_imported_under_another_modules_name() -> None:
    """search/second_stage.py was imported `as quality` beside store/quality.py: two things under one name."""
    names = {name.rpartition(".")[2] for name, path in MODULES.items() if path.name != "__init__.py"}
    borrowed = sorted(f"{name}: {node.module}.{alias.name} as {alias.asname}" for name, tree in TREES.items()
                      for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                      and node.module.startswith("pinky") for alias in node.names
                      if alias.asname in names and alias.asname != alias.name)
    assert borrowed == []


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


def _modules_writing(query: str) -> set[str]:
    return {name for name, tree in TREES.items() for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and " ".join(node.value.split()) == query}


def test_the_hooks_and_the_search_count_the_corpus_with_one_query() -> None:
    """store/readonly.py (the hooks) once repeated the counts store/retrieval.py wrote for the search: one
    definition each now, in store/corpus.py, which both connections call."""
    for query in ("SELECT count(*) FROM chunk", "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?"):
        assert _modules_writing(query) == {"pinky.store.corpus"}, query


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


def _folder_map() -> str:
    text = (ROOT / "documentation" / "HOW-IT-WORKS.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1]
    return section.split("\n## ", 1)[0]


def test_how_it_works_maps_every_folder_and_top_level_module() -> None:
    """The per-folder map is how a newcomer finds things: a folder or module missing from it fails here."""
    table = _folder_map()
    named = {f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    named |= {p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert sorted(name for name in named if f"`{name}`" not in table) == []


def test_the_map_comes_first_and_fits_one_screen() -> None:
    """Issue 40 item 5: the map was at the end of 745 lines, its cells up to 1,215 characters; the long form is
    MODULES.md, the long sections documents of their own."""
    text = (ROOT / "documentation" / "HOW-IT-WORKS.md").read_text(encoding="utf-8")
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Where things are", sections
    table = _folder_map().strip().splitlines()
    assert len(table) <= 40 and max(len(line) for line in table) <= 200, (len(table), max(map(len, table)))
    assert len(text.splitlines()) <= 250


def test_the_map_lists_the_layers_in_their_order() -> None:
    table = _folder_map()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    first_row = {}
    for n, row in enumerate(rows):
        for unit in re.findall(r"`([a-z_]+)(?:/|\.py)`", row.split("|")[1]):
            first_row.setdefault(unit, n)
    placed = [unit for units in LAYERS for unit in units if unit in first_row]
    assert placed == sorted(placed, key=lambda unit: first_row[unit]), "the map's rows follow LAYERS, bottom-up"
