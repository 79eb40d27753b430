"""OpenCode, and what `pinky-brain setup opencode` writes for it: OpenCode has no command hooks, so a small JS
plugin runs `pinky-hooks --host opencode <event>` from its plugin hooks (https://opencode.ai/docs/plugins/), and
puts what pinky answers where the model reads it:

- `experimental.chat.system.transform` (called before every model request with the system prompt's parts): the
  session digest and the current prompt's recall are added to the system prompt;
- `chat.message` (each user message, with its text parts): the recall for the prompt, and the prompt in the
  session's journal (the diary);
- `tool.execute.before`: the guard before an edit/write/patch (throwing refuses the call, with the reason);
- `tool.execute.after` (with the call's `args` and its `output`): the notes linked to the files read or changed,
  appended to the tool's output; the call in the journal;
- `experimental.session.compacting` (its `output.context` joins the compaction prompt): the checkpoint, and the
  digest carried into the compacted session;
- the `session.idle` event: the diary of the turn and the capture ask (sent with `client.session.prompt`).

The plugin imports nothing but Node's built-ins (no `@opencode-ai/plugin`, no package.json).

The stall. OpenCode 1.18 installs `@opencode-ai/plugin` with npm into every config folder it reads
(~/.config/opencode, a project's .opencode) at each start, in the background, and waits for that install before it
loads any plugin (read in the opencode-ai 1.18.33 binary: `Config.waitForDependencies` before `Plugin.state`). The
install is skipped once the folder's package-lock.json lists the package; offline it fails only after npm's retries,
~70 s (measured: a session with an empty plugin 92 s, without a plugin 12 s). So setup also writes a `.npmrc` beside
the plugin folder with `fetch-retries=0`: offline the install fails at once (the same session: 10-31 s), online it
still runs. A `.npmrc` that already sets fetch-retries is left alone.
"""

from __future__ import annotations

import os

from pinky.hosts.host import Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

OPENCODE_DOCS = "https://opencode.ai/docs/plugins/"
OPENCODE_MEASURED = "observed with opencode-ai 1.18.33 offline, read in its binary (tests/hosts/test_opencode_e2e.py)"
OPENCODE_MCP = "https://opencode.ai/docs/mcp-servers/"

PLUGIN = """// Written by `pinky-brain setup opencode`; `pinky-brain setup opencode --remove` deletes it.
// Gives OpenCode pinky-brain's memory (the digest and recall in the system prompt, notes linked to the files a
// tool touches, the guard, the diary, the checkpoint). Node built-ins only; a failure never stops OpenCode.
import { spawnSync } from "node:child_process";

const HOOKS = __HOOKS__;
const WRITES = new RegExp(__WRITES__);
const sessions = new Map(); // session id -> { digest, recall }

function run(event, payload) {
  try {
    const done = spawnSync(HOOKS, ["--host", "opencode", event],
      { input: JSON.stringify(payload), encoding: "utf8", timeout: 30000 });
    return done.stdout ? JSON.parse(done.stdout) : null;
  } catch {
    return null;
  }
}

const context = (out) => out?.hookSpecificOutput?.additionalContext ?? "";

export const PinkyBrain = async ({ client, directory }) => {
  const session = (id) => {
    let shown = sessions.get(id);
    if (!shown) {
      shown = { digest: context(run("session-start", { session_id: id, cwd: directory })), recall: "" };
      sessions.set(id, shown);
    }
    return shown;
  };
  const call = (input, args) =>
    ({ session_id: input?.sessionID ?? "", cwd: directory, tool_name: input?.tool ?? "", tool_input: args ?? {} });
  return {
    "chat.message": async (input, output) => {
      const prompt = (output?.parts ?? []).filter((part) => part?.type === "text" && !part.synthetic)
        .map((part) => part.text).join("\\n").trim();
      const shown = session(input?.sessionID ?? "");
      if (prompt) shown.recall = context(run("user-prompt", { session_id: input.sessionID, cwd: directory, prompt }));
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input?.sessionID || !Array.isArray(output?.system)) return;
      const shown = session(input.sessionID);
      for (const text of [shown.digest, shown.recall]) if (text) output.system.push(text);
    },
    "tool.execute.before": async (input, output) => {
      if (!WRITES.test(input?.tool ?? "")) return;
      const hook = run("pre-write", call(input, output?.args))?.hookSpecificOutput;
      if (hook?.permissionDecision === "deny") throw new Error(hook.permissionDecisionReason);
    },
    "tool.execute.after": async (input, output) => {
      const notes = context(run("post-tool", call(input, input?.args ?? output?.args)));
      if (notes && typeof output?.output === "string") output.output += "\\n\\n" + notes;
    },
    "experimental.session.compacting": async (input, output) => {
      run("pre-compact", { session_id: input?.sessionID ?? "", cwd: directory });
      const digest = sessions.get(input?.sessionID)?.digest;
      if (digest && Array.isArray(output?.context)) output.context.push(digest);
    },
    event: async ({ event }) => {
      if (event?.type !== "session.idle") return;
      const id = event.properties?.sessionID ?? "";
      const out = run("stop", { session_id: id, cwd: directory });
      if (out?.followup_message && client?.session?.prompt) {
        const parts = [{ type: "text", text: out.followup_message }];
        await client.session.prompt({ path: { id }, body: { parts } });
      }
    },
  };
};
"""

NPMRC = ".npmrc"
NPMRC_LINES = ("# pinky-brain: OpenCode installs @opencode-ai/plugin here at every start; offline, npm's retries held "
               "each session ~70 s\n", "fetch-retries=0\n")


def plugin_text(hooks_command: str) -> str:
    import json

    writes = next(h.matcher for h in HOST.hooks if h.event == "tool.execute.before")
    return PLUGIN.replace("__HOOKS__", json.dumps(hooks_command)).replace("__WRITES__", json.dumps(f"^({writes})$"))


def npmrc_path(plugin_path: str) -> str:
    """The `.npmrc` of the config folder the plugin lives in (plugins/ is one level below it)."""
    return os.path.join(os.path.dirname(os.path.dirname(plugin_path)), NPMRC)


def npmrc_text(before: bytes | None, remove: bool) -> bytes | None:
    """The `.npmrc` with pinky's fetch-retries line (or, on --remove, without it); None: no file."""
    text = (before or b"").decode("utf-8", "replace")
    ours = "".join(NPMRC_LINES)
    if remove:
        if ours not in text:
            return before
        rest = text.replace(ours, "", 1)
        return rest.encode("utf-8") if rest.strip() else None
    if ours in text or any(line.split("=", 1)[0].strip() == "fetch-retries" for line in text.splitlines()):
        return before  # set already (by the user, or by an earlier setup)
    joined = text if not text or text.endswith("\n") else text + "\n"
    return (joined + ours).encode("utf-8")


class OpenCode(Host):
    name, display, command = "opencode", "OpenCode", "opencode"
    sources = (OPENCODE_DOCS, OPENCODE_MCP, OPENCODE_MEASURED)
    # No command hooks: the plugin above runs `pinky-hooks --host opencode <event>` from its plugin hooks with the
    # same Claude-shaped JSON on stdin and puts the answer where the model reads it. The host events named here are
    # the plugin's.
    hooks = (Hook("chat.message", "session-start"),
             Hook("chat.message", "user-prompt"),
             Hook("tool.execute.before", "pre-write", "edit|write|patch"),
             Hook("tool.execute.after", "post-tool"),
             Hook("session.idle", "stop"),
             Hook("experimental.session.compacting", "pre-compact"))
    tool_name = "{server}_{tool}"
    mcp_user, mcp_project, mcp_key = "~/.config/opencode/opencode.json", "opencode.json", "mcp"
    hooks_user, hooks_project = "~/.config/opencode/plugins/pinky-brain.js", ".opencode/plugins/pinky-brain.js"
    hooks_format = "plugin"
    context = "plugin"
    read_tools, write_tools, shell_tools = ("read",), ("edit", "write", "patch"), ("bash",)
    limits: tuple[Limit, ...] = (
        Limit("hooks are JS plugin functions, not commands: the plugin pinky writes relays each event to "
              "pinky-hooks", OPENCODE_DOCS),
        Limit("no transcript path reaches a plugin: the diary records the prompts and tool calls the plugin "
              "relays", OPENCODE_MEASURED),
        Limit("OpenCode installs @opencode-ai/plugin with npm in every config folder at each start and waits "
              "for it before loading any plugin; offline npm's retries held each session ~70 s, so setup "
              "writes `fetch-retries=0` into that folder's .npmrc; a session within 60 s of the last can "
              "still wait ~60 s for the install lock OpenCode sometimes leaves at exit", OPENCODE_MEASURED),
        Limit("the guard (a throw in tool.execute.before) and the checkpoint (experimental.session.compacting) "
              "follow OpenCode's plugin API, not measured here", OPENCODE_DOCS),
    )

    def continue_output(self, reason: str) -> dict | None:
        return {"followup_message": reason}  # the plugin sends it as a prompt with client.session.prompt

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"type": "local", "command": [program, *args], "enabled": True}

    def past_sessions(self, root: str, remote: str | None, home: str, state: str | None = None) -> list[Any]:
        """OpenCode's sessions of the project at `root`, from its database (`SessionStore`), each written out under
        pinky's `state` folder as the journal its plugin would have kept (none without a state folder)."""
        from dataclasses import replace

        from pinky.capture.past_sessions import PastSession, belongs

        store = SessionStore(self, home)
        found = []
        for session_id, directory in store.sessions() if state else []:
            seen = PastSession(self.name, store.path, f"{self.name}:{session_id}", directory, 0, display=self.display,
                               source=self)
            if belongs(seen, os.path.realpath(root), remote):
                written = store.write_out(session_id, directory, str(state))
                if written is not None:
                    found.append(replace(seen, path=written, size=written.stat().st_size))
        return found

    def plugin_files(self, hooks_path: str, hooks_command: str,
                     remove: bool) -> list[tuple[str, Callable[[bytes | None], bytes | None], str]]:
        """The plugin itself, and the `.npmrc` beside its config folder (no ~70 s stall per offline session)."""
        plugin = None if remove else plugin_text(hooks_command).encode("utf-8")
        return [(hooks_path, lambda before: plugin, "text"),
                (npmrc_path(hooks_path), lambda before: npmrc_text(before, remove), "text")]


class SessionStore:
    """OpenCode's past sessions, for `pinky-brain import-sessions`. OpenCode 1.18 keeps them in SQLite,
    `$XDG_DATA_HOME/opencode/opencode.db` (~/.local/share/opencode; measured with 1.18.33:
    tests/fixtures/opencode/past-sessions): `session` (`id`, `directory` it ran in), `message` (`data`: `role`,
    `time.created`/`completed` in ms) and `part` (`data`: a `text` of the prompt, `synthetic` when OpenCode added it;
    a `tool` with `tool`, `state.status`, `state.input`, `state.time.end`).

    No transcript reaches pinky's plugin, so the Stop hook's diary of an OpenCode session is what the plugin relayed
    into the journal (`pinky.hooks.journal`): the prompts (`chat.message`) and the calls that completed
    (`tool.execute.after`). A session is written out under pinky's state folder as that journal, from the same
    payloads the plugin sends through the same `normalize` and `pinky.capture.foreign`, turn by turn, each turn
    closed by a `turn_end` line with the moment its last reply completed (when `session.idle` fired the Stop hook).
    Only whole turns (every reply completed), and the file is only ever appended to, so what an import read of it
    stays as it was. A turn that ended before the Stop hook last recorded the session (pinky's plugin was running)
    is the hook's: only its `turn_end` is written."""

    def __init__(self, host: Host, home: str) -> None:
        data = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
        from pathlib import Path

        self.host, self.path = host, Path(data).joinpath(*getattr(host, "database", ("opencode", "opencode.db")))

    def sessions(self) -> list[tuple[str, str]]:
        """(id, folder) of every session, oldest first; [] without a database OpenCode 1.18 wrote."""
        import sqlite3

        from pinky.store.foreign_sessions import opencode_sessions, read_only

        if not self.path.is_file():
            return []
        try:
            with read_only(self.path) as db:
                return opencode_sessions(db)
        except sqlite3.Error:
            return []

    def write_out(self, session_id: str, directory: str, state: str) -> Path | None:
        """The session's journal under `state`, with the turns that completed since it was last written; None when
        it has none yet."""
        import json
        import sqlite3
        from pathlib import Path

        from pinky.base.private import append_private
        from pinky.store.foreign_sessions import read_only

        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in session_id)[:120]
        target = Path(state) / "import" / self.host.name / f"{safe}.jsonl"
        try:
            done = {json.loads(line).get("message") for line in target.read_text(encoding="utf-8").splitlines()
                    if '"turn_end"' in line}
        except (OSError, ValueError):
            done = set()
        recorded = _hook_recorded(state, f"{self.host.name}:{session_id}")
        lines = []
        try:
            with read_only(self.path) as db:
                for message, events, end in self._turns(db, session_id, directory):
                    if events is None:
                        break  # a turn still running, and all after it
                    if message not in done:
                        lines += [json.dumps(e, ensure_ascii=False) for e in events if end > recorded * 1000]
                        lines.append(json.dumps({"type": "turn_end", "message": message, "timestamp": _iso(end)}))
        except sqlite3.Error:
            pass
        if lines:
            append_private(target, "".join(line + "\n" for line in lines), state)
        return target if target.is_file() else None

    def _turns(self, db: Any, session_id: str, directory: str) -> Any:
        """(user message id, the journal's events of its turn or None while a reply runs, when the turn ended in
        ms) for each prompt of the session in order."""
        import json

        from pinky.capture.foreign import relayed_events
        from pinky.hosts.adapters import normalize
        from pinky.store.foreign_sessions import opencode_messages, opencode_parts

        turns: list[tuple[str, list[tuple[str, dict]]]] = []  # (prompt's id, [(reply's id, reply)])
        for message_id, data in opencode_messages(db, session_id):
            message = _loads(json, data)
            if message.get("role") == "user":
                turns.append((message_id, []))
            elif turns:
                turns[-1][1].append((message_id, message))
        parts: dict[str, list[dict]] = {}
        for message_id, data in opencode_parts(db, session_id):
            part = _loads(json, data)
            if part.get("type") in ("text", "tool"):
                state: dict = part["state"] if isinstance(part.get("state"), dict) else {}
                parts.setdefault(message_id, []).append({**part, "state": {**state, "output": None, "metadata": None}})
        relay = {"session_id": session_id, "cwd": directory}  # what the plugin sends (pinky.hosts.opencode PLUGIN)
        for message_id, replies in turns:
            ends = [(reply.get("time") or {}).get("completed") for _, reply in replies]
            finished = [end for end in ends if isinstance(end, int | float)]
            if not replies or len(finished) < len(ends):
                yield message_id, None, 0
                return
            prompt = "\n".join(str(p.get("text")) for p in parts.get(message_id, [])
                               if p.get("type") == "text" and not p.get("synthetic")).strip()
            events = (relayed_events(normalize(self.host, "user-prompt", {**relay, "prompt": prompt}),
                                     "user-prompt") or []) if prompt else []
            calls = [p for reply_id, _ in replies for p in parts.get(reply_id, []) if p.get("type") == "tool"
                     and p["state"].get("status") == "completed"]
            for call in sorted(calls, key=lambda p: (p["state"].get("time") or {}).get("end") or 0):
                payload = {**relay, "tool_name": call.get("tool"), "tool_input": call["state"].get("input") or {}}
                events += relayed_events(normalize(self.host, "post-tool", payload), "post-tool") or []
            yield message_id, events, max(finished)


def _loads(json: Any, text: object) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _iso(ms: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


JOURNALS = ("hooks", "journal")  # where pinky's hooks keep the journals, under the state folder (pinky.hooks.journal)


def _hook_recorded(state: str, session_id: str) -> float:
    """When pinky's Stop hook last recorded this session from its journal (the `seen` of its offset there, epoch
    seconds; not an import's offset, whose path is the written-out session); 0: never."""
    from pathlib import Path

    from pinky.capture.recorder import OffsetStore

    entry = OffsetStore(Path(state) / "diary-offsets.json").entry(session_id) or {}
    journal = os.path.dirname(str(entry.get("path") or "")) == os.path.join(state, *JOURNALS)
    seen = entry.get("seen") if journal else None
    return float(seen) if isinstance(seen, int | float) else 0.0


HOST = OpenCode()
