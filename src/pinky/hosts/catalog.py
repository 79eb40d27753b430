"""The agent hosts pinky-brain sets up, registered in one place: each host's name and the module that holds all
of it (a `HOST` object, a pinky.hosts.host.Host), in the order documentation and doctor list them.

A hook (`pinky-hooks --host <host> <event>`) imports only its own host's module, through `host(name)`; setup,
doctor and the documentation go through `all_hosts()`. Adding a host: its module (see pinky.hosts.host and
CONTRIBUTING.md's "Adding a host"), one line in REGISTRY, its recorded payload fixtures and its end-to-end test.
Stdlib only and nothing loaded at import.

pinky's own hook events (the `<event>` of `pinky-hooks [--host H] <event>`):
  session-start  the session digest                  user-prompt  recall for the prompt
  pre-read       notes linked to a file being read   pre-write    linked gotchas before a change, the guard on the
                                                                  host's instructions file
  post-tool      notes linked to the files a tool touched (hosts whose pre-tool output cannot reach the model, and
                 hosts without Read/Write tools: Codex's shell and apply_patch)
  stop           diary from the host's transcript + the capture ask      pre-compact  the compaction checkpoint
  session-end    the diary, for hosts whose last event carries no way to continue
"""

from __future__ import annotations

from pinky.hosts.host import HOOK_EVENTS, SERVER, TOOLS, Hook, Host, Limit, named

__all__ = ["HOOK_EVENTS", "HOSTS", "NATIVE", "REGISTRY", "SERVER", "TOOLS", "Hook", "Host", "Limit", "all_hosts",
           "host", "named", "names", "register"]

# The host whose payloads and output pinky's hook operations speak (`pinky-hooks <event>` without --host)
NATIVE = "claude"
REGISTRY: dict[str, str] = {
    "claude": "pinky.hosts.claude",
    "codex": "pinky.hosts.codex",
    "gemini": "pinky.hosts.gemini",
    "cursor": "pinky.hosts.cursor",
    "copilot": "pinky.hosts.copilot",
    "opencode": "pinky.hosts.opencode",
    "windsurf": "pinky.hosts.windsurf",
    "cline": "pinky.hosts.cline",
    "qwen": "pinky.hosts.qwen",
    "kilo": "pinky.hosts.kilo",
}
HOSTS = tuple(REGISTRY)  # the hosts pinky-brain ships with
_LOADED: dict[str, Host] = {}


def names() -> tuple[str, ...]:
    """Every registered host's name (those `register`ed since start included)."""
    return tuple(REGISTRY)


def register(name: str, module: str) -> None:
    """Add (or move) host `name`, held by `module`'s HOST, to the registry of this process."""
    REGISTRY[name] = module
    _LOADED.pop(name, None)


def host(name: str) -> Host:
    """The host called `name` (its module imported on first use); ValueError naming the known ones otherwise."""
    found = _LOADED.get(name)
    if found is not None:
        return found
    module = REGISTRY.get(name)
    if module is None:
        raise ValueError(f"unknown host {name!r}; use one of {', '.join(REGISTRY)}")
    import sys

    __import__(module)  # not importlib.import_module: importing importlib itself cost a hook ~0.3 ms
    found = sys.modules[module].HOST
    if not isinstance(found, Host) or found.name != name:
        raise ValueError(f"{module}.HOST is not the Host called {name!r}")
    _LOADED[name] = found
    return found


def all_hosts() -> list[Host]:
    """Every registered host, in the registry's order (each module imported)."""
    return [host(name) for name in REGISTRY]
