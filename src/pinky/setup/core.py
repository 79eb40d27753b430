"""`pinky-brain setup <host>`: register pinky-mcp and pinky-hooks in a host's own config, merged with what is there.

Every other server, setting, hook and comment is kept (JSON keeps its key order and indentation, Codex's TOML goes
through pinky.setup.toml_edit); files are read and written through pinky.setup.userfile (regular files only, links
kept, line endings kept, a lock and a re-read before each replace). Running setup twice changes no byte, and
pinky's hooks are updated where they are, so no other hook changes position. The bytes a file had before setup
changed it are kept in `$PINKY_HOME/state/setup/files.json`; `--remove` takes out pinky's entries, found by what
they are, and gives the original bytes back only when the file still holds exactly what setup wrote and they mean
the same as the file without pinky's entries.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import os
import stat
import tomllib
from dataclasses import dataclass, field
from typing import Any

from pinky.base.private import write_private
from pinky.errors import InvalidInput
from pinky.hosts.host import SERVER, Host
from pinky.setup import formats, host_entries, toml_edit, userfile

STATE_FILE = "files.json"
ATTEMPTS = 20  # plans made again when another program changes a file while setup writes it (each ~10 ms)


@dataclass
class Change:
    """One config file: its bytes before and after (None: absent / to be deleted)."""

    path: str
    before: bytes | None
    after: bytes | None
    kind: str = "json"  # json | toml | text: how two versions are compared for meaning

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
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
    return host.user_path(relative, env)


def inside_project(project: str, path: str | None) -> str | None:
    """--project: `path` once checked that reading and writing it stays inside the repository (`pinky.base.
    repofiles`): a checkout's link to the user's own config must not copy it (a token in it) into the repository,
    a linked folder (`.cursor -> ~/.cursor`) must not lead the write to the user's config, a FIFO must not hang
    setup. A link that stays inside is followed: its target is edited and the link kept. InvalidInput otherwise."""
    if path is None:
        return None
    from pinky.base import repofiles

    relative = os.path.relpath(path, project).replace(os.sep, "/")
    try:
        real = repofiles.resolve(project, relative)
    except repofiles.OutsideRepository as exc:
        raise InvalidInput(f"{exc}; pinky-brain writes only regular files inside the repository and changed "
                           "nothing") from None
    return path if real == os.path.join(os.path.realpath(project), *relative.split("/")) else real


def read_bytes(path: str) -> bytes | None:
    return userfile.read(path)


Edit = formats.Edit


def edit_json(path: str, before: bytes | None, edits: list[Edit]) -> bytes | None:
    text, style = userfile.decode(path, before)
    data = formats.load_json(path, text)
    original = copy.deepcopy(data)
    for edit in edits:
        try:
            edit(data)
        except InvalidInput as exc:
            raise InvalidInput(f"{path}: {exc}") from None
    if data == original and before is not None:
        return before  # nothing to change: not even the layout of the user's file
    if before is None and not data:
        return None
    return userfile.encode(formats.dump_json(data, text), style)


def edit_toml(path: str, before: bytes | None, edits: list[toml_edit.TomlEdit]) -> bytes | None:
    text, style = userfile.decode(path, before)
    out = toml_edit.edit(path, text, edits)
    if out == text and before is not None:
        return before
    if before is None and not out.strip():
        return None
    return userfile.encode(out, style)


def mcp_edit(host: Host, folder: str, remove: bool) -> Any:
    entry = host_entries.mcp_entry(host, folder)
    if host.mcp_format == "toml":
        keys = (host.mcp_key, SERVER)
        return lambda data: [toml_edit.drop_table(keys) if remove else toml_edit.set_table(keys, entry)]

    def apply(data: Any) -> None:
        servers = data.get(host.mcp_key)
        if servers is not None and not isinstance(servers, dict):
            raise InvalidInput(f"`{host.mcp_key}` is not an object; fix it by hand, pinky-brain changed nothing")
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
    """pinky's hooks written where they already are (the first of pinky's groups in an event updated in place, any
    extra one taken out), the missing ones appended: no other hook changes position."""
    wanted = {} if remove else host_entries.hook_entries(host, folder)

    def apply(data: Any) -> None:
        hooks = data.get("hooks")
        if hooks is not None and not isinstance(hooks, dict):
            raise InvalidInput("`hooks` is not an object; fix it by hand, pinky-brain changed nothing")
        if host.hooks_version is not None and not remove and "version" not in data:
            data["version"] = host.hooks_version
        hooks = data.setdefault("hooks", {})
        for event in [*hooks, *(e for e in wanted if e not in hooks)]:
            groups = hooks.setdefault(event, [])
            if isinstance(groups, list):
                hooks[event] = in_place(groups, wanted.get(event, []))
            elif event in wanted:
                raise InvalidInput(f"`hooks.{event}` is not a list; fix it by hand, pinky-brain changed nothing")
        for event in [e for e, v in hooks.items() if v == []]:
            del hooks[event]
        if not hooks:
            del data["hooks"]
            if remove and set(data) == {"version"}:
                del data["version"]

    return apply


def in_place(groups: list[Any], wanted: list[Any]) -> list[Any]:
    """`groups` with pinky's own replaced, in order and where they are, by `wanted`; the rest of `wanted` appended."""
    rest = iter(wanted)
    out = []
    for group in groups:
        if not host_entries.is_ours(group):
            out.append(group)
        elif (replacement := next(rest, None)) is not None:
            out.append(replacement)
    return out + list(rest)


def codex_trust_edit(host: Host, hooks_path: str, edit: Edit, *, record: bool, folder: str,
                     env: dict[str, str] | None) -> Any:
    """Codex's trust (in the user's config.toml) after `edit` of hooks.json: pinky's hooks trusted where they are
    (`record`), every other hook's record kept with its hook."""
    from pinky.setup.codex_trust import hook_hash, trust_edit

    old = formats.load_json(hooks_path, userfile.decode(hooks_path, read_bytes(hooks_path))[0])
    new = copy.deepcopy(old)
    try:
        edit(new)
    except InvalidInput as exc:
        raise InvalidInput(f"{hooks_path}: {exc}") from None
    known = frozenset(hook_hash(event, group.get("matcher"), one)
                      for where in {folder, *pinky_folders(host, env)} if where
                      for event, groups in host_entries.hook_entries(host, where).items()
                      for group in groups for one in group["hooks"])
    return trust_edit(hooks_path, old, new, record=record, known=known)


def pinky_folders(host: Host, env: dict[str, str] | None) -> set[str]:
    """The launcher folder of the pinky-mcp the user's config runs now (another install's, maybe)."""
    path = config_path(host, "mcp", project=None, env=env)
    try:
        data = tomllib.loads(userfile.decode(path or "", read_bytes(path) if path else None)[0])
        return {os.path.dirname(data[host.mcp_key][SERVER]["command"])}
    except (InvalidInput, tomllib.TOMLDecodeError, KeyError, TypeError):
        return set()


def plugin_changes(host: Host, hooks_path: str, folder: str, remove: bool) -> list[Change]:
    """A host whose hooks are a plugin pinky writes whole (`Host.plugin_files`: OpenCode's JS relay)."""
    command = os.path.join(folder, host_entries.HOOKS_COMMAND)
    changes = []
    for path, after, kind in host.plugin_files(hooks_path, command, remove):
        before = read_bytes(path)
        changes.append(Change(path, before, after(before), kind))
    return changes


def plan(host: Host, *, project: str | None = None, remove: bool = False, folder: str | None = None,
         env: dict[str, str] | None = None) -> Plan:
    """What setup (or --remove) would write for `host`; nothing is written."""
    if folder is None:  # --project: commands found at run time, so the files hold no path of this machine
        folder = "" if remove or project else host_entries.launcher_dir()
    per_file: dict[str, list[Any]] = {}
    fmt: dict[str, str] = {}
    mcp_path = config_path(host, "mcp", project=project, env=env)
    hooks_path = config_path(host, "hooks", project=project, env=env)
    if project:
        mcp_path, hooks_path = inside_project(project, mcp_path), inside_project(project, hooks_path)
    result = Plan(host, remove)
    if mcp_path is None and hooks_path is None:
        raise InvalidInput(f"{host.display} has no {'project' if project else 'user'}-level config; "
                           f"run setup {host.name} {'without' if project else 'with'} --project")
    if mcp_path:
        per_file.setdefault(mcp_path, []).append(mcp_edit(host, folder, remove))
        fmt[mcp_path] = host.mcp_format
    else:
        result.notes.append(f"{host.display} has no {'project' if project else 'user'}-level MCP config")
    if hooks_path and host.hooks_format == "plugin":
        result.changes += plugin_changes(host, hooks_path, folder, remove)
    elif hooks_path:
        per_file.setdefault(hooks_path, []).append(hooks_edit(host, folder, remove))
        fmt.setdefault(hooks_path, "json")
    elif host.hooks:
        result.notes.append(f"{host.display} has no {'project' if project else 'user'}-level hooks config: "
                            f"run `pinky-brain setup {host.name} {'' if project else '--project'}`".rstrip() + "`")
    if host.trusts_hooks and hooks_path:
        user_config = config_path(host, "mcp", project=None, env=env) or ""
        edit = codex_trust_edit(host, hooks_path, hooks_edit(host, folder, remove), record=not project,
                                folder=folder, env=env)
        per_file.setdefault(user_config, []).append(edit)
        fmt[user_config] = "toml"
    if host.project_note and project and not remove:
        result.notes.append(host.project_note)
    for path, edits in per_file.items():
        before = read_bytes(path)
        change = Change(path, before, (edit_toml if fmt[path] == "toml" else edit_json)(path, before, edits), fmt[path])
        if change.changed or path in (mcp_path, hooks_path):  # the user's config.toml only when a record moves
            result.changes.append(change)
    return result


def files_of(host: Host, project: str | None, env: dict[str, str] | None = None) -> list[str]:
    """Every file setup may write for `host`: its configs and setup's own record."""
    paths = [config_path(host, which, project=where, env=env) for which in ("mcp", "hooks")
             for where in {project, None}]
    return [path for path in paths if path] + [state_path(env)]


def run(host: Host, *, project: str | None = None, remove: bool = False, folder: str | None = None,
        env: dict[str, str] | None = None) -> Plan:
    """Plan and write under a lock on each file's folder; when another program changed a file between the read
    and the write, plan again from its new bytes (nothing of its change is lost)."""
    os.makedirs(os.path.dirname(state_path(env)), mode=0o700, exist_ok=True)  # its lock is every setup's
    with userfile.locked(files_of(host, project, env)):
        for _ in range(ATTEMPTS):
            result = plan(host, project=project, remove=remove, folder=folder, env=env)
            try:
                apply(result, env)
                return result
            except userfile.Changed:
                continue
    raise InvalidInput(f"{host.display}'s config kept changing while pinky-brain wrote it ({ATTEMPTS} times); run "
                       "setup again once the host is idle")


def state_path(env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    home = env.get("PINKY_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".pinky")
    return os.path.join(os.path.abspath(os.path.expanduser(home)), "state", "setup", STATE_FILE)


def state_top(path: str) -> str:
    """The state folder ($PINKY_HOME/state) that holds `path` (`state/setup/files.json`)."""
    return os.path.dirname(os.path.dirname(path))


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
    """On --remove: a file that still holds exactly what setup wrote gets its pre-setup bytes back, when they mean
    what the file without pinky's entries means (else what they held was not the user's alone: another install's
    setup, or a record from before an edit); otherwise it keeps the edit that took pinky's entries out."""
    for change in result.changes:
        record = state.get(change.path)
        if not record or change.before is None or digest(change.before) != record.get("written"):
            continue
        original = record.get("original")
        if original is None:
            if not os.path.islink(change.path) and (change.after is None or emptied(change)):
                change.after = None  # setup created it, and nothing but pinky's entries is in it
            continue
        if formats.same_meaning(change.kind, original.encode("utf-8"), change.after):
            change.after = original.encode("utf-8")


def emptied(change: Change) -> bool:
    return change.after is not None and change.kind != "text" and not formats.parsed(change.kind, change.after)


def check_writable(change: Change) -> None:
    if change.before is None:
        return
    info = os.stat(change.path)
    if info.st_nlink > 1 and stat.S_ISREG(info.st_mode):  # a replace would leave the other names behind
        raise InvalidInput(f"{change.path} has {info.st_nlink} hard links; setup replaces a file whole, which would "
                           "part it from the others: make it a symbolic link or a copy, pinky-brain changed nothing")
    if info.st_mode & stat.S_IWUSR:
        return
    if os.path.islink(change.path):  # e.g. into a store another tool manages (home-manager): change it there
        raise InvalidInput(f"{change.path} is a link to {userfile.target(change.path)}, which is read-only; change "
                           "that file where it is managed, or make it writable, pinky-brain changed nothing")
    raise InvalidInput(f"{change.path} is read-only; make it writable (chmod u+w) and rerun, pinky-brain "
                       "changed nothing")


def apply(result: Plan, env: dict[str, str] | None = None) -> None:
    """Write the plan's changes (all checked first, so a bad file leaves every file as it was). Raises
    userfile.Changed when a file changed since the plan read it (`run` plans again)."""
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
        # the original bytes of 0600 config files, tokens included: the owner's alone (pinky.base.private)
        write_private(spath, json.dumps(state, indent=2, sort_keys=True) + "\n", state_top(spath), durable=False)


def write_one(result: Plan, change: Change, state: dict[str, Any]) -> None:
    """Write (or delete) one file and keep its record: the original bytes, and a digest of what was written."""
    if change.after is None:
        userfile.delete(change.path, change.before)
        state.pop(change.path, None)
        return
    mode = stat.S_IMODE(os.stat(change.path).st_mode) if change.before is not None else 0o644
    userfile.replace(change.path, change.after, change.before, mode)
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
