"""One declaration per agent host: what pinky-brain needs to know to reach it, and what it cannot do.

Stdlib only and free of imports, so the hooks' fast path (`pinky-hooks --host <host> <event>`) and setup can both
read it. Every fact names its source: the host's own documentation, its source code, or what was observed with the
real CLI offline (the end-to-end tests in tests/hosts/ and tests/test_claude_e2e.py, run with PINKY_TEST_HOSTS=1:
Codex CLI 0.169.0, Gemini CLI 0.61.0, Claude Code 2.1.197).

pinky's own hook events (the `<event>` of `pinky-hooks [--host H] <event>`):
  session-start  the session digest                  user-prompt  recall for the prompt
  pre-read       notes linked to a file being read   pre-write    linked gotchas before a change, the guard on the
                                                                  host's instructions file
  post-tool      notes linked to the files a tool touched (hosts whose pre-tool output cannot reach the model, and
                 hosts without Read/Write tools: Codex's shell and apply_patch)
  stop           diary from the host's transcript + the capture ask      pre-compact  the compaction checkpoint
  session-end    (added by hosts-core) the diary, for hosts whose last event carries no way to continue
"""

from __future__ import annotations

HOOK_EVENTS = ("session-start", "user-prompt", "pre-read", "pre-write", "post-tool", "stop", "pre-compact",
                "session-end")
HOSTS = ("claude", "codex", "gemini", "cursor", "copilot", "opencode", "windsurf")
SERVER = "pinky"  # the MCP server's name in every host's config (setup writes it under this name)

OBSERVED = "observed with the real CLI, offline, in pinky-brain's end-to-end tests"
CLAUDE_OBSERVED = "observed with Claude Code 2.1.197 in pinky-brain's end-to-end tests"
CODEX_DOCS = "https://developers.openai.com/codex/hooks"
CODEX_SOURCE = "https://github.com/openai/codex (codex-rs/hooks; event names in the 0.169.0 binary)"
GEMINI_DOCS = "https://geminicli.com/docs/hooks/reference"
CURSOR_DOCS = "https://cursor.com/docs/agent/hooks"
CURSOR_RULES = "https://cursor.com/docs/context/rules"
COPILOT_DOCS = "https://docs.github.com/en/copilot/reference/hooks-configuration"
COPILOT_CLI_DOCS = "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference"
COPILOT_MEASURED = "observed with Copilot CLI 1.0.102 offline (tests/hosts/test_copilot_e2e.py)"
OPENCODE_DOCS = "https://opencode.ai/docs/plugins/"
OPENCODE_MEASURED = "observed with opencode-ai 1.18.33 offline, read in its binary (tests/hosts/test_opencode_e2e.py)"
OPENCODE_MCP = "https://opencode.ai/docs/mcp-servers/"
WINDSURF_DOCS = "https://docs.windsurf.com/windsurf/cascade/hooks"
WINDSURF_MCP = "https://docs.windsurf.com/windsurf/cascade/mcp"
WINDSURF_RULES = "https://docs.windsurf.com/windsurf/cascade/memories#rules"


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


class Host:
    """How pinky-brain reaches one agent host.

    `tool_name` formats an MCP tool's name as the model sees it ({tool} is e.g. brain_save). `mcp_user`/`mcp_project`
    and `hooks_user`/`hooks_project` are config files (`~` is the user's home; project paths are relative to the
    repository's root; None: the host has none). `mcp_key` is where servers live inside that file. `context` says how
    hook output reaches the model: "hookSpecificOutput" (Claude-shaped additionalContext), "additionalContext" (the
    same text at the top level: Copilot CLI), "plugin" (OpenCode's plugin places it), or "rules" (it cannot:
    pinky keeps an always-applied rules file current instead, `rules_file`). `stop_continue` is the JSON shape that
    asks the agent for one more turn at stop (None: the host has none)."""

    __slots__ = ("context", "display", "hooks", "hooks_project", "hooks_user", "instructions", "limits",
                 "mcp_format", "mcp_key", "mcp_project", "mcp_user", "name", "read_tools", "rules_file", "shell_tools",
                 "sources", "stop_continue", "tool_name", "transcript", "write_tools")

    def __init__(self, name: str, display: str, *, hooks: tuple[Hook, ...], tool_name: str, mcp_user: str | None,
                 mcp_project: str | None, mcp_format: str, mcp_key: str, hooks_user: str | None,
                 hooks_project: str | None, instructions: str | None, context: str, stop_continue: str | None,
                 rules_file: str | None = None, read_tools: tuple[str, ...] = (), write_tools: tuple[str, ...] = (),
                 shell_tools: tuple[str, ...] = (), transcript: str | None = None,
                 limits: tuple[Limit, ...] = (), sources: tuple[str, ...] = ()) -> None:
        self.name, self.display, self.hooks, self.tool_name = name, display, hooks, tool_name
        self.mcp_user, self.mcp_project, self.mcp_format, self.mcp_key = mcp_user, mcp_project, mcp_format, mcp_key
        self.hooks_user, self.hooks_project, self.instructions = hooks_user, hooks_project, instructions
        self.context, self.stop_continue, self.rules_file = context, stop_continue, rules_file
        self.read_tools, self.write_tools, self.shell_tools = read_tools, write_tools, shell_tools
        self.transcript, self.limits, self.sources = transcript, limits, sources

    def tool(self, tool: str) -> str:
        """The name the model calls `tool` (brain_save, ...) by in this host."""
        return self.tool_name.format(server=SERVER, tool=tool)

    def host_events(self, pinky_event: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h.event for h in self.hooks if h.pinky == pinky_event))

    def __repr__(self) -> str:
        return f"Host({self.name!r})"


CLAUDE = Host(
    "claude", "Claude Code",
    hooks=(Hook("SessionStart", "session-start", "startup|resume|clear|compact"),
           Hook("UserPromptSubmit", "user-prompt"),
           Hook("PreToolUse", "pre-read", "Read"),
           Hook("PreToolUse", "pre-write", "Write|Edit|MultiEdit|NotebookEdit"),
           Hook("Stop", "stop"),
           Hook("PreCompact", "pre-compact")),
    # The plugin's server is `plugin:pinky:pinky` (mcp__plugin_pinky_pinky__*); a user/project .mcp.json entry is
    # mcp__pinky__*. The plugin's own text names tools bare (brain_save), which the model resolves in either case.
    tool_name="mcp__plugin_{server}_{server}__{tool}",
    mcp_user="~/.claude.json", mcp_project=".mcp.json", mcp_format="json", mcp_key="mcpServers",
    hooks_user="~/.claude/settings.json", hooks_project=".claude/settings.json",
    instructions="CLAUDE.md", context="hookSpecificOutput",
    stop_continue='{"decision": "block", "reason": ASK}',
    read_tools=("Read",), write_tools=("Write", "Edit", "MultiEdit", "NotebookEdit"), shell_tools=("Bash",),
    transcript="~/.claude/projects/<cwd with non-alphanumerics as ->/<session_id>.jsonl",
    sources=(CLAUDE_OBSERVED,),
)

CODEX = Host(
    "codex", "Codex CLI",
    # 0.169.0 knows SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact,
    # PostCompact, SessionEnd, SubagentStart, SubagentStop and Stop (the strings in its binary). It has no Read or
    # Write tool: it reads with the shell (tool_name "Bash": exec_command) and edits with apply_patch.
    # Observed offline: the additionalContext of SessionStart, UserPromptSubmit, PreToolUse and PostToolUse reaches
    # the model (as developer messages), and Stop's {"decision": "block", "reason": ...} continues the turn with the
    # reason as the next prompt. PreToolUse alone carries the file notes (PostToolUse would repeat them); a pre-read
    # of a shell command that changes files (sed -i, apply_patch through the shell) also runs the pre-write checks.
    hooks=(Hook("SessionStart", "session-start", "startup|resume|clear"),
           Hook("UserPromptSubmit", "user-prompt"),
           Hook("PreToolUse", "pre-read", "Bash"),
           Hook("PreToolUse", "pre-write", "apply_patch"),
           Hook("Stop", "stop"),
           Hook("PreCompact", "pre-compact")),
    tool_name="mcp__{server}__{tool}",  # offered inside one {"type": "namespace", "name": "mcp__pinky"} tool
    mcp_user="~/.codex/config.toml", mcp_project=".codex/config.toml", mcp_format="toml", mcp_key="mcp_servers",
    hooks_user="~/.codex/hooks.json", hooks_project=".codex/hooks.json",
    instructions="AGENTS.md", context="hookSpecificOutput",
    stop_continue='{"decision": "block", "reason": ASK}',
    shell_tools=("Bash", "exec_command", "shell", "local_shell"), write_tools=("apply_patch",),
    transcript="$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session_id>.jsonl (CODEX_HOME defaults to ~/.codex)",
    limits=(Limit("hooks run only once trusted (a `[hooks.state]` hash per hook in config.toml): `pinky-brain setup "
                  "codex` records it for the user-level hooks it writes; hooks written with --project must be "
                  "accepted once in the codex TUI", OBSERVED),
            Limit("no Read/Write tools: file notes come from paths parsed out of shell commands and apply_patch "
                  "headers, so a file read by a script pinky cannot parse brings no notes", CODEX_SOURCE)),
    sources=(OBSERVED, CODEX_DOCS, CODEX_SOURCE),
)

GEMINI = Host(
    "gemini", "Gemini CLI",
    hooks=(Hook("SessionStart", "session-start", "startup|resume|clear"),
           Hook("BeforeAgent", "user-prompt"),
           Hook("BeforeTool", "pre-write", "write_file|replace"),
           Hook("AfterTool", "post-tool", "read_file|read_many_files|write_file|replace|run_shell_command"),
           Hook("AfterAgent", "stop"),
           Hook("PreCompress", "pre-compact")),
    tool_name="mcp_{server}_{tool}",
    mcp_user="~/.gemini/settings.json", mcp_project=".gemini/settings.json", mcp_format="json", mcp_key="mcpServers",
    hooks_user="~/.gemini/settings.json", hooks_project=".gemini/settings.json",
    instructions="GEMINI.md", context="hookSpecificOutput",
    stop_continue='{"decision": "deny", "reason": ASK}',  # AfterAgent: deny = retry with the reason as the prompt
    read_tools=("read_file", "read_many_files"), write_tools=("write_file", "replace"),
    shell_tools=("run_shell_command",),
    transcript="~/.gemini/tmp/<project>/chats/session-*.jsonl",
    limits=(Limit("BeforeTool output cannot carry context to the model (it can only block or rewrite the call): "
                  "file notes arrive with AfterTool, after the file was read", GEMINI_DOCS),),
    sources=(OBSERVED, GEMINI_DOCS),
)

CURSOR = Host(
    "cursor", "Cursor",
    hooks=(Hook("sessionStart", "session-start"),
           Hook("beforeSubmitPrompt", "user-prompt"),
           Hook("beforeReadFile", "pre-read"),
           Hook("afterFileEdit", "post-tool"),
           Hook("stop", "stop"),
           Hook("preCompact", "pre-compact")),
    tool_name="{tool}",  # the agent sees an MCP tool by its own name; Cursor shows the server beside it
    mcp_user="~/.cursor/mcp.json", mcp_project=".cursor/mcp.json", mcp_format="json", mcp_key="mcpServers",
    hooks_user="~/.cursor/hooks.json", hooks_project=".cursor/hooks.json",
    instructions="AGENTS.md", context="rules", rules_file=".cursor/rules/pinky-brain.mdc",
    stop_continue='{"followup_message": ASK}',  # submitted as the next user message, capped by loop_limit
    limits=(Limit("beforeSubmitPrompt can only block the prompt (continue/user_message): recall cannot reach the "
                  "model from a hook", CURSOR_DOCS),
            Limit("beforeReadFile answers only a permission: linked notes cannot reach the model from a hook",
                  CURSOR_DOCS),
            Limit("no transcript_path on stop: the diary records only what the hooks saw", CURSOR_DOCS),
            Limit("some versions reject a sessionStart entry (\"Unknown hook type\"): the first prompt writes the "
                  "rules file when it is missing", "https://forum.cursor.com/t/unknown-hook-type-sessionstart/149566")),
    sources=(CURSOR_DOCS, CURSOR_RULES),
)

COPILOT = Host(
    "copilot", "GitHub Copilot CLI",
    # Measured with Copilot CLI 1.0.102 offline (`copilot -p`, tests/hosts/test_copilot_e2e.py): the hooks of
    # ~/.copilot/hooks/*.json run; a top-level {"additionalContext": ...} from sessionStart reaches the model as a
    # user message, from userPromptSubmitted inside <system_reminder> with the prompt, from postToolUse after the
    # tool's result; agentStop's {"decision": "block", "reason": ...} continues with the reason as the next prompt
    # (stop_hook_active is then true) and carries transcriptPath (the session's events.jsonl). Copilot's hooks have
    # no matchers: preToolUse runs for every tool. Its payloads name `sessionId`, `toolName`, `toolArgs`.
    # preToolUse's {"permissionDecision": "deny", ...} keeps the tool from running, the reason is the tool's result
    # (the guard); `copilot --resume <id> -p /compact` runs preCompact with the session's transcriptPath.
    hooks=(Hook("sessionStart", "session-start"),
           Hook("userPromptSubmitted", "user-prompt"),
           Hook("preToolUse", "pre-write"),
           Hook("postToolUse", "post-tool"),
           Hook("agentStop", "stop"),
           Hook("preCompact", "pre-compact")),
    tool_name="{server}-{tool}",  # measured: pinky-brain_save
    mcp_user="~/.copilot/mcp-config.json", mcp_project=None, mcp_format="json", mcp_key="mcpServers",
    hooks_user="~/.copilot/hooks/pinky-brain.json", hooks_project=".github/hooks/pinky-brain.json",
    instructions="AGENTS.md", context="additionalContext", rules_file="AGENTS.md",  # only --remove of old blocks
    stop_continue='{"decision": "block", "reason": ASK}',
    read_tools=("view",), write_tools=("create", "edit"), shell_tools=("bash",),
    transcript="~/.copilot/session-state/<sessionId>/events.jsonl (COPILOT_HOME defaults to ~/.copilot)",
    limits=(Limit("a repository's .github/hooks/*.json runs only in a trusted folder (`trusted_folders` in "
                  "~/.copilot/config.json; a headless `copilot -p` asks nothing and runs none): `pinky-brain setup "
                  "copilot` writes the user-level ~/.copilot/hooks/pinky-brain.json; after --project, trust the "
                  "repository once in `copilot`", COPILOT_MEASURED),
            Limit("no project-level MCP config: the server is set up per user", COPILOT_CLI_DOCS)),
    sources=(COPILOT_MEASURED, COPILOT_DOCS, COPILOT_CLI_DOCS),
)

OPENCODE = Host(
    "opencode", "OpenCode",
    # OpenCode has no command hooks: a JS plugin (written by setup, pinky.setup.opencode) runs `pinky-hooks --host
    # opencode <event>` from its plugin hooks with the same Claude-shaped JSON on stdin, and puts the answer where
    # the model reads it: the digest and the recall in the system prompt (experimental.chat.system.transform), file
    # notes after the tool's output, the guard by throwing in tool.execute.before. The host events named here are
    # the plugin's.
    hooks=(Hook("chat.message", "session-start"),
           Hook("chat.message", "user-prompt"),
           Hook("tool.execute.before", "pre-write", "edit|write|patch"),
           Hook("tool.execute.after", "post-tool"),
           Hook("session.idle", "stop"),
           Hook("experimental.session.compacting", "pre-compact")),
    tool_name="{server}_{tool}",
    mcp_user="~/.config/opencode/opencode.json", mcp_project="opencode.json", mcp_format="json", mcp_key="mcp",
    hooks_user="~/.config/opencode/plugins/pinky-brain.js", hooks_project=".opencode/plugins/pinky-brain.js",
    instructions="AGENTS.md", context="plugin",
    stop_continue='{"followup_message": ASK}',  # the plugin sends it as a prompt with client.session.prompt
    read_tools=("read",), write_tools=("edit", "write", "patch"), shell_tools=("bash",),
    limits=(Limit("hooks are JS plugin functions, not commands: the plugin pinky writes relays each event to "
                  "pinky-hooks", OPENCODE_DOCS),
            Limit("no transcript path reaches a plugin: the diary records the prompts and tool calls the plugin "
                  "relays", OPENCODE_MEASURED),
            Limit("OpenCode installs @opencode-ai/plugin with npm in every config folder at each start and waits "
                  "for it before loading any plugin; offline npm's retries held each session ~70 s, so setup "
                  "writes `fetch-retries=0` into that folder's .npmrc; a session within 60 s of the last can "
                  "still wait ~60 s for the install lock OpenCode sometimes leaves at exit", OPENCODE_MEASURED),
            Limit("the guard (a throw in tool.execute.before) and the checkpoint (experimental.session.compacting) "
                  "follow OpenCode's plugin API, not measured here", OPENCODE_DOCS)),
    sources=(OPENCODE_DOCS, OPENCODE_MCP, OPENCODE_MEASURED),
)

WINDSURF = Host(
    "windsurf", "Windsurf (Cascade)",
    hooks=(Hook("pre_user_prompt", "user-prompt"),
           Hook("pre_read_code", "pre-read"),
           Hook("post_read_code", "post-tool"),
           Hook("post_write_code", "post-tool"),
           Hook("post_run_command", "post-tool"),
           Hook("post_cascade_response", "stop")),
    tool_name="{tool}",
    mcp_user="~/.codeium/windsurf/mcp_config.json", mcp_project=None, mcp_format="json", mcp_key="mcpServers",
    hooks_user="~/.codeium/windsurf/hooks.json", hooks_project=".windsurf/hooks.json",
    instructions="AGENTS.md", context="rules", rules_file=".windsurf/rules/pinky-brain.md",
    stop_continue=None,
    limits=(Limit("hooks cannot add context: pre-hooks only block (exit 2), post-hooks are observers; the digest "
                  "lives in an always-on rule instead, recall and file notes cannot reach the model", WINDSURF_DOCS),
            Limit("no session-start hook: the rules file is refreshed by the hooks that do run", WINDSURF_DOCS),
            Limit("no compaction hook and no way to continue Cascade after a response: no checkpoint, no capture "
                  "ask", WINDSURF_DOCS)),
    sources=(WINDSURF_DOCS, WINDSURF_MCP, WINDSURF_RULES),
)

# pinky-mcp's tools, as pinky's own texts (digest, recall, file notes, the capture ask) name them: bare.
TOOLS = ("brain_briefing", "brain_check", "brain_delete", "brain_export", "brain_feedback", "brain_gaps", "brain_get",
         "brain_import", "brain_list", "brain_reindex", "brain_related", "brain_research", "brain_save",
         "brain_search", "brain_stats", "brain_sync", "brain_tags", "brain_update")


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


CATALOG: dict[str, Host] = {h.name: h for h in (CLAUDE, CODEX, GEMINI, CURSOR, COPILOT, OPENCODE, WINDSURF)}


def host(name: str) -> Host:
    """The host called `name`; ValueError naming the known ones otherwise."""
    found = CATALOG.get(name)
    if found is None:
        raise ValueError(f"unknown host {name!r}; use one of {', '.join(HOSTS)}")
    return found
