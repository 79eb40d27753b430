"""Weekly and monthly rollups of the daily diaries: extractive, deterministic, no LLM.

A rollup is computed from file *contents* only (diary lines and note frontmatter, never
mtimes), so regenerating it with unchanged inputs gives identical bytes, and two machines
produce the same note. The clock counts only for a period not over yet (the current week): that
rollup is dated today, not at the period's end in the future, and its heading says how far it goes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Literal

from pinky.base import fileio
from pinky.base.dates import parse_day
from pinky.base.layout import DIARY_DIR, is_note
from pinky.base.redact import redact
from pinky.capture.diary import DiaryLine, read_diary
from pinky.errors import InvalidInput
from pinky.text.markdown import render, split_frontmatter

Kind = Literal["week", "month"]

FOLDERS: dict[str, str] = {"week": "weekly", "month": "monthly"}  # under diary/; sync keeps ours for these
_WEEK_RE = re.compile(r"(\d{4})-W(\d{2})")
_MONTH_RE = re.compile(r"(\d{4})-(\d{2})")
_SPECIFIC_RE = re.compile(r"[/._`#:]|\d")
_LIST_BREAK = re.compile(r"[,\s]+")

TOP_FILES = 10
TOP_LINES = 10
MAX_ENTRIES = 50
KIND_WEIGHT = {"asked": 3.0, "commits": 3.0, "decided": 2.0, "gotcha": 2.0, "learned": 2.0}
HIGHLIGHT_SKIP = {"files", "skipped"}  # summarised in their own section; counts of unreadable transcript lines
FRONTMATTER_BYTES = 256 * 1024  # read of each note: its frontmatter is at the top


@dataclass(frozen=True)
class Period:
    """An ISO week (``2026-W48``) or a calendar month (``2026-11``), both ends inclusive."""

    kind: Kind
    label: str
    start: date
    end: date

    def days(self) -> list[date]:
        """Every calendar day in the period, in order."""
        return [self.start + timedelta(n) for n in range((self.end - self.start).days + 1)]

    @property
    def title(self) -> str:
        return f"{'Week' if self.kind == 'week' else 'Month'} {self.label}"


@dataclass(frozen=True)
class Note:
    """The frontmatter fields a rollup reports about one knowledge entry."""

    path: str
    type: str
    title: str
    created: date | None
    last_verified: date | None


# --- periods ---------------------------------------------------------------------------------


def week_period(year: int, week: int) -> Period:
    """ISO week ``year``-W``week``; raises InvalidInput when that week does not exist."""
    try:
        start = date.fromisocalendar(year, week, 1)
    except ValueError:
        raise InvalidInput(f"week {year}-W{week:02d} does not exist (ISO weeks run 01-52/53)") from None
    return Period("week", f"{year}-W{week:02d}", start, start + timedelta(6))


def month_period(year: int, month: int) -> Period:
    """Calendar month; raises InvalidInput when the month is out of range."""
    if not 1 <= month <= 12 or year < 1:
        raise InvalidInput(f"month {year:04d}-{month:02d} does not exist (use YYYY-MM, month 01-12)")
    start = date(year, month, 1)
    following = date(year + (month == 12), month % 12 + 1, 1)
    return Period("month", f"{year:04d}-{month:02d}", start, following - timedelta(1))


def parse_period(week: str | None, month: str | None, today: date) -> Period:
    """``--week YYYY-Www`` or ``--month YYYY-MM``; neither means the current ISO week."""
    if week and month:
        raise InvalidInput("give either a week (YYYY-Www) or a month (YYYY-MM), not both")
    if week:
        match = _WEEK_RE.fullmatch(week.strip())
        if not match:
            raise InvalidInput(f"bad week {week!r}: expected an ISO week like 2026-W48")
        return week_period(int(match[1]), int(match[2]))
    if month:
        match = _MONTH_RE.fullmatch(month.strip())
        if not match:
            raise InvalidInput(f"bad month {month!r}: expected YYYY-MM like 2026-11")
        return month_period(int(match[1]), int(match[2]))
    iso = today.isocalendar()
    return week_period(iso.year, iso.week)


def closed_periods(last_run: date | None, today: date) -> list[Period]:
    """Weeks and months that ended since ``last_run`` (for the Stop hook), oldest first.

    A period is closed once ``today`` is past its last day. Without a previous run only the
    latest closed week and month are returned; after a long gap the look-back stops at six
    weeks and one month, so the Stop hook never backfills years of rollups.
    """
    iso = today.isocalendar()
    weeks = [week_period(iso.year, iso.week)]
    months = [month_period(today.year, today.month)]
    for _ in range(6):  # look back far enough for a month plus a few weeks
        weeks.append(_previous(weeks[-1]))
    months.append(_previous(months[-1]))
    closed = [p for p in weeks + months if p.end < today]
    if last_run is None:
        latest = [max((p for p in closed if p.kind == k), key=lambda p: p.end) for k in ("week", "month")]
        return sorted(latest, key=_period_order)
    return sorted((p for p in closed if p.end >= last_run), key=_period_order)


def open_periods(today: date) -> list[Period]:
    """The week and the month ``today`` falls in (not over yet)."""
    iso = today.isocalendar()
    return [week_period(iso.year, iso.week), month_period(today.year, today.month)]


def stale_open_rollups(root: Path, today: date, newer_than: float) -> list[Period]:
    """The periods not over yet whose rollup exists (someone ran `pinky-brain rollup`) but is older than
    ``newer_than`` (a diary's mtime): a later session's lines are missing from it."""
    stale = []
    for period in open_periods(today):
        try:
            if rollup_path(root, period).stat().st_mtime < newer_than:
                stale.append(period)
        except OSError:
            continue
    return stale


def _previous(period: Period) -> Period:
    """The week or month right before ``period``."""
    day = period.start - timedelta(1)
    if period.kind == "week":
        iso = day.isocalendar()
        return week_period(iso.year, iso.week)
    return month_period(day.year, day.month)


def _period_order(period: Period) -> tuple[date, str]:
    return (period.end, period.kind)


# --- inputs ------------------------------------------------------------------------------------


def read_diary_lines(root: Path, period: Period) -> list[DiaryLine]:
    """The diary lines of each day of the period, in order."""
    return read_diary(root, days=period.days())


def read_notes(root: Path) -> list[Note]:
    """Frontmatter of every note outside ``diary/`` (rollups and diaries are not entries).

    A note with broken YAML still counts, with no type or dates. Only regular files inside `root`
    are read (no FIFO, device, or link out of it)."""
    notes: list[Note] = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(f"{DIARY_DIR}/") or not is_note(rel):
            continue
        try:
            text = fileio.read_regular(path, root, FRONTMATTER_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        meta = split_frontmatter(text)[0]
        notes.append(
            Note(
                path=rel,
                type=str(meta.get("type") or ""),
                title=str(meta.get("title") or path.stem),
                created=parse_day(meta.get("created")),
                last_verified=parse_day(meta.get("last_verified")),
            )
        )
    return notes


# --- rendering ---------------------------------------------------------------------------------


def build_rollup(root: Path, period: Period, today: date | None = None) -> tuple[Path, str]:
    """Return where the rollup goes and its markdown; reads files, writes nothing. `today` (default: the
    local date) dates the rollup of a period not over yet."""
    root = Path(root)
    lines = read_diary_lines(root, period)
    changed = _changed_notes(read_notes(root), period)
    made = min(period.end, today or date.today())
    so_far = f", so far: to {made.isoformat()}" if made < period.end else ""
    sections = [
        f"# {period.title} ({period.start.isoformat()} to {period.end.isoformat()}{so_far})\n",
        _activity_section(lines, period),
        _files_section(lines),
        _entries_section(changed),
        _decisions_section(changed),
        _highlights_section(lines),
    ]
    return rollup_path(root, period), render(_frontmatter(period, made), "\n".join(sections))


def rollup_path(root: Path, period: Period) -> Path:
    """``diary/weekly/2026-W48.md`` or ``diary/monthly/2026-11.md``."""
    return Path(root) / DIARY_DIR / FOLDERS[period.kind] / f"{period.label}.md"


def _frontmatter(period: Period, made: date) -> dict[str, object]:
    # PyYAML writes an object it meets twice as an anchor and an alias (`&id001`): `created` and
    # `period_end` are the same day once the period is over, so `created` gets a copy of its own.
    return {
        "title": period.title,
        "type": "diary",
        "tags": ["diary", "rollup"],
        "created": made.replace(),
        "rollup": period.kind,
        "period_start": period.start,
        "period_end": period.end,
    }


def _bullets(items: list[str]) -> str:
    return "".join(f"- {item}\n" for item in items) if items else "- none\n"


def _activity_section(lines: list[DiaryLine], period: Period) -> str:
    sessions = {line.session: line.host for line in lines}
    hosts = Counter(host for host in sessions.values() if host)
    by_host = f" ({', '.join(f'{host} {n}' for host, n in sorted(hosts.items()))})" if hosts else ""
    days = len({line.day for line in lines})
    total = len(period.days())
    return (
        f"## Activity\n\n- Sessions: {len(sessions)}{by_host}\n- Active days: {days} of {total}\n"
        f"- Diary lines: {len(lines)}\n"
    )


def touched_files(lines: list[DiaryLine]) -> list[tuple[str, int]]:
    """Files named on ``files:`` lines, most touched first, ties by path."""
    counts: Counter[str] = Counter()
    for line in lines:
        if _kind(line) == "files":
            counts.update(token.strip("`") for token in _LIST_BREAK.split(line.text) if token.strip("`"))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP_FILES]


def _files_section(lines: list[DiaryLine]) -> str:
    items = [f"`{path}` ({count})" for path, count in touched_files(lines)]
    return "## Files most touched\n\n" + _bullets(items)


def _changed_notes(notes: list[Note], period: Period) -> list[tuple[date, str, Note]]:
    """(day, created|verified, note) for notes whose dates fall in the period."""
    changed: list[tuple[date, str, Note]] = []
    for note in notes:
        if note.created is not None and period.start <= note.created <= period.end:
            changed.append((note.created, "created", note))
        elif note.last_verified is not None and period.start <= note.last_verified <= period.end:
            changed.append((note.last_verified, "verified", note))
    return sorted(changed, key=lambda item: (item[0], item[2].path))


def _entries_section(changed: list[tuple[date, str, Note]]) -> str:
    items = [
        f"{day.isoformat()} {how}: {note.title}{f' [{note.type}]' if note.type else ''} ({note.path})"
        for day, how, note in changed[:MAX_ENTRIES]
    ]
    if len(changed) > MAX_ENTRIES:
        items.append(f"... and {len(changed) - MAX_ENTRIES} more")
    return "## Entries created or changed\n\n" + _bullets(items)


def _decisions_section(changed: list[tuple[date, str, Note]]) -> str:
    items = [
        f"{note.type}: {note.title} ({note.path})"
        for _, _, note in changed
        if note.type in ("decision", "gotcha")
    ]
    return "## Decisions and gotchas\n\n" + _bullets(items)


def _kind(line: DiaryLine) -> str:
    """Hand-written lines may capitalise their kind (`Decided: ...`)."""
    return line.kind.lower()


def line_score(line: DiaryLine) -> float:
    """Higher for questions and commits, and for longer, more specific lines."""
    # What follows `kind:`, its space included, as rollups have always measured it: a
    # regenerated rollup stays byte-identical to the one already written.
    body = f" {line.text}" if line.kind else line.text
    specific = len(_SPECIFIC_RE.findall(body))
    return KIND_WEIGHT.get(_kind(line), 0.0) + min(len(body), 200) / 50 + min(specific, 20) / 10


def telling_lines(lines: list[DiaryLine]) -> list[DiaryLine]:
    """The top diary lines by score; ties go to the earlier line (the sort is stable)."""
    candidates = [line for line in lines if _kind(line) not in HIGHLIGHT_SKIP]
    return sorted(candidates, key=lambda x: (-line_score(x), x.day, x.time))[:TOP_LINES]


def _highlights_section(lines: list[DiaryLine]) -> str:
    items = [f"{x.date_text} {x.render()[2:]}" for x in telling_lines(lines)]  # `- ` is the bullet's own
    return "## Highlights\n\n" + _bullets(items)


# --- writing ------------------------------------------------------------------------------------


def write_rollup(root: Path, period: Period, today: date | None = None) -> Path:
    """Write the rollup atomically; unchanged content leaves the file (and mtime) alone.

    Redacted like every note written: a diary line written by hand, or before the redactor knew
    its format, must not travel on into the summary."""
    path, text = build_rollup(root, period, today)
    fileio.ensure_inside(path, root)  # a diary/ linked out of the project gets nothing
    data = redact(text).encode("utf-8")
    if path.is_file() and fileio.read_regular(path) == data:
        return path
    fileio.atomic_write(path, data)
    return path
