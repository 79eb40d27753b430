"""Read a Claude Code transcript: only what is new since a byte offset, summarised.

The Stop hook runs after every turn, so it reads the transcript JSONL from a stored byte
offset and summarises just the new events: the prompts typed, the files changed, the tools
used, the shell commands run and the commits made. The transcript format is internal to
Claude Code, so parsing is lenient: unknown or malformed entries are skipped, never fatal.
Stdlib only, because the Stop hook must start quickly.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from pinky import fileio
from pinky.errors import InvalidInput, NotFound

__all__ = ["WRITE_TOOLS", "SessionSummary", "commit_subject", "message_content", "prompt_text", "read_new_events",
           "summarize", "tool_uses"]

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


# --- reading ----------------------------------------------------------------------------------


def read_new_events(transcript_path: Path, offset: int) -> tuple[list[dict], int]:
    """Parse the complete JSONL lines after byte `offset`; return them and the offset to resume from.

    A final line without its newline is still being written, so it is left for
    the next call. A file shorter than `offset` was truncated or replaced, so
    reading restarts at 0. Lines that are not JSON objects are skipped.
    """
    if offset < 0:
        raise InvalidInput(f"offset must be >= 0, got {offset}")
    try:
        with fileio.open_regular(transcript_path) as f:  # never a FIFO or a device: the Stop hook would hang
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


# --- summarising ------------------------------------------------------------------------------


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
            prompt = prompt_text(event)
            if prompt:
                prompts.setdefault(prompt)
        elif event.get("type") == "assistant":
            cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
            for block in tool_uses(event):
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


def _failed_tool_ids(events: list[dict]) -> set[str]:
    """Ids of tool calls whose result was an error, so a rejected `git commit` is not logged as a commit."""
    failed: set[str] = set()
    for event in events:
        content = message_content(event) if event.get("type") == "user" else None
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
    key = WRITE_TOOLS.get(tool)
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
