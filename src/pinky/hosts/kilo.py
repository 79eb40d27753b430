"""Kilo Code CLI: a fork of OpenCode (its binary logs as `opencode` and reads `opencode.json` as well as its own
`kilo.json`), so pinky reaches it the way it reaches OpenCode: the same JS plugin, in Kilo's config folder, running
`pinky-hooks --host kilo <event>` (see pinky.hosts.opencode for what each plugin hook does).

Measured with @kilocode/cli 7.8.1 offline (tests/hosts/test_kilo_e2e.py): its npm install cannot set up its platform
binary, because the package asks for `@kilocode/cli-linux-x64@7.8.1`, which npm does not have (newest 7.7.9,
ETARGET); `npm install --ignore-scripts @kilocode/cli@7.8.1 @kilocode/cli-linux-x64@7.7.9` gives a working `kilo`
(it reports 7.7.9). An OpenAI-compatible provider in `~/.config/kilo/kilo.json` runs it offline; MCP tools are
offered as `pinky_brain_save`; the plugin's digest and recall reach the system prompt, its notes the tool's output.
Like OpenCode it installs its plugin package with npm into the config folder at every start and waits for it:
setup writes the same `.npmrc` (`fetch-retries=0`).
"""

from __future__ import annotations

from pinky.hosts.host import Limit
from pinky.hosts.opencode import OPENCODE_DOCS, OpenCode, npmrc_path, npmrc_text, plugin_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

KILO_MEASURED = "observed with @kilocode/cli 7.8.1 (binary 7.7.9) offline (tests/hosts/test_kilo_e2e.py)"
KILO_DOCS = "https://kilo.ai/docs/cli"


class Kilo(OpenCode):
    name, display, command = "kilo", "Kilo Code CLI", "kilo"
    sources = (KILO_MEASURED, KILO_DOCS, OPENCODE_DOCS)  # OpenCode's plugin API, which Kilo keeps
    mcp_user, mcp_project = "~/.config/kilo/kilo.json", "kilo.json"
    hooks_user, hooks_project = "~/.config/kilo/plugins/pinky-brain.js", ".kilo/plugins/pinky-brain.js"
    # Its own database, $XDG_DATA_HOME/kilo/kilo.db, never OpenCode's: import-sessions would take OpenCode's sessions
    # as Kilo's. Measured with a recorded session (tests/fixtures/kilo/past-sessions): the 7.7.9 binary writes only
    # there, with OpenCode 1.18.33's four tables column for column and the same JSON in their `data`, so OpenCode's
    # reader takes it as it is; a database of another shape would give no sessions.
    database = ("kilo", "kilo.db")
    limits = (
        Limit("`npm install @kilocode/cli@7.8.1` fails to set up its binary: @kilocode/cli-linux-x64@7.8.1 is not on "
              "npm (ETARGET; newest 7.7.9). Install with `npm install --ignore-scripts @kilocode/cli@7.8.1 "
              "@kilocode/cli-linux-x64@7.7.9` (the binary reports 7.7.9)", KILO_MEASURED),
        Limit("no command hooks: the OpenCode plugin pinky writes into Kilo's plugins folder relays each event to "
              "pinky-hooks; no transcript path reaches a plugin, so the diary records what the plugin relays; "
              "import-sessions reads past sessions from `~/.local/share/kilo/kilo.db` (OpenCode's tables, "
              "measured), whose turns the plugin recorded give the same diary", KILO_MEASURED),
        Limit("Kilo runs the plugin's system-prompt hook for the request that names a session too (session id "
              "`title-<id>`): that request also gets the digest, and pinky-hooks sees one more session start",
              KILO_MEASURED),
        Limit("it installs its plugin package with npm in its config folder at each start and waits for it; setup "
              "writes `fetch-retries=0` into that folder's .npmrc so an offline session does not wait for npm's "
              "retries", KILO_MEASURED),
        Limit("the guard (a throw in tool.execute.before) and the checkpoint (experimental.session.compacting) "
              "follow OpenCode's plugin API, not measured in Kilo", KILO_MEASURED),
    )

    def plugin_files(self, hooks_path: str, hooks_command: str,
                     remove: bool) -> list[tuple[str, Callable[[bytes | None], bytes | None], str]]:
        """OpenCode's plugin, speaking `--host kilo`, and the `.npmrc` beside Kilo's config folder."""
        text = plugin_text(hooks_command).replace('["--host", "opencode", event]', '["--host", "kilo", event]')
        for theirs, ours in (("setup opencode", "setup kilo"), ("OpenCode", "Kilo Code CLI")):
            text = text.replace(theirs, ours)
        plugin = None if remove else text.encode("utf-8")
        return [(hooks_path, lambda before: plugin, "text"),
                (npmrc_path(hooks_path), lambda before: npmrc_text(before, remove), "text")]


HOST = Kilo()
