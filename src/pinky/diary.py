"""Turn a Claude Code transcript into daily-diary lines, reading only what is new since the last Stop.

Why this shape: the Stop hook runs after every turn, so it reads the transcript
JSONL from a stored byte offset, summarises just the new events, and appends a
few self-contained bullet lines to `<save_dir>/diary/YYYY-MM-DD.md`. Every line
carries its own time and session tag, so two machines' diaries can be
union-merged by git and sorted. The transcript format is internal to Claude
Code, so parsing is lenient: unknown or malformed entries are skipped, never fatal.
Stdlib only, because the hook must start in well under 100 ms.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from datetime import time as Time
from pathlib import Path, PurePath

from pinky.errors import InvalidInput, NotFound
from pinky.redact import redact

__all__ = [
    "DiaryLine",
    "OffsetStore",
    "SessionSummary",
    "append_diary",
    "commit_subject",
    "diary_path",
    "format_lines",
    "parse_diary_line",
    "read_new_events",
    "record_stop",
    "summarize",
]

LINE_LIMIT = 300
COMMAND_LIMIT = 80
PROMPT_LIMIT = 120
OFFSET_MAX_AGE_S = 30 * 24 * 3600

_WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# Prompts that Claude Code writes on the user's behalf: slash commands, local command output, reminders.
_SYNTHETIC_PROMPT = re.compile(r"^\s*(?:<(?:[a-z]+(?:-[a-z]+)+|command-\w+)>|\[Request interrupted)")
_COMMIT_MESSAGE = re.compile(r"""(?:\s-[a-zA-Z]*m\s*|\s--message[=\s]\s*)(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_GIT_COMMIT = re.compile(r"\bgit\b[^;&|\n]*?\scommit\b")
_HEREDOC_START = re.compile(r"^\$\(cat\s+<<-?\s*['\"]?(\w+)['\"]?\s*$")
_WHITESPACE = re.compile(r"\s+")
_DIARY_LINE = re.compile(r"^- (\d{2}):(\d{2}) \[([^\]\s]+)\] (\w+): (.*)$")


# ---------------------------------------------------------------------------
# Reading the transcript


def read_new_events(transcript_path: Path, offset: int) -> tuple[list[dict], int]:
    """Parse the complete JSONL lines after byte `offset`; return them and the offset to resume from.

    A final line without its newline is still being written, so it is left for
    the next call. A file shorter than `offset` was truncated or replaced, so
    reading restarts at 0. Lines that are not JSON objects are skipped.
    """
    if offset < 0:
        raise InvalidInput(f"offset must be >= 0, got {offset}")
    try:
        with open(transcript_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < offset:
                offset = 0
            f.seek(offset)
            data = f.read()
    except FileNotFoundError as exc:
        raise NotFound(f"transcript not found: {transcript_path}") from exc
    end = data.rfind(b"\n") + 1
    return list(_parse_lines(data[:end])), offset + end


def _parse_lines(data: bytes) -> Iterator[dict]:
    """Yield each line that decodes to a JSON object, skipping the rest."""
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError both
            continue
        if isinstance(event, dict):
            yield event


# ---------------------------------------------------------------------------
# Summarising


@dataclass(frozen=True)
class SessionSummary:
    """What happened in a stretch of a session, in first-seen order, without duplicates."""

    prompts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    tools: tuple[tuple[str, int], ...] = ()
    commands: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.prompts or self.files or self.tools or self.commands or self.commits)


def summarize(events: Iterable[dict]) -> SessionSummary:
    """Collect prompts, changed files, tool counts, shell commands and commit subjects from events."""
    events = list(events)
    failed = _failed_tool_ids(events)
    prompts: dict[str, None] = {}
    files: dict[str, None] = {}
    tools: dict[str, int] = {}
    commands: dict[str, None] = {}
    commits: dict[str, None] = {}
    for event in events:
        if event.get("type") == "user":
            prompt = _prompt_text(event)
            if prompt:
                prompts.setdefault(prompt)
        elif event.get("type") == "assistant":
            cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
            for block in _tool_uses(event):
                name, tool_input = block["name"], block["input"]
                tools[name] = tools.get(name, 0) + 1
                changed = _changed_file(name, tool_input, cwd)
                if changed:
                    files.setdefault(changed)
                command = tool_input.get("command") if name == "Bash" else None
                if isinstance(command, str) and command.strip():
                    commands.setdefault(_first_line(command))
                    subject = commit_subject(command)
                    if subject and block.get("id") not in failed:
                        commits.setdefault(subject)
    return SessionSummary(
        prompts=tuple(prompts),
        files=tuple(files),
        tools=tuple(tools.items()),
        commands=tuple(commands),
        commits=tuple(commits),
    )


def _message_content(event: dict) -> object:
    message = event.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _prompt_text(event: dict) -> str | None:
    """The prompt the user typed, or None for meta, compact summaries, command output and tool results."""
    if event.get("isMeta") or event.get("isCompactSummary") or event.get("isSidechain"):
        return None
    content = _message_content(event)
    if isinstance(content, list):  # pasted images arrive as text + image blocks; tool results as tool_result
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = " ".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    if not isinstance(content, str) or not content.strip() or _SYNTHETIC_PROMPT.match(content):
        return None
    return content.strip()


def _tool_uses(event: dict) -> Iterator[dict]:
    """The well-formed tool_use blocks of an assistant event."""
    content = _message_content(event)
    if not isinstance(content, list):
        return
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input"), dict)
        ):
            yield block


def _failed_tool_ids(events: list[dict]) -> set[str]:
    """Ids of tool calls whose result was an error, so a rejected `git commit` is not logged as a commit."""
    failed: set[str] = set()
    for event in events:
        content = _message_content(event) if event.get("type") == "user" else None
        if isinstance(content, list):
            failed.update(
                b["tool_use_id"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("is_error")
                and isinstance(b.get("tool_use_id"), str)
            )
    return failed


def _changed_file(tool: str, tool_input: dict, cwd: str | None) -> str | None:
    """The path a write tool touched, relative to the session cwd when it lies inside it."""
    key = _WRITE_TOOLS.get(tool)
    path = tool_input.get(key) if key else None
    if not isinstance(path, str) or not path:
        return None
    if cwd:
        try:
            return PurePath(path).relative_to(cwd).as_posix()
        except ValueError:
            pass
    return path


def _first_line(text: str) -> str:
    """The first non-blank line; cutting it to length waits until after redaction."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def commit_subject(command: str) -> str | None:
    """The first line of the message of a `git commit -m ...` in a shell command, or None.

    Handles `-m "..."`, `-m '...'`, `-am`, `--message=` and the heredoc form
    `-m "$(cat <<'EOF' ... EOF)"` that Claude Code writes for multi-line messages.
    """
    git_commit = _GIT_COMMIT.search(command)
    match = _COMMIT_MESSAGE.search(command, git_commit.end()) if git_commit else None
    if not match:
        return None
    message = match.group(1) if match.group(1) is not None else match.group(2)
    if match.group(1) is not None:
        message = re.sub(r"\\(.)", r"\1", message)
    lines = [ln.strip() for ln in message.splitlines()]
    if lines and _HEREDOC_START.match(lines[0]):
        lines = lines[1:]
    subject = next((ln for ln in lines if ln), "")
    return subject or None


# ---------------------------------------------------------------------------
# Formatting


def format_lines(summary: SessionSummary, *, when: datetime, session_id: str) -> list[str]:
    """Render a summary as self-contained `- HH:MM [session] kind: text` lines.

    Every item is redacted, each line is capped, and empty kinds are omitted.
    """
    prefix = f"- {_local(when):%H:%M} [{_short_session(session_id)}] "
    budget = LINE_LIMIT - len(prefix)
    sections = (
        ("asked", summary.prompts, "; then: ", PROMPT_LIMIT),
        ("files", summary.files, ", ", LINE_LIMIT),
        ("tools", tuple(f"{name}×{count}" for name, count in summary.tools), ", ", LINE_LIMIT),
        ("commands", summary.commands, "; ", COMMAND_LIMIT),
        ("commits", summary.commits, "; ", PROMPT_LIMIT),
    )
    lines = []
    for kind, items, sep, item_limit in sections:
        text = _join_capped(items, sep, budget - len(kind) - 2, item_limit)
        if text:
            lines.append(f"{prefix}{kind}: {text}")
    return lines


def _short_session(session_id: str) -> str:
    """First 8 characters of the session id, restricted to characters that cannot break the line format."""
    return re.sub(r"[^A-Za-z0-9_-]", "", session_id)[:8] or "unknown"


def _clean(text: str, limit: int) -> str:
    """Redact, flatten whitespace, then cut to `limit`, in that order, so a cut never splits a secret."""
    return _truncate(_WHITESPACE.sub(" ", redact(_head(text, limit * 8 + 4096))).strip(), limit)


def _head(text: str, size: int) -> str:
    """A prefix of about `size` characters ending at whitespace, so no token is cut in half.

    Redacting a huge pasted log just to show its first words would be slow; the
    text past the prefix is never shown anyway.
    """
    if len(text) <= size:
        return text
    cut = max(text.rfind(" ", 0, size), text.rfind("\n", 0, size))
    return text[:cut] if cut > 0 else text


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _join_capped(items: Sequence[str], sep: str, limit: int, item_limit: int) -> str:
    """Clean and join items while they fit in `limit`, then end with `… +N more` for the rest.

    Items are cleaned lazily, so a long session only pays for redacting what is shown.
    """
    out = ""
    for index, raw in enumerate(items):
        item = _clean(raw, item_limit)
        rest = len(items) - index - 1
        piece = item if not out else sep + item
        reserve = len(f" … +{rest} more") if rest else 0
        if len(out) + len(piece) + reserve <= limit:
            out += piece
            continue
        if out:
            return f"{out} … +{rest + 1} more"
        more = f" +{rest} more" if rest else ""
        return _truncate(item, limit - len(more)) + more  # even the first item is too long: cut it
    return out


@dataclass(frozen=True)
class DiaryLine:
    """One parsed diary bullet: local time, short session id, kind (asked, files, tools, ...), text."""

    time: Time
    session: str
    kind: str
    text: str


def parse_diary_line(line: str) -> DiaryLine | None:
    """Parse a line written by `format_lines`; None for headers, blank lines and hand-written notes."""
    match = _DIARY_LINE.match(line.rstrip("\r\n"))
    if not match:
        return None
    hour, minute, session, kind, text = match.groups()
    if int(hour) > 23 or int(minute) > 59:
        return None
    return DiaryLine(time=Time(int(hour), int(minute)), session=session, kind=kind, text=text)


# ---------------------------------------------------------------------------
# Writing the diary


def diary_path(save_dir: Path, when: datetime) -> Path:
    """`<save_dir>/diary/YYYY-MM-DD.md` for the local date of `when`."""
    return Path(save_dir) / "diary" / f"{_local(when):%Y-%m-%d}.md"


def _header(when: datetime) -> str:
    day = f"{_local(when):%Y-%m-%d}"
    return f"---\ntitle: Diary {day}\ntype: diary\ncreated: {day}\ntags: [diary]\n---\n\n# Diary {day}\n\n"


def _local(when: datetime) -> datetime:
    """Aware datetimes are converted to local time; naive ones are taken as local already."""
    return when.astimezone() if when.tzinfo else when


def append_diary(save_dir: Path, lines: list[str], when: datetime) -> Path:
    """Append `lines` to the day's diary, creating it with its frontmatter first; return its path.

    The file is an append-only log: each call is one O_APPEND write followed by
    fsync, so concurrent writers never interleave inside a line. A new file is
    published complete (header written to a temp file, then hard-linked into
    place), so two first writers cannot clobber each other or append before
    the header.
    """
    path = diary_path(save_dir, when)
    if not lines:
        return path
    payload = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _create_once(path, _header(when).encode("utf-8"))
    if _needs_newline(path):
        payload = b"\n" + payload
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _create_once(path: Path, content: bytes) -> None:
    """Create `path` with `content` unless it already exists; never overwrite, never expose a half file."""
    # Unique per writer (threads share a pid): a shared name let one writer delete another's
    # temp file and fall through to the exclusive-create path below.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(content)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # no hard links on this filesystem: exclusive create instead
        try:
            # O_APPEND: a writer appending between our create and our write must not be overwritten.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_BINARY", 0),
                         0o644)
        except FileExistsError:
            return
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
    finally:
        tmp.unlink(missing_ok=True)


def _needs_newline(path: Path) -> bool:
    """True when the file ends without a newline (hand-edited), so our line would be glued onto it."""
    with open(path, "rb") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


# ---------------------------------------------------------------------------
# Offsets


class OffsetStore:
    """Per-session transcript byte offsets in one JSON file, so each Stop reads only what is new.

    Entries are `{session_id: {"offset": int, "path": str, "seen": epoch}}`. The
    file is replaced atomically; a corrupt file is treated as empty (the worst
    case is one session logged twice, not a broken hook); entries unseen for
    `max_age_s` are pruned on write. Hold `lock()` around read-summarise-write so
    two Stop hooks cannot both log the same events.
    """

    def __init__(self, path: Path, *, max_age_s: float = OFFSET_MAX_AGE_S) -> None:
        self.path = Path(path)
        self.max_age_s = max_age_s

    def get(self, session_id: str, transcript_path: Path | str | None = None) -> int:
        """The stored offset, or 0 when unknown or recorded for a different transcript file."""
        entry = self._load().get(session_id)
        if entry is None:
            return 0
        if transcript_path is not None and entry.get("path") not in (None, str(transcript_path)):
            return 0
        return entry["offset"]

    def set(
        self,
        session_id: str,
        offset: int,
        transcript_path: Path | str | None = None,
        *,
        now: float | None = None,
    ) -> None:
        """Record `offset` for `session_id`, pruning stale sessions, and write the file atomically."""
        if offset < 0:
            raise InvalidInput(f"offset must be >= 0, got {offset}")
        now = time.time() if now is None else now
        entries = {sid: e for sid, e in self._load().items() if now - e.get("seen", now) <= self.max_age_s}
        entry: dict = {"offset": offset, "seen": now}
        if transcript_path is not None:
            entry["path"] = str(transcript_path)
        entries[session_id] = entry
        self._write(entries)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """An exclusive advisory lock beside the offsets file (a no-op where fcntl is missing)."""
        try:
            import fcntl
        except ImportError:  # Windows: Stop hooks of one session do not overlap in practice
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _load(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            sid: e
            for sid, e in data.items()
            if isinstance(e, dict)
            and isinstance(e.get("offset"), int)
            and e["offset"] >= 0
            and isinstance(e.get("seen", 0), int | float)
        }

    def _write(self, entries: dict[str, dict]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entries, f, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


# ---------------------------------------------------------------------------
# The Stop-hook flow


def record_stop(
    transcript_path: Path,
    session_id: str,
    save_dir: Path,
    offsets_path: Path,
    now: datetime | None = None,
) -> Path | None:
    """Append what happened since the last Stop to today's diary; return its path, or None if nothing new.

    The offset advances only after the diary write succeeded, so a crash loses
    nothing, and the advanced offset means nothing is written twice. A missing
    transcript counts as nothing new.
    """
    if not session_id:
        raise InvalidInput("session_id is required")
    now = datetime.now().astimezone() if now is None else now
    store = OffsetStore(offsets_path)
    with store.lock():
        start = store.get(session_id, transcript_path)
        try:
            events, end = read_new_events(Path(transcript_path), start)
        except NotFound:
            return None
        lines = format_lines(summarize(events), when=now, session_id=session_id)
        path = append_diary(save_dir, lines, now) if lines else None
        if end != start:
            store.set(session_id, end, transcript_path)
        return path
