"""pinky.base.dates: `since` spans and ISO moments, calendar days, nanoseconds and freshness filters."""

from __future__ import annotations

import datetime as dt

import pytest

from pinky.base.dates import freshness, iso_utc, now_utc, parse_day, parse_moment, parse_since, to_ns, valid_day
from pinky.errors import InvalidInput

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(("span", "back"), [
    ("90m", dt.timedelta(minutes=90)),
    ("36h", dt.timedelta(hours=36)),
    ("7d", dt.timedelta(days=7)),
    ("2w", dt.timedelta(weeks=2)),
    (" 7D ", dt.timedelta(days=7)),
    ("3 h", dt.timedelta(hours=3)),
    ("0d", dt.timedelta(0)),
    ("99999w", dt.timedelta(weeks=99999)),
])
def test_spans_go_back_from_now(span: str, back: dt.timedelta) -> None:
    assert parse_since(span, now=NOW) == NOW - back


def test_a_span_defaults_to_the_local_now() -> None:
    before = dt.datetime.now().astimezone()
    moment = parse_since("1h")
    after = dt.datetime.now().astimezone()
    assert moment.tzinfo is not None
    assert before - dt.timedelta(hours=1) <= moment <= after - dt.timedelta(hours=1)


def test_iso_with_a_zone_keeps_it() -> None:
    assert parse_since("2026-11-20T09:00Z") == dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
    assert parse_since("2026-11-20T09:00:30z") == dt.datetime(2026, 11, 20, 9, 0, 30, tzinfo=dt.UTC)
    plus_two = parse_since("2026-11-20T09:00+02:00")
    assert plus_two.utcoffset() == dt.timedelta(hours=2)
    assert plus_two == dt.datetime(2026, 11, 20, 7, 0, tzinfo=dt.UTC)


def test_iso_without_a_zone_is_local_time() -> None:
    moment = parse_since("2026-11-20T09:00")
    local = dt.datetime(2026, 11, 20, 9, 0).astimezone()
    assert moment == local
    assert moment.utcoffset() == local.utcoffset()
    day = parse_since("2026-11-20")
    assert (day.year, day.month, day.day, day.hour, day.minute) == (2026, 11, 20, 0, 0)
    assert day.tzinfo is not None


@pytest.mark.parametrize("bad", ["", "   ", None, 7])
def test_a_missing_since_says_what_is_expected(bad: object) -> None:
    with pytest.raises(InvalidInput, match="since must be an ISO-8601 date or time"):
        parse_since(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["yesterday", "7 days", "7y", "-7d", "100000d", "2026-13-01", "2026-11-20T25:00"])
def test_a_bad_since_is_quoted_in_the_message(bad: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_since(bad, now=NOW)
    assert f"since={bad!r} is not an ISO-8601 date or time" in str(caught.value)
    assert "24h" in str(caught.value)


def test_a_long_bad_since_is_cut_in_the_message() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_since("x" * 500)
    assert "x" * 60 in str(caught.value)
    assert "x" * 61 not in str(caught.value)


def test_parse_moment() -> None:
    assert parse_moment(None) is None
    assert parse_moment("") is None
    assert parse_moment("soon") is None
    assert parse_moment(20261120) is None  # type: ignore[arg-type]
    assert parse_moment(" 2026-11-20T09:00Z ") == dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)


@pytest.mark.parametrize(("value", "day"), [
    ("2026-11-25", dt.date(2026, 11, 25)),
    ("2026-11-25T10:00", dt.date(2026, 11, 25)),
    (" 2026-11-25T23:59:59+05:00", dt.date(2026, 11, 25)),
    (dt.date(2026, 11, 25), dt.date(2026, 11, 25)),
    (dt.datetime(2026, 11, 25, 22, 30), dt.date(2026, 11, 25)),
    (None, None),
    ("", None),
    ("soon", None),
    ("2026-02-30", None),
    ("25/11/2026", None),
])
def test_parse_day(value: object, day: dt.date | None) -> None:
    assert parse_day(value) == day


def test_valid_day_returns_the_iso_day_or_names_the_argument() -> None:
    assert valid_day("2026-11-25") == "2026-11-25"
    assert valid_day("2026-11-25T08:00Z", "last_verified") == "2026-11-25"
    with pytest.raises(InvalidInput, match=r"^last_verified='tomorrow' is not a date like 2026-11-25$"):
        valid_day("tomorrow", "last_verified")
    with pytest.raises(InvalidInput, match=r"^date=20261125 is not a date"):
        valid_day(20261125)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="date=None"):
        valid_day(None)  # type: ignore[arg-type]


def test_iso_utc_and_now_utc() -> None:
    assert iso_utc(dt.datetime(2026, 11, 25, 10, 0, 0, 999, tzinfo=dt.timezone(dt.timedelta(hours=1)))) == (
        "2026-11-25T09:00:00Z")
    now = now_utc()
    assert now.tzinfo == dt.UTC
    assert now.microsecond == 0


def test_to_ns_and_its_clamping() -> None:
    assert to_ns(dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) == 0
    assert to_ns(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) == 1_767_225_600 * 1_000_000_000
    assert to_ns(dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=dt.UTC)) == -1_000_000_000
    assert to_ns(dt.datetime.max.replace(tzinfo=dt.UTC)) == 2**63 - 1
    assert to_ns(dt.datetime(1, 1, 2, tzinfo=dt.UTC)) == -(2**63)


def test_freshness() -> None:
    assert freshness(None) is None
    assert freshness("") is None
    day, ns = freshness("2026-11-20T09:00Z")  # type: ignore[misc]
    assert day == "2026-11-20"
    assert ns == to_ns(dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC))
    # the day is the moment's own calendar day, as written
    assert freshness("2026-11-20T23:30-05:00")[0] == "2026-11-20"  # type: ignore[index]
    week_ago = dt.datetime.now().astimezone() - dt.timedelta(days=7)
    day, ns = freshness("7d")  # type: ignore[misc]
    assert day in {week_ago.date().isoformat(), (week_ago + dt.timedelta(seconds=5)).date().isoformat()}
    assert abs(ns - to_ns(week_ago)) < 5 * 1_000_000_000
    with pytest.raises(InvalidInput, match="since='later'"):
        freshness("later")


@pytest.mark.parametrize("bad", ["2026-11-251", "2026-11-2", "2026-11-25 junk", "20261125"])
def test_valid_day_wants_a_whole_date(bad: str) -> None:
    with pytest.raises(InvalidInput, match="is not a date"):
        valid_day(bad)


def test_valid_day_takes_a_date_time_too() -> None:
    assert valid_day("2026-11-25T09:30:00Z") == "2026-11-25"
