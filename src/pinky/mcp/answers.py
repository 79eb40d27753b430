"""The real server's answers to `initialize` and `tools/list`, shipped in the package (answers.json), so that
pinky-mcp's front answers both at once on every start, the first after an install or an update included.

Why: the front (pinky.mcp.front) answered them from a cache that only a first full session writes. Without it
the front relayed the real server's start, 7-16 s on a 2-core machine with two CPU hogs, and Codex CLI and
Claude Code gave up waiting: the first session after `pinky-brain setup` had no brain tools (issue 36 item 3).

What: answers.json holds, generated from the real server by `python -m pinky.mcp.answers` (and checked by
tests/mcp/test_mcp_answers.py, which compares it byte for byte with what the real server answers, for every tier
and every protocol version of the handshake): the initialize result (the same for every tier; its
protocolVersion becomes the client's, for each version in `versions`) and, per tier, the names of its tools in
tools/list order, with each tool's definition once. The front serves them when its own cache (written from
this install's real server) has no answer; the real server's own answer still arrives within the session, and a
list that differs (an SDK release that serialises differently) makes the front send
notifications/tools/list_changed, as it does for a stale cache.

Standard library only, imported by the front before anything else.
"""

from __future__ import annotations

import os
import sys

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "answers.json")
FORMAT = 1
# Lists a client may ask for before its first request to the model and wait on (Copilot CLI 1.0.102 asks for all
# three): the same for every tier and version, answered by the front too.
STATIC = ("prompts/list", "resources/list", "resources/templates/list")
DEFAULT_TIER = "write"  # what the real server serves without PINKY_TIER (pinky.mcp.server.DEFAULT_TIER)
TIER_NAMES = ("read", "write", "admin")  # pinky.mcp.tiers.TIERS


def shipped(tier: str) -> dict:
    """{"initialize": {version: result}, "tools": {version: result}} for `tier` ("" for the default), the shape
    of the front's cache; {} when the file is missing or not this format."""
    import json

    try:
        with open(FILE, encoding="utf-8") as handle:
            data = json.load(handle)
        tools = {tool["name"]: tool for tool in data["tools"]}
        listed = {**data["list"], "tools": [tools[name] for name in data["tiers"][tier or DEFAULT_TIER]]}
        versions = [str(version) for version in data["versions"]]
        initialize = data["initialize"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if data.get("format") != FORMAT:
        return {}
    return {"initialize": {version: {key: version if key == "protocolVersion" else value  # in the server's order
                                     for key, value in initialize.items()} for version in versions},
            "tools": dict.fromkeys(versions, listed), "static": data.get("static", {})}


# --- generating it -----------------------------------------------------------------------------------------


def real_answers(tier: str, version: str, cwd: str) -> tuple[dict, dict, dict]:
    """(initialize result, tools/list result, {method: result} of the STATIC lists) of the real server
    (pinky.mcp.server, without the front) started with PINKY_TIER=`tier` ("": unset) by a client speaking
    protocol `version`."""
    import json
    import subprocess

    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": version, "capabilities": {},
                         "clientInfo": {"name": "pinky-answers", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             *({"jsonrpc": "2.0", "id": 3 + n, "method": method} for n, method in enumerate(STATIC))]
    env = {key: value for key, value in os.environ.items() if key != "PINKY_TIER"}
    env.update({"PINKY_TIER": tier} if tier else {})
    env.update(PINKY_HASH_EMBED="1", PINKY_HOME=os.path.join(cwd, ".pinky-home"))
    done = subprocess.run([sys.executable, "-P", "-m", "pinky.mcp.server"], input="".join(
        json.dumps(line) + "\n" for line in lines), capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    answers = {message.get("id"): message.get("result") for message in map(json.loads, done.stdout.splitlines())}
    if not isinstance(answers.get(1), dict) or not isinstance(answers.get(2), dict):
        raise RuntimeError(f"the real server did not answer (exit {done.returncode}): {done.stderr[-2000:]}")
    return answers[1], answers[2], {method: answers.get(3 + n) for n, method in enumerate(STATIC)}


def generate(cwd: str) -> dict:
    """answers.json's content, from the real server: one start per tier, at the newest handshake version."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    latest = HANDSHAKE_PROTOCOL_VERSIONS[-1]
    tiers: dict[str, list[str]] = {}
    tools: dict[str, dict] = {}
    listed: dict = {}
    initialize: dict = {}
    static: dict = {}
    for tier in TIER_NAMES:
        initialize, result, lists = real_answers(tier, latest, cwd)
        if static and lists != static:
            raise RuntimeError(f"the {tier} tier lists other prompts or resources: the front answers them alike")
        static = lists
        tiers[tier] = [tool["name"] for tool in result["tools"]]
        tools.update((tool["name"], tool) for tool in result["tools"])
        listed = {key: value for key, value in result.items() if key != "tools"}
    return {"format": FORMAT, "versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "initialize": initialize,
            "list": listed, "tiers": tiers, "tools": list(tools.values()),
            "static": {method: result for method, result in static.items() if isinstance(result, dict)}}


def dumps(data: dict) -> str:
    import json

    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:  # pragma: no cover - the generator: `python -m pinky.mcp.answers`
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        text = dumps(generate(folder))
    try:
        with open(FILE, encoding="utf-8") as handle:
            if handle.read() == text:
                print(f"{FILE} is up to date")
                return 0
    except FileNotFoundError:
        pass
    with open(FILE, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {FILE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
