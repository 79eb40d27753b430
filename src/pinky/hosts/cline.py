"""Cline CLI (npm `cline` 3.x), and what `pinky-brain setup cline` writes for it: an MCP server entry in
`~/.cline/data/settings/cline_mcp_settings.json`, and a small plugin (`~/.cline/plugins/pinky-brain.js`, Node
built-ins only) that runs `pinky-hooks --host cline <event>` from Cline's plugin API and puts the answers where the
model reads them (https://docs.cline.bot/customization/plugins; observed with cline 3.0.65 offline):

- a rule (`api.registerRule`, asked once per session): the session digest, in the system prompt of every request;
- `beforeRun` (the session's messages, the prompt last): the recall for the prompt, as hook context in the first
  request;
- `beforeTool` for `editor` and `run_commands`: the guard on AGENTS.md (`skip` with the reason: the call does not
  run and the model reads why);
- `afterTool` for `read_files`, `editor` and `run_commands`: the notes linked to the files read or changed;
- `afterRun`: the diary of the run, from the session's own messages, written in the background.

Cline gives each call of a plugin's hook 3 s and fails the whole run when one takes longer (read in the 3.0.65
binary: `hookTimeoutMs` 3000, not configurable; observed: "plugin-sandbox call timed out after 3000ms: invokeHook",
exit 1, beside two CPU hogs). So the plugin waits at most 2.5 s for pinky's answer and goes on without it, and the
diary, which may take longer, is written by a pinky-hooks left running after the run.

Why a plugin and not Cline's hook files (`~/.cline/hooks/<Event>`): in the CLI only PreToolUse's and PostToolUse's
`contextModification` reach the model, both after the tool has run; TaskStart and TaskComplete run detached with
their output ignored, and UserPromptSubmit never ran in a headless session (observed with cline 3.0.65 offline;
tests/fixtures/cline/ holds those payloads). A hook's `cancel` stops the whole task.

The transcript. Cline keeps a session as `<sessions>/<id>/<id>.json` (its folder, its prompt) and
`<id>.messages.json`, one pretty-printed JSON document whose `messages` are Anthropic-shaped. pinky reads
transcripts a line at a time, so the stop hook (and `pinky-brain import-sessions`) first writes the messages one per
line into `<id>.messages.jsonl` beside it, after a first line naming the session's folder, each dated by its `ts` as
`timestamp`; only what Cline appended since is new there, so the diary's offsets stay valid. `<sessions>` is
CLINE_SESSION_DATA_DIR, else `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions` (CLINE_DIR defaults to
~/.cline).
"""

from __future__ import annotations

import os

from pinky.hosts.host import Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from pinky.hosts.host import Translate

CLINE_DOCS = "https://docs.cline.bot/customization/plugins"
CLINE_HOOKS = "https://docs.cline.bot/customization/hooks"
CLINE_CONFIG = "https://docs.cline.bot/getting-started/config"
CLINE_MEASURED = "observed with cline 3.0.65 offline (tests/hosts/test_cline_e2e.py)"
CLINE_BINARY = "read in the cline 3.0.65 binary (@cline/core 0.0.86)"
CLINE_HOOK_FILES = "observed with cline 3.0.65 offline (tests/fixtures/cline/hook-files/, test_cline_e2e.py)"
META = "cline_session"  # the first line of the JSONL pinky writes beside a session's messages
READS, WRITES, SHELL = "read_files", "editor", "run_commands"

PLUGIN = """// Written by `pinky-brain setup cline`; `pinky-brain setup cline --remove` deletes it.
// Gives Cline pinky-brain's memory (the digest in the system prompt, the recall for the prompt, the notes linked
// to the files a tool touches, the guard, the diary). Node built-ins only; a failure never stops Cline.
// Cline gives a plugin's hook 3 s and fails the whole run past them: each answer pinky waits for gets 2.5 s (the
// rule, asked once per session, 20 s); the diary at the end of a run is written in the background.
const { spawn, spawnSync } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

const HOOKS = __HOOKS__;
const GUARDED = new Set(__GUARDED__);
const NOTED = new Set(__NOTED__);
let session = { id: "", cwd: process.cwd() };

const input = (payload) => JSON.stringify({ session_id: session.id, cwd: session.cwd, ...payload });

// A bare name (what `setup --project` writes, for every clone's machine) is looked up on PATH, then in ~/.local/bin
function resolve(name) {
  if (name.includes("/")) return name;
  const fs = require("node:fs");
  const found = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name))
    .find((candidate) => fs.existsSync(candidate));
  return found ?? path.join(os.homedir(), ".local", "bin", name);
}
const HOOKS_AT = resolve(HOOKS);

function run(event, payload, timeout = 2500) {
  try {
    const done = spawnSync(HOOKS_AT, ["--host", "cline", event],
      { input: input(payload), encoding: "utf8", cwd: session.cwd, timeout, killSignal: "SIGKILL" });
    return done.stdout ? JSON.parse(done.stdout) : null;
  } catch {
    return null; // no answer in time, or none that parses: Cline goes on without it
  }
}

function runBehind(event, payload) {
  try {
    const child = spawn(HOOKS_AT, ["--host", "cline", event],
      { cwd: session.cwd, detached: true, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(input(payload));
    child.unref();
  } catch {
    // pinky-brain is not installed where this plugin looks: Cline goes on
  }
}

const context = (out) => out?.hookSpecificOutput?.additionalContext ?? "";

function sessions() {
  const env = process.env;
  if (env.CLINE_SESSION_DATA_DIR) return env.CLINE_SESSION_DATA_DIR;
  const data = env.CLINE_DATA_DIR || path.join(env.CLINE_DIR || path.join(os.homedir(), ".cline"), "data");
  return path.join(data, "sessions");
}

function prompt(messages) {
  const last = [...(messages ?? [])].reverse().find((m) => m?.role === "user" &&
    (m.content ?? []).some((part) => part?.type === "text" && part.text?.includes("<user_input")));
  const text = (last?.content ?? []).filter((part) => part?.type === "text").map((part) => part.text).join("\\n");
  return text.replace(/^[\\s\\S]*?<user_input[^>]*>/, "").replace(/<\\/user_input>[\\s\\S]*$/, "").trim();
}

function call(name, input) {
  input = input ?? {};
  if (name === "read_files") {
    return { tool_name: name, tool_input: { paths: (input.files ?? []).map((f) => f?.path).filter(Boolean) } };
  }
  if (name === "run_commands") return { tool_name: name, tool_input: { command: (input.commands ?? []).join("\\n") } };
  if (name === "editor") {
    const edit = typeof input.old_text === "string"
      ? { old_string: input.old_text, new_string: input.new_text ?? "" }
      : input.insert_line != null ? { old_string: "", new_string: input.new_text ?? "" }
      : { content: input.new_text ?? "" };
    return { tool_name: name, tool_input: { file_path: input.path, ...edit } };
  }
  return { tool_name: name, tool_input: input };
}

module.exports = {
  name: "pinky-brain",
  manifest: { capabilities: ["hooks", "rules"] },
  setup(api, ctx) {
    session = { id: ctx?.session?.sessionId ?? "", cwd: ctx?.workspaceInfo?.rootPath ?? process.cwd() };
    api.registerRule({ id: "pinky-brain", content: () => context(run("session-start", {}, 20000)) });
  },
  hooks: {
    beforeRun: async ({ snapshot }) => {
      const text = prompt(snapshot?.messages);
      const recall = text ? context(run("user-prompt", { prompt: text })) : "";
      return recall ? { appendContext: recall } : undefined;
    },
    beforeTool: async ({ toolCall, input }) => {
      if (!GUARDED.has(toolCall?.toolName)) return undefined;
      const hook = run("pre-write", call(toolCall.toolName, input ?? toolCall.input))?.hookSpecificOutput;
      return hook?.permissionDecision === "deny" ? { skip: true, reason: hook.permissionDecisionReason } : undefined;
    },
    afterTool: async ({ toolCall, input }) => {
      if (!NOTED.has(toolCall?.toolName)) return undefined;
      const notes = context(run("post-tool", call(toolCall.toolName, input ?? toolCall.input)));
      return notes ? { appendContext: notes } : undefined;
    },
    afterRun: async () => {
      if (!session.id) return;
      runBehind("stop", { transcript_path: path.join(sessions(), session.id, session.id + ".messages.jsonl") });
    },
  },
};
"""


def plugin_text(hooks_command: str) -> str:
    import json

    return (PLUGIN.replace("__HOOKS__", json.dumps(hooks_command))
            .replace("__GUARDED__", json.dumps([WRITES, SHELL]))
            .replace("__NOTED__", json.dumps([READS, WRITES, SHELL])))


class Cline(Host):
    name, display, command = "cline", "Cline CLI", "cline"
    sources = (CLINE_MEASURED, CLINE_HOOK_FILES, CLINE_BINARY, CLINE_DOCS, CLINE_HOOKS, CLINE_CONFIG)
    # No command hooks that can show the model a digest or a recall (see above): the plugin runs
    # `pinky-hooks --host cline <event>` from its plugin API with Claude-shaped JSON on stdin. The host events named
    # here are the plugin's.
    hooks = (Hook("registerRule", "session-start"),
             Hook("beforeRun", "user-prompt"),
             Hook("beforeTool", "pre-write", f"{WRITES}|{SHELL}"),
             Hook("afterTool", "post-tool", f"{READS}|{WRITES}|{SHELL}"),
             Hook("afterRun", "stop"))
    tool_name = "{server}__{tool}"  # measured: pinky__brain_save
    mcp_user, mcp_project = "~/.cline/data/settings/cline_mcp_settings.json", None
    hooks_user, hooks_project = "~/.cline/plugins/pinky-brain.js", ".cline/plugins/pinky-brain.js"
    hooks_format = "plugin"
    home_env = ("CLINE_DIR", "~/.cline/")
    context = "plugin"
    read_tools, write_tools, shell_tools = (READS,), (WRITES,), (SHELL,)
    transcript = ("~/.cline/data/sessions/<id>/<id>.messages.json (CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR or "
                  "CLINE_DIR move it), read through <id>.messages.jsonl beside it")
    limits = (Limit("hook files (~/.cline/hooks/<Event>) cannot carry the digest or the recall in the CLI: only "
                    "PreToolUse's and PostToolUse's contextModification reach the model, after the tool ran; "
                    "TaskStart and TaskComplete run detached, UserPromptSubmit did not run headless; so setup "
                    "writes a plugin instead", CLINE_HOOK_FILES),
              Limit("plugins run in Cline's CLI, SDK and Kanban, not in its VS Code or JetBrains extensions",
                    CLINE_DOCS),
              Limit("no project-level MCP config: the server is set up per user (a project's "
                    ".cline/cline_mcp_settings.json offered no tools)", CLINE_MEASURED),
              Limit("the end of a run cannot continue the agent (afterRun returns nothing): no capture ask",
                    CLINE_BINARY),
              Limit("no compaction hook in the plugin API: no checkpoint before Cline compacts", CLINE_BINARY),
              Limit("the plugin finds a session's messages through CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR or "
                    "CLINE_DIR, not through `cline --config` or `--data-dir`: a session kept elsewhere gets no "
                    "diary (a session the hub daemon runs calls the plugin back in the `cline` that asked, which "
                    "works as in the CLI)", CLINE_BINARY),
              Limit("Cline gives a plugin's hook 3 s and fails the run past them: pinky's answer (recall, file notes, "
                    "the guard) is waited for 2.5 s and dropped when later, so on a machine that busy the model may "
                    "not see it and the guard lets the write through", CLINE_BINARY),
              Limit("a project's .cline/plugins/ runs without any trust step, like its hooks", CLINE_MEASURED))

    def continue_output(self, reason: str) -> dict | None:
        return None  # afterRun cannot continue the agent

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args, "disabled": False}

    def plugin_files(self, hooks_path: str, hooks_command: str,
                     remove: bool) -> list[tuple[str, Callable[[bytes | None], bytes | None], str]]:
        plugin = None if remove else plugin_text(hooks_command).encode("utf-8")
        return [(hooks_path, lambda before: plugin, "text")]

    def before_transcript(self, path: str) -> None:
        if path.endswith(".messages.jsonl"):
            as_lines(path[: -len("l")])

    def translator(self, cwd: str | None = None) -> Translate | None:
        return Messages(cwd)

    def session_files(self, home: str) -> list[Path]:
        """Every session's `<id>.json` (its folder and prompt): `past_sessions` reads them, and writes the one-line-
        per-message file of the project's sessions only."""
        from pathlib import Path

        return sorted(Path(folder) / f"{folder.name}.json" for folder in sessions_dir(home).glob("*/")
                      if (folder / f"{folder.name}.messages.json").is_file())

    def past_sessions(self, root: str, remote: str | None, home: str, state: str | None = None) -> list[Any]:
        """The project's sessions, read through the `<id>.messages.jsonl` written beside each (no other project's
        session folder is written to)."""
        import json
        from pathlib import Path

        from pinky.base import fileio
        from pinky.capture.past_sessions import PastSession, belongs, read_head

        real, found = os.path.realpath(root), []
        for meta in self.session_files(home):
            try:
                with fileio.open_regular(meta) as handle:
                    head = json.loads(handle.read().decode("utf-8"))
            except (OSError, ValueError, UnicodeDecodeError):
                continue
            cwd = (head.get("cwd") or head.get("workspace_root")) if isinstance(head, dict) else None
            probe = PastSession(self.name, meta, "", cwd if isinstance(cwd, str) else None, 0)
            if not belongs(probe, real, remote):
                continue
            lines = as_lines(str(meta)[: -len(".json")] + ".messages.json")
            session = read_head(self, Path(lines)) if lines else None
            if session is not None:
                found.append(session)
        return found

    def head_done(self, event: dict) -> bool:
        return event.get("type") == META

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        meta = next((e for e in events if e.get("type") == META and isinstance(e.get("sessionId"), str)), None)
        if meta is None:
            return None
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
        return PastSession(self.name, path, f"cline:{meta['sessionId']}", cwd, size, display=self.display,
                           source=self)


def sessions_dir(home: str, env: dict[str, str] | None = None) -> Path:
    """Where Cline keeps its sessions, as its CLI finds it (CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR, CLINE_DIR)."""
    from pathlib import Path

    env = dict(os.environ) if env is None else env
    if env.get("CLINE_SESSION_DATA_DIR"):
        return Path(env["CLINE_SESSION_DATA_DIR"])
    data = env.get("CLINE_DATA_DIR") or os.path.join(env.get("CLINE_DIR") or os.path.join(home, ".cline"), "data")
    return Path(data) / "sessions"


def as_lines(messages_path: str) -> str | None:
    """Write `<id>.messages.jsonl` beside Cline's `<id>.messages.json`: a first line with the session's id and folder
    (from `<id>.json`), then one message per line; the path written, None when the session cannot be read. A file
    that already holds every message is left alone."""
    import json

    from pinky.base import fileio

    target = messages_path + "l"
    try:
        with fileio.open_regular(messages_path) as handle:
            document = json.loads(handle.read().decode("utf-8"))
        with fileio.open_regular(messages_path[: -len(".messages.json")] + ".json") as handle:
            meta = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list) or not isinstance(meta, dict):
        return None
    head = {"type": META, "sessionId": meta.get("session_id"), "cwd": meta.get("cwd") or meta.get("workspace_root"),
            "timestamp": meta.get("started_at")}
    lines = [json.dumps(head, ensure_ascii=False)] + [json.dumps({"timestamp": stamp(m.get("ts")), **m},
                                                                 ensure_ascii=False)
                                                      for m in messages if isinstance(m, dict)]
    text = "".join(line + "\n" for line in lines).encode("utf-8")
    try:
        with open(target, "rb") as handle:
            if handle.read() == text:
                return target
    except OSError:
        pass
    try:
        fileio.atomic_write(target, text)
    except OSError:
        return None
    return target


def stamp(ms: object) -> str | None:
    """Cline's `ts` (milliseconds since the epoch) as the ISO 8601 `timestamp` pinky's readers date a line by."""
    from datetime import UTC, datetime

    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def prompt_of(text: str) -> str:
    """What the user typed, out of Cline's `<user_input mode="act">...</user_input>`."""
    start = text.find("<user_input")
    if start < 0:
        return text
    opened = text.find(">", start)
    end = text.rfind("</user_input>")
    return text[opened + 1: end if end > opened else len(text)].strip()


class Messages:
    """The lines pinky writes from a Cline session's messages as Claude-shaped events: the prompt (out of
    `<user_input>`; hook context, marked `displayRole` "system", is left out), each tool call (`read_files` as a
    Read of each file, `editor` as an Edit, `run_commands` as Bash, `<server>__<tool>` as that MCP tool) and each
    tool result."""

    def __init__(self, cwd: str | None) -> None:
        from pinky.capture import foreign  # json and the shell-line parser: never on a hook's fast path

        self.f, self.cwd = foreign, cwd

    def __call__(self, line: dict) -> list[dict]:
        if line.get("type") == META:
            if isinstance(line.get("cwd"), str):
                self.cwd = line["cwd"]
            return []
        content, role = line.get("content"), line.get("role")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        meta = line.get("metadata")
        if role == "user" and isinstance(meta, dict) and meta.get("displayRole") == "system":
            return []  # the context a hook (pinky's own) added
        events: list[dict] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if role == "user" and kind == "text" and isinstance(block.get("text"), str):
                typed = self.f.typed(prompt_of(block["text"]))
                events += [self.f.user_event(typed)] if typed else []
            elif role == "user" and kind == "tool_result":
                events.append(self.f.result_event(block.get("tool_use_id"), result_text(block.get("content")),
                                                  block.get("is_error") is True))
            elif role == "assistant" and kind == "tool_use" and isinstance(block.get("name"), str):
                events += self._call(block["name"], self.f.arguments(block.get("input")), block.get("id"))
        return events

    def _call(self, name: str, args: dict, call_id: object) -> list[dict]:
        f = self.f
        if name == READS:
            files = [e.get("path") for e in args.get("files") or [] if isinstance(e, dict)]
            return [f.tool_event(self.cwd, call_id if i == 0 else f"{call_id}:{i}", "Read",
                                 {"file_path": f.absolute(p, self.cwd)})
                    for i, p in enumerate(p for p in files if isinstance(p, str))]
        if name == WRITES and isinstance(args.get("path"), str):
            return [f.tool_event(self.cwd, call_id, "Edit", {"file_path": f.absolute(args["path"], self.cwd)})]
        if name == SHELL:
            commands = [c for c in args.get("commands") or [] if isinstance(c, str)]
            return [e for i, c in enumerate(commands)
                    for e in f.shell_events(self.cwd, call_id if i == 0 else f"{call_id}:{i}", c)]
        if "__" in name:
            server, tool = name.split("__", 1)
            return [f.tool_event(self.cwd, call_id, f.mcp_name(server, tool), args)]
        return [f.tool_event(self.cwd, call_id, name, args)]


def result_text(content: object) -> str:
    """A tool result's text: a string, or read_files' list of {query, result}."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("result") or part.get("text") or "") if isinstance(part, dict) else str(part)
                         for part in content)
    return ""


HOST = Cline()
