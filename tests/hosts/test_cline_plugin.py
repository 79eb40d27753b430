"""The plugin `pinky-brain setup cline` writes, run by Node as Cline's plugin loader runs it (`module.exports` with a
`setup(api, ctx)` and `hooks`; shapes from @cline/shared 0.0.86 and the real Cline CLI 3.0.65 in
tests/hosts/test_cline_e2e.py), against real pinky-hooks: the calls it makes and what it hands back to Cline. Fast,
and without the CLI: the real Cline session is the e2e test's."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hook_helpers import HOOKS, hook_env
from host_fixtures import diary_text, make_brain

from pinky.hosts.cline import plugin_text

pytestmark = pytest.mark.skipif(shutil.which("node") is None or len(HOOKS) != 1, reason="needs node and pinky-hooks")

DRIVER = """
const plugin = require(process.argv[2]);
const root = process.argv[3];
const rules = [];
const say = (text) =>
  [{ role: "user", content: [{ type: "text", text: `<user_input mode="act">${text}</user_input>` }] }];
const tool = async (stage, toolName, input) => (await plugin.hooks[stage]({ toolCall: { toolName }, input })) ?? null;
const stale = "The suite has 412 tests as of 2026-12-07 (commit 3f9a2c1e).";
(async () => {
  const ctx = { session: { sessionId: "s1" }, workspaceInfo: { rootPath: root } };
  plugin.setup({ registerRule: (rule) => rules.push(rule) }, ctx);
  const out = {
    name: plugin.name, capabilities: plugin.manifest.capabilities,
    rule: await rules[0].content(),
    recall: (await plugin.hooks.beforeRun({ snapshot: { messages: say("fix the retry in src/db.py") } })) ?? null,
    read: await tool("afterTool", "read_files", { files: [{ path: root + "/src/db.py" }] }),
    other: await tool("afterTool", "read_files", { files: [{ path: root + "/src/other.py" }] }),
    stale: await tool("beforeTool", "editor",
      { path: root + "/AGENTS.md", old_text: "Run the tests with make test.", new_text: stale }),
    fine: await tool("beforeTool", "editor", { path: root + "/src/db.py", old_text: "print(1)", new_text: "print(2)" }),
    save: await tool("beforeTool", "pinky__brain_save", {}),
  };
  console.log(JSON.stringify(out));
})();
"""


def drive(tmp_path: Path, root: Path, hooks: str, **env: str) -> dict:
    plugin = tmp_path / "pinky-brain.js"
    plugin.write_text(plugin_text(hooks), encoding="utf-8")
    driver = tmp_path / "driver.js"
    driver.write_text(DRIVER, encoding="utf-8")
    done = subprocess.run(["node", str(driver), str(plugin), str(root)], capture_output=True, text=True, cwd=root,
                          env=hook_env(root, **env), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_plugin_gives_cline_the_digest_recall_notes_and_the_guard(tmp_path: Path) -> None:
    root = make_brain(tmp_path / "proj")
    out = drive(tmp_path, root, HOOKS[0])
    assert out["name"] == "pinky-brain" and out["capabilities"] == ["hooks", "rules"]
    assert "DB retries need jitter" in out["rule"] and "pinky__brain_search" in out["rule"]
    assert "gotcha/db-retries" in out["recall"]["appendContext"]
    assert "linked to src/db.py" in out["read"]["appendContext"]
    assert out["other"] is None  # a file no note is linked to: nothing added
    assert out["stale"]["skip"] is True and "AGENTS.md must stay evergreen" in out["stale"]["reason"]
    assert out["fine"] is None and out["save"] is None
    assert (root / "AGENTS.md").read_text() == "# Agents\n\nRun the tests with make test.\n"


def test_without_pinky_hooks_cline_goes_on_untouched(tmp_path: Path) -> None:
    root = make_brain(tmp_path / "proj")
    out = drive(tmp_path, root, str(tmp_path / "no-such-pinky-hooks"))
    assert out["rule"] == "" and out["recall"] is None and out["read"] is None and out["stale"] is None
    assert diary_text(root) == ""


def test_a_project_s_plugin_finds_pinky_hooks_on_path_or_in_local_bin(tmp_path: Path) -> None:
    """`setup cline --project` writes the bare name (no path of one machine in a committed file)."""
    root = make_brain(tmp_path / "proj")
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "pinky-hooks").symlink_to(HOOKS[0])
    node = str(Path(shutil.which("node") or "node").parent)
    out = drive(tmp_path, root, "pinky-hooks", HOME=str(home), PATH=f"{node}:/usr/bin:/bin")
    assert "gotcha/db-retries" in out["recall"]["appendContext"]
