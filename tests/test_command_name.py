"""One command name that works wherever it is printed (`pinky-brain`; Debian's /usr/bin/pinky is a finger clone),
and `pinky-brain install-cli`, which puts it on the user's own PATH: for the Claude Code plugin through a
launcher that outlives plugin updates, for pip/pipx by linking the console script. Real processes and files:
the plugin is laid out the way Claude Code keeps it (plugins/cache/<marketplace>/pinky/<version>, listed in
installed_plugins.json) with a ready runtime made the quick way (tests/test_plugin_runtime.py)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import console_script
from hook_helpers import base, run_hook
from test_plugin_runtime import PLUGIN, env_for, linked_runtime

from pinky.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = sorted(cli.commands)
# `pinky <a subcommand>` not preceded by a path or a word character: advice that runs Debian's finger clone.
# (`pinky sync: add 2 ...` is the subject of the commits sync makes, a label rather than a command.)
BARE = re.compile(r"(?<![\w./-])(?<!from )pinky (" + "|".join(map(re.escape, COMMANDS)) + r")\b(?!:)")
FINGER = "#!/bin/sh\necho 'Login    Name       TTY      Idle  When    Where'\n"  # what /usr/bin/pinky prints
SQL_COMMENTS = {"pinky.store.migrations"}  # names inside SQL comments of the schema, never shown


def strings_shown(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module except docstrings (a click command's docstring is its --help, so it
    counts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            command = isinstance(node, ast.FunctionDef) and any(
                "command" in ast.unparse(d) or "group" in ast.unparse(d) for d in node.decorator_list)
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and not command:
                skipped.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]


def test_no_message_hint_or_help_says_bare_pinky() -> None:
    found = []
    for path in sorted((ROOT / "src" / "pinky").rglob("*.py")):
        if ".".join(path.relative_to(ROOT / "src").with_suffix("").parts) in SQL_COMMENTS:
            continue
        found += [f"{path.relative_to(ROOT)}:{line}: {m.group(0)}" for line, text in strings_shown(path)
                  for m in BARE.finditer(text)]
    assert not found, "say `pinky-brain ...`:\n" + "\n".join(found)


def test_no_doc_example_says_bare_pinky() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "documentation").glob("*.md")), PLUGIN / "bin" / "README.md"]
    found = [f"{doc.relative_to(ROOT)}:{n}: {m.group(0)}" for doc in docs
             for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1) for m in BARE.finditer(line)]
    assert not found, "say `pinky-brain ...`:\n" + "\n".join(found)


def shadowed_path(tmp_path: Path) -> str:
    """A PATH where `pinky` is a finger clone and `pinky-brain` is nowhere (the plugin user's shell on Debian)."""
    folder = tmp_path / "usr-bin"
    folder.mkdir(exist_ok=True)
    (folder / "pinky").write_text(FINGER)
    (folder / "pinky").chmod(0o755)
    for tool in ("sh", "sed", "git"):
        if shutil.which(tool):
            (folder / tool).symlink_to(shutil.which(tool))
    return str(folder)


def test_doctor_names_pinky_brain_in_every_fix_and_offers_install_cli(tmp_path: Path, project: Path) -> None:
    """Its fixes said `pinky reindex` while it warned that `pinky` is /usr/bin/pinky, and suggested putting a
    folder that changes with every plugin update on PATH."""
    script = Path(console_script("pinky-brain")[0])
    note = project / "documentation" / "gotcha" / "unindexed.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("---\ntitle: Not indexed yet\n---\nA note the index has not taken in.\n")
    result = subprocess.run([str(script), "doctor", "--json"], cwd=project, capture_output=True, text=True,
                            env={**os.environ, "PATH": shadowed_path(tmp_path)}, timeout=120)
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    said = [f"{c['name']}: {c['detail']} / {c['fix']}" for c in checks.values()]
    assert not [line for line in said if BARE.search(line)], said
    assert any("pinky-brain reindex" in line for line in said)  # a note not indexed: the fix names the real command
    cli_check = checks["command `pinky-brain` on PATH"]
    assert cli_check["status"] == "warn" and "finger clone" in cli_check["detail"]
    assert cli_check["fix"].startswith(f"{script} install-cli")


def claude_layout(tmp_path: Path, version: str = "0.1.0") -> tuple[Path, Path, dict[str, str]]:
    """(HOME, the plugin's folder in Claude Code's cache, the user's shell environment): the plugin installed
    the way Claude Code keeps it, with a ready runtime in its data folder."""
    home = tmp_path / "home"
    config = home / ".claude"
    copy = config / "plugins" / "cache" / "pinky-market" / "pinky" / version
    shutil.copytree(PLUGIN, copy, ignore=shutil.ignore_patterns("__pycache__"))
    record_install(config, copy)
    data = config / "plugins" / "data" / "pinky-pinky-market"
    linked_runtime(env_for(data, tmp_path), plugin=copy)
    env = {k: v for k, v in env_for(data, tmp_path).items() if not k.startswith("CLAUDE")}
    env.update(HOME=str(home), PATH=shadowed_path(tmp_path), SHELL="/bin/bash")
    return home, copy, env


def record_install(config: Path, copy: Path) -> None:
    """installed_plugins.json as Claude Code 2.1 writes it (pretty-printed, one installPath per install)."""
    listing = {"version": 2, "plugins": {"other@elsewhere": [{"scope": "user", "installPath": "/opt/other/1.0"}],
                                         "pinky@pinky-market": [{"scope": "user", "installPath": str(copy),
                                                                 "version": copy.name}]}}
    (config / "plugins" / "installed_plugins.json").write_text(json.dumps(listing, indent=2))


def shell(env: dict[str, str], *command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_install_cli_from_the_plugin_survives_an_update(tmp_path: Path, project: Path) -> None:
    home, copy, env = claude_layout(tmp_path)
    done = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
    assert done.returncode == 0, done.stderr
    launcher = home / ".local" / "bin" / "pinky-brain"
    assert launcher.is_file() and os.access(launcher, os.X_OK)
    assert "is not on PATH" in done.stdout and """echo 'export PATH="$HOME/.local/bin:$PATH"' >> ~/.bashrc""" \
        in done.stdout
    assert "/runtime/" not in launcher.read_text()  # never the hashed runtime folder

    env["PATH"] = f"{launcher.parent}{os.pathsep}{env['PATH']}"
    found = shell(env, "pinky-brain", "search", "pool", "--json", cwd=project)
    assert found.returncode == 0, found.stderr

    # A plugin update: Claude Code copies the new version beside the old, records it, and removes the old.
    newer = copy.parent / "0.2.0"
    shutil.copytree(copy, newer)
    record_install(home / ".claude", newer)
    shutil.rmtree(copy)
    again = shell(env, "pinky-brain", "--version", cwd=project)
    assert again.returncode == 0 and "pinky-brain, version" in again.stdout, again.stderr


def test_install_cli_is_idempotent_and_keeps_what_is_not_its_own(tmp_path: Path) -> None:
    home, copy, env = claude_layout(tmp_path)
    launcher = home / ".local" / "bin" / "pinky-brain"
    first = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
    written = launcher.read_text()
    second = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
    assert first.returncode == second.returncode == 0, second.stderr
    assert second.stdout.startswith("already there:") and launcher.read_text() == written

    launcher.unlink()
    launcher.write_text("#!/bin/sh\necho mine\n")
    refused = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
    assert refused.returncode == 1 and launcher.read_text() == "#!/bin/sh\necho mine\n"
    assert len(refused.stderr.strip().splitlines()) == 1 and "--force" in refused.stderr
    forced = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli", "--force")
    assert forced.returncode == 0 and launcher.read_text() == written

    elsewhere = tmp_path / "on-path"
    env["PATH"] = f"{elsewhere}{os.pathsep}{env['PATH']}"
    chosen = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli", "--dir", str(elsewhere))
    assert chosen.returncode == 0 and (elsewhere / "pinky-brain").is_file()
    assert f"{elsewhere} is on PATH" in chosen.stdout


def test_an_edited_launcher_is_kept_without_force(tmp_path: Path) -> None:
    """Issue 35 item 8: a launcher install-cli wrote and the user then edited still carries the mark; it was
    replaced anyway. Only the exact text install-cli writes is its own."""
    home, copy, env = claude_layout(tmp_path)
    assert shell(env, str(copy / "bin" / "pinky-brain"), "install-cli").returncode == 0
    for name in ("pinky-brain", "pinky-hooks"):
        launcher = home / ".local" / "bin" / name
        edited = launcher.read_text().replace('exec sh "$plugin', 'export MY_TOKEN=1\nexec sh "$plugin')
        launcher.write_text(edited)
        refused = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
        assert refused.returncode == 1 and launcher.read_text() == edited, refused.stdout
        assert len(refused.stderr.strip().splitlines()) == 1 and "edited" in refused.stderr
        assert "--force" in refused.stderr
        forced = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli", "--force")
        assert forced.returncode == 0 and "MY_TOKEN" not in launcher.read_text(), forced.stderr


HOSTILE_FOLDERS = ["tools $(touch PWNED)", "it's mine", 'say "hi" `touch PWNED`', "back\\slash \\n", "$HOME x"]


@pytest.mark.parametrize("shell_name", ["sh", "bash", "zsh", "fish"])
@pytest.mark.parametrize("name", HOSTILE_FOLDERS)
def test_the_path_line_names_any_folder_literally(tmp_path: Path, name: str, shell_name: str) -> None:
    """Issue 35 item 8: the line install-cli prints for a folder not on PATH is pasted into a shell and then run by
    the profile at every login; `$(...)` in the folder's name ran, and a `'` broke it."""
    program = shutil.which(shell_name)
    if program is None:
        pytest.skip(f"{shell_name} is not installed")
    script = Path(sys.executable).with_name("pinky-brain")
    home = tmp_path / "home"
    folder = home / name
    env = {**os.environ, "HOME": str(home), "PATH": shadowed_path(tmp_path), "SHELL": program}
    home.mkdir()
    done = shell(env, str(script), "install-cli", "--dir", str(folder))
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[done.stdout.splitlines().index(
        f"{folder} is not on PATH; add it with this line, then open a new shell:") + 1].strip()
    pasted = subprocess.run([program, "-c", line], env={**env, "XDG_CONFIG_HOME": str(home / ".config")},
                            cwd=home, capture_output=True, text=True, timeout=60)
    assert pasted.returncode == 0, pasted.stderr
    show = 'printf "%s" "$PATH"' if shell_name != "fish" else 'printf "%s" "$PATH[1]"'
    rc = "~/.zshrc" if shell_name == "zsh" else "~/.bashrc"
    login = [program, "-c", f". {rc}; {show}" if shell_name != "fish" else show]
    shown = subprocess.run(login, env={**env, "XDG_CONFIG_HOME": str(home / ".config")}, cwd=home,
                           capture_output=True, text=True, timeout=60)
    assert shown.stdout.split(os.pathsep)[0] == str(folder), (line, shown.stdout, shown.stderr)
    assert not list(tmp_path.rglob("PWNED")), line


def test_a_folder_that_cannot_be_on_path_is_refused(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("pinky-brain")
    env = {**os.environ, "HOME": str(tmp_path), "PATH": shadowed_path(tmp_path)}
    done = shell(env, str(script), "install-cli", "--dir", str(tmp_path / "a:b"))
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and "--dir" in done.stderr, done
    assert not (tmp_path / "a:b").exists()


def test_install_cli_of_a_pip_install_links_the_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("pinky-brain")
    if not script.is_file():
        pytest.skip("needs the pinky-brain console script next to this interpreter (make venv)")
    env = {**os.environ, "HOME": str(tmp_path), "PATH": shadowed_path(tmp_path)}
    linked = shell(env, str(script), "install-cli")
    target = tmp_path / ".local" / "bin" / "pinky-brain"
    assert linked.returncode == 0, linked.stderr
    assert target.is_symlink() and os.readlink(target) == str(script) and "is not on PATH" in linked.stdout

    env["PATH"] = f"{script.parent}{os.pathsep}{env['PATH']}"
    found = shell(env, "pinky-brain", "install-cli")
    assert found.returncode == 0 and found.stdout.startswith("nothing to do: the shell already finds"), found


def test_install_cli_writes_the_mcp_and_hooks_launchers_a_hosts_config_runs(tmp_path: Path, project: Path) -> None:
    """Issue 31 item 8: pinky-mcp and pinky-hooks beside pinky-brain, for the plugin and for a pip install, so the
    commands `pinky-brain setup <host>` writes keep working across updates."""
    home, copy, env = claude_layout(tmp_path)
    done = shell(env, str(copy / "bin" / "pinky-brain"), "install-cli")
    assert done.returncode == 0, done.stderr
    folder = home / ".local" / "bin"
    for name in ("pinky-mcp", "pinky-hooks"):
        launcher = folder / name
        assert launcher.is_file() and os.access(launcher, os.X_OK), name
        assert f"wrote {launcher}" in done.stdout
    hook = subprocess.run([str(folder / "pinky-hooks"), "--host", "codex", "user-prompt"], env=env, cwd=project,
                          input=json.dumps({"session_id": "s", "cwd": str(project), "prompt": "pool",
                                            "hook_event_name": "UserPromptSubmit"}),
                          capture_output=True, text=True, timeout=120)
    assert hook.returncode == 0, hook.stderr
    assert shell(env, str(copy / "bin" / "pinky-brain"), "install-cli").stdout.startswith("already there:")

    script = Path(sys.executable).with_name("pinky-brain")
    if script.is_file():
        pip = tmp_path / "pip-bin"
        linked = shell({**env, "HOME": str(tmp_path)}, str(script), "install-cli", "--dir", str(pip))
        assert linked.returncode == 0, linked.stderr
        assert os.readlink(pip / "pinky-hooks") == str(script.with_name("pinky-hooks"))
        assert os.readlink(pip / "pinky-mcp") == str(script.with_name("pinky-mcp"))


def test_the_session_start_digest_offers_install_cli_once(tmp_path: Path, project: Path) -> None:
    env = {"CLAUDE_PLUGIN_ROOT": str(PLUGIN), "PATH": shadowed_path(tmp_path)}
    first = run_hook("session-start", base(project, "SessionStart", source="startup"), project, **env)
    out = json.loads(first.stdout)
    command = f"{PLUGIN / 'bin' / 'pinky-brain'} install-cli"
    assert command in out["systemMessage"] and command in out["hookSpecificOutput"]["additionalContext"]

    later = run_hook("session-start", base(project, "SessionStart", source="startup", session_id="s2"), project,
                     **env)
    assert "install-cli" not in later.stdout  # remembered: offered once, not every session


def test_no_offer_when_the_shell_finds_the_cli(tmp_path: Path, project: Path) -> None:
    folder = tmp_path / "local-bin"
    folder.mkdir()
    (folder / "pinky-brain").symlink_to(Path(sys.executable).with_name("pinky-brain"))
    env = {"CLAUDE_PLUGIN_ROOT": str(PLUGIN), "PATH": f"{folder}{os.pathsep}{shadowed_path(tmp_path)}"}
    result = run_hook("session-start", base(project, "SessionStart", source="startup"), project, **env)
    assert result.returncode == 0 and "install-cli" not in result.stdout
