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
    limits = (Limit("hooks are JS plugin functions, not commands: the plugin pinky writes relays each event to "
                    "pinky-hooks", OPENCODE_DOCS),
              Limit("no transcript path reaches a plugin: the diary records the prompts and tool calls the plugin "
                    "relays", OPENCODE_MEASURED),
              Limit("OpenCode installs @opencode-ai/plugin with npm in every config folder at each start and waits "
                    "for it before loading any plugin; offline npm's retries held each session ~70 s, so setup "
                    "writes `fetch-retries=0` into that folder's .npmrc; a session within 60 s of the last can "
                    "still wait ~60 s for the install lock OpenCode sometimes leaves at exit", OPENCODE_MEASURED),
              Limit("the guard (a throw in tool.execute.before) and the checkpoint (experimental.session.compacting) "
                    "follow OpenCode's plugin API, not measured here", OPENCODE_DOCS))

    def continue_output(self, reason: str) -> dict | None:
        return {"followup_message": reason}  # the plugin sends it as a prompt with client.session.prompt

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"type": "local", "command": [program, *args], "enabled": True}

    def plugin_files(self, hooks_path: str, hooks_command: str,
                     remove: bool) -> list[tuple[str, Callable[[bytes | None], bytes | None], str]]:
        """The plugin itself, and the `.npmrc` beside its config folder (no ~70 s stall per offline session)."""
        plugin = None if remove else plugin_text(hooks_command).encode("utf-8")
        return [(hooks_path, lambda before: plugin, "text"),
                (npmrc_path(hooks_path), lambda before: npmrc_text(before, remove), "text")]


HOST = OpenCode()
