"""What the MCP layer adds to test_architecture's rules, read from the source (no import, no process).

Core (everything but cli/, hooks/ and mcp/) never imports the SDK; the SDK's private attributes
are read in mcp/sdk.py only; the serverInfo name is written once. (No import cycles and no core module
importing an MCP module: test_architecture checks those for every module.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
SDK_PACKAGES = {"mcp", "mcp_types"}
SDK_PRIVATE = {"_lowlevel_server", "_tool_manager", "_handle_call_tool"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in sorted((SRC / "pinky").rglob("*.py"))}


def is_mcp(name: str) -> bool:
    return name == "pinky.mcp" or name.startswith("pinky.mcp.")


def is_core(name: str) -> bool:
    return not (is_mcp(name) or name.startswith(("pinky.cli", "pinky.hooks")))


def imports_of(tree: ast.Module) -> set[str]:
    """Every module an import statement names, at any depth (lazy imports inside functions count)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}  # `from pinky import mcp_text`
    return found


def test_the_scan_sees_the_modules_it_judges() -> None:
    assert {"pinky.runtime.process", "pinky.kb", "pinky.mcp.server", "pinky.mcp.sdk",
            "pinky.cli.upkeep_commands"} <= set(MODULES)
    assert {"pinky.mcp.resources", "pinky.runtime.process", "mcp.server.mcpserver"} <= \
        imports_of(MODULES["pinky.mcp.server"])
    assert {"pinky.mcp.text", "pinky.mcp.common"} <= imports_of(MODULES["pinky.mcp.search_tools"])
    assert {"pinky.mcp.hygiene_tools",
            "pinky.mcp.research_tools"} <= imports_of(MODULES["pinky.mcp.tiers"])  # `from pinky.mcp import x`
    assert "pinky.mcp.sdk" in imports_of(MODULES["pinky.mcp.common"])
    assert "pinky.runtime.process" in imports_of(MODULES["pinky.cli.upkeep_commands"])  # lazy, inside a function


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_core(n)))
def test_core_modules_do_not_import_the_sdk(name: str) -> None:
    assert not {m for m in imports_of(MODULES[name]) if m.split(".")[0] in SDK_PACKAGES}, name


def test_sdk_private_attributes_are_read_in_mcp_sdk_only() -> None:
    readers = {name for name, tree in MODULES.items()
               for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in SDK_PRIVATE}
    assert readers == {"pinky.mcp.sdk"}
    tests = Path(__file__).parent
    for path in tests.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not any(isinstance(n, ast.Attribute) and n.attr in SDK_PRIVATE for n in ast.walk(tree)), path.name


def test_the_server_name_is_written_once() -> None:
    """serverInfo.name, once. The same string names two other things, each once too: the command
    (`pinky.base.command.NAME`) and the user cache folder (`pinky.base.locations.CACHE_APP`, platformdirs)."""
    definitions = [(name, target.id) for name, tree in MODULES.items() for node in ast.walk(tree)
                   if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                   and node.value.value == "pinky-brain" for target in node.targets if isinstance(target, ast.Name)]
    assert sorted(definitions) == [("pinky.base.command", "NAME"), ("pinky.base.locations", "CACHE_APP"),
                                   ("pinky.mcp.server", "SERVER_NAME")]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_mcp(n) or n == "pinky.runtime.process"))
def test_environment_names_come_from_locations(name: str) -> None:
    for node in ast.walk(MODULES[name]):
        if isinstance(node, ast.ImportFrom) and node.module == "pinky.config":
            assert not [a.name for a in node.names if a.name.startswith("ENV_")], name
