"""Claude Code: the host pinky's hook operations speak natively (the defaults of pinky.hosts.host are its shapes).

Its sessions are kept at `$CLAUDE_CONFIG_DIR/projects/<munged cwd>/<session id>.jsonl` (the config dir defaults
to ~/.claude; every event records its `cwd`, and no git remote: sessions of a moved checkout are left alone).
"""

from __future__ import annotations

import os

from pinky.hosts.host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

CLAUDE_OBSERVED = "observed with Claude Code 2.1.197 in pinky-brain's end-to-end tests"


def claude_folder(cwd: str) -> str:
    """The folder name Claude Code gives a cwd's sessions: every character but a letter or digit becomes `-`."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


class Claude(Host):
    name, display, command = "claude", "Claude Code", "claude"
    sources = (CLAUDE_OBSERVED,)
    # The plugin's server is `plugin:pinky:pinky` (mcp__plugin_pinky_pinky__*); a user/project .mcp.json entry is
    # mcp__pinky__*. The plugin's own text names tools bare (brain_save), which the model resolves in either case.
    tool_name = "mcp__plugin_{server}_{server}__{tool}"
    mcp_user, mcp_project = "~/.claude.json", ".mcp.json"
    hooks_user, hooks_project = "~/.claude/settings.json", ".claude/settings.json"
    instructions = "CLAUDE.md"
    transcript = "~/.claude/projects/<cwd with non-alphanumerics as ->/<session_id>.jsonl"
    own_doctor = True  # pinky.setup.claude_doctor
    pinky_plugin = True

    def session_files(self, home: str) -> list[Path]:
        from pathlib import Path

        folder = Path(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")) / "projects"
        return sorted(folder.glob("*/*.jsonl"))

    def head_done(self, event: dict) -> bool:
        return isinstance(event.get("cwd"), str) and not event.get("isSidechain")

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        for event in events:
            if isinstance(event.get("cwd"), str) and not event.get("isSidechain"):
                sid = event.get("sessionId")
                return PastSession(self.name, path, sid if isinstance(sid, str) and sid else path.stem, event["cwd"],
                                   size, display=self.display, source=self)
        return None

    def past_sessions(self, root: str, remote: str | None, home: str, state: str | None = None) -> list[Any]:
        """Only the folders named after the project (as typed, or linked), and those whose first session ran in
        it anyway (a cwd reached through a symbolic link, a name Claude Code shortened)."""
        from pinky.capture.past_sessions import belongs, read_head

        munged = (claude_folder(os.path.abspath(root)), claude_folder(os.path.realpath(root)))
        real = os.path.realpath(root)
        paths = self.session_files(home)
        first: dict[Path, Path] = {}
        for path in paths:
            if not path.parent.name.startswith(munged):
                first.setdefault(path.parent, path)
        elsewhere = set()
        for folder, path in first.items():  # one session's head per folder, as a folder is one cwd
            session = read_head(self, path)
            if session is not None and belongs(session, real, remote):
                elsewhere.add(folder)
        found = []
        for path in paths:
            if path.parent.name.startswith(munged) or path.parent in elsewhere:
                session = read_head(self, path)
                if session is not None and belongs(session, real, remote):
                    found.append(session)
        return found


HOST = Claude()
