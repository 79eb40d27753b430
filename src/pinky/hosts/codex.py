"""Codex CLI: Claude-shaped hooks in `hooks.json` (trusted by a hash in config.toml), a TOML MCP config, no Read or
Write tool (it reads with the shell and edits with apply_patch), and a session "rollout" transcript.

Its rollout JSONL is under `$CODEX_HOME/sessions/YYYY/MM/DD/`: `session_meta` and `turn_context` lines carry the
cwd (session_meta also the `git` remote); `response_item` lines carry the conversation: a `message` (role user: the
prompt, or context Codex adds itself, wrapped in `<tags>`), a `function_call` (`exec_command` with `cmd`, `shell`
with a `command` list, an MCP tool with its `namespace`), a `custom_tool_call` (`apply_patch` with the patch as
`input`) and their outputs.
"""

from __future__ import annotations

import os

from pinky.hosts.host import OBSERVED, Hook, Host, Limit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from pinky.hosts.host import Translate

CODEX_DOCS = "https://developers.openai.com/codex/hooks"
CODEX_SOURCE = "https://github.com/openai/codex (codex-rs/hooks; event names in the 0.169.0 binary)"
SHELL_CALLS = ("exec_command", "shell", "local_shell", "container.exec", "unified_exec")


class Codex(Host):
    name, display, command = "codex", "Codex CLI", "codex"
    sources = (OBSERVED, CODEX_DOCS, CODEX_SOURCE)
    # 0.169.0 knows SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact,
    # PostCompact, SessionEnd, SubagentStart, SubagentStop and Stop (the strings in its binary). It has no Read or
    # Write tool: it reads with the shell (tool_name "Bash": exec_command) and edits with apply_patch.
    # Observed offline: the additionalContext of SessionStart, UserPromptSubmit, PreToolUse and PostToolUse reaches
    # the model (as developer messages), and Stop's {"decision": "block", "reason": ...} continues the turn with the
    # reason as the next prompt. PreToolUse alone carries the file notes (PostToolUse would repeat them); a pre-read
    # of a shell command that changes files (sed -i, apply_patch through the shell) also runs the pre-write checks.
    hooks = (Hook("SessionStart", "session-start", "startup|resume|clear"),
             Hook("UserPromptSubmit", "user-prompt"),
             Hook("PreToolUse", "pre-read", "Bash"),
             Hook("PreToolUse", "pre-write", "apply_patch"),
             Hook("Stop", "stop"),
             Hook("PreCompact", "pre-compact"))
    tool_name = "mcp__{server}__{tool}"  # offered inside one {"type": "namespace", "name": "mcp__pinky"} tool
    mcp_user, mcp_project, mcp_format, mcp_key = "~/.codex/config.toml", ".codex/config.toml", "toml", "mcp_servers"
    hooks_user, hooks_project = "~/.codex/hooks.json", ".codex/hooks.json"
    home_env = ("CODEX_HOME", "~/.codex/")
    read_tools, write_tools = (), ("apply_patch",)
    shell_tools = ("Bash", "exec_command", "shell", "local_shell")
    transcript = "$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session_id>.jsonl (CODEX_HOME defaults to ~/.codex)"
    trusts_hooks = True  # pinky.setup.codex_trust
    project_note = ("Codex reads a project's .codex/ and runs its hooks once you trust them: start `codex` in the "
                    "repository once, trust it and accept pinky-brain's hooks (or run `codex exec --trust "
                    "--dangerously-bypass-hook-trust`)")
    limits = (Limit("hooks run only once trusted (a `[hooks.state]` hash per hook in config.toml): `pinky-brain setup "
                    "codex` records it for the user-level hooks it writes; hooks written with --project must be "
                    "accepted once in the codex TUI", OBSERVED),
              Limit("no Read/Write tools: file notes come from paths parsed out of shell commands and apply_patch "
                    "headers, so a file read by a script pinky cannot parse brings no notes", CODEX_SOURCE))

    def mcp_entry(self, program: str, args: list[str]) -> dict[str, Any]:
        return {"command": program, "args": args} if args else {"command": program}

    def translator(self, cwd: str | None = None) -> Translate | None:
        return Rollout(cwd)

    def session_files(self, home: str) -> list[Path]:
        from pathlib import Path

        folder = Path(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")) / "sessions"
        return sorted(folder.glob("*/*/*/rollout-*.jsonl"))

    def head_done(self, event: dict) -> bool:
        return event.get("type") == "session_meta"

    def read_past(self, path: Path, size: int, events: list[dict]) -> Any:
        from pinky.capture.past_sessions import PastSession

        meta = next((e["payload"] for e in events if e.get("type") == "session_meta"
                     and isinstance(e.get("payload"), dict)), None)
        if meta is None or not isinstance(meta.get("id") or meta.get("session_id"), str):
            return None
        git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
        remote = git.get("repository_url") if isinstance(git.get("repository_url"), str) else None
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
        return PastSession(self.name, path, f"codex:{meta.get('id') or meta.get('session_id')}", cwd, size,
                           remote=remote, display="Codex", source=self)


class Rollout:
    """Codex's rollout lines as Claude-shaped events."""

    def __init__(self, cwd: str | None) -> None:
        from pinky.capture import foreign  # json and the shell-line parser: never on a hook's fast path

        self.f, self.cwd = foreign, cwd

    def __call__(self, line: dict) -> list[dict]:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            return []
        if kind in ("session_meta", "turn_context") and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
            return []
        if kind != "response_item":
            return []
        return self._item(payload)

    def _item(self, item: dict) -> list[dict]:
        f, kind, call_id = self.f, item.get("type"), item.get("call_id")
        if kind == "message" and item.get("role") == "user":
            texts = [c.get("text") for c in item.get("content") or [] if isinstance(c, dict)]
            prompts = [t for t in (f.typed(text) for text in texts) if t]
            return [f.user_event(" ".join(prompts))] if prompts else []
        if kind == "function_call":
            return self._call(item, call_id)
        if kind == "custom_tool_call" and item.get("name") == "apply_patch":
            return self._patch(str(item.get("input") or ""), call_id)
        if kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else f.json.dumps(output)
            failed = "Process exited with code " in text and "Process exited with code 0" not in text
            return [f.result_event(call_id, text, failed)]
        return []

    def _patch(self, patch: str, call_id: object) -> list[dict]:
        f = self.f
        return [f.tool_event(self.cwd, f"{call_id}:{n}", "Edit", {"file_path": f.absolute(p, self.cwd)})
                for n, p in enumerate(f.patch_paths(patch))]

    def _call(self, item: dict, call_id: object) -> list[dict]:
        f = self.f
        name, args = str(item.get("name") or ""), f.arguments(item.get("arguments"))
        namespace = item.get("namespace")
        if isinstance(namespace, str) and namespace.startswith("mcp__"):
            return [f.tool_event(self.cwd, call_id, f.mcp_name(namespace[5:].rstrip("_"), name), args)]
        if name in SHELL_CALLS:
            command = args.get("cmd", args.get("command"))
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            return f.shell_events(self.cwd, call_id, command) if isinstance(command, str) and command.strip() else []
        if name == "apply_patch":
            return self._patch(str(args.get("input") or args.get("patch") or ""), call_id)
        return [f.tool_event(self.cwd, call_id, name, args)] if name else []


HOST = Codex()
