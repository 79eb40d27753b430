"""The history of one entry: created, each change (from git), links added and closed, diary lines.

Changes come from the git history of the note's folder when it lies in a git repository (both a
project's `documentation/` and the global brain usually do): each commit that touched the file,
with its date, its message's first line and how many lines it added and removed. Links come from
the typed links to and from the note (`since`, `until`); diary lines from the diaries that name
its slug or title. dulwich is imported only here, when a timeline is asked for.
"""

from __future__ import annotations

import datetime as dt
import difflib
from pathlib import Path
from typing import Any

from pinky.base.layout import names_of
from pinky.base.shown import shown
from pinky.capture.diary import parse_diary_line
from pinky.indexing.index import Index
from pinky.knowledge import entries
from pinky.store import link_queries

MAX_COMMITS = 200


def timeline(index: Index, slug: str) -> dict[str, Any]:
    """Events of an entry's life, oldest first: {date, kind, text} with kind created, changed,
    linked, unlinked or diary."""
    row = entries.find(index, slug)
    path = entries.file_of(index, row["slug"])
    events = _git_events(path)
    if not any(e["kind"] == "created" for e in events) and row["created"]:
        events.append({"date": row["created"], "kind": "created", "text": "created (frontmatter)"})
    events += _link_events(index, row)
    events += _diary_events(index, row)
    events.sort(key=lambda e: (e["date"][:10], e["kind"] != "created", e["date"]))
    source = "git" if any(e.get("commit") for e in events) else "no git history"
    return {"slug": row["slug"], "title": shown(row["title"]), "path": index.display_path(row["root"], row["path"]),
            "history": source, "events": events}


def _repo_of(path: Path) -> Path | None:
    for folder in path.resolve().parents:
        if (folder / ".git").exists():
            return folder
    return None


def _git_events(path: Path) -> list[dict[str, Any]]:
    top = _repo_of(path)
    if top is None:
        return []
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo(str(top))
    except NotGitRepository:
        return []
    with repo:
        rel = path.resolve().relative_to(top).as_posix().encode()
        try:
            walker = repo.get_walker(paths=[rel], max_entries=MAX_COMMITS)
            commits = [entry.commit for entry in walker]
        except KeyError:  # no commits yet
            return []
        events = [_change(repo, commit, rel) for commit in commits]
    if events:
        events[-1]["kind"] = "created"  # the walk is newest first: the last commit added the file
    return events


def _change(repo: Any, commit: Any, rel: bytes) -> dict[str, Any]:
    after = _lines_at(repo, commit.tree, rel)
    before = _lines_at(repo, repo[commit.parents[0]].tree, rel) if commit.parents else []
    added = removed = 0
    for line in difflib.unified_diff(before, after, n=0, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    zone = dt.timezone(dt.timedelta(seconds=commit.commit_timezone))
    when = dt.datetime.fromtimestamp(commit.commit_time, zone).isoformat()
    message = commit.message.decode("utf-8", errors="replace").strip().splitlines()
    summary = f"{message[0][:120] if message else '(no message)'} (+{added} -{removed} lines)"
    return {"date": when, "kind": "changed", "text": summary, "commit": commit.id.decode()[:10]}


def _lines_at(repo: Any, tree_id: Any, rel: bytes) -> list[str]:
    from dulwich.object_store import tree_lookup_path

    try:
        _mode, sha = tree_lookup_path(repo.object_store.__getitem__, tree_id, rel)
    except KeyError:
        return []
    return repo[sha].data.decode("utf-8", errors="replace").splitlines()


def _link_events(index: Index, row: Any) -> list[dict[str, Any]]:
    """Typed links from and to the entry: one event when each began, one when it was closed."""
    out = [r for r in link_queries.links_from(index.conn, [row["id"]], None, 500) if r["kind"] == "typed"]
    into = [r for r in link_queries.links_to(index.conn, [row["id"]], None, 500) if r["kind"] == "typed"]
    others = link_queries.entry_nodes(index.conn, [r["target_id"] for r in out if r["target_id"]]
                                      + [r["source_id"] for r in into])
    events: list[dict[str, Any]] = []
    for link, outgoing in [(r, True) for r in out] + [(r, False) for r in into]:
        other = others.get(link["target_id"] if outgoing else link["source_id"])
        name = other["slug"] if other else link["target"]
        text = f"{row['slug']} {link['rel']} {name}" if outgoing else f"{name} {link['rel']} {row['slug']}"
        if link["since"]:
            events.append({"date": link["since"], "kind": "linked", "text": text})
        if link["until"]:
            events.append({"date": link["until"], "kind": "unlinked", "text": text + " (closed)"})
    return events


def _diary_events(index: Index, row: Any) -> list[dict[str, Any]]:
    names = [n for n in names_of(row["slug"], row["path"]) if len(n) >= 4] + [row["title"]]
    events: list[dict[str, Any]] = []
    for diary in link_queries.diary_lines_naming(index.conn, names):
        day = Path(diary["path"]).stem
        for text in diary["body"].splitlines():
            line = parse_diary_line(text)
            if line is not None and any(name in line.text for name in names):
                when = f"{day}T{line.time.hour:02d}:{line.time.minute:02d}"
                events.append({"date": when, "kind": "diary", "text": line.text[:300]})
    return events
