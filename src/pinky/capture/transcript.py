"""Read a Claude Code transcript: only what is new since a byte offset, one line at a time, summarised.

The Stop hook runs after every turn, so it reads the transcript JSONL from a stored byte
offset and summarises just the new events: the prompts typed, the files changed, the tools
used, the shell commands run and the commits made. The file is streamed line by line, never
read whole (a transcript can hold hundreds of megabytes), and summarised by `Summarizer`, which
is fed one event at a time. The transcript format is internal to Claude Code, so parsing is
lenient: a line that cannot be read (not UTF-8, not JSON, a lone surrogate escape, nested too
deeply, too long) is skipped with the reason, never fatal, and the lines around it are read.
Stdlib only, because the Stop hook must start quickly.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from pinky.base import fileio
from pinky.capture.brain_calls import BrainCalls, short_tool
from pinky.errors import InvalidInput, NotFound

__all__ = ["MAX_LINE", "SHOWN", "WRITE_TOOLS", "SessionSummary", "Summarizer", "Transcript", "commit_subject",
           "message_content", "parse_event", "prompt_text", "summarize", "tool_uses"]

WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# Prompts that Claude Code writes on the user's behalf: slash commands, local command output, reminders.
_SYNTHETIC_PROMPT = re.compile(r"^\s*(?:<(?:[a-z]+(?:-[a-z]+)+|command-\w+)>|\[Request interrupted)")
_COMMIT_MESSAGE = re.compile(r"""(?:\s-[a-zA-Z]*m\s*|\s--message[=\s]\s*)(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
# `git … commit` within one shell segment (up to `;`, `&`, `|` or a newline). Searched segment by
# segment from its first `git`: `\bgit\b[^;&|\n]*?\scommit\b` rescanned the segment from every `git`
# in it (10 s for a 100 KB command).
_SEGMENT = re.compile(r"[^;&|\n]+")
_GIT = re.compile(r"\bgit\b")
_COMMIT_WORD = re.compile(r"\scommit\b")
_HEREDOC_START = re.compile(r"^\$\(cat\s+<<-?\s*['\"]?(\w+)['\"]?\s*$")
_ESCAPED = re.compile(r"\\(.)")
# Where a sentence of a prompt or a reply ends: after . ! or ?, or at a line break.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")

MAX_LINE = 64 * 1024 * 1024  # a longer line is skipped without ever being held whole
# Why a line was skipped, as the diary counts it ("2 not JSON, 1 with a lone surrogate escape").
NOT_UTF8 = "not UTF-8"
NOT_JSON = "not JSON"
NOT_OBJECT = "not a JSON object"
LONE_SURROGATE = "with a lone surrogate escape"
TOO_DEEP = "nested too deeply"
TOO_LONG = f"over {MAX_LINE >> 20} MiB"


# --- reading ----------------------------------------------------------------------------------


class Transcript:
    """An open transcript, read one complete line at a time from a byte offset: `with Transcript(p) as t:`.

    `size` is the file's size when opened: an offset past it means the file was truncated or
    replaced, and reading starts again at 0 (`resume`). A last line without its newline is still
    being written, so it is left for the next reader. Never a FIFO or a device: the hook would hang.
    """

    def __init__(self, path: Path | str) -> None:
        try:
            self._file = fileio.open_regular(path)
        except FileNotFoundError as exc:
            raise NotFound(f"transcript not found: {path}") from exc
        self.size = os.fstat(self._file.fileno()).st_size
        self.end = 0

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def resume(self, offset: int) -> int:
        """Where to read from for a stored offset: the offset itself, or 0 when the file is now shorter."""
        if offset < 0:
            raise InvalidInput(f"offset must be >= 0, got {offset}")
        return offset if offset <= self.size else 0

    def lines(self, offset: int) -> Iterator[tuple[int, int, dict | str]]:
        """(start, end, event) for each complete, non-blank line from byte `offset`; in place of the
        event, why the line was skipped (NOT_JSON, LONE_SURROGATE, ...). `end` is where the next one
        begins; `self.end` is where reading stopped, past any blank lines too."""
        handle = self._file
        handle.seek(offset)
        self.end = start = offset
        while True:
            raw = handle.readline(MAX_LINE + 1)
            if not raw.endswith(b"\n"):
                if len(raw) <= MAX_LINE:
                    return  # the end of the file, or a line still being written: left for later
                end = self._skip_rest(start + len(raw))
                if end is None:
                    return
                self.end = end
                yield start, end, TOO_LONG
            else:
                end = self.end = start + len(raw)
                if not raw.isspace():  # (strip() would copy every line)
                    yield start, end, parse_event(raw)
            start = end

    def _skip_rest(self, position: int) -> int | None:
        """The offset after the newline that ends an overlong line, or None if it has none yet."""
        while True:
            chunk = self._file.readline(1 << 20)
            position += len(chunk)
            if not chunk:
                return None
            if chunk.endswith(b"\n"):
                return position


def parse_event(raw: bytes) -> dict | str:
    """One transcript line as its event (a dict), or why it cannot be read.

    Strict where lenient decoding would hurt later: bytes that are not UTF-8 are refused rather than
    replaced, and so is a lone UTF-16 surrogate escape (`\\ud83d`, what a string cut inside an emoji
    serialises to), which Python's json accepts but no UTF-8 file can hold; nesting beyond the
    interpreter's recursion limit is refused rather than crashing the reader."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8
    try:
        event = json.loads(text)
    except RecursionError:
        return TOO_DEEP
    except ValueError:
        return NOT_JSON
    if not isinstance(event, dict):
        return NOT_OBJECT
    if ("\\ud" in text or "\\uD" in text) and _holds_lone_surrogate(event):
        return LONE_SURROGATE
    return event


def _holds_lone_surrogate(value: object) -> bool:
    """Whether any string (key or value) in a decoded JSON value holds a surrogate code point.
    Iterative, so a deeply nested value cannot exhaust the stack."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# --- summarising ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionSummary:
    """What happened in a stretch of a session, in first-seen order, without duplicates.

    A stretch with more distinct prompts, files, commands or commits than a diary line can show
    lists the first SHOWN of each and counts the rest in `more` (`("prompts", 1234)`)."""

    prompts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    tools: tuple[tuple[str, int], ...] = ()
    commands: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    more: tuple[tuple[str, int], ...] = ()
    learned: tuple[str, ...] = ()  # the notes brain_save/update/delete wrote (pinky.capture.brain_calls)

    def is_empty(self) -> bool:
        return not (self.prompts or self.files or self.tools or self.commands or self.commits or self.learned)


SHOWN = 200  # distinct items of a kind a summary keeps: more than a 300-character line can show
HEAD = 8192  # characters of an item a summary keeps: more than a diary line reads before redacting


class _Distinct:
    """Distinct strings in first-seen order: the first SHOWN kept (their first HEAD characters), the
    rest only counted, so a summary of any stretch holds what its line can show and no more."""

    def __init__(self) -> None:
        self.shown: dict[int, str] = {}  # hash of the whole string -> its head
        self.rest: set[int] = set()

    def add(self, text: str) -> int:
        """Count `text` in; its key."""
        key = hash(text)
        if key in self.shown or key in self.rest:
            return key
        if len(self.shown) < SHOWN:
            self.shown[key] = text[:HEAD]
        else:
            self.rest.add(key)
        return key


class Summarizer:
    """A SessionSummary built one event at a time, so a transcript is summarised as it is streamed,
    in memory bounded by what the summary can show (however long the stretch).

    A commit is listed unless every `git commit` that made it failed (its tool result was an error,
    as when a hook rejects it), and a file unless every call that would have written it failed (Claude
    Code refuses an Edit of a file not read first: "File has not been read yet"; a user or a hook may
    deny the call): results come later, so both are settled in `summary()`."""

    def __init__(self) -> None:
        self.prompts, self.files, self.commands = _Distinct(), _Distinct(), _Distinct()
        self.tools: dict[str, int] = {}  # by short name (brain_save), calls that failed taken out again
        self._counted: dict[str, str] = {}  # id of a call whose result has not come -> its tool's short name
        self.brain = BrainCalls()
        self._commits: dict[str, list[tuple[int, object]]] = {}  # subject -> (seq, id) of the calls that made it
        self._commit_ids: set[object] = set()
        self._failed: set[object] = set()
        self._relative: dict[tuple[str, str | None], str] = {}  # path, cwd -> as shown (a session edits few files)
        self._writes: dict[int, int] = {}  # a file's key in `files` -> its write calls not known to have failed
        self._waiting: dict[str, int] = {}  # id of a write call whose result has not come -> its file's key

    def add(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "user":
            prompt = prompt_text(event)
            if prompt:
                self.prompts.add(prompt)
            if self._commit_ids or self._waiting or self._counted:
                self._settle(event)
        elif kind == "assistant":
            cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
            for block in tool_uses(event):
                self._add_tool_use(block, cwd)

    def _add_tool_use(self, block: dict, cwd: str | None) -> None:
        name, tool_input = block["name"], block["input"]
        tool = short_tool(name)
        self.tools[tool] = self.tools.get(tool, 0) + 1
        if isinstance(block.get("id"), str):
            if len(self._counted) > 4 * SHOWN:  # results that never came: those calls stay counted
                self._counted.clear()
            self._counted[block["id"]] = tool
            self.brain.use(block["id"], name, tool_input)
        key = WRITE_TOOLS.get(name)
        path = tool_input.get(key) if key else None
        if isinstance(path, str) and path:
            shown = self._relative.get((path, cwd))
            if shown is None:
                if len(self._relative) > 4 * SHOWN:
                    self._relative.clear()
                shown = self._relative[(path, cwd)] = _relative_path(path, cwd)
            file_key = self.files.add(shown)
            self._writes[file_key] = self._writes.get(file_key, 0) + 1
            if isinstance(block.get("id"), str):
                if len(self._waiting) > 4 * SHOWN:  # results that never came: those calls stay counted
                    self._waiting.clear()
                self._waiting[block["id"]] = file_key
        command = tool_input.get("command") if name == "Bash" else None
        if isinstance(command, str) and command.strip():
            self.commands.add(_first_line(command))
            subject = commit_subject(command)
            if subject and (subject in self._commits or len(self._commits) < SHOWN):
                self._commits.setdefault(subject, []).append((len(self._commit_ids), block.get("id")))
                self._commit_ids.add(block.get("id"))

    def _settle(self, event: dict) -> None:
        for tool_id, failed, text in _results(event):
            tool = self._counted.pop(tool_id, None)
            if failed and tool is not None:
                self.tools[tool] -= 1  # a call that failed did nothing: the diary leaves it out
            self.brain.result(tool_id, failed, text)
            key = self._waiting.pop(tool_id, None)
            if failed and key is not None:
                self._writes[key] -= 1
            if failed and tool_id in self._commit_ids:
                self._failed.add(tool_id)

    def summary(self) -> SessionSummary:
        made = {subject: min(seq for seq, i in calls if i not in self._failed)  # its first call that did not fail
                for subject, calls in self._commits.items() if any(i not in self._failed for _, i in calls)}
        commits = tuple(sorted(made, key=made.__getitem__))
        written = self._writes.get
        files = tuple(text for key, text in self.files.shown.items() if written(key, 1) > 0)
        more = {"prompts": len(self.prompts.rest), "files": sum(written(key, 1) > 0 for key in self.files.rest),
                "commands": len(self.commands.rest)}
        return SessionSummary(prompts=tuple(self.prompts.shown.values()), files=files,
                              tools=tuple((name, n) for name, n in self.tools.items() if n > 0),
                              commands=tuple(self.commands.shown.values()), commits=commits,
                              more=tuple((k, n) for k, n in more.items() if n), learned=self.brain.summary())


def summarize(events: Iterable[dict]) -> SessionSummary:
    """Collect prompts, changed files, tool counts, shell commands and commit subjects from events."""
    summarizer = Summarizer()
    for event in events:
        summarizer.add(event)
    return summarizer.summary()


def message_content(event: dict) -> object:
    message = event.get("message")
    return message.get("content") if isinstance(message, dict) else None


def prompt_text(event: dict) -> str | None:
    """The prompt the user typed, or None for meta, compact summaries, command output and tool results."""
    if event.get("isMeta") or event.get("isCompactSummary") or event.get("isSidechain"):
        return None
    content = message_content(event)
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


def tool_uses(event: dict) -> Iterator[dict]:
    """The well-formed tool_use blocks of an assistant event."""
    content = message_content(event)
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


def _results(event: dict) -> Iterator[tuple[str, bool, str | None]]:
    """(tool call id, whether it failed, its first text) for each tool result of a user event. Failed:
    `is_error`, or Claude Code's `<tool_use_error>` text (a rejected `git commit` made no commit, a refused
    Edit wrote nothing)."""
    content = message_content(event)
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                text = _result_text(b.get("content"))
                failed = bool(b.get("is_error")) or (text is not None and text.lstrip().startswith("<tool_use_error>"))
                yield b["tool_use_id"], failed, text


def _result_text(content: object) -> str | None:
    """A tool result's first text (a string, or the first text block of a list)."""
    if isinstance(content, list):
        content = next((b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
    return content if isinstance(content, str) else None


def _relative_path(path: str, cwd: str | None) -> str:
    """The path a write tool touched, relative to the session cwd when it lies inside it."""
    if cwd:
        try:
            return PurePath(path).relative_to(cwd).as_posix()
        except ValueError:
            pass
    return path


def _first_line(text: str) -> str:
    """The first non-blank line; cutting it to length waits until after redaction."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _git_commit_end(command: str) -> int | None:
    """Where the first `git … commit` of a command ends (the whitespace before `commit` may be the
    newline that ends the segment), or None. Linear: one scan per segment."""
    for segment in _SEGMENT.finditer(command):
        git = _GIT.search(command, segment.start(), segment.end())
        if git is None:
            continue
        commit = _COMMIT_WORD.search(command, git.end(), segment.end() + len(" commit") + 1)
        if commit is not None and commit.start() <= segment.end():
            return commit.end()
    return None


def commit_subject(command: str) -> str | None:
    """The first line of the message of a `git commit -m ...` in a shell command, or None.

    Handles `-m "..."`, `-m '...'`, `-am`, `--message=` and the heredoc form
    `-m "$(cat <<'EOF' ... EOF)"` that Claude Code writes for multi-line messages.
    """
    after = _git_commit_end(command)
    match = _COMMIT_MESSAGE.search(command, after) if after is not None else None
    if not match:
        return None
    message = match.group(1) if match.group(1) is not None else match.group(2)
    if match.group(1) is not None:
        message = _ESCAPED.sub(r"\1", message)
    lines = [ln.strip() for ln in message.splitlines()]
    if lines and _HEREDOC_START.match(lines[0]):
        lines = lines[1:]
    subject = next((ln for ln in lines if ln), "")
    return subject or None
