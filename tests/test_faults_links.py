"""A reindex killed between storing notes and writing their links (issue 22, found by the rename fault
suite): the next reindex writes those links, though the notes' files look indexed (stat and hash agree).

The kill is real (SIGKILL), at the one moment that matters: the reindex is run in a process whose link
writer kills the process when it is called, after the notes' own transaction has committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import console_script, write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.store import link_queries

KILLED_BEFORE_LINKS = """
import os, signal
from pinky.indexing import indexer
indexer.write_note_links = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
from pinky.config import load_config
from pinky.kb import KnowledgeBase
KnowledgeBase(load_config()).reindex()
"""


def backlinks(slug: str) -> int:
    with KnowledgeBase(load_config()) as kb:
        target = kb.index.conn.execute("SELECT id FROM entry WHERE slug = ?", (slug,)).fetchone()[0]
        return len({r["source_id"] for r in link_queries.links_to(kb.index.conn, [target], None, -1) if r["source_id"]})


def test_links_of_notes_stored_by_a_killed_reindex_are_written_by_the_next(project: Path) -> None:
    docs = project / "documentation"
    for name in ("wal-a", "wal-b"):
        write_note(docs, f"decision/{name}.md", f"---\ntitle: Decision {name}\n---\nx\n")
    for n in range(300):
        write_note(docs, f"gotcha/pool-{n}.md", f"---\ntitle: Pool {n}\n---\nsee [[decision/wal-a]]\n")
    assert subprocess.run([*console_script("pinky"), "reindex"], cwd=project, capture_output=True).returncode == 0
    assert backlinks("decision/wal-a") == 300
    for n in range(300):  # the same size: only the content says the link changed
        write_note(docs, f"gotcha/pool-{n}.md", f"---\ntitle: Pool {n}\n---\nsee [[decision/wal-b]]\n")
    killed = subprocess.run([sys.executable, "-c", KILLED_BEFORE_LINKS], cwd=project, capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    again = subprocess.run([*console_script("pinky"), "reindex"], cwd=project, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (backlinks("decision/wal-a"), backlinks("decision/wal-b")) == (0, 300)
