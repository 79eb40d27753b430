"""Issue 35 items 5 and 7: setup never moves another hook or its Codex trust record; its read-modify-write loses
nothing to another writer of the same file or to other setups running at once; and --remove takes out exactly
what pinky added, whatever happened in between (the user's edits, a setup from another install). Real processes
(the CLI, a foreign writer), real files."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from test_setup_hosts import BIN, CODEX_CONFIG, GEMINI_SETTINGS, pinky, snapshot

from pinky.hosts.catalog import host as find_host
from pinky.setup import core
from pinky.setup.codex_trust import hook_hash

HOSTS = ["codex", "gemini", "claude", "cursor", "copilot", "opencode", "windsurf"]
MINE = {"hooks": [{"type": "command", "command": "notify-send mine"}]}


def trust_mine(codex: Path, index: int) -> str:
    """What Codex's TUI writes when the user accepts their Stop hook at group `index`: its record's key."""
    key = f"{codex / 'hooks.json'}:stop:{index}:0"
    with open(codex / "config.toml", "a", encoding="utf-8") as config:
        config.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{hook_hash("Stop", None, MINE["hooks"][0])}"\n')
    return key


def other_install(env: dict[str, str], tmp_path: Path, host: str) -> int:
    """`pinky-brain setup <host>` as another install of pinky-brain runs it: its launchers in another folder."""
    core.apply(core.plan(find_host(host), folder=str(tmp_path / "other-install"), env=env), env)
    return 0


def states(codex: Path) -> dict[str, dict[str, str]]:
    return tomllib.loads((codex / "config.toml").read_text()).get("hooks", {}).get("state", {})


def test_rerunning_setup_and_remove_keep_the_users_hook_and_its_trust(env: dict[str, str], tmp_path: Path) -> None:
    """The user's Stop hook, added after setup (so after pinky's group) and trusted, keeps its index and record
    through a second setup and a setup from another install; --remove moves the record with the group."""
    codex = Path(env["CODEX_HOME"])
    (codex / "config.toml").write_text(CODEX_CONFIG)
    assert pinky(env, "setup", "codex").returncode == 0
    data = json.loads((codex / "hooks.json").read_text())
    data["hooks"]["Stop"].append(MINE)
    (codex / "hooks.json").write_text(json.dumps(data, indent=2) + "\n")
    key = trust_mine(codex, 1)
    mine = states(codex)[key]

    for again in (lambda: pinky(env, "setup", "codex").returncode,
                  lambda: other_install(env, tmp_path, "codex")):
        assert again() == 0
        hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
        assert hooks["Stop"][1] == MINE and "pinky-hooks" in json.dumps(hooks["Stop"][0]), hooks["Stop"]
        assert states(codex)[key] == mine, "the user's trust record changed"

    assert pinky(env, "setup", "codex", "--remove").returncode == 0
    assert json.loads((codex / "hooks.json").read_text())["hooks"] == {"Stop": [MINE]}
    assert states(codex) == {f"{codex / 'hooks.json'}:stop:0:0": mine}  # moved with its group, nothing of pinky's
    assert "pinky" not in (codex / "config.toml").read_text()


@pytest.mark.parametrize("host", ["gemini", "codex"])
def test_remove_after_edits_and_a_setup_from_another_install_takes_out_exactly_pinkys(
        env: dict[str, str], tmp_path: Path, host: str) -> None:
    """Setup -> the user edits -> setup from another install (another launcher folder) -> --remove: pinky's
    entries, hooks and trust records all gone, the user's edits all kept."""
    home, codex = Path(env["HOME"]), Path(env["CODEX_HOME"])
    (codex / "config.toml").write_text(CODEX_CONFIG)
    settings = home / ".gemini" / "settings.json"
    settings.write_text(GEMINI_SETTINGS)
    assert pinky(env, "setup", host).returncode == 0
    if host == "gemini":
        data = json.loads(settings.read_text())
        data["ui"]["theme"] = "Dracula"
        settings.write_text(json.dumps(data, indent=4) + "\n")
    else:
        with open(codex / "config.toml", "a", encoding="utf-8") as config:
            config.write('\n[tools]\nweb_search = true  # mine\n')
    assert other_install(env, tmp_path, host) == 0
    removed = pinky(env, "setup", host, "--remove")
    assert removed.returncode == 0, removed.stderr
    left = "".join(p.read_text() for p in home.rglob("*") if p.is_file())
    assert "pinky" not in left and "other-install" not in left, left
    if host == "gemini":
        assert json.loads(settings.read_text())["ui"]["theme"] == "Dracula"
        assert json.loads(settings.read_text())["hooks"] == json.loads(GEMINI_SETTINGS)["hooks"]
    else:
        assert "web_search = true  # mine" in (codex / "config.toml").read_text()
        assert "hooks" not in tomllib.loads((codex / "config.toml").read_text())


def test_setups_of_every_host_at_once_keep_every_record(env: dict[str, str]) -> None:
    """Seven setups at once, then seven removes at once: every file's record kept, every byte given back."""
    home = Path(env["HOME"])
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(CODEX_CONFIG)
    (home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    (home / ".claude.json").write_text('{"numStartups": 3, "projects": {}}\n')
    before = snapshot(home)
    for args in ((), ("--remove",)):
        running = [subprocess.Popen([str(BIN / "pinky-brain"), "setup", host, *args], env=env, cwd=home,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for host in HOSTS]
        for process in running:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
        if not args:
            records = json.loads((Path(env["PINKY_HOME"]) / "state" / "setup" / "files.json").read_text())
            written = {str(home / p) for p in snapshot(home) if p not in before or snapshot(home)[p] != before[p]}
            assert written <= set(records), sorted(written - set(records))
    assert snapshot(home) == before


WRITER = """
import json, os, sys, time
path, count = sys.argv[1], int(sys.argv[2])
for n in range(count):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    data[f"write-{n}"] = n
    temp = f"{path}.writer.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    os.replace(temp, path)
    time.sleep(0.02)
"""


def test_another_writer_of_the_same_file_loses_nothing(env: dict[str, str]) -> None:
    """Claude Code rewrites ~/.claude.json while it runs: a write of its between setup's read and setup's
    replace was lost."""
    config = Path(env["HOME"]) / ".claude.json"
    config.write_text('{"numStartups": 1}\n')
    count = 150
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(config), str(count)])
    runs = 0
    while writer.poll() is None:
        done = pinky(env, "setup", "claude", *(("--remove",) if runs % 2 else ()))
        assert done.returncode == 0, done.stderr
        runs += 1
    assert writer.wait() == 0 and runs >= 3
    data = json.loads(config.read_text())
    lost = [n for n in range(count) if f"write-{n}" not in data]
    assert not lost, f"{len(lost)} of {count} writes lost to {runs} setups"


def test_project_hooks_keep_the_users_trust_through_setup_and_remove(env: dict[str, str], tmp_path: Path) -> None:
    """--project: the records live in the user's config.toml, written by Codex when the user accepts a hook
    (pinky's own included); setup keeps them, --remove moves the user's with its group and drops pinky's."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    codex = Path(env["CODEX_HOME"])
    (codex / "config.toml").write_text(CODEX_CONFIG)

    def project(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BIN / "pinky-brain"), "setup", "codex", "--project", *args], env=env, cwd=repo,
                              capture_output=True, text=True, timeout=120)

    assert project().returncode == 0
    hooks_path = repo / ".codex" / "hooks.json"
    data = json.loads(hooks_path.read_text())
    data["hooks"]["Stop"].append(MINE)
    hooks_path.write_text(json.dumps(data, indent=2) + "\n")
    pinkys = data["hooks"]["Stop"][0]["hooks"][0]
    with open(codex / "config.toml", "a", encoding="utf-8") as config:  # the user accepts both in the TUI
        for index, hook in ((0, pinkys), (1, MINE["hooks"][0])):
            config.write(f'\n[hooks.state."{hooks_path}:stop:{index}:0"]\n'
                         f'trusted_hash = "{hook_hash("Stop", None, hook)}"\n')
    accepted = states(codex)
    assert project().returncode == 0
    assert states(codex) == accepted, "a second setup --project changed the user's trust"
    assert project("--remove").returncode == 0
    assert states(codex) == {f"{hooks_path}:stop:0:0": accepted[f"{hooks_path}:stop:1:0"]}
    assert json.loads(hooks_path.read_text())["hooks"] == {"Stop": [MINE]}
