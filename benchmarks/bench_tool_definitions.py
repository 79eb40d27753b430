"""What pinky's tool definitions cost the agent in every request (a script, not a test): prints them.

    python benchmarks/bench_tool_definitions.py [--claude PATH] [--json FILE]

1. From the real `pinky-mcp`'s tools/list, per tier: the characters of the `tools` entries Claude Code sends
   the model in every request ({name: mcp__<server>__<tool>, description, input_schema}, compact JSON), under
   the name a project's .mcp.json gives the server (`pinky`) and the plugin's (`plugin_pinky_pinky`), and
   about how many tokens that is (4 characters a token); per tool for the default tier.
2. With --claude (the real Claude Code CLI), the same figure read from a logged request: `claude -p` runs
   against tests/support/messages_stand_in.py with the server in a --mcp-config.
tests/mcp/test_tool_definitions.py holds the default tier to 10,000 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from claude_support import OFFLINE_ENV, definitions_chars, tool_definitions  # noqa: E402
from figures import record, write  # noqa: E402

HAND_TEST = ['{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
             '{"jsonrpc":"2.0","id":2,"method":"tools/list"}']


def server_command() -> str:
    script = Path(sys.executable).parent / "pinky-mcp"
    return str(script) if script.exists() else "pinky-mcp"


def listed(tier: str, home: Path) -> list[dict]:
    env = {**os.environ, "PINKY_HOME": str(home), "PINKY_HASH_EMBED": "1", "PINKY_TIER": tier}
    done = subprocess.run([server_command()], input="\n".join(HAND_TEST) + "\n", capture_output=True, text=True,
                          env=env, cwd=home.parent, timeout=120, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return next(a for a in answers if a.get("id") == 2)["result"]["tools"]


def logged(claude: str, scratch: Path) -> int:
    """The characters of the mcp__pinky__* entries in a request Claude Code really sent."""
    home, logs = scratch / "claude-home", scratch / "logs"
    home.mkdir()
    logs.mkdir()
    config = {"mcpServers": {"pinky": {"type": "stdio", "command": server_command(), "args": [],
                                       "env": {"PINKY_HOME": str(scratch / "pinky"), "PINKY_HASH_EMBED": "1"}}}}
    (scratch / "mcp.json").write_text(json.dumps(config))
    (scratch / "script.json").write_text(json.dumps([{"tool": "brain_stats", "input": {}}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE", "ANTHROPIC"))}
    env.update(OFFLINE_ENV, HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), ANTHROPIC_API_KEY="bench")
    subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "messages_stand_in.py"), "run", str(logs),
                    str(scratch / "script.json"), "--", claude, "-p", "stats", "--output-format", "stream-json",
                    "--verbose", "--strict-mcp-config", "--mcp-config", str(scratch / "mcp.json"),
                    "--allowedTools", "mcp__pinky__*"], cwd=home, env=env, capture_output=True, timeout=300, check=True)
    for path in sorted(logs.glob("[0-9]*.json")):
        entries = [t for t in json.loads(path.read_text())["body"].get("tools") or []
                   if t["name"].startswith("mcp__pinky__")]
        if entries:
            return definitions_chars(entries)
    raise SystemExit("no logged request offered the mcp__pinky__ tools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", help="the claude CLI: also measure a logged request")
    parser.add_argument("--json", type=Path, help="write the figures here (bench_all.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        print(f"{'tier':6} {'tools':>5} {'mcp__pinky__*':>14} {'plugin':>8} {'~tokens':>8}")
        for tier in ("read", "write", "admin"):
            tools = listed(tier, scratch / "home")
            size = definitions_chars(tool_definitions(tools))
            plugin = definitions_chars(tool_definitions(tools, "plugin_pinky_pinky"))
            record(f"tool_definitions_{tier}_chars", size)
            print(f"{tier:6} {len(tools):5} {size:14,} {plugin:8,} {size / 4:8,.0f}")
        print("\nper tool (write tier, mcp__pinky__*): total / description / argument descriptions")
        for entry in tool_definitions(listed("write", scratch / "home")):
            props = entry["input_schema"].get("properties", {}).values()
            print(f"  {entry['name']:28} {definitions_chars([entry]):6,} {len(entry['description']):5} "
                  f"{sum(len(p.get('description', '')) for p in props):5}")
        if args.claude:
            size = record("tool_definitions_logged_chars", logged(args.claude, scratch))
            print(f"\nfrom a request the real Claude Code logged (write tier, mcp__pinky__*): {size:,} characters")
    write(args.json)


if __name__ == "__main__":
    main()
