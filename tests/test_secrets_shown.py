"""Everything pinky shows the agent hides a credential from a hand-written or pulled note (issue 22).

The notes hold a GitHub token, an AWS access key and a password as people write them: in a title,
in a body's first line, in a diary line. Each surface is driven as the agent meets it: the real hook
processes with the JSON Claude Code sends (recall on a prompt, pre-read, pre-write, the session
digest) and the real `pinky-mcp` process (search, list and related hits, brain_get, the briefing).
The files themselves are never changed.
"""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path

import pytest
from helpers import write_note
from hook_helpers import base, context_of, run_hook, tool
from mcp_helpers import RawServer

from pinky.config import load_config
from pinky.kb import KnowledgeBase


def fake(n: int, seed: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n - 3)) + "a1Z"


TOKEN = "ghp_" + fake(36, 41)
AWS_KEY = "AKIA" + fake(16, 42, string.ascii_uppercase + string.digits)[:13] + "Q7X"
PASSWORD = "Tr0ub4dor&3x"
SECRETS = (TOKEN, AWS_KEY, PASSWORD)
NOTES = {
    "gotcha/deploy-token.md": (f"Deploy pushes with {TOKEN}", "gotcha", "src/deploy.py",
                               f"push the release with {TOKEN} from the deploy runner\nthen tag it\n"),
    "gotcha/uploader-aws.md": ("Uploader bucket credentials", "gotcha", "src/upload.py",
                               f"the uploader bucket key is {AWS_KEY} in the staging account\n"),
    "decision/staging-database.md": ("Staging database login", "decision", "src/db.py",
                                     f"the staging database password is {PASSWORD} until rotation\n"),
}
DIARY = f"# Diary\n\n- 09:00 [0ldsess1] asked: deploy the release with {TOKEN}\n"


def assert_hidden(text: str) -> None:
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"{leaked} shown in:\n{text}"
    assert "[REDACTED:" in text, text


@pytest.fixture
def brain(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_note(root, "pinky.toml", "")
    for rel, (title, type_, code, body) in NOTES.items():
        write_note(root, f"documentation/{rel}",
                   f"---\ntitle: {title}\ntype: {type_}\nfiles: [{code}]\nimportance: high\n---\n{body}")
        write_note(root, code, "x = 1\n")
    write_note(root, "documentation/guide/release.md",
               "---\ntitle: Release guide\ntype: guide\n---\nSee [[deploy-token]] before tagging.\n")
    with KnowledgeBase(load_config(cwd=root)) as kb:
        kb.reindex(embed=False)
    return root


def originals(root: Path) -> dict[str, str]:
    return {rel: (root / "documentation" / rel).read_text(encoding="utf-8") for rel in NOTES}


# --- the hooks --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "slug"), [
    ("how does the deploy runner push the release", "gotcha/deploy-token"),
    ("which key does the uploader bucket use in the staging account", "gotcha/uploader-aws"),
    ("what is the staging database login until rotation", "decision/staging-database"),
])
def test_recall_shows_a_first_line_and_a_title_redacted(brain: Path, prompt: str, slug: str) -> None:
    before = originals(brain)
    payload = base(brain, "UserPromptSubmit", prompt=prompt)
    context = context_of(run_hook("user-prompt", payload, brain), "UserPromptSubmit")
    assert slug in context
    assert_hidden(context)
    assert originals(brain) == before


@pytest.mark.parametrize("code", ["src/deploy.py", "src/upload.py", "src/db.py"])
def test_pre_write_shows_linked_first_lines_redacted(brain: Path, code: str) -> None:
    payload = tool(brain, "Edit", {"file_path": str(brain / code), "old_string": "x = 1", "new_string": "x = 2"})
    context = context_of(run_hook("pre-write", payload, brain))
    assert_hidden(context)


def test_pre_read_shows_a_title_redacted(brain: Path) -> None:
    context = context_of(run_hook("pre-read", tool(brain, "Read", {"file_path": str(brain / "src/deploy.py")}),
                                  brain))
    assert "gotcha/deploy-token" in context
    assert_hidden(context)


def test_a_hot_hook_loads_the_redactor_only_for_a_line_that_may_hold_a_secret(brain: Path, tmp_path: Path) -> None:
    """pre-read must stay near the interpreter's start-up: `re` and the redactor cost 2-3 times that."""
    import subprocess
    import sys

    write_note(brain, "documentation/gotcha/plain.md",
               "---\ntitle: PG pool hangs on exit\ntype: gotcha\nfiles: [src/plain.py]\n---\nClose the pool.\n")
    write_note(brain, "src/plain.py", "x = 1\n")
    with KnowledgeBase(load_config(cwd=brain)) as kb:
        kb.reindex(embed=False)
    loaded = {}
    for name in ("plain", "deploy"):
        dump = tmp_path / f"{name}.txt"
        code = ("import sys\nfrom pinky.hooks.dispatch import main\nrc = main(['pre-read'])\n"
                f"open({str(dump)!r}, 'w').write(' '.join(sorted(sys.modules)))")
        payload = tool(brain, "Read", {"file_path": str(brain / f"src/{name}.py")})
        done = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True,
                              cwd=brain, env={**os.environ, "CLAUDE_PROJECT_DIR": str(brain),
                                              "PINKY_HOOKS_NO_BACKGROUND": "1"}, timeout=30)
        assert done.returncode == 0 and done.stdout, done.stderr
        loaded[name] = set(dump.read_text().split())
    heavy = {"re", "typing", "pinky.base.redact"}
    assert not loaded["plain"] & heavy, loaded["plain"] & heavy
    assert "pinky.base.redact" in loaded["deploy"]


def test_the_session_digest_shows_titles_and_diary_lines_redacted(brain: Path) -> None:
    run_hook("session-start", base(brain, "SessionStart", source="startup"), brain)
    write_note(brain, "documentation/diary/2999-01-01.md", DIARY)
    later = {**base(brain, "SessionStart", source="startup"), "session_id": "99999999-aaaa"}
    digest = context_of(run_hook("session-start", later, brain), "SessionStart")
    assert "gotcha/deploy-token" in digest and "asked: deploy the release with" in digest
    assert_hidden(digest)


# --- the MCP server ---------------------------------------------------------------------------------


def mcp_env(brain: Path) -> dict[str, str]:
    return {"PINKY_DB": str(brain / "brain.db"), "PINKY_SAVE_DIR": str(brain / "documentation")}


def test_mcp_titles_and_diary_lines_are_redacted(brain: Path) -> None:
    write_note(brain, "documentation/diary/2999-01-01.md", DIARY)
    before = originals(brain)
    with RawServer(brain, **mcp_env(brain)) as server:
        server.initialize()
        server.call("brain_reindex")  # the diary note written after the index
        shown: dict[str, dict] = {
            "search": server.call("brain_search", query="deploy runner release push"),
            "list": server.call("brain_list", type="gotcha"),
            "related": server.call("brain_related", slug="release"),
            "get": server.call("brain_get", slug="deploy-token"),
            "briefing": server.call("brain_briefing", since="2000-01-01"),
        }
        resources = [server.request("resources/read", {"uri": uri})["result"]["contents"][0]["text"]
                     for uri in ("pinky://entries", "pinky://entry/gotcha/deploy-token")]
    for text in resources:
        assert_hidden(text)
    for name, result in shown.items():
        assert result["isError"] is False, (name, result)
        assert_hidden(json.dumps(result["structuredContent"]) + result["content"][0]["text"])
    titles = [hit["title"] for hit in shown["search"]["structuredContent"]["hits"]]
    assert f"Deploy pushes with {TOKEN}".replace(TOKEN, "[REDACTED:github-token]") in titles
    assert shown["get"]["structuredContent"]["meta"]["title"] == "Deploy pushes with [REDACTED:github-token]"
    assert originals(brain) == before


@pytest.mark.parametrize("args", [["search", "deploy release runner"], ["list"], ["list", "--json"],
                                  ["graph", "gotcha/deploy-token"], ["timeline", "gotcha/deploy-token"],
                                  ["research", "deploy release"]])
def test_the_cli_shows_titles_redacted(brain: Path, args: list[str]) -> None:
    """The agent runs `pinky-brain` in its shell too: what the CLI prints reaches it the same way."""
    import subprocess

    from helpers import console_script

    subprocess.run([*console_script("pinky"), "reindex"], cwd=brain, check=True, capture_output=True)
    shown = subprocess.run([*console_script("pinky"), *args], cwd=brain, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert TOKEN not in shown.stdout and "[REDACTED:github-token]" in shown.stdout, shown.stdout
