"""The README's plugin route, run as written by a new user, with the real Claude Code CLI, offline (opt-in, like
test_claude_e2e.py, whose fixtures and stand-in it shares).

A fresh HOME with nothing of pinky's: the "With Claude Code" section's blocks and the "First use" block are
read from README.md and run literally in bash (`set -euo pipefail`), so the test breaks when the README drifts.
The only substitution is the clone URL placeholder, which becomes this repository's path (the clone therefore
holds the committed HEAD). The shell's PATH is a Debian user's: a `pinky` that is a finger clone, and
~/.local/bin, which most distributions' profiles put on PATH. With the plugin alone, "First use" fails
(`pinky-brain: command not found`); after the section's `install-cli` it runs. Then two Claude Code sessions
in a shell without ~/.local/bin: the first offers `install-cli`, the second does not repeat it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_claude_e2e import (  # noqa: F401  (claude_cli, wheelhouse: fixtures)
    BASE_PYTHON,
    OFFLINE_ENV,
    REPO,
    Setup,
    claude_cli,
    conversation,
    loopback_only,
    run_session,
    wheelhouse,
)

README = (REPO / "README.md").read_text(encoding="utf-8")
PLACEHOLDER = "<this repository's URL>"
FINGER = "#!/bin/sh\necho 'Login    Name       TTY      Idle  When    Where'\n"

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(2)]


def sh_blocks(heading: str) -> list[str]:
    """Every ```sh block of the README section whose heading starts with `heading`."""
    sections = [s for s in re.split(r"^## ", README, flags=re.MULTILINE) if s.startswith(heading)]
    assert len(sections) == 1, f"README has no single section '## {heading}…'"
    blocks = re.findall(r"```sh\n(.*?)```", sections[0], re.DOTALL)
    assert blocks, f"no sh block under {heading!r}"
    return blocks


def bash(block: str, cwd: Path, env: dict[str, str], isolate: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*isolate, "bash", "-c", "set -euo pipefail\n" + block], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory, claude_cli: str, wheelhouse: Path) -> Setup:  # noqa: F811
    root = tmp_path_factory.mktemp("claude-readme")
    home = root / "home"
    home.mkdir()
    (root / "my-repo" / "src").mkdir(parents=True)
    system = root / "usr-bin"  # stands for /usr/bin on Debian: its pinky is not ours
    system.mkdir()
    (system / "pinky").write_text(FINGER)
    (system / "pinky").chmod(0o755)
    folders = [str(home / ".local" / "bin"), str(system), str(Path(claude_cli).parent), "/usr/local/bin",
               "/usr/bin", "/bin"]
    assert shutil.which("pinky-brain", path=os.pathsep.join(folders[2:])) is None, "pinky-brain is installed here"
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith(("PINKY_", "CLAUDE", "PIP_", "ANTHROPIC", "VIRTUAL_ENV"))}
    env = {**inherited, **OFFLINE_ENV, "HOME": str(home), "SHELL": "/bin/bash", "PATH": os.pathsep.join(folders),
           "ANTHROPIC_API_KEY": "sk-ant-test-key", "PINKY_PYTHON": BASE_PYTHON, "PIP_CONFIG_FILE": os.devnull,
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return Setup(home, root / "my-repo", env, loopback_only(), claude_cli, 0.0)


def test_the_readme_plugin_route_runs_as_written(user: Setup) -> None:
    install, *then = sh_blocks("With Claude Code")
    assert install.count(PLACEHOLDER) == 1
    root = user.project.parent
    done = bash(install.replace(PLACEHOLDER, str(REPO)), root, user.env, user.isolate)
    assert done.returncode == 0, done.stdout + done.stderr

    first_use = sh_blocks("First use")[0]
    trap = bash(first_use, root, user.env, user.isolate)  # the plugin alone: the shell has no pinky-brain
    assert trap.returncode == 127 and "pinky-brain: command not found" in trap.stderr, trap.stderr

    assert then and "install-cli" in then[0]
    for block in then:
        done = bash(block, root, user.env, user.isolate)
        assert done.returncode == 0, done.stdout + done.stderr
    launcher = user.home / ".local" / "bin" / "pinky-brain"
    assert launcher.is_file() and "/runtime/" not in launcher.read_text()

    used = bash(first_use, root, user.env, user.isolate)
    assert used.returncode == 0, used.stdout + used.stderr
    assert "gotcha/pg-pool-hangs-on-shutdown" in used.stdout
    assert (user.project / "documentation" / "gotcha" / "pg-pool-hangs-on-shutdown.md").is_file()


def test_a_session_offers_install_cli_once_when_the_shell_lacks_it(user: Setup) -> None:
    if not (user.home / ".local" / "bin" / "pinky-brain").is_file():
        pytest.skip("needs the README route (the test before) to have run")
    path = user.env["PATH"].split(os.pathsep)
    shell = Setup(user.home, user.project, {**user.env, "PATH": os.pathsep.join(path[1:])}, user.isolate,
                  user.claude, 0.0)
    offered = run_session(shell, "offered", "Hello.", [])
    assert offered.returncode == 0, offered.stderr[-2000:]
    events = json.dumps([e for e in offered.events if e.get("subtype") == "hook_response"])
    main = [r for r in offered.requests if any(t.get("name") == "Read" for t in r["body"].get("tools") or [])]
    assert main and "install-cli" in conversation(main[0]), events[:3000]
    assert "install-cli" in events  # the systemMessage, shown to the user

    later = run_session(shell, "later", "Hello again.", [])
    assert later.returncode == 0, later.stderr[-2000:]
    assert not any("install-cli" in conversation(r) for r in later.requests)
