"""Staleness that explains itself: how old an entry's last confirmation is, and whether that is past
its type's threshold. Pure functions; `pinky.search.hybrid` and `pinky.search.listing` put the result on every hit.

An entry's age counts from `last_verified` (set on save, by `pinky verify` and `brain_update
verified=true`), else from `created`. Guides, decisions and patterns age slower than gotchas and
bugs; a status goes stale within a month; diaries are history and never stale.
"""

from __future__ import annotations

TYPE_CHECKING = False  # the prompt hook imports this module: no `typing`, no `re` (through dates) at its start
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping

ENV_STALE_DAYS = "PINKY_STALE_DAYS"
DEFAULT_STALE_DAYS: dict[str, int | None] = {
    "status": 30, "gotcha": 180, "bug": 180, "note": 180,
    "pattern": 365, "decision": 365, "guide": 365, "diary": None,
}
OFF = ("off", "never", "0", "none")


def parse_stale_days(text: str | None) -> dict[str, int | None]:
    """Thresholds from `PINKY_STALE_DAYS`: 'off' (nothing is ever stale), or 'gotcha=90,guide=730,note=off'
    over the defaults."""
    days = dict(DEFAULT_STALE_DAYS)
    if text is None or not text.strip():
        return days
    if text.strip().lower() in OFF:
        return dict.fromkeys(days)
    from pinky.base.layout import ENTRY_TYPES  # here: the prompt hook reads the defaults on every recall
    for part in text.split(","):
        kind, sep, value = (piece.strip().lower() for piece in part.partition("="))
        if not sep or kind not in ENTRY_TYPES:
            from pinky.errors import InvalidInput  # here: the prompt hook reads this module on every recall

            raise InvalidInput(f"{ENV_STALE_DAYS}: {part.strip()!r} is not TYPE=DAYS (types: {', '.join(ENTRY_TYPES)}; "
                               "a number of days or 'off'), e.g. gotcha=90,guide=730")
        if value in OFF:
            days[kind] = None
        elif value.isdigit() and 0 < int(value) <= 36500:
            days[kind] = int(value)
        else:
            from pinky.errors import InvalidInput

            raise InvalidInput(f"{ENV_STALE_DAYS}: {kind}={value!r} must be 1-36500 days or 'off'")
    return days


def age_days(last_verified: str | None, created: str | None, today: dt.date) -> int | None:
    """Whole days since the entry was last confirmed (verified, else created); None when neither is known."""
    from pinky.base.dates import parse_day

    day = parse_day(last_verified) or parse_day(created)
    return None if day is None else max(0, (today - day).days)


def is_stale(kind: str, age: int | None, thresholds: Mapping[str, int | None]) -> bool:
    limit = thresholds.get(kind)
    return age is not None and limit is not None and age > limit
