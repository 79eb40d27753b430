"""What pinky-brain knows of one agent host, as one object: the base class every host module (pinky.hosts.claude,
.codex, ...) subclasses, with Claude Code's shapes as the defaults, so a Claude-shaped host states only what differs.

A host module holds everything about its host: its hook events and the payload keys it sends, its output contract
(context, deny, the capture ask, the acknowledgement), its config files and the shapes of its MCP and hook entries,
its transcript translator and its past-session reader, its trust step, its limits with their sources. Generic
machinery (setup's file editing, the hook operations, the diary, doctor) asks the object and never tests a host's
name. The registry (pinky.hosts.catalog) names each host's module; a hook imports only the module of its host.

Stdlib only, nothing loaded at import: this module is on every hook's path. Heavy imports stay inside methods.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, collections.abc and pathlib cost a hook ~2 ms: never imported at run time
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    Translate = Callable[[dict], list[dict]]  # one parsed transcript line -> the Claude-shaped events it stands for

HOOK_EVENTS = ("session-start", "user-prompt", "pre-read", "pre-write", "post-tool", "stop", "pre-compact",
               "session-end")
SERVER = "pinky"  # the MCP server's name in every host's config (setup writes it under this name)
# pinky-mcp's tools, as pinky's own texts (digest, recall, file notes, the capture ask) name them: bare.
TOOLS = ("brain_briefing", "brain_check", "brain_delete", "brain_export", "brain_feedback", "brain_gaps", "brain_get",
         "brain_import", "brain_list", "brain_reindex", "brain_related", "brain_research", "brain_save",
         "brain_search", "brain_stats", "brain_sync", "brain_tags", "brain_update")
OBSERVED = "observed with the real CLI, offline, in pinky-brain's end-to-end tests"


class Hook:
    """One hook to register: the host's event (with its matcher, if the host has matchers) -> pinky's event."""

    __slots__ = ("event", "matcher", "pinky")

    def __init__(self, event: str, pinky: str, matcher: str | None = None) -> None:
        self.event, self.pinky, self.matcher = event, pinky, matcher

    def __repr__(self) -> str:
        return f"Hook({self.event!r} -> {self.pinky!r}, matcher={self.matcher!r})"


class Limit:
    """Something the host cannot do, and where that fact comes from."""

    __slots__ = ("source", "text")

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source


CLAUDE_HOOKS = (Hook("SessionStart", "session-start", "startup|resume|clear|compact"),
                Hook("UserPromptSubmit", "user-prompt"),
                Hook("PreToolUse", "pre-read", "Read"),
                Hook("PreToolUse", "pre-write", "Write|Edit|MultiEdit|NotebookEdit"),
                Hook("Stop", "stop"),
                Hook("PreCompact", "pre-compact"))


class Host:
    """How pinky-brain reaches one agent host; the defaults are Claude Code's shapes.

    Config files: `mcp_user`/`mcp_project` and `hooks_user`/`hooks_project` (`~` is the user's home; project paths
    are relative to the repository's root; None: the host has none); `mcp_key` is where servers live in that file.
    `context` says how hook output reaches the model: "hookSpecificOutput" (Claude-shaped additionalContext),
    "additionalContext" (the same text at the top level), "plugin" (a plugin of pinky's places it) or "rules" (it
    cannot: pinky keeps the always-applied `rules_file` current instead)."""

    # --- who it is ------------------------------------------------------------------------------------------
    name = ""                      # `pinky-brain setup <name>`, `pinky-hooks --host <name>`, the diary's tag
    display = ""                   # how documentation and messages name it
    command = ""                   # the program it is started by (doctor: `<command> --version`; setup: installed?)
    sources: tuple[str, ...] = ()  # where the facts below come from
    limits: tuple[Limit, ...] = ()  # what it cannot do, each with its source (HOSTS.md, doctor)

    # --- its hooks and what they send -----------------------------------------------------------------------
    hooks: tuple[Hook, ...] = CLAUDE_HOOKS
    context = "hookSpecificOutput"
    rules_file: str | None = None  # the always-applied rules file (context "rules"; AGENTS.md: a marked block)
    rules_header = ""              # the front matter that makes `rules_file` always applied
    instructions: str | None = "AGENTS.md"  # the instructions file the guard keeps evergreen
    read_tools: tuple[str, ...] = ("Read",)
    write_tools: tuple[str, ...] = ("Write", "Edit", "MultiEdit", "NotebookEdit")
    shell_tools: tuple[str, ...] = ("Bash",)
    transcript: str | None = None  # where its own transcript is (documentation); None: pinky's journal stands in
    # The payload keys it sends, in the order they are tried (normalize reads them into Claude's shape)
    event_keys: tuple[str, ...] = ("hook_event_name",)
    session_keys: tuple[str, ...] = ("session_id",)
    transcript_keys: tuple[str, ...] = ("transcript_path",)
    prompt_keys: tuple[str, ...] = ("prompt",)
    tool_name_keys: tuple[str, ...] = ("tool_name",)
    tool_input_keys: tuple[str, ...] = ("tool_input",)

    # --- what setup writes ----------------------------------------------------------------------------------
    tool_name = "mcp__{server}__{tool}"  # an MCP tool's name as the model sees it ({tool}: brain_save)
    mcp_user: str | None = None
    mcp_project: str | None = None
    mcp_format = "json"            # json | toml
    mcp_key = "mcpServers"
    hooks_user: str | None = None
    hooks_project: str | None = None
    hooks_format = "json"          # json: hook entries merged into the file; plugin: `plugin_files` writes it whole
    hooks_version: int | None = None  # a top-level "version" the hooks file needs
    home_env: tuple[str, str] | None = None  # (VARIABLE, "~/.folder/"): the variable moves that user folder
    trusts_hooks = False           # its hooks run only once trusted in the user's MCP config (Codex's hashes)
    project_note: str | None = None  # what the user does once after `setup --project`
    own_doctor = False             # doctor has a section of its own for it (Claude Code: pinky.setup.claude_doctor)
    pinky_plugin = False           # pinky's own plugin for it may be enabled: setup refuses to register twice

    def __repr__(self) -> str:
        return f"Host({self.name!r})"

    def tool(self, tool: str) -> str:
        """The name the model calls `tool` (brain_save, ...) by in this host."""
        return self.tool_name.format(server=SERVER, tool=tool)

    def host_events(self, pinky_event: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h.event for h in self.hooks if h.pinky == pinky_event))

    # --- reading its payload (pinky.hosts.adapters.normalize turns it into Claude Code's) ----------------------

    def payload_cwd(self, payload: dict) -> object:
        """The folder the session runs in (None: the hook's own folder)."""
        return first(payload, "cwd")

    def payload_prompt(self, payload: dict) -> object:
        """The prompt the user typed, on a prompt event."""
        return first(payload, *self.prompt_keys)

    def payload_tool(self, payload: dict) -> tuple[object, dict]:
        """(the tool's name, its input) on a tool event; a name of None or "" for any other event."""
        return first(payload, *self.tool_name_keys), json_object(first(payload, *self.tool_input_keys))

    def payload_continued(self, payload: dict) -> bool:
        """Whether this stop ends a turn that a stop hook's answer continued (no second capture ask)."""
        return payload.get("stop_hook_active") is True

    # --- its output contract --------------------------------------------------------------------------------

    def context_output(self, host_event: str, text: str) -> dict | None:
        """`text` shown to the model, in the shape this host reads; None where its hooks cannot show anything."""
        if not text or self.context not in ("hookSpecificOutput", "plugin", "additionalContext"):
            return None
        if self.context == "additionalContext":  # the same text at the top level (Copilot CLI)
            return {"additionalContext": text}
        return {"hookSpecificOutput": {"hookEventName": host_event, "additionalContext": text}}

    def deny_output(self, host_event: str, reason: str) -> dict:
        """Refuse the tool call with `reason` for the model."""
        return {"hookSpecificOutput": {"hookEventName": host_event, "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}

    def continue_output(self, reason: str) -> dict | None:
        """The capture ask at stop: what makes the host continue the agent with `reason`; None where it cannot."""
        return {"decision": "block", "reason": reason}

    def acknowledge_output(self, host_event: str) -> dict | None:
        """What the host expects when pinky has nothing to add (most accept no output at all)."""
        return None

    def handles(self, event: str, payload: dict) -> bool:
        """Whether pinky's `event` should run on this raw payload (False: the hook answers nothing)."""
        return True

    def before_transcript(self, path: str) -> None:
        """Called before the stop hook reads the host's transcript at `path` (a host that writes it late waits)."""

    # --- its transcript and its past sessions ---------------------------------------------------------------

    def translator(self, cwd: str | None = None) -> Translate | None:
        """A fresh reader of this host's transcript lines into Claude-shaped events (pinky.capture.foreign);
        None: the transcript is Claude Code's own shape (or pinky's journal)."""
        return None

    def session_files(self, home: str) -> list[Path]:
        """Every session file this host keeps on this machine, for `pinky-brain import-sessions` ([]: none)."""
        return []

    def head_done(self, event: dict) -> bool:
        """Whether this line of a session file's head tells all `read_past` needs (stop reading there)."""
        return False

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        """The pinky.capture.past_sessions.PastSession a session file holds, from the head's parsed lines; None
        when they say nothing of its folder."""
        return None

    def past_sessions(self, root: str, remote: str | None, home: str, state: str | None = None) -> list[Any]:
        """The sessions of the project at `root` (a real path) among `session_files`. `state`: pinky's state
        folder, for a host whose sessions are not files of their own (OpenCode's database)."""
        from pinky.capture.past_sessions import belongs, read_head

        real, found = os.path.realpath(root), []
        for path in self.session_files(home):
            session = read_head(self, path)
            if session is not None and belongs(session, real, remote):
                found.append(session)
        return found

    # --- its config: paths and entry shapes -----------------------------------------------------------------

    def user_path(self, relative: str, env: dict[str, str]) -> str:
        """The absolute path of a user-level config path (`~/...`), `home_env` and HOME applied."""
        if self.home_env and env.get(self.home_env[0]) and relative.startswith(self.home_env[1]):
            return os.path.join(env[self.home_env[0]], relative[len(self.home_env[1]):])
        if not relative.startswith("~/"):
            return relative
        return os.path.join(env.get("HOME") or os.path.expanduser("~"), relative[2:])

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        """The `pinky` server entry in this host's MCP config."""
        return {"type": "stdio", "command": program, "args": args}

    def hook_entry(self, hook: Hook, line: str) -> dict[str, Any]:
        """One hook's entry in this host's hooks file, running the command `line`."""
        one: dict[str, Any] = {"type": "command", "command": line}
        return {"matcher": hook.matcher, "hooks": [one]} if hook.matcher else {"hooks": [one]}

    def plugin_files(self, hooks_path: str, hooks_command: str,
                     remove: bool) -> list[tuple[str, Callable[[bytes | None], bytes | None], str]]:
        """hooks_format "plugin": each file setup writes as (path, its bytes before -> after, "text"/"json")."""
        return []


def first(payload: dict, *keys: str) -> object:
    """The first of `keys` that `payload` holds a value for (an empty string, list or object is none)."""
    for key in keys:
        value = payload.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def json_object(value: object) -> dict:
    """`value` as an object: itself, or parsed from a JSON string ({} otherwise)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        import json  # Copilot CLI sent its arguments as a JSON string (1.0.102 sends an object)

        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def named(text: str, found: Host) -> str:
    """`text` with every bare tool name (brain_save) spelled as `found`'s model must call it (mcp_pinky_brain_save
    in Gemini CLI), so no host is told a name it cannot call."""
    if "brain_" not in text or found.tool("{tool}") == "{tool}":
        return text
    marks: dict[str, str] = {}
    for index, tool in enumerate(sorted(TOOLS, key=len, reverse=True)):  # brain_search before a shorter prefix
        if tool in text:
            mark = f"\x00{index}\x00"
            text, marks[mark] = text.replace(tool, mark), found.tool(tool)
    for mark, spelled in marks.items():
        text = text.replace(mark, spelled)
    return text
