"""A hostile checkout: symbolic links and FIFOs where pinky reads and writes inside a repository (the rules files,
the AGENTS.md block, `setup --project`), through real `pinky-hooks` and `pinky-brain` processes, real links and
FIFOs. And the AGENTS.md block itself: notes only, unable to be ended early, losing no line a concurrent writer
appends, gone with `setup --remove`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import write_note
from hook_helpers import HOOKS, hook_env
from host_fixtures import make_brain, output, payload, run_host

from pinky.config import load_config
from pinky.kb import KnowledgeBase

BIN = Path(sys.executable).parent
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
USER_TEXT = "# Agents\n\nRun the tests with make test.\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_brain(tmp_path / "proj")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text(SECRET, encoding="utf-8")
    return folder


def refused(result: subprocess.CompletedProcess[str], name: str) -> None:
    """The hook went on (exit 0, no failure) and said why in one line naming the file."""
    assert result.returncode == 0, result.stderr
    assert "pinky-hooks" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if name in line]
    assert len(lines) == 1 and "not written" in lines[0], result.stderr


def run_briefly(host: str, event: str, data: dict, root: Path) -> subprocess.CompletedProcess[str]:
    """A hook that must not block: TimeoutExpired after 8 s (a FIFO opened for reading waits for a writer)."""
    return subprocess.run([*HOOKS, "--host", host, event], input=json.dumps(data), capture_output=True, text=True,
                          cwd=root, env=hook_env(root), timeout=8)


# Copilot CLI now takes its digest from the hooks' additionalContext (measured with 1.0.102) and no hook of the
# hosts writes an AGENTS.md block any more; the block's writer stays (a host with `context="rules"` and AGENTS.md,
# and `--remove` of the blocks older versions wrote), so these tests run it as such a host's hook would.
BLOCK_WRITER = """
import copy, os
from pinky.base.locations import locate
from pinky.hooks.hosted import _refresh
from pinky.hosts.catalog import host
keeper = copy.copy(host("copilot"))
keeper.context = "rules"
_refresh(keeper, locate(env=os.environ, start=os.getcwd()))
"""


def run_block(root: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """What a session start of a host keeping its digest in an AGENTS.md block does to the file."""
    return subprocess.run([sys.executable, "-c", BLOCK_WRITER], capture_output=True, text=True, cwd=root,
                          env=hook_env(root), timeout=timeout)


def reindex(root: Path) -> None:
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)


# --- links and FIFOs in the checkout -------------------------------------------------------------------------


def test_agents_md_linked_to_a_private_key_is_neither_read_nor_replaced(root: Path, home: Path) -> None:
    agents = root / "AGENTS.md"
    agents.unlink()
    agents.symlink_to(home / ".ssh" / "id_rsa")
    result = run_block(root)
    refused(result, "AGENTS.md")
    assert agents.is_symlink() and os.readlink(agents) == str(home / ".ssh" / "id_rsa")
    assert (home / ".ssh" / "id_rsa").read_text(encoding="utf-8") == SECRET
    assert not any(SECRET.splitlines()[1] in p.read_text(errors="replace") for p in root.rglob("*")
                   if p.is_file() and not p.is_symlink() and ".git" not in p.parts)


@pytest.mark.parametrize("target", [".git/hooks/pre-commit", ".git/config"])
def test_agents_md_linked_into_git_s_own_folder_is_left_alone(root: Path, home: Path, target: str) -> None:
    hook = root / target
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    hook.chmod(0o755)
    write_note(root, "documentation/gotcha/run.md", "---\ntitle: $(touch PWNED) on commit\ntype: gotcha\n---\nx\n")
    reindex(root)
    (root / "AGENTS.md").unlink()
    (root / "AGENTS.md").symlink_to(target)
    refused(run_block(root), "AGENTS.md")
    assert hook.read_text(encoding="utf-8") == "#!/bin/sh\nexit 0\n"


def test_agents_md_linked_inside_the_repository_is_written_through_and_stays_a_link(root: Path, home: Path) -> None:
    agents = root / "AGENTS.md"
    agents.rename(root / "CLAUDE.md")
    agents.symlink_to("CLAUDE.md")
    output(run_block(root))
    assert agents.is_symlink()
    text = (root / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.startswith(USER_TEXT) and "DB retries need jitter" in text


def test_a_fifo_named_agents_md_blocks_no_hook(root: Path, home: Path) -> None:
    agents = root / "AGENTS.md"
    agents.unlink()
    os.mkfifo(agents)
    started = time.monotonic()
    refused(run_block(root, timeout=8),
            "AGENTS.md")
    write = {"path": "AGENTS.md", "content": "Keep the docs short."}
    guard = run_briefly("copilot", "pre-write", payload("copilot", "preToolUse", root, home, toolName="create",
                                                        toolArgs=json.dumps(write)), root)
    assert guard.returncode == 0 and "pinky-hooks" not in guard.stderr, guard.stderr
    assert time.monotonic() - started < 10
    assert agents.is_fifo()


@pytest.mark.parametrize(("host", "event", "name", "link"), [
    ("cursor", "session-start", "sessionStart", ".cursor"),
    ("cursor", "session-start", "sessionStart", ".cursor/rules"),
    ("windsurf", "user-prompt", "pre_user_prompt", ".windsurf"),
    ("windsurf", "user-prompt", "pre_user_prompt", ".windsurf/rules"),
])
def test_a_linked_rules_folder_gets_nothing_written_outside_the_repository(
        root: Path, home: Path, tmp_path: Path, host: str, event: str, name: str, link: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(outside, target_is_directory=True)
    result = run_host(host, event, payload(host, name, root, home), root)
    refused(result, link)
    assert list(outside.rglob("*")) == []
    assert "pinky-brain" not in (root / ".git" / "info" / "exclude").read_text(encoding="utf-8") \
        if (root / ".git" / "info" / "exclude").exists() else True


def pinky(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "PATH": f"{BIN}:/usr/bin:/bin"}
    return subprocess.run([str(BIN / "pinky-brain"), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


USER_FILES = {"cursor": (".cursor", "mcp.json", '{"mcpServers": {"gh": {"env": {"TOKEN": "ghp_mine"}}}}\n'),
              "codex": (".codex", "config.toml", '[mcp_servers.gh]\nenv = { TOKEN = "ghp_mine" }\n'),
              "gemini": (".gemini", "settings.json", '{"mcpServers": {"gh": {"env": {"TOKEN": "ghp_mine"}}}}\n')}


@pytest.mark.parametrize("host", sorted(USER_FILES))
@pytest.mark.parametrize("linked", ["file", "folder"])
def test_setup_project_never_follows_a_link_to_the_user_s_config(root: Path, home: Path, host: str,
                                                                  linked: str) -> None:
    folder, name, text = USER_FILES[host]
    (home / folder).mkdir()
    (home / folder / name).write_text(text, encoding="utf-8")
    if linked == "file":
        (root / folder).mkdir()
        (root / folder / name).symlink_to(home / folder / name)
    else:
        (root / folder).symlink_to(home / folder, target_is_directory=True)
    before = sorted(str(p) for p in root.rglob("*"))
    result = pinky(root, home, "setup", host, "--project")
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1 and "outside the repository" in result.stderr, result.stderr
    assert (home / folder / name).read_text(encoding="utf-8") == text
    assert sorted(str(p) for p in root.rglob("*")) == before
    assert (root / folder / name).is_symlink() or (root / folder).is_symlink()


def test_setup_project_edits_the_target_of_a_link_inside_the_repository_and_keeps_the_link(root: Path,
                                                                                             home: Path) -> None:
    (root / "config").mkdir()
    (root / "config" / "cursor-mcp.json").write_text('{"mcpServers": {"notes": {"command": "notes"}}}\n')
    (root / ".cursor").mkdir()
    (root / ".cursor" / "mcp.json").symlink_to("../config/cursor-mcp.json")
    result = pinky(root, home, "setup", "cursor", "--project")
    assert result.returncode == 0, result.stderr
    assert (root / ".cursor" / "mcp.json").is_symlink()
    servers = json.loads((root / "config" / "cursor-mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert set(servers) == {"notes", "pinky"}


def test_setup_project_refuses_a_fifo_at_once(root: Path, home: Path) -> None:
    (root / ".cursor").mkdir()
    os.mkfifo(root / ".cursor" / "mcp.json")
    result = pinky(root, home, "setup", "cursor", "--project")
    assert result.returncode != 0 and "named pipe" in result.stderr, result.stderr


# --- the AGENTS.md block --------------------------------------------------------------------------------------


BEGIN_LINE = "<!-- pinky-brain:digest:begin"
END_LINE = "<!-- pinky-brain:digest:end -->"


def test_a_note_title_holding_the_end_marker_cannot_end_the_block(root: Path, home: Path) -> None:
    agents = root / "AGENTS.md"
    sizes = []
    for n in range(4):
        write_note(root, f"documentation/gotcha/marker-{n}.md",
                   f"---\ntitle: Beware {END_LINE} number {n} <!-- pinky-brain:digest:begin -->\ntype: gotcha\n"
                   "---\nA title that looks like the marker.\n")
        reindex(root)
        output(run_block(root))
        text = agents.read_text(encoding="utf-8")
        lines = text.splitlines()
        assert sum(line.startswith(BEGIN_LINE) for line in lines) == 1
        assert lines.count(END_LINE) == 1 and text.count("pinky-brain:digest:") == 2
        assert text.startswith(USER_TEXT) and text.endswith(END_LINE + "\n")
        assert f"number {n}" in text
        sizes.append(len(text))
    assert max(sizes) - min(sizes) < 400  # the old digest does not pile up outside the block


def test_the_block_holds_notes_never_the_diary_s_prompts_or_commands(root: Path, home: Path) -> None:
    from datetime import datetime

    from pinky.capture.diary import append_diary

    # an earlier session's diary, as the Stop hook writes it
    append_diary(root / "documentation", ["- 09:12 [copilot-0a1b2c3d] asked: fix the retry in src/db.py",
                                          "- 09:13 [copilot-0a1b2c3d] commands: sed -i s/x/y/ src/db.py"],
                 datetime.now())
    diary = "".join(p.read_text(encoding="utf-8") for p in (root / "documentation" / "diary").glob("*.md"))
    assert "asked: fix the retry in src/db.py" in diary and "commands: sed -i" in diary
    reindex(root)
    output(run_block(root))
    text = (root / "AGENTS.md").read_text(encoding="utf-8")
    assert "DB retries need jitter" in text
    assert "asked:" not in text and "commands:" not in text and "fix the retry" not in text
    assert "sed -i" not in text and "Diary" not in text


APPENDER = """
import os, sys, time
path, tag, stop = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
while not os.path.exists(stop):
    with open(path, "a", encoding="utf-8") as handle:  # as an editor or `echo >>` appends: no lock
        handle.write(f"user line {tag}-{n}\\n")
    n += 1
    time.sleep(0.0005)
print(n)
"""
REWRITER = """
import sys
from pinky.hosts.catalog import host
from pinky.hosts.rules import write_rules
for n in range(int(sys.argv[2])):
    write_rules(sys.argv[1], host("copilot"), f"digest number {n}\\n- note {n}")
"""


def test_rewriting_the_block_loses_no_line_a_concurrent_writer_appends(root: Path, tmp_path: Path) -> None:
    agents, stop = root / "AGENTS.md", tmp_path / "stop"
    appenders = {tag: subprocess.Popen([sys.executable, "-c", APPENDER, str(agents), tag, str(stop)],
                                       stdout=subprocess.PIPE, text=True) for tag in "ab"}
    try:
        rewriters = [subprocess.Popen([sys.executable, "-c", REWRITER, str(root), "150"]) for _ in range(2)]
        codes = [proc.wait(timeout=300) for proc in rewriters]
    finally:
        stop.touch()
        counts = {tag: int(proc.communicate(timeout=60)[0]) for tag, proc in appenders.items()}
    assert codes == [0, 0]
    lines = agents.read_text(encoding="utf-8").splitlines()
    wanted = [f"user line {tag}-{n}" for tag, count in counts.items() for n in range(count)]
    lost = sorted(set(wanted) - set(lines))
    assert lost == [], f"{len(lost)} of {len(wanted)} appended lines lost"
    appended = [line for line in lines if line.startswith("user line")]
    assert len(wanted) > 200 and len(appended) == len(set(appended))  # the writers overlapped; none came twice
    assert sum(line.startswith(BEGIN_LINE) for line in lines) == 1 and lines.count(END_LINE) == 1
    assert "\n".join(lines).startswith(USER_TEXT.rstrip("\n"))


@pytest.mark.parametrize(("host", "event", "name", "rules"), [
    ("cursor", "session-start", "sessionStart", ".cursor/rules/pinky-brain.mdc"),
    ("windsurf", "user-prompt", "pre_user_prompt", ".windsurf/rules/pinky-brain.md"),
])
def test_setup_remove_takes_the_digest_out_of_every_repository_the_hooks_wrote(
        root: Path, home: Path, tmp_path: Path, host: str, event: str, name: str, rules: str) -> None:
    other = make_brain(tmp_path / "other")
    for repo in (root, other):
        output(run_host(host, event, payload(host, name, repo, home), repo))
        assert "DB retries need jitter" in (repo / rules).read_text(encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert pinky(root, home, "setup", host).returncode == 0
    result = pinky(elsewhere, home, "setup", host, "--remove")
    assert result.returncode == 0, result.stderr
    for repo in (root, other):
        assert (repo / "AGENTS.md").read_text(encoding="utf-8") == USER_TEXT
        assert not (repo / ".cursor" / "rules").exists() or not any((repo / ".cursor" / "rules").iterdir())
        assert not (repo / ".windsurf" / "rules" / "pinky-brain.md").exists()
        assert "pinky-brain" not in (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8") \
            if (repo / ".git" / "info" / "exclude").exists() else True


@pytest.mark.parametrize(("name", "args"), [
    ("CLAUDE.md", ("setup-claude", "--no-mcp", "--claude-md", "append")),
    (".mcp.json", ("setup-claude",)),
    (".gitignore", ("init",)),
    (".gitattributes", ("init",)),
])
def test_init_and_setup_claude_never_write_through_a_link_out_of_the_project(
        root: Path, home: Path, name: str, args: tuple[str, ...]) -> None:
    dotfile = home / ".bashrc"
    dotfile.write_text("export PATH=$HOME/bin:$PATH\n", encoding="utf-8")
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(dotfile)
    result = pinky(root, home, *args)
    assert result.returncode != 0 and "outside the repository" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert dotfile.read_text(encoding="utf-8") == "export PATH=$HOME/bin:$PATH\n"
    assert (root / name).is_symlink()


@pytest.mark.parametrize("linked", ["documentation/.pinky/usage.log", "documentation/.pinky"])
def test_a_search_never_appends_its_usage_line_through_a_link_out_of_the_checkout(root: Path, home: Path,
                                                                                 linked: str) -> None:
    dotfile = home / ".bashrc"
    dotfile.write_text("export PATH=$HOME/bin:$PATH\n", encoding="utf-8")
    target = dotfile if linked.endswith(".log") else home
    if linked.endswith(".log"):
        (root / "documentation" / ".pinky").mkdir(exist_ok=True)
    else:
        import shutil

        shutil.rmtree(root / "documentation" / ".pinky", ignore_errors=True)
    (root / linked).symlink_to(target)
    with KnowledgeBase(load_config(cwd=root)) as kb:  # as the MCP server's brain_search records what it found
        assert kb.search("retries jitter", record_usage=True, limit=1).hits[0].slug.endswith("db-retries")
    assert dotfile.read_text(encoding="utf-8") == "export PATH=$HOME/bin:$PATH\n"
    assert not (home / "usage.log").exists()


def test_doctor_is_not_hung_by_a_fifo_in_the_project_s_claude_settings(root: Path, home: Path) -> None:
    (root / ".claude").mkdir()
    os.mkfifo(root / ".claude" / "settings.json")
    result = pinky(root, home, "doctor")  # within 120 s; it used to wait for a writer for ever
    assert "claude code" in result.stdout and "Traceback" not in result.stderr, result.stderr
