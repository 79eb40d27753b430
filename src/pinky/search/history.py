"""Diaries rank after knowledge, unless a search asks about history.

A diary (the daily files, the weekly and monthly rollups) names everything a session touched: ask
"pool shutdown" after a week of work on it and the day's diary, the week's and the month's all match
as well as the note that holds the answer, and they took places 2 to 4 of 5 ahead of the other notes
(benchmarks/bench_diary_ranking.py). So a search ranks the diaries it finds after the other entries it
finds, each group in its own order, and a diary keeps its score. A search that asks for them ranks
them like any entry: `type: diary` (then nothing else is found), or a query about history: a date
(`2026-11-03`, `2026-11`, `2026-W45`, `3 November`), a weekday, yesterday, today, ago, this or last
week/month/session, diary, journal, rollup, "what did we do", "worked on". The recall hook
leaves diaries out altogether (pinky.search.recall). Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# Only bounded repeats: a query is at most 2,000 characters, and this runs in linear time by construction.
HISTORY = re.compile(
    r"\b(?:\d{4}-\d{2}(?:-\d{2})?|\d{4}-w\d{2}"  # 2026-11-03, 2026-11, 2026-W45
    + rf"|{_DAY}\s{{1,3}}{_MONTH}\b|{_MONTH}\s{{1,3}}{_DAY}\b"  # 3 Nov, November 3rd
    + r"|january|february|april|june|july|august|september|october|november|december"  # not may, march
    + r"|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|yesterday|today|tonight|ago"
    + r"|(?:this|last|previous|past)\s{1,3}(?:week|month|session|time|night|days?)"
    + r"|diary|diaries|journal|rollups?|(?:what|when)\s{1,3}did\s{1,3}(?:i|we)|worked\s{1,3}on)\b",
    re.IGNORECASE)


def asks_for_history(query: str) -> bool:
    """Whether a query is about what happened (and diaries should rank as they score)."""
    return HISTORY.search(query) is not None


def history_last(ranked: list[tuple[str, float]], diaries: Collection[str]) -> list[tuple[str, float]]:
    """`ranked` with the entries in `diaries` after the others; each group keeps its order."""
    if not diaries:
        return ranked
    return [item for item in ranked if item[0] not in diaries] + [item for item in ranked if item[0] in diaries]
