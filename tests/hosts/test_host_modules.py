"""A host in one place: what a host does is its module's (src/pinky/hosts/<host>.py, registered in
pinky.hosts.catalog.REGISTRY), never a test of its name elsewhere; and a new Claude-shaped host added that way is set
up, removed and checked by doctor like the shipped ones."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pinky.hosts.catalog import HOSTS, REGISTRY, host

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The host modules (each may speak of its own host), and the registry that names them
ALLOWED = {*(module.replace(".", "/") + ".py" for module in REGISTRY.values()), "pinky/hosts/catalog.py"}


def _named(node: ast.AST) -> list[str]:
    return [node.value] if isinstance(node, ast.Constant) and node.value in HOSTS else []


def host_name_tests(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every choice made on a host's name: `x == "codex"`, `x in ("cursor", "copilot")`, a dict
    keyed by host names, a `case "gemini":`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    names += _named(node.left) + _named(right)
                elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    names += [name for item in right.elts for name in _named(item)]  # not `"cursor" in params`
        elif isinstance(node, ast.Dict):
            names = [name for key in node.keys if key is not None for name in _named(key)]
        elif isinstance(node, ast.MatchValue):
            names = _named(node.value)
        if names:
            found.append((getattr(node, "lineno", 0), ", ".join(names)))
    return found


def scan(src: Path) -> list[str]:
    """`file:line what` for every choice on a host's name outside the host modules under `src` (src/)."""
    out = []
    for path in sorted((src / "pinky").rglob("*.py")):
        relative = path.relative_to(src).as_posix()
        if relative in ALLOWED:
            continue
        for line, what in host_name_tests(ast.parse(path.read_text(encoding="utf-8"))):
            out.append(f"{relative}:{line} {what}")
    return out


def test_no_module_but_the_hosts_own_chooses_by_a_hosts_name() -> None:
    assert scan(ROOT / "src") == []


@pytest.mark.parametrize(("code", "caught"), [
    ('if host.name == "codex": pass', True),
    ('if "gemini" != found.name: pass', True),
    ('x = name in ("cursor", "opencode")', True),
    ('x = {"claude": 1, "other": 2}', True),
    ('match name:\n    case "windsurf":\n        pass', True),
    ('x = "cursor" not in params', False),  # an MCP request's pagination cursor, not a host
    ('x = host("gemini")', False),  # a host looked up by its name
    ('if host.name == NATIVE: pass', False),
])
def test_the_scan_sees_each_way_of_choosing_by_name(code: str, caught: bool) -> None:
    assert bool(host_name_tests(ast.parse(code))) is caught


# --- a new host: its module and one line in the registry ------------------------------------------------

ACME = '''
    """Acme Code: a Claude-shaped host, as a newcomer adds one."""
    from pinky.hosts.host import Host, Limit


    class Acme(Host):
        name, display, command = "acme", "Acme Code", "acme"
        sources = ("https://acme.example/docs/hooks",)
        mcp_user, mcp_project = "~/.acme/settings.json", ".acme/settings.json"
        hooks_user, hooks_project = "~/.acme/settings.json", ".acme/settings.json"
        limits = (Limit("an example limit", "https://acme.example/docs/hooks"),)


    HOST = Acme()
'''
# The real CLI in a process of its own, with the registry line a new host adds (REGISTRY["acme"] = its module)
LAUNCH = ("import sys; from pinky.hosts import catalog; catalog.register('acme', 'acme_host'); "
          "from pinky.cli.main import main; sys.argv[0] = 'pinky-brain'; main()")


@pytest.fixture()
def acme_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "acme_host.py").write_text(textwrap.dedent(ACME), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CODEX_"))}
    out.update(HOME=str(home), PINKY_HOME=str(tmp_path / "pinky"), PATH=f"{BIN}:/usr/bin:/bin",
               PYTHONPATH=str(tmp_path / "plugins"))
    return out


def acme(env: dict[str, str], *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LAUNCH, *args], env=env, cwd=cwd or env["HOME"],
                          capture_output=True, text=True, timeout=120)


def test_a_new_claude_shaped_host_is_set_up_removed_and_checked(acme_env: dict[str, str], tmp_path: Path) -> None:
    settings = Path(acme_env["HOME"]) / ".acme" / "settings.json"
    dry = acme(acme_env, "setup", "acme", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+++ " + str(settings) in dry.stdout and not settings.exists()

    done = acme(acme_env, "setup", "acme")
    assert done.returncode == 0, done.stderr
    assert "Acme Code is not installed" in done.stderr  # no `acme` on PATH: named, and set up all the same
    data = json.loads(settings.read_text())
    assert data["mcpServers"]["pinky"] == {"type": "stdio", "command": str(BIN / "pinky-mcp"), "args": []}
    assert data["hooks"]["PreToolUse"][0] == {"matcher": "Read", "hooks": [
        {"type": "command", "command": f"{BIN / 'pinky-hooks'} --host acme pre-read"}]}
    assert acme(acme_env, "setup", "acme").returncode == 0 and json.loads(settings.read_text()) == data

    doctor = acme(acme_env, "doctor", "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert checks["Acme Code: MCP server"]["status"] == "ok", checks
    assert checks["Acme Code: hooks"]["status"] == "ok" and "6 of 6" in checks["Acme Code: hooks"]["detail"]
    assert "an example limit" in checks["Acme Code: limits"]["detail"]
    assert not [check for check in checks.values() if "check failed" in check.get("detail", "")]

    removed = acme(acme_env, "setup", "acme", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert not settings.exists()  # setup created it: nothing of the user's was in it

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project = acme(acme_env, "setup", "acme", "--project", cwd=str(repo))
    assert project.returncode == 0, project.stderr
    entry = json.loads((repo / ".acme" / "settings.json").read_text())["mcpServers"]["pinky"]
    assert entry["command"] == "sh" and str(BIN) not in json.dumps(entry)  # no path of this machine
    assert acme(acme_env, "setup", "acme", "--project", "--remove", cwd=str(repo)).returncode == 0
    assert not (repo / ".acme" / "settings.json").exists()


def test_a_new_hosts_hooks_run_through_its_module(acme_env: dict[str, str]) -> None:
    launch = ("import sys; from pinky.hosts import catalog; catalog.register('acme', 'acme_host'); "
              "from pinky.hooks.dispatch import main; sys.exit(main(sys.argv[1:]))")
    payload = json.dumps({"session_id": "s1", "cwd": acme_env["HOME"], "hook_event_name": "PreToolUse",
                          "tool_name": "Read", "tool_input": {"file_path": "x.py"}})
    done = subprocess.run([sys.executable, "-c", launch, "--host", "acme", "pre-read"], input=payload,
                          env=acme_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""  # no notes: nothing to say


def test_an_unknown_host_is_one_clear_line(acme_env: dict[str, str]) -> None:
    done = subprocess.run([str(BIN / "pinky-brain"), "setup", "acme"], env=acme_env, cwd=acme_env["HOME"],
                          capture_output=True, text=True, timeout=60)  # not registered in this process
    assert done.returncode != 0 and "unknown host 'acme'; use one of claude, codex" in done.stderr
    with pytest.raises(ValueError, match="unknown host 'acme'"):
        host("acme")
