"""Codex CLI's hook trust, recorded by setup for exactly the hooks it writes.

Codex (0.169) runs a hook from hooks.json only when the user config.toml holds, under
`[hooks.state."<hooks.json path>:<event label>:<group index>:<handler index>"]`, a `trusted_hash` equal to the
hook's current hash (the TUI writes it when the user accepts a hook; `codex exec --dangerously-bypass-hook-trust`
skips the check). The hash is sha256 over the compact, key-sorted JSON of the hook's normalized identity: the
event label, the matcher (none for UserPromptSubmit and Stop), and the one handler with its timeout made explicit
(600 s by default) and `async` false. Source: openai/codex, codex-rs/hooks/src/engine/discovery.rs
(command_hook_hash, hook_trust_status) and codex-rs/config/src/fingerprint.rs (version_for_toml); checked with
the real Codex 0.169.0 offline (tests/setup, and documentation/HOSTS.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pinky.setup import entries, formats

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
            if not entries.is_ours(group):
                continue
            for h, handler in enumerate(group["hooks"]):
                out[f"{hooks_path}:{label(event)}:{g}:{h}"] = hook_hash(event, group.get("matcher"), handler)
    return out


def trust_edit(old: dict[str, str], new: dict[str, str]) -> formats.Edit:
    """Drop the trust of pinky's previous hooks, record it for the hooks just written."""

    def apply(doc: Any) -> None:
        for key in old:
            formats.drop_nested(doc, ("hooks", "state"), key)
        for key, value in new.items():
            formats.set_nested(doc, ("hooks", "state"), key, {"trusted_hash": value})

    return apply
