#!/usr/bin/env bash
# `pinky eval` over the bundled sample notes: a throwaway project holding examples/sample-notes, the
# golden queries of examples/golden.jsonl, gated against examples/golden-baseline.json.
# Extra arguments go to pinky eval (e.g. --json, or --save-baseline FILE after a deliberate change).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${PINKY_BIN:-$here/.venv/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project"
cp -R "$here/examples/sample-notes" "$work/project/documentation"
printf '# a pinky project\n' > "$work/project/pinky.toml"
export PINKY_HOME="$work/home"
unset PINKY_DB PINKY_SAVE_DIR PINKY_PROJECT PINKY_HASH_EMBED
cd "$work/project"
"$bin/pinky-brain" reindex --quality >/dev/null
"$bin/pinky-brain" eval "$here/examples/golden.jsonl" --baseline "$here/examples/golden-baseline.json" "$@"
