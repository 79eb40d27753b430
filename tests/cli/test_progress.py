"""Long work shows that it moves: the core reports after every file it parses and every model call that
embeds (16 chunks, under a second with the default embedder), `pinky reindex` draws that on a terminal
and, without one, prints a line every PINKY_PROGRESS_SECONDS. Real brains, real CLI processes (one under
a pseudo-terminal)."""

from __future__ import annotations

import os
import pty
import random
import re
import select
import subprocess
import time
from pathlib import Path

from helpers import console_script, write_note
from mcp_helpers import hermetic_config

from pinky.indexing.vector_fill import EMBED_BATCH
from pinky.kb import KnowledgeBase

WORDS = ("the pool hangs on shutdown when a worker still holds a lease so close the workers first then the "
         "connection database cache deploy retry queue thread lock timeout config service handler").split()


def big_note(chunks: int, seed: int = 1) -> str:
    """A note of `chunks` paragraphs of ~150 words: one chunk each."""
    rng = random.Random(seed)
    paragraphs = [" ".join(rng.choice(WORDS) for _ in range(150)) for _ in range(chunks)]
    return "# A long note\n\n" + "\n\n".join(paragraphs) + "\n"


def project_with(root: Path, notes: dict[str, str]) -> Path:
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("# a pinky project\n", encoding="utf-8")
    for rel, text in notes.items():
        write_note(root / "documentation", rel, text)
    return root


def test_reindex_reports_every_file_and_every_model_call(tmp_path: Path) -> None:
    root = project_with(tmp_path / "demo", {"big.md": big_note(300)} |
                        {f"note/n{n}.md": f"# Note {n}\n\nshort body {n}\n" for n in range(30)})
    calls: list[tuple[str, int, int]] = []
    with KnowledgeBase(hermetic_config(root)) as kb:
        report = kb.reindex(progress=lambda phase, done, total: calls.append((phase, done, total)))
    parse = [done for phase, done, _ in calls if phase == "parse"]
    embed = [(done, total) for phase, done, total in calls if phase == "embed"]
    assert report.added == 31 and parse[0] == 0 and parse[-1] == 31
    assert len(set(parse)) == 32  # one step a file, not one per 1,000
    assert embed[0] == (0, report.chunks_embedded) and embed[-1][0] == embed[-1][1] == report.chunks_embedded
    steps = [b - a for (a, _), (b, _) in zip(embed, embed[1:], strict=False)]
    assert max(steps) <= EMBED_BATCH == 16 and len(embed) >= report.chunks_embedded // EMBED_BATCH


def run_in_terminal(args: list[str], cwd: Path) -> str:
    """What a command wrote to its terminal (stdout and stderr on one pseudo-terminal)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, stdin=follower, stdout=follower, stderr=follower, close_fds=True,
                            env={**os.environ, "COLUMNS": "100"})
    os.close(follower)
    out = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the command ended and closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    assert proc.returncode == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


def test_the_embedding_bar_moves_on_a_terminal(tmp_path: Path) -> None:
    root = project_with(tmp_path / "demo", {"big.md": big_note(320)})
    screen = run_in_terminal([*console_script("pinky"), "reindex"], root)
    shown = [int(p) for p in re.findall(r"Embedding chunks\s*\[[^\]]*\]\s+(\d+)%", screen)]
    assert shown and shown[-1] == 100, screen
    between = sorted({p for p in shown if 0 < p < 100})
    assert len(between) >= 10, f"the bar jumped: {sorted(set(shown))}"


def test_without_a_terminal_progress_comes_as_lines_and_short_work_stays_quiet(tmp_path: Path) -> None:
    root = project_with(tmp_path / "demo", {"big.md": big_note(100)})
    pinky = [*console_script("pinky"), "reindex"]
    lines = subprocess.run(pinky, cwd=root, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PINKY_PROGRESS_SECONDS": "0"})
    assert lines.returncode == 0, lines.stderr
    counts = [int(n) for n in re.findall(r"^pinky: embedding chunks (\d+) of 100 \(\d+%\), \d+ s$", lines.stderr, re.M)]
    assert counts[0] == 0 and counts[-1] == 100 and len(counts) >= 100 // EMBED_BATCH, lines.stderr
    assert "chunks embedded" in lines.stdout and "pinky:" not in lines.stdout  # stdout keeps the report only
    write_note(root / "documentation", "more.md", big_note(20, seed=2))
    quiet = subprocess.run(pinky, cwd=root, capture_output=True, text=True, timeout=120)  # default: 5 s
    assert quiet.returncode == 0 and "pinky: " not in quiet.stderr, quiet.stderr
