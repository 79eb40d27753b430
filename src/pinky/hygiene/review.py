"""Review: confirming an entry still holds (`pinky verify`), what people and agents said about hits
(`pinky feedback`, brain_feedback), and pruning what nobody uses (`pinky prune`).

Feedback is telemetry kept in the index (like `usage`): `PINKY_TELEMETRY=0` turns it off, and a full
rebuild of the index forgets it (the markdown never depended on it). A `wrong` or `outdated` verdict
flags the entry for review in `pinky doctor` and the briefing until the note is edited or verified
after it.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from pinky.base import usage
from pinky.base.dates import iso_utc, now_utc, to_ns
from pinky.base.staleness import age_days
from pinky.base.validate import clean_text
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.knowledge import archive, entries
from pinky.knowledge.entries import Entry
from pinky.store import hygiene_queries, migrations
from pinky.store.connect import write_transaction

log = logging.getLogger("pinky.hygiene.review")


def verify(index: Index, slug: str) -> Entry:
    """Set the entry's `last_verified` to today: someone checked it still holds (it is no longer stale)."""
    current = entries.get(index, slug)
    return entries.update(index, current.slug, current.version, last_verified=now_utc().date().isoformat())


def needs_review(index: Index, limit: int = 10) -> dict[str, Any]:
    """What to check before relying on it: stale entries (past their type's threshold, longest unverified
    first) and entries flagged wrong or outdated since they last changed."""
    today = now_utc().date()
    cutoffs = {kind: (today - dt.timedelta(days=days)).isoformat()
               for kind, days in index.config.stale_days.items() if days is not None}
    count, rows = hygiene_queries.stale_entries(index.conn, cutoffs, limit)
    stale = [{"slug": r["slug"], "title": r["title"], "type": r["type"],
              "path": index.display_path(r["root"], r["path"]),
              "age_days": age_days(r["last_verified"], r["created"], today)} for r in rows]
    flagged = [{"slug": r["slug"], "title": r["title"], "type": r["type"],
                "path": index.display_path(r["root"], r["path"]), "verdict": r["verdict"], "at": r["at"],
                "query": r["query"]} for r in hygiene_queries.flagged_entries(index.conn, limit)]
    return {"stale_count": count, "stale": stale, "flagged": flagged}


VERDICTS = ("useful", "wrong", "outdated")
MAX_FEEDBACK_QUERY = 2000


def feedback(index: Index, slug: str, verdict: str, query: str | None = None) -> dict[str, Any]:
    """Record what a hit was worth, against the search that returned it (`query`, else the last search
    that did). `wrong` and `outdated` flag the entry for review until the note is edited or verified."""
    if verdict not in VERDICTS:
        raise InvalidInput(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    if query is not None:
        query = clean_text(query, "query", MAX_FEEDBACK_QUERY)
    row = entries.find(index, slug)
    out: dict[str, Any] = {"slug": row["slug"], "verdict": verdict, "flagged": verdict != "useful"}
    if not index.config.telemetry:
        return {**out, "recorded": False, "flagged": False, "query": query,
                "notice": "PINKY_TELEMETRY=0: feedback is not recorded"}
    query = query or hygiene_queries.last_query_for(index.conn, row["id"])
    moment = dt.datetime.now(dt.UTC)
    with write_transaction(index.conn):
        hygiene_queries.record_feedback(index.conn, row["id"], verdict, query, iso_utc(moment), to_ns(moment))
    if verdict == "useful":  # what prune must still know after the index is rebuilt
        usage.note_use(index.config.roots(), [(row["root"], row["path"])], "useful", moment)
    return {**out, "recorded": True, "query": query, "counts": hygiene_queries.feedback_counts(index.conn, row["id"])}



def feedback_counts(index: Index, slug: str) -> dict[str, int]:
    """Verdict -> how many times the entry got it."""
    return hygiene_queries.feedback_counts(index.conn, entries.find(index, slug)["id"])


def opened(index: Index, slug: str) -> bool:
    """Record that an agent read an entry whole (brain_get): with the search before it, that makes a golden
    query candidate for `pinky eval --from-usage`. Telemetry: False when off, and it never fails the read."""
    if not index.config.telemetry:
        return False
    try:
        row = entries.find(index, slug)
        with write_transaction(index.conn):
            hygiene_queries.record_open(index.conn, row["id"], iso_utc(now_utc()))
    except Exception as exc:  # telemetry must never break a read
        log.warning("could not record the read of %s: %s", slug, exc)
        return False
    return True

def prune(index: Index, months: int = 6, *, apply: bool = False) -> dict[str, Any]:
    """Entries never retrieved and never marked useful in `months` (and not changed or verified since);
    with `apply`, each is archived like `pinky delete` (its `restore` command brings it back).

    Use is read from the index and from each root's usage ledger (`pinky.base.usage`), which outlives a
    rebuild of the index. An entry of a root where use has not been watched for the whole span (a new
    machine, a new ledger) is never pruned: it is listed under `unwatched`, with since when."""
    if isinstance(months, bool) or not isinstance(months, int) or not 1 <= months <= 1200:
        raise InvalidInput(f"months must be a whole number from 1 to 1200, got {months!r}")
    if apply and not index.config.telemetry:
        raise InvalidInput("usage is not recorded (PINKY_TELEMETRY=0), so every entry would look unused: "
                           "nothing archived")
    now = dt.datetime.now(dt.UTC)
    cutoff = now - dt.timedelta(days=round(months * 30.44))
    day = cutoff.date().isoformat()
    watched = _watched_since(index, now)
    found: list[dict[str, Any]] = []
    unwatched: list[dict[str, Any]] = []
    for r in hygiene_queries.prune_candidates(index.conn, iso_utc(cutoff), to_ns(cutoff)):
        since, used = watched[r["root"]]
        if used.get(r["path"], "") >= day:
            continue  # used since the cutoff, on this machine, as the ledger remembers
        item = {"slug": r["slug"], "title": r["title"], "type": r["type"], "created": r["created"],
                "last_verified": r["last_verified"]}
        (found if since is not None and since[:10] <= day else unwatched).append(item)
    archived = []
    if apply:
        reason = f"pruned: not retrieved by any search or marked useful in {months} months"
        for item in found:
            copy = archive.delete(index, item["slug"], reason)
            archived.append({"slug": item["slug"], "archived_to": str(copy),
                             "restore": archive.restore_command(index, copy)})
    return {"months": months, "since": iso_utc(cutoff), "candidates": found, "archived": archived,
            "unwatched": unwatched, "watched_since": {root: since for root, (since, _) in watched.items()},
            "telemetry": index.config.telemetry}


def _watched_since(index: Index, now: dt.datetime) -> dict[str, tuple[str | None, dict[str, str]]]:
    """For each root: since when use is known to have been recorded (None: never), and the last day each
    note was used according to its ledger. A project's notes are searched only through its own index,
    so the index's telemetry (since it was built) counts there too; global notes are found from every
    project's index, so for them only the ledger knows."""
    if index.config.telemetry:
        usage.note_use(index.config.roots(), [], "retrieved", now)  # watching starts now where it had not
    out: dict[str, tuple[str | None, dict[str, str]]] = {}
    for root, base in index.config.roots().items():
        since, used = usage.last_used(base)
        if root == "project" and (built := migrations.built_at(index.conn)):
            built_iso = built.replace(" ", "T") + "+00:00"
            since = min(since, built_iso) if since else built_iso
        out[root] = (since, used)
    return out
