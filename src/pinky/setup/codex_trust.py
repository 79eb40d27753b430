"""Codex CLI's hook trust, recorded by setup for exactly the hooks it writes, and kept for every other hook.

Codex (0.169) runs a hook from hooks.json only when the user config.toml holds, under
`[hooks.state."<hooks.json path>:<event label>:<group index>:<handler index>"]`, a `trusted_hash` equal to the
hook's current hash (the TUI writes it when the user accepts a hook; `codex exec --dangerously-bypass-hook-trust`
skips the check). The hash is sha256 over the compact, key-sorted JSON of the hook's normalized identity: the
event label, the matcher (none for UserPromptSubmit and Stop), and the one handler with its timeout made explicit
(600 s by default) and `async` false. Source: openai/codex, codex-rs/hooks/src/engine/discovery.rs
(command_hook_hash, hook_trust_status) and codex-rs/config/src/fingerprint.rs (version_for_toml); checked with
the real Codex 0.169.0 offline (tests/setup, and documentation/HOSTS.md).

The key is a position, so a hooks.json edit that moves a user's group (pinky's group taken out before it) moves
the user's record with it; setup itself updates pinky's groups where they are and appends only the missing ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pinky.setup import host_entries
from pinky.setup.toml_edit import Op, TomlEdit, drop_table, put_table, set_table

DEFAULT_TIMEOUT = 600
NO_MATCHER = ("UserPromptSubmit", "Stop")
_WORD_START = re.compile(r"(?<!^)(?=[A-Z])")


def label(event: str) -> str:
    """SessionStart -> session_start (Codex's key label for an event)."""
    return _WORD_START.sub("_", event).lower()


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    one: dict[str, Any] = {"type": "command", "command": handler["command"],
                           "timeout": max(int(handler.get("timeout") or DEFAULT_TIMEOUT), 1),
                           "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        one["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": label(event), "hooks": [one]}
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def our_states(hooks_path: str, data: dict[str, Any]) -> dict[str, str]:
    """State key -> trusted hash, for each pinky hook in the hooks.json `data` kept at `hooks_path`."""
    out: dict[str, str] = {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    for event, groups in (hooks or {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not host_entries.is_ours(group):
                continue
            for h, handler in enumerate(group["hooks"]):
                out[f"{hooks_path}:{label(event)}:{g}:{h}"] = hook_hash(event, group.get("matcher"), handler)
    return out


def user_moves(hooks_path: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Key prefix -> key prefix, for each group not pinky's whose index an edit of hooks.json changed (a pinky group
    taken out before it): Codex keys its trust by position, so the record has to move with the group."""
    moves: dict[str, str] = {}
    for event, groups in _hooks(old).items():
        after = _hooks(new).get(event)
        if not isinstance(groups, list) or not isinstance(after, list):
            continue
        was = [g for g, group in enumerate(groups) if not host_entries.is_ours(group)]
        now = [g for g, group in enumerate(after) if not host_entries.is_ours(group)]
        for g_old, g_new in zip(was, now, strict=False):
            if g_old != g_new:
                moves[f"{hooks_path}:{label(event)}:{g_old}:"] = f"{hooks_path}:{label(event)}:{g_new}:"
    return moves


def _hooks(data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    return hooks if isinstance(hooks, dict) else {}


STATE = ("hooks", "state")


def trust_edit(hooks_path: str, old: dict[str, Any], new: dict[str, Any], *, record: bool,
               known: frozenset[str] = frozenset()) -> TomlEdit:
    """The config.toml operations that keep every hook's trust where its hook is after hooks.json goes from `old`
    to `new`: the user's records move with their groups (their content untouched), pinky's own records go where
    pinky's hooks are now (`record`; a key the user added to one, `enabled = false`, is kept) and nowhere else;
    without `record` (project hooks, which the user accepts in Codex) a record where a pinky hook still is stays.
    A record is pinky's when its hash is one of a pinky hook: those in `old` and `new`, and `known` (the hashes
    of pinky's hooks as another install of it wrote them)."""
    moves = user_moves(hooks_path, old, new)
    placed = our_states(hooks_path, new)  # where pinky's hooks are now: a record there is for them
    pinky_now = placed if record else {}
    ours = set(our_states(hooks_path, old).values()) | set(our_states(hooks_path, new).values()) | set(known)

    def operations(data: dict[str, Any]) -> list[Op]:
        state = data.get("hooks", {}).get("state", {}) if isinstance(data.get("hooks"), dict) else {}
        state = state if isinstance(state, dict) else {}
        moved = {moves[prefix] + key[len(prefix):]: record_ for key, record_ in state.items()
                 for prefix in moves if key.startswith(prefix)}
        leaving = {key for key in state for prefix in moves if key.startswith(prefix)}
        stale = {key for key, record_ in state.items() if key.startswith(f"{hooks_path}:") and key not in placed
                 and key not in moved and isinstance(record_, dict) and record_.get("trusted_hash") in ours}
        ops: list[Op] = [drop_table((*STATE, key)) for key in sorted(leaving | stale)]
        ops += [put_table((*STATE, key), dict(record_)) for key, record_ in moved.items()]
        ops += [set_table((*STATE, key), {"trusted_hash": value}) for key, value in pinky_now.items()]
        return ops

    return operations
