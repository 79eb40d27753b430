"""What an edit of one frontmatter field costs and keeps (a script, not a test).

    python benchmarks/bench_frontmatter_edit.py [--edits N]

On a hand-kept note (comments, a quoted title, a block list, plain dates, a flow list of typed links) it
changes `last_verified`, one tag, and adds a typed link, three ways: `frontmatter_edit.rewrite` (what pinky
does), a full `markdown.render` of the parsed frontmatter (what pinky did), and, when ruamel.yaml is
installed, its comment-keeping round trip. Prints the time per edit and how many bytes and lines of the
note each left as they were.
"""

from __future__ import annotations

import argparse
import difflib
import io
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTE = """---
# Kept by hand: the team's pool gotcha
title:   "Pool hangs on exit"   # as the runbook says
type: gotcha
tags:
  - Postgres   # the engine
  - pool

key: db.pool-exit
created: 2026-01-01T09:30:00+00:00
last_verified: 2026-01-02
links: [{to: note/runbook, rel: relates, since: 2026-01-01}]
---

Call `pool.close(timeout=5)` before exit.
"""


def change(meta: dict) -> dict:  # type: ignore[type-arg]
    return {**meta, "last_verified": "2026-11-27", "tags": ["postgresql", "pool"],
            "links": [*meta["links"], {"to": "note/deploy", "rel": "depends_on", "since": "2026-11-27"}]}


def ruamel_edit(text: str) -> str:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    _, head, body = text.split("---\n", 2)
    data = yaml.load(head)
    data["last_verified"] = "2026-11-27"
    data["tags"][0] = "postgresql"
    data["links"].append({"to": "note/deploy", "rel": "depends_on", "since": "2026-11-27"})
    out = io.StringIO()
    yaml.dump(data, out)
    return f"---\n{out.getvalue()}---\n{body}"


def kept(before: str, after: str) -> str:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    same = sum(b.size for b in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_matching_blocks())
    same_bytes = sum(len("".join(old[b.a:b.a + b.size]).encode())
                     for b in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_matching_blocks())
    return f"{same}/{len(old)} lines, {same_bytes}/{len(before.encode())} bytes kept; {len(after.encode())} bytes after"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=500)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from pinky.text.frontmatter_edit import rewrite
    from pinky.text.markdown import render, split_frontmatter

    ways = {"frontmatter_edit.rewrite": lambda: rewrite(NOTE, change(split_frontmatter(NOTE)[0])),
            "markdown.render (before)": lambda: render(*_parsed(split_frontmatter, NOTE))}
    try:
        import ruamel.yaml  # noqa: F401
        ways["ruamel.yaml round trip"] = lambda: ruamel_edit(NOTE)
    except ImportError:
        print("(ruamel.yaml is not installed: its row is left out)")
    print("| way | ms per edit | what it kept |\n|---|---:|---|")
    for name, edit in ways.items():
        result = edit()
        started = time.perf_counter()
        for _ in range(args.edits):
            edit()
        print(f"| {name} | {(time.perf_counter() - started) / args.edits * 1000:.2f} | {kept(NOTE, result)} |")


def _parsed(split, text):  # type: ignore[no-untyped-def]
    meta, body, _, _ = split(text)
    return change(meta), body


if __name__ == "__main__":
    main()
