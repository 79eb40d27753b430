"""`pinky-brain setup <host>`: register pinky-mcp and pinky-hooks in a host's own config, merged with what is there.

Every other server, setting and comment is kept (JSON keeps its key order and indentation, Codex's TOML goes
through tomlkit). Running setup twice changes no byte. The bytes a file had before setup changed it are kept in
`$PINKY_HOME/state/setup/files.json`; `--remove` gives them back when the file still holds exactly what setup wrote,
otherwise it takes out only pinky's entries (and deletes a file setup created once nothing else is left in it).
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from pinky.base.fileio import atomic_write
from pinky.errors import InvalidInput
from pinky.hosts.catalog import SERVER, Host
from pinky.setup import entries, formats

STATE_FILE = "files.json"
TRUST_STEP = ("Codex runs project hooks once you trust them: start `codex` in the repository once and accept "
              "pinky-brain's hooks (or run `codex exec --dangerously-bypass-hook-trust`)")


# Measured with Copilot CLI 1.0.102: .github/hooks/*.json ran only once the folder was in trusted_folders
COPILOT_TRUST_STEP = ("Copilot CLI runs a repository's hooks only in a folder you trust: start `copilot` in the "
                      "repository once and trust it (a headless `copilot -p` does not ask, and runs none)")


@dataclass
class Change:
    """One config file: its bytes before and after (None: absent / to be deleted)."""

    path: str
    before: bytes | None
    after: bytes | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = (self.before or b"").decode("utf-8").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8").splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, self.path if self.before is not None else "/dev/null",
                                            self.path if self.after is not None else "/dev/null"))


@dataclass
class Plan:
    host: Host
    remove: bool
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"host": self.host.name, "remove": self.remove, "notes": self.notes,
                "files": [{"path": c.path, "changed": c.changed, "created": c.before is None and c.after is not None,
                           "deleted": c.after is None and c.before is not None} for c in self.changes]}


def config_path(host: Host, which: str, *, project: str | None, env: dict[str, str] | None = None) -> str | None:
    """The absolute path of `host`'s MCP (`which`="mcp") or hooks config, user level or under `project`."""
    env = dict(os.environ) if env is None else env
    relative = (host.mcp_project if which == "mcp" else host.hooks_project) if project else \
        (host.mcp_user if which == "mcp" else host.hooks_user)
    if relative is None:
        return None
    if project:
        return os.path.join(project, *relative.split("/"))
    if host.name == "codex" and env.get("CODEX_HOME") and relative.startswith("~/.codex/"):
        return os.path.join(env["CODEX_HOME"], relative[len("~/.codex/"):])
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, relative[2:]) if relative.startswith("~/") else relative


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a config file; pinky-brain changed nothing") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path} ({exc.strerror}); pinky-brain changed nothing") from None


Edit = formats.Edit


def edit_json(path: str, before: bytes | None, edits: list[Edit]) -> bytes | None:
    text = (before or b"").decode("utf-8")
    data = formats.load_json(path, text)
    for edit in edits:
        edit(data)
    if before is None and not data:
        return None
    return formats.dump_json(data, text).encode("utf-8")


def edit_toml(path: str, before: bytes | None, edits: list[Edit]) -> bytes | None:
    text = (before or b"").decode("utf-8")
    doc = formats.load_toml(path, text)
    for edit in edits:
        edit(doc)
    out = doc.as_string()
    if before is None and not out.strip():
        return None
    return out.encode("utf-8")


def mcp_edit(host: Host, folder: str, remove: bool) -> Edit:
    entry = entries.mcp_entry(host, folder)

    def apply(data: Any) -> None:
        if host.mcp_format == "toml":
            if remove:
                formats.drop_toml_table(data, host.mcp_key, SERVER)
            else:
                formats.set_toml_table(data, host.mcp_key, SERVER, entry)
            return
        servers = data.get(host.mcp_key)
        if servers is not None and not isinstance(servers, dict):
            raise InvalidInput(f"{host.mcp_key} is not an object in {host.display}'s config; fix it by hand")
        if remove:
            if servers is not None:
                servers.pop(SERVER, None)
                if not servers:
                    del data[host.mcp_key]
            return
        servers = data.setdefault(host.mcp_key, {})
        current = servers.get(SERVER)
        servers[SERVER] = {**current, **entry} if isinstance(current, dict) else entry

    return apply


def hooks_edit(host: Host, folder: str, remove: bool) -> Edit:
    wanted = {} if remove else entries.hook_entries(host, folder)

    def apply(data: Any) -> None:
        hooks = data.get("hooks")
        if hooks is not None and not isinstance(hooks, dict):
            raise InvalidInput(f"hooks is not an object in {host.display}'s config; fix it by hand")
        if host.name in ("cursor", "copilot") and not remove and "version" not in data:
            data["version"] = 1
        hooks = data.setdefault("hooks", {})
        for event in list(hooks):
            if isinstance(hooks[event], list):
                hooks[event] = [one for one in hooks[event] if not entries.is_ours(one)]
        for event, listed in wanted.items():
            hooks.setdefault(event, []).extend(listed)
        for event in [e for e, v in hooks.items() if v == []]:
            del hooks[event]
        if not hooks:
            del data["hooks"]
            if remove and set(data) == {"version"}:
                del data["version"]

    return apply


def codex_trust_edit(hooks_path: str, edit: Edit) -> Edit:
    """Codex's trust of the hooks setup writes (recorded in the user's config.toml), and only of those."""
    from pinky.setup.codex_trust import our_states, trust_edit

    old = formats.load_json(hooks_path, (read_bytes(hooks_path) or b"").decode("utf-8"))
    new = copy.deepcopy(old)
    edit(new)
    return trust_edit(our_states(hooks_path, old), our_states(hooks_path, new))


def opencode_plugin(folder: str) -> bytes:
    from pinky.setup.opencode import plugin_text

    return plugin_text(os.path.join(folder, entries.HOOKS_COMMAND)).encode("utf-8")


def opencode_npmrc(plugin_path: str, remove: bool) -> Change:
    """No ~70 s stall per offline session: see pinky.setup.opencode."""
    from pinky.setup.opencode import npmrc_path, npmrc_text

    path = npmrc_path(plugin_path)
    before = read_bytes(path)
    return Change(path, before, npmrc_text(before, remove))


def plan(host: Host, *, project: str | None = None, remove: bool = False, folder: str | None = None,
         env: dict[str, str] | None = None) -> Plan:
    """What setup (or --remove) would write for `host`; nothing is written."""
    folder = folder or (entries.launcher_dir() if not remove else "")
    per_file: dict[str, list[Edit]] = {}
    fmt: dict[str, str] = {}
    mcp_path = config_path(host, "mcp", project=project, env=env)
    hooks_path = config_path(host, "hooks", project=project, env=env)
    result = Plan(host, remove)
    if mcp_path is None and hooks_path is None:
        raise InvalidInput(f"{host.display} has no {'project' if project else 'user'}-level config; "
                           f"run setup {host.name} {'without' if project else 'with'} --project")
    if mcp_path:
        per_file.setdefault(mcp_path, []).append(mcp_edit(host, folder, remove))
        fmt[mcp_path] = host.mcp_format
    else:
        result.notes.append(f"{host.display} has no {'project' if project else 'user'}-level MCP config")
    if hooks_path and host.name == "opencode":
        before = read_bytes(hooks_path)
        result.changes.append(Change(hooks_path, before, None if remove else opencode_plugin(folder)))
        result.changes.append(opencode_npmrc(hooks_path, remove))
    elif hooks_path:
        per_file.setdefault(hooks_path, []).append(hooks_edit(host, folder, remove))
        fmt.setdefault(hooks_path, "json")
    elif host.hooks:
        result.notes.append(f"{host.display} has no {'project' if project else 'user'}-level hooks config: "
                            f"run `pinky-brain setup {host.name} {'' if project else '--project'}`".rstrip() + "`")
    if host.name == "codex" and hooks_path and mcp_path and not project:
        per_file[mcp_path].append(codex_trust_edit(hooks_path, hooks_edit(host, folder, remove)))
    elif host.name == "codex" and not remove:
        result.notes.append(TRUST_STEP)
    if host.name == "copilot" and project and not remove:
        result.notes.append(COPILOT_TRUST_STEP)
    for path, edits in per_file.items():
        before = read_bytes(path)
        editor = edit_toml if fmt[path] == "toml" else edit_json
        result.changes.append(Change(path, before, editor(path, before, edits)))
    return result


def state_path(env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    home = env.get("PINKY_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".pinky")
    return os.path.join(os.path.abspath(os.path.expanduser(home)), "state", "setup", STATE_FILE)


def load_state(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def restore_originals(result: Plan, state: dict[str, Any]) -> None:
    """On --remove: a file that still holds exactly what setup wrote gets its pre-setup bytes back."""
    for change in result.changes:
        record = state.get(change.path)
        if record and change.before is not None and digest(change.before) == record.get("written"):
            original = record.get("original")
            change.after = None if original is None else original.encode("utf-8")


def check_writable(change: Change) -> None:
    if change.before is None:
        return
    if not os.stat(change.path).st_mode & stat.S_IWUSR:
        raise InvalidInput(f"{change.path} is read-only; make it writable (chmod u+w) and rerun, pinky-brain "
                           "changed nothing")


def apply(result: Plan, env: dict[str, str] | None = None) -> None:
    """Write the plan's changes (all checked first, so a bad file leaves every file as it was)."""
    spath = state_path(env)
    state = load_state(spath)
    if result.remove:
        restore_originals(result, state)
    changed = [change for change in result.changes if change.changed]
    for change in changed:
        check_writable(change)
    done: list[str] = []
    try:
        for change in changed:
            write_one(result, change, state)
            done.append(change.path)
    except OSError as exc:
        raise InvalidInput(f"cannot write {change.path} ({exc.strerror}); pinky-brain changed "
                           f"{', '.join(done) or 'nothing'}") from None
    finally:
        atomic_write(spath, json.dumps(state, indent=2, sort_keys=True) + "\n", durable=False)


def write_one(result: Plan, change: Change, state: dict[str, Any]) -> None:
    """Write (or delete) one file and keep its record: the original bytes, and a digest of what was written."""
    if change.after is None:
        os.unlink(change.path)
        state.pop(change.path, None)
        return
    mode = stat.S_IMODE(os.stat(change.path).st_mode) if change.before is not None else 0o644
    atomic_write(change.path, change.after, mode=mode)
    if result.remove:
        state.pop(change.path, None)
        return
    record = state.get(change.path)
    if record is None or digest(change.before) != record.get("written"):
        record = {"original": None if change.before is None else change.before.decode("utf-8")}
    record["written"] = digest(change.after)
    state[change.path] = record


def summary(result: Plan) -> list[str]:
    """One line per file, for the CLI."""
    lines = []
    for change in result.changes:
        if not change.changed:
            lines.append(f"unchanged {change.path}")
        elif change.after is None:
            lines.append(f"removed {change.path}")
        elif change.before is None:
            lines.append(f"created {change.path}")
        else:
            lines.append(f"updated {change.path}")
    return lines + result.notes
