"""Dates, times and spans as people and agents write them: one parser for each.

`since` arguments take ISO-8601 ('2026-11-20', '2026-11-20T09:00Z') or a span back ('90m', '36h',
'7d', '2w'). A time without a zone is local time, like the diary's HH:MM.
"""

from __future__ import annotations

import datetime as dt
import re

from pinky.errors import InvalidInput

_SPAN = re.compile(r"^\s*(\d{1,5})\s*([mhdw])\s*$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_NS_MIN, _NS_MAX = -(2**63), 2**63 - 1


def now_utc() -> dt.datetime:
    """The current UTC time to the second, as stored in frontmatter (`created`, `archived_at`)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def parse_since(since: str, now: dt.datetime | None = None) -> dt.datetime:
    """An aware datetime from ISO-8601 or a span back from `now`."""
    if not isinstance(since, str) or not since.strip():
        raise InvalidInput("since must be an ISO-8601 date or time, e.g. 2026-11-20T09:00 (or a span like 24h, 7d)")
    now = now or dt.datetime.now().astimezone()
    span = _SPAN.match(since)
    if span:
        return now - dt.timedelta(**{_UNITS[span.group(2).lower()]: int(span.group(1))})
    moment = parse_moment(since)
    if moment is None:
        raise InvalidInput(
            f"since={since[:60]!r} is not an ISO-8601 date or time; use e.g. 2026-11-20T09:00Z, 2026-11-20 or 24h"
        )
    return moment


def parse_moment(value: str | None) -> dt.datetime | None:
    """An aware datetime from an ISO-8601 date or time ('Z' allowed); None when it is not one."""
    if not value or not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


def parse_day(value: object) -> dt.date | None:
    """The calendar day of a date, a datetime or an ISO string ('2026-11-25T10:00' -> 2026-11-25)."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def valid_day(value: str, name: str = "date") -> str:
    """A whole ISO date (or date and time) from a caller, as 'YYYY-MM-DD'; InvalidInput naming the argument."""
    text = value.strip() if isinstance(value, str) else ""
    moment = parse_moment(text) if len(text) > 10 else None
    day = moment.date() if moment else parse_day(text) if len(text) == 10 else None
    if day is None:
        raise InvalidInput(f"{name}={value!r} is not a date like 2026-11-25")
    return day.isoformat()


def iso_utc(moment: dt.datetime) -> str:
    """'2026-11-25T09:00:00Z': UTC to the second."""
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def to_ns(moment: dt.datetime) -> int:
    """Nanoseconds since the epoch, clamped to what SQLite's integers hold (file mtimes are in ns)."""
    return max(_NS_MIN, min(_NS_MAX, int(moment.timestamp() * 1_000_000_000)))


def freshness(since: str | None) -> tuple[str, int] | None:
    """The (ISO day, ns) pair a freshness filter compares `last_verified`/`created` and mtimes with."""
    if since is None or since == "":
        return None
    moment = parse_since(since)
    return moment.date().isoformat(), to_ns(moment)
