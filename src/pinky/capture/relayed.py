"""What pinky's journal holds for a host without a transcript of its own (Cursor, OpenCode, Windsurf): each prompt
and tool call its hooks relayed, as the Claude-shaped events the diary reads (`pinky.hooks.journal` appends them as
they come; `pinky-brain import-sessions` builds the same from a host's own store of past sessions, so the diary of
an imported session is the one the Stop hook wrote from the journal).

A prompt is a user event; a tool call is a `Bash` of its shell command (and an `Edit` of each file the command
changes), or an `Edit` of each file it changes; anything else (a read, an MCP tool) is not journaled. Prompts and
commands are redacted as the diary is (`pinky.base.redact`, unlabelled keys too). Stdlib only, and the redactor
(`re`, ~5 ms and more on a busy machine) is loaded only for text that could hold a secret
(`pinky.base.secret_words`): the per-prompt and per-tool hooks run this.
"""

from __future__ import annotations

__all__ = ["redacted", "relayed_events"]


def redacted(text: str) -> str:
    """`text` as the diary would keep it: every credential replaced by a `[REDACTED:<kind>]` marker, and a lone
    surrogate (a payload's `\\ud800`, no character of any text) a `?`: written as it is, it would make the whole
    line one the diary skips as unreadable."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    from pinky.base.secret_words import may_hold_unlabelled_secret

    if not may_hold_unlabelled_secret(text):
        return text
    from pinky.base.redact import redact

    return redact(text, unlabelled=True)


def relayed_events(payload: dict, event: str) -> list[dict] | None:
    """The journal's events for one hook `event` given the Claude-shaped `payload` (`pinky.hosts.adapters.normalize`):
    a prompt's, or a tool call's (perhaps none: a read); None for what the journal does not take."""
    from pinky.capture.foreign import shell_events, tool_event, user_event

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    if event == "user-prompt" and isinstance(payload.get("prompt"), str):
        return [user_event(redacted(payload["prompt"]))]
    if event == "post-tool" and payload.get("tool_name"):
        command = (payload.get("tool_input") or {}).get("command")
        if isinstance(command, str):
            return shell_events(cwd, None, redacted(command))
        return [tool_event(cwd, None, "Edit", {"file_path": p}) for p in payload.get("paths_changed") or []]
    return None
