"""The diary file format: its lines, its daily files, appending to them and reading them back.

A diary is one markdown file per local day, `<save_dir>/diary/YYYY-MM-DD.md`: a frontmatter
header, then self-contained bullet lines `- HH:MM [session] kind: text` (a hand-written line may
leave out `kind: `). Every line carries its own time and session tag, so two machines' diaries
can be union-merged by git and sorted, and a file is only ever appended to.

This module is the one implementation of that format: the Stop hook writes through it, and the
SessionStart digest, the briefing, the rollups and sync's union merge read through it.

Stdlib only, and no `re`, `pathlib`, `dataclasses` or `threading` at import time: the
SessionStart hook reads the diary through this module and must start in a few milliseconds
(which is also why it takes the date types from `_datetime`, like the hooks take `_json` and
`_sqlite3`). Writing (the Stop hook) loads `pinky.base.fileio` and `pathlib` when it happens.
"""

from __future__ import annotations

import os

try:  # the C types themselves: `import datetime` first runs its pure-Python twin (~1.3 ms)
    from _datetime import date, datetime  # type: ignore[import-not-found]  # (no stubs for the C module)
    from _datetime import time as Time
except ImportError:  # pragma: no cover - Pythons without the C module
    from datetime import date, datetime
    from datetime import time as Time

from pinky.base.layout import DIARY_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = [
    "DiaryLine",
    "append_diary",
    "as_local",
    "bullet_time",
    "daily_header",
    "diary_days",
    "diary_file",
    "diary_path",
    "format_line",
    "is_bullet",
    "parse_diary_line",
    "read_day",
    "read_diary",
    "session_tags",
    "short_session",
    "tag_host",
]

# What a diary line never holds: control characters (a NUL makes git take the file for binary), line breaks inside
# a line, U+FFFD (bytes that were not text) and the marks that reorder a line's display. str.translate: no `re`.
_NOT_TEXT = dict.fromkeys((*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0xFFFD, 0x200E, 0x200F,
                           *range(0x202A, 0x202F), *range(0x2066, 0x206A)), " ")
_SESSION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


# --- one line ---------------------------------------------------------------------------------


class DiaryLine:
    """One diary bullet: local `time` (a datetime.time), short `session` tag, `kind` ('asked',
    'files', ...; '' when the line has none), `text`, and the `day` of the file it was read from
    (None for a line parsed on its own). A plain slotted class, not a namedtuple: `collections`
    costs the session-start hook ~1.2 ms to import."""

    __slots__ = ("day", "kind", "session", "text", "time")

    def __init__(self, time: Time, session: str, kind: str, text: str, day: date | None = None) -> None:
        self.time = time
        self.session = session
        self.kind = kind
        self.text = text
        self.day = day

    def _fields(self) -> tuple[object, ...]:
        return (self.time, self.session, self.kind, self.text, self.day)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiaryLine) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "DiaryLine(time={!r}, session={!r}, kind={!r}, text={!r}, day={!r})".format(*self._fields())

    @property
    def date_text(self) -> str:
        """'YYYY-MM-DD' of the file the line was read from ('' for a line parsed on its own)."""
        return self.day.isoformat() if self.day else ""

    @property
    def host(self) -> str:
        """The agent host that wrote the line ('claude', 'codex', ...), read from its tag, older tags too."""
        return tag_host(self.session)

    def render(self) -> str:
        """The line as it stands in the file."""
        return format_line(self.time, self.session, self.kind, self.text)


def format_line(at: Time | datetime, session: str, kind: str, text: str) -> str:
    """`- HH:MM [session] kind: text`; without a kind, `- HH:MM [session] text`."""
    head = f"- {at.hour:02d}:{at.minute:02d} [{session}] "  # not %H:%M: strftime is 5x slower
    return f"{head}{kind}: {text}" if kind else head + text


def short_session(session_id: str) -> str:
    """The session tag, `<host>-<8 hex digits>`: the host that ran the session (`claude` for Claude Code, whose ids
    name none; another host's session id is `<host>:<id>`) and a hash of the whole id (32-bit FNV-1a). A part of
    the id itself would not do: a UUIDv7 (Codex) starts with its timestamp, which sessions a minute apart share,
    and pinky's own id for a Copilot CLI session ends with the day."""
    host, colon, rest = session_id.partition(":")
    if not (colon and _host_name(host)):
        host, rest = "claude", session_id
    return f"{host}-{_fnv1a(rest):08x}" if rest.strip() else f"{host}-unknown"


def session_tags(session_id: str) -> tuple[str, ...]:
    """Every tag this session's lines may carry: today's, and for Claude Code also the one older pinkys wrote (the
    id's first 8 characters, random in its UUIDv4s). Another host's older tag began with a timestamp other sessions
    shared, so it cannot say a line is this session's."""
    tag = short_session(session_id)
    if not tag.startswith("claude-"):
        return (tag,)
    return (tag, "".join(c for c in session_id if c in _SESSION_CHARS)[:8] or "unknown")


def tag_host(tag: str) -> str:
    """The host a line's tag names: its `<host>-` prefix; `claude` for an older tag of 8 hex digits alone (Claude
    Code's lines named no host); '' for any other tag (a line written by hand)."""
    host, dash, rest = tag.partition("-")
    if dash and rest and _host_name(host):
        return host
    return "claude" if len(tag) == 8 and all(c in "0123456789abcdef" for c in tag) else ""


def _host_name(name: str) -> bool:
    return name.isalpha() and name.isascii() and name.islower() and len(name) <= 12


def _fnv1a(text: str) -> int:
    """32-bit FNV-1a of the UTF-8 bytes: stable across runs and versions, and no import (the hooks call this)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def parse_diary_line(line: str, day: date | None = None) -> DiaryLine | None:
    """Parse a diary line; None for headers, blank lines and bullets without time and session tag."""
    line = line.rstrip()
    at = _clock(line[2:7]) if line.startswith("- ") and line[7:9] == " [" else None
    end = line.find("] ", 9) if at else -1
    session = line[9:end] if end > 9 else ""
    if "]" in session or session.split() != [session]:  # empty, or with whitespace
        return None
    rest = line[end + 2 :]
    head, colon, tail = rest.partition(":")
    if colon and head.replace("_", "a").isalnum() and tail[:1] in ("", " "):  # a \w+ word
        return DiaryLine(at, session, head, tail[1:], day)
    return DiaryLine(at, session, "", rest, day)


def _clock(text: str) -> Time | None:
    """`HH:MM` as a time of day, None for anything else (`25:00`, `9:30`, `ab:cd`)."""
    digits = text[:2] + text[3:]
    if len(text) != 5 or text[2] != ":" or not (digits.isascii() and digits.isdigit()):
        return None
    hour, minute = int(text[:2]), int(text[3:])
    return Time(hour, minute) if hour < 24 and minute < 60 else None


def is_bullet(line: str) -> bool:
    """A markdown bullet as diaries and append-only notes write them: `- ` or `* ` at the start."""
    return line[:2] in ("- ", "* ")


def bullet_time(line: str) -> Time | None:
    """The `HH:MM` a bullet starts with (`- 09:30 ...`, with or without a session tag), else None."""
    after = line[7:8]
    if not is_bullet(line) or after.isalnum() or after == "_":  # the time must be a whole word
        return None
    return _clock(line[2:7])


# --- the daily files --------------------------------------------------------------------------


def as_local(when: datetime | float) -> datetime:
    """Local time: aware datetimes are converted, naive ones are taken as local already, and a
    number is seconds since the epoch."""
    if not isinstance(when, datetime):
        return datetime.fromtimestamp(when)
    return when.astimezone() if when.tzinfo else when


def diary_file(save_dir: str | os.PathLike[str], day: date) -> str:
    """`<save_dir>/diary/YYYY-MM-DD.md`."""
    return os.path.join(os.fspath(save_dir), DIARY_DIR, f"{day.isoformat()}.md")


def diary_path(save_dir: str | os.PathLike[str], when: datetime) -> Path:
    """The diary file of the local date of `when`."""
    from pathlib import Path

    return Path(diary_file(save_dir, as_local(when).date()))


def daily_header(day: date) -> str:
    """What a new day's file starts with: the frontmatter and title that `markdown.render` would write.

    Written by hand, not through `pinky.text.markdown.render`, because that loads YAML and this runs
    in the Stop hook; tests/capture/test_diary.py checks that the two agree."""
    return f"---\ntitle: Diary {day}\ntype: diary\ncreated: {day}\ntags: [diary]\n---\n\n# Diary {day}\n\n"


def append_diary(save_dir: str | os.PathLike[str], lines: list[str], when: datetime) -> Path:
    """Append `lines` to the day's diary, creating it with its header first; return its path. A character no
    markdown line holds (NUL, U+FFFD, a line break inside a line) becomes a space: the diary stays text.

    The file is an append-only log: each call is one O_APPEND write followed by fsync, so
    concurrent writers never interleave inside a line. A new file is published complete
    (`fileio.create_new`), so two first writers cannot clobber each other or append before the
    header.
    """
    from pinky.base import fileio

    path = diary_path(save_dir, when)
    if not lines:
        return path
    fileio.ensure_inside(path, save_dir)  # a diary/ (or day file) linked out of the project gets nothing
    payload = "".join(line.rstrip("\n").translate(_NOT_TEXT) + "\n" for line in lines)
    if not path.exists():
        fileio.create_new(path, daily_header(as_local(when).date()))
    if _needs_newline(path):
        payload = "\n" + payload
    fileio.append(path, payload)
    return path


def _needs_newline(path: str | os.PathLike[str]) -> bool:
    """True when the file ends without a newline (hand-edited), so our line would be glued onto it."""
    with open(path, "rb") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


# --- reading ----------------------------------------------------------------------------------


def diary_days(save_dir: str | os.PathLike[str]) -> list[date]:
    """The days that have a diary file under `save_dir`, oldest first."""
    try:
        names = os.listdir(os.path.join(os.fspath(save_dir), DIARY_DIR))
    except OSError:
        return []
    return sorted(day for day in map(_file_day, names) if day is not None)


def _file_day(name: str) -> date | None:
    """The day a diary file is named after (`2026-11-25.md`), None for any other name."""
    digits = name[:4] + name[5:7] + name[8:10]
    if len(name) != 13 or name[4] + name[7] + name[10:] != "--.md" or not (digits.isascii() and digits.isdigit()):
        return None
    try:
        return date(int(name[:4]), int(name[5:7]), int(name[8:10]))
    except ValueError:
        return None


def read_day(save_dir: str | os.PathLike[str], day: date,
             since: datetime | float | None = None) -> list[DiaryLine]:
    """The lines of one day's diary in file order (from `since` on, to the minute, when given).

    A missing or unreadable file has no lines, and so has anything but a regular file inside
    `save_dir` (a FIFO, a device, a link out of it); bytes that are not UTF-8 are replaced."""
    from pinky.base import fileio

    try:
        text = fileio.read_regular(diary_file(save_dir, day), save_dir).decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = [line for line in (parse_diary_line(raw, day) for raw in text.splitlines()) if line is not None]
    if since is None:
        return lines
    start = as_local(since)
    cutoff = (start.date(), start.time().replace(second=0, microsecond=0))
    return [line for line in lines if (day, line.time) >= cutoff]


def read_diary(save_dir: str | os.PathLike[str], *, days: Iterable[date] | None = None,
               since: datetime | float | None = None) -> list[DiaryLine]:
    """The diary lines under `save_dir`, oldest day first and in file order within a day.

    `days` limits them to those days; `since` (a datetime, or seconds since the epoch) to the
    lines written from that moment on: local time, to the minute, as the lines record it."""
    wanted = diary_days(save_dir) if days is None else list(days)
    if since is not None:
        first = as_local(since).date()
        wanted = [day for day in wanted if day >= first]
    return [line for day in wanted for line in read_day(save_dir, day, since)]
