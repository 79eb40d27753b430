#!/usr/bin/env python3
"""Run the real-host end-to-end tests against each agent CLI's newest release on npm, and print host x version x
result.

    .venv/bin/python scripts/hosts_matrix.py                 # every host, at what npm serves today
    .venv/bin/python scripts/hosts_matrix.py codex copilot   # some of them
    .venv/bin/python scripts/hosts_matrix.py --pinned        # the versions pinned in tests/support/host_support.py

For each host it asks npm for the package's `latest` version (`npm view <package> version`), then runs that host's
test files with PINKY_TEST_HOSTS=1 and PINKY_HOST_VERSIONS=<host>=<version> (tests/support/host_support.py installs that
release into .pytest_cache once, and the stand-in of the model API plays the sessions offline). The exit status
is 0 when every host passed. Needs npm and the package registry; the sessions themselves stay on loopback.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from host_support import PINNED  # noqa: E402 - the tests' own pins, from the folder put on the path above

TESTS = {
    "claude": ["tests/test_claude_e2e.py"],
    "codex": ["tests/hosts/test_codex_e2e.py"],
    "gemini": ["tests/hosts/test_gemini_e2e.py"],
    "opencode": ["tests/hosts/test_opencode_e2e.py"],
    "copilot": ["tests/hosts/test_copilot_e2e.py"],
    "qwen": ["tests/hosts/test_qwen_e2e.py"],
    "kilo": ["tests/hosts/test_kilo_e2e.py"],  # its platform package stays pinned (host_support.BESIDE)
}
SUMMARY = re.compile(r"(\d+) (passed|failed|error|errors|skipped|xfailed|xpassed)")


def newest(package: str) -> str:
    """The version npm's `latest` tag names today."""
    done = subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"hosts_matrix: `npm view {package} version` failed: {done.stderr.strip()[-300:]}")
    return done.stdout.strip().splitlines()[-1]


def run_tests(host: str, version: str) -> tuple[str, float]:
    """(the pytest summary of the host's tests at `version`, seconds)."""
    env = {**os.environ, "PINKY_TEST_HOSTS": "1", "PINKY_HOST_VERSIONS": f"{host}={version}"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:xdist",
                           *TESTS[host]], cwd=REPO, env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"hosts_matrix: {host} {version}: {line[:300]}", file=sys.stderr, flush=True)
    counts = {kind: int(n) for n, kind in SUMMARY.findall(done.stdout.strip().splitlines()[-1] if done.stdout else "")}
    if done.returncode == 0 and counts.get("passed"):
        result = f"pass ({counts['passed']} passed)"
    else:
        shown = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or f"pytest exited {done.returncode}"
        result = f"FAIL ({shown})"
    return result, time.monotonic() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hosts", nargs="*", help=f"hosts to run: {', '.join(TESTS)} (default: all)")
    parser.add_argument("--pinned", action="store_true", help="the pinned versions instead of npm's newest")
    args = parser.parse_args(argv)
    hosts = args.hosts or list(TESTS)
    unknown = [host for host in hosts if host not in TESTS]
    if unknown:
        parser.error(f"unknown host {unknown[0]!r}; use one of {', '.join(TESTS)}")
    rows, failed = [], False
    for host in hosts:
        package, pinned = PINNED[host][0], PINNED[host][1]
        version = pinned if args.pinned else newest(package)
        print(f"hosts_matrix: {host} {package}@{version} ...", file=sys.stderr, flush=True)
        result, seconds = run_tests(host, version)
        failed = failed or not result.startswith("pass")
        rows.append((host, package, version, "yes" if version == pinned else f"no ({pinned})", result,
                     f"{seconds:.0f} s"))
    head = ("host", "package", "version", "pinned", "result", "time")
    widths = [max(len(str(row[i])) for row in (head, *rows)) for i in range(len(head))]
    for row in (head, tuple("-" * w for w in widths), *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
