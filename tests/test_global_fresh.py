"""A global note written by another process is found by a project's very next look (issue 29, item 1).

Each project's index keeps its own copy of the global brain; it used to catch up only with a reindex run
in that project, so a note saved outside the project, pulled by `pinky-brain sync` or edited by hand was
found nowhere in it. Every writer below is another process; every reader is the first to look after it
(one test per pair: a reader that catches up would hide the others' failure)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich import porcelain
from helpers import console_script
from hook_helpers import base, context_of, run_hook
from mcp_helpers import RawServer

CLI = console_script("pinky-brain")
TITLE, BODY = "CI runs in UTC", "Set TZ=UTC in the zebrafish pipeline, or the nightly dates shift.\n"
EDITED_TITLE = "CI runs in CET"  # the hand edit: one word, the same size, written into the same file


def cli(*args: str, cwd: Path, home: Path, stdin: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env.update(PINKY_HOME=str(home), PINKY_HASH_EMBED="1", PINKY_GIT_AUTHOR="tester <t@example.test>")
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"pinky-brain {' '.join(args)}: {done.stderr}"
    return done.stdout + done.stderr


class Scene:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = Path(os.environ["PINKY_HOME"])
        self.project = tmp_path / "proj"
        self.outside = tmp_path / "elsewhere"
        self.outside.mkdir()
        (self.project / "documentation" / "note").mkdir(parents=True)
        (self.project / "pinky.toml").write_text("", encoding="utf-8")
        (self.project / "documentation" / "note" / "local.md").write_text("# Local\nA project note.\n",
                                                                         encoding="utf-8")

    def save_outside(self, home: Path | None = None) -> None:
        cli("save", "-t", TITLE, "--type", "gotcha", "--scope", "global", cwd=self.outside,
            home=home or self.home, stdin=BODY)

    def reindex_project(self) -> None:
        cli("reindex", cwd=self.project, home=self.home)


def saved_outside(scene: Scene) -> tuple[str, str]:
    scene.reindex_project()
    scene.save_outside()
    return "zebrafish", TITLE


def pulled_by_sync(scene: Scene) -> tuple[str, str]:
    remote = scene.tmp / "remote.git"
    porcelain.init(str(remote), bare=True).close()
    cli("sync", "--remote", str(remote), cwd=scene.outside, home=scene.home)
    scene.reindex_project()
    other = scene.tmp / "other-home"  # another machine: saves, pushes
    cli("sync", "--remote", str(remote), cwd=scene.outside, home=other)
    scene.save_outside(other)
    cli("sync", cwd=scene.outside, home=other)
    pulled = cli("sync", cwd=scene.outside, home=scene.home)
    assert "pulled 1 file" in pulled, pulled
    return "zebrafish", TITLE


def edited_by_hand(scene: Scene) -> tuple[str, str]:
    scene.save_outside()
    scene.reindex_project()  # the project's index holds the note as it was
    note = scene.home / "brain" / "gotcha" / "ci-runs-in-utc.md"
    text = note.read_text(encoding="utf-8")
    edited = text.replace(TITLE, EDITED_TITLE).replace("zebrafish", "swordfish")
    assert len(edited) == len(text) and edited != text
    with open(note, "r+", encoding="utf-8") as handle:  # in place: the folder does not change
        handle.write(edited)
    return "swordfish", EDITED_TITLE


WRITERS: dict[str, Callable[[Scene], tuple[str, str]]] = {
    "save-outside": saved_outside, "sync-pull": pulled_by_sync, "hand-edit": edited_by_hand}


@pytest.mark.parametrize("writer", WRITERS)
def test_cli_search_finds_it(tmp_path: Path, writer: str) -> None:
    scene = Scene(tmp_path)
    word, title = WRITERS[writer](scene)
    out = cli("search", word, cwd=scene.project, home=scene.home)
    assert title in out, out
    assert "no vector yet" not in out


@pytest.mark.parametrize("writer", WRITERS)
def test_cli_list_global_shows_it(tmp_path: Path, writer: str) -> None:
    scene = Scene(tmp_path)
    _, title = WRITERS[writer](scene)
    assert title in cli("list", "--scope", "global", cwd=scene.project, home=scene.home)


@pytest.mark.parametrize("writer", WRITERS)
def test_prompt_hook_recalls_it(tmp_path: Path, writer: str) -> None:
    scene = Scene(tmp_path)
    word, title = WRITERS[writer](scene)
    payload = base(scene.project, "UserPromptSubmit", permission_mode="default",
                   prompt=f"Why do the {word} pipeline's nightly dates shift in CI?")
    assert title in context_of(run_hook("user-prompt", payload, scene.project), "UserPromptSubmit")


@pytest.mark.parametrize("writer", WRITERS)
def test_session_digest_shows_it(tmp_path: Path, writer: str) -> None:
    scene = Scene(tmp_path)
    _, title = WRITERS[writer](scene)
    payload = base(scene.project, "SessionStart", source="startup")
    digest = context_of(run_hook("session-start", payload, scene.project), "SessionStart")
    assert title in digest, digest


@pytest.mark.parametrize("writer", WRITERS)
def test_a_running_server_finds_it(tmp_path: Path, writer: str) -> None:
    scene = Scene(tmp_path)
    scene.reindex_project()
    with RawServer(scene.project, PINKY_HOME=str(scene.home), PINKY_DB=str(scene.project / "brain.db"),
                   PINKY_SAVE_DIR=str(scene.project / "documentation"), PINKY_LOG="info") as server:
        server.initialize()
        server.call("brain_search", query="project note")  # up and warm before the note is written
        word, title = WRITERS[writer](scene)
        found = server.call("brain_search", query=word)
        assert not found["isError"], found
        if title not in str(found["structuredContent"]):  # once in five full runs here: say all there is to say
            again = server.call("brain_search", query=word)["structuredContent"]
            notes = {p.name: p.stat().st_mtime_ns for p in (scene.home / "brain").rglob("*.md")}
            pytest.fail(f"{found}\nasked again: {again}\nnotes: {notes}\nserver: {server.stderr()[-3000:]}")


def test_vectors_a_hook_left_out_are_made_by_the_next_command(tmp_path: Path) -> None:
    """The hook takes a new global note in by full text only; the next CLI command gives it its vectors, so no
    search goes on saying "N chunks have no vector yet" about it."""
    scene = Scene(tmp_path)
    scene.reindex_project()
    scene.save_outside()
    payload = base(scene.project, "UserPromptSubmit", permission_mode="default", prompt="zebrafish pipeline dates")
    assert TITLE in context_of(run_hook("user-prompt", payload, scene.project), "UserPromptSubmit")
    first = cli("search", "zebrafish", cwd=scene.project, home=scene.home)
    assert TITLE in first and "no vector yet" not in first, first
