"""The OpenCode plugin setup writes: OpenCode has no command hooks, so a small JS plugin relays its events to
`pinky-hooks --host opencode <event>` with a Claude-shaped JSON payload on stdin (https://opencode.ai/docs/plugins/)."""

from __future__ import annotations

import json

PLUGIN = """// Written by `pinky-brain setup opencode`; `pinky-brain setup opencode --remove` deletes it.
// Relays OpenCode's events to pinky-hooks (pinky-brain's memory hooks); failures never stop OpenCode.
import { spawnSync } from "node:child_process";

const HOOKS = __HOOKS__;

function run(event, payload) {
  try {
    const done = spawnSync(HOOKS, ["--host", "opencode", event],
      { input: JSON.stringify(payload), encoding: "utf8", timeout: 30000 });
    return done.stdout ? JSON.parse(done.stdout) : null;
  } catch {
    return null;
  }
}

export const PinkyBrain = async ({ client, directory }) => ({
  event: async ({ event }) => {
    const sid = event.properties?.info?.id ?? event.properties?.sessionID ?? "";
    if (event.type === "session.created") run("session-start", { session_id: sid, cwd: directory });
    if (event.type === "session.idle") {
      const out = run("stop", { session_id: sid, cwd: directory });
      if (out?.followup_message && client?.session?.prompt) {
        const parts = [{ type: "text", text: out.followup_message }];
        await client.session.prompt({ path: { id: sid }, body: { parts } });
      }
    }
  },
  "tool.execute.after": async (input, output) => {
    const args = output?.args ?? {};
    run("post-tool", { session_id: input.sessionID, cwd: directory, tool_name: input.tool, tool_input: args });
  },
});
"""


def plugin_text(hooks_command: str) -> str:
    return PLUGIN.replace("__HOOKS__", json.dumps(hooks_command))
