"""`pinky-hooks --host <host> <event>`: pinky's hook operations for agent hosts other than Claude Code.

The host's payload is turned into the Claude-shaped one the operations read (`pinky.hosts.adapters.normalize`), the
same operations run (digest, recall, linked notes, the instructions-file guard, diary + capture ask, checkpoint),
and their result goes back in the host's output contract, every tool name spelled as that host's model calls it
(`pinky.hosts.host.named`); every difference between hosts is the host object's (pinky.hosts.<host>). Where a host
cannot show hook output to the model, the digest is kept in its always-applied rules file instead
(`pinky.hosts.rules`). Hosts without a transcript of their own (Cursor, Copilot CLI, OpenCode, Windsurf) get one
from their hooks: each prompt and tool call is appended, Claude-shaped, to a journal in the state folder, redacted
and bounded (`pinky.hooks.journal`), which the stop (or session-end) hook reads like a transcript.

Loaded only for `--host` other than claude: Claude Code's hooks never import this module.
"""

from __future__ import annotations

import os

from pinky.base.locations import Locations, locate, start_folder
from pinky.hooks.state import StateFiles
from pinky.hosts import adapters
from pinky.hosts.catalog import HOOK_EVENTS, host
from pinky.hosts.host import Host, named


def run_hosted(name: str, event: str, raw: dict) -> dict | None:
    """Run pinky's `event` for host `name` on the host's payload `raw`; the JSON object to print, or None."""
    found = host(name)
    if event not in HOOK_EVENTS:
        raise ValueError(f"unknown event {event!r}; use one of {', '.join(HOOK_EVENTS)}")
    payload = adapters.normalize(found, event, raw)
    if "session_id" not in payload:  # Copilot CLI sends none: one session per project folder and day
        import hashlib
        import time

        key = hashlib.sha1(str(payload.get("cwd") or os.getcwd()).encode("utf-8", "replace")).hexdigest()[:8]
        payload["session_id"] = f"{name}:{key}-{time.strftime('%Y%m%d')}"
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    loc = locate(env=os.environ, start=start_folder(os.environ, cwd))  # as pinky.hooks.dispatch.hook_locations
    payload.setdefault("cwd", loc.base_dir)  # Windsurf names no folder: the project the hook runs in
    if found.transcript is None and loc.in_project:
        from pinky.hooks.journal import journal

        journal(loc, payload, event)
    result = HANDLERS[event](found, payload, loc, raw) if found.handles(event, raw) else None
    if result is None:
        return found.acknowledge_output(payload["hook_event_name"])
    return result


# --- the operations ------------------------------------------------------------------------------


def _session_start(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    from pinky.hooks.session import session_start

    out = session_start(payload, loc, StateFiles(loc.state_dir), notices=found.context != "rules")
    digest = (out or {}).get("hookSpecificOutput", {}).get("additionalContext")
    if not isinstance(digest, str):
        return None
    if found.context == "rules":
        _refresh(found, loc)  # its own digest: notes only, for a file others read
        return None
    return found.context_output(payload["hook_event_name"], named(digest, found))


def _refresh(found: Host, loc: Locations) -> None:
    """Keep the host's rules file current; one line on stderr when the repository's file may not be written
    (a link out of it, a FIFO: `pinky.base.repofiles`), and the hook goes on."""
    from pinky.base.repofiles import OutsideRepository
    from pinky.hosts.rules import refresh_rules  # only these hosts write it: not on every hook's path

    try:
        refresh_rules(loc, found)
    except OSError as exc:  # a read-only checkout too: the hook goes on
        import sys

        why = exc if isinstance(exc, OutsideRepository) else \
            f"{os.path.join(loc.base_dir, found.rules_file or '')}: {(exc.strerror or str(exc)).lower()}"
        sys.stderr.write(f"pinky: the digest was not written: {why}\n")


def _user_prompt(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    if found.context == "rules":
        if found.rules_file and not os.path.exists(os.path.join(loc.base_dir, found.rules_file)):
            _refresh(found, loc)  # no session start (Windsurf; Cursor versions that reject it): the first prompt
        return None  # these hosts cannot show the model anything from this hook
    from pinky.hooks.prompt import user_prompt

    out = user_prompt(payload, loc, StateFiles(loc.state_dir))
    text = (out or {}).get("hookSpecificOutput", {}).get("additionalContext")
    return found.context_output(payload["hook_event_name"], named(text, found)) if text else None


def _notes(payload: dict, loc: Locations, paths: list[str], *, writing: bool) -> str:
    """The brain entries linked to each of `paths`, one block per file, as pre-read/pre-write render them."""
    from pinky.hooks.files import pre_read, pre_write

    blocks: list[str] = []
    for path in dict.fromkeys(paths):
        one = {**payload, "tool_input": {"file_path": path, **({"content": ""} if writing else {})}}
        out = pre_write(one, loc) if writing else pre_read(one, loc)
        text = (out or {}).get("hookSpecificOutput", {}).get("additionalContext")
        if isinstance(text, str) and text not in blocks:
            blocks.append(text)
    return "\n".join(blocks)


def _pre_read(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    """Notes linked to the files the call reads; a shell command that also changes files gets pre-write's checks."""
    changed = payload.get("paths_changed") or []
    reason, written = _write_checks(found, payload, loc, changed) if changed else (None, "")
    if reason:
        return found.deny_output(payload["hook_event_name"], named(reason, found))
    read = _notes(payload, loc, [p for p in payload.get("paths_read") or [] if p not in changed], writing=False)
    text = "\n".join(t for t in (read, written) if t)
    return found.context_output(payload["hook_event_name"], named(text, found)) if text else None


def _pre_write(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    reason, text = _write_checks(found, payload, loc, payload.get("paths_changed") or [])
    if reason:
        return found.deny_output(payload["hook_event_name"], named(reason, found))
    return found.context_output(payload["hook_event_name"], named(text, found)) if text else None


def _write_checks(found: Host, payload: dict, loc: Locations, changed: list[str]) -> tuple[str | None, str]:
    """(why the change is refused, or None; the notes linked to the files it changes)."""
    reason = guard(found, payload, loc, changed)
    return (reason, "") if reason else (None, _notes(payload, loc, changed, writing=True))


def _post_tool(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    text = _notes(payload, loc, (payload.get("paths_read") or []) + (payload.get("paths_changed") or []),
                  writing=False)
    return found.context_output(payload["hook_event_name"], named(text, found)) if text else None


def _stop(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    from pinky.hooks.stop import stop

    _journal_transcript(found, payload, loc)
    if isinstance(payload.get("transcript_path"), str):
        found.before_transcript(payload["transcript_path"])
    ask = stop(payload, loc, StateFiles(loc.state_dir), translate=found.translator(payload.get("cwd")))
    _trim_journal(found, payload, loc)
    if found.context == "rules":
        _refresh(found, loc)  # the next prompt sees what this turn changed
    if not ask or not isinstance(ask.get("reason"), str):
        return None
    return found.continue_output(named(ask["reason"], found))


def _pre_compact(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    from pinky.hooks.compact import pre_compact

    _journal_transcript(found, payload, loc)
    pre_compact(payload, loc, StateFiles(loc.state_dir), translate=found.translator(payload.get("cwd")))
    return None


def _session_end(found: Host, payload: dict, loc: Locations, raw: dict) -> dict | None:
    """The diary at the end of a session, for hosts whose stop cannot continue the agent (no capture ask)."""
    if loc.save_dir is None or not os.path.isdir(loc.save_dir):
        return None
    _journal_transcript(found, payload, loc)
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str):
        return None
    from pathlib import Path

    from pinky.capture.recorder import OffsetStore, TurnTrack, record
    from pinky.hooks.stop import index_files, offsets_path, record_budget

    path = Path(os.path.expanduser(transcript))
    turns = TurnTrack(OffsetStore(Path(offsets_path(loc)), top=loc.state_dir), payload["session_id"], path)
    written = record(path, Path(loc.save_dir), [turns], budget=record_budget(),
                     translate=found.translator(payload.get("cwd")))
    if written:
        index_files(loc, written)
    _trim_journal(found, payload, loc)
    if found.context == "rules":
        _refresh(found, loc)
    return None


HANDLERS = {"session-start": _session_start, "user-prompt": _user_prompt, "pre-read": _pre_read,
            "pre-write": _pre_write, "post-tool": _post_tool, "stop": _stop, "pre-compact": _pre_compact,
            "session-end": _session_end}


# --- the guard on the host's instructions file ------------------------------------------------------


def guard(found: Host, payload: dict, loc: Locations, changed: list[str]) -> str | None:
    """Why this change of the host's instructions file (AGENTS.md, GEMINI.md) adds facts that go stale; None if
    it does not (the CLAUDE.md guard, applied to the host's own file)."""
    instructions = (found.instructions or "").lower()
    targets = [p for p in changed if p.replace("\\", "/").rsplit("/", 1)[-1].lower() == instructions]
    if not targets:
        return None
    from pinky.hygiene.evergreen import check_claude_md_write

    tool_name, tool_input = _as_claude_edit(payload, targets[0])
    existing = None
    if tool_name == "Write":  # never through a link out of the repository, never a FIFO
        from pinky.base.repofiles import read_text

        existing = read_text(loc.base_dir, targets[0])
    findings = check_claude_md_write(tool_name, {**tool_input, "file_path": "CLAUDE.md"}, existing)
    if not findings:
        return None
    name = os.path.basename(targets[0])
    lines = [f"pinky: {name} must stay evergreen; this change adds facts that go stale:"]
    lines += [f"- {f.kind}: \"{f.excerpt}\" -> {f.advice}" for f in findings[:6]]
    lines.append("Rephrase without those details (describe purpose and where to look, not counts, "
                 "line numbers, hashes or dates) and try again.")
    return "\n".join(lines)


def _as_claude_edit(payload: dict, target: str) -> tuple[str, dict]:
    """The change to `target` as Claude Code's Write (whole content) or Edit (old -> new)."""
    tool_input = payload.get("tool_input") or {}
    command = tool_input.get("command") or tool_input.get("cmd") or tool_input.get("input") or ""
    if isinstance(command, str) and "*** " in command:
        return _patch_edit(command, target)
    content = tool_input.get("content", tool_input.get("file_text"))
    if isinstance(content, str):
        return "Write", {"content": content}
    def text(*keys: str) -> str:  # Claude's and Gemini's old_string, Copilot's old_str, OpenCode's oldString
        return next((tool_input[k] for k in keys if isinstance(tool_input.get(k), str)), "")

    return "Edit", {"old_string": text("old_string", "old_str", "oldString"),
                    "new_string": text("new_string", "new_str", "newString")}


def _patch_edit(patch: str, target: str) -> tuple[str, dict]:
    """The lines an apply_patch adds to and removes from `target`."""
    added, removed, inside, adding_file = [], [], False, False
    for line in patch.splitlines():
        if line.startswith("*** "):
            path = line.split(": ", 1)[1].strip() if ": " in line else ""
            inside = path == target
            adding_file = inside and line.startswith("*** Add File")
        elif inside and line.startswith("+"):
            added.append(line[1:])
        elif inside and line.startswith("-"):
            removed.append(line[1:])
    if adding_file:
        return "Write", {"content": "\n".join(added)}
    return "Edit", {"old_string": "\n".join(removed), "new_string": "\n".join(added)}


# --- a transcript for hosts without one (pinky.hooks.journal) ----------------------------------------------


def _journal_transcript(found: Host, payload: dict, loc: Locations) -> None:
    """A host without a transcript of its own: its journal stands in."""
    if found.transcript is None or "transcript_path" not in payload:
        from pinky.hooks.journal import journal_path

        payload["transcript_path"] = journal_path(loc, payload["session_id"])


def _trim_journal(found: Host, payload: dict, loc: Locations) -> None:
    """Once the diary has what the journal held, the journal lets it go (pinky.hooks.journal)."""
    if found.transcript is None:
        from pinky.hooks.journal import trim

        trim(loc, payload["session_id"])
