#!/usr/bin/env bash
# The main job on a bundled sample: init a demo project, index notes written in English, Spanish
# and Italian, and search them — including a Spanish question that finds an English note.
# Every command is printed as it can be pasted: from .demo/project, with PINKY_HOME set as shown.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
demo="$here/.demo"
bin="${PINKY_BIN:-$here/.venv/bin}"
rm -rf "$demo"
mkdir -p "$demo/project"
export PINKY_HOME="$demo/home"      # keep the demo away from your real ~/.pinky
unset PINKY_DB PINKY_SAVE_DIR PINKY_PROJECT PINKY_HASH_EMBED
cd "$demo/project"
# A project is a repository of its own: without one, init notes that .demo/project sits inside this checkout.
git init --quiet . 2>/dev/null || true
pinky="$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1]))' "$bin/pinky-brain")"

step() {  # print the command quoted as it can be pasted, then run it
  printf '\n\033[1m$ %s\033[0m\n' "$(python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@")"
  "$@"
}

printf 'To run these commands yourself:  cd .demo/project && export PINKY_HOME="$PWD/../home"\n'
printf '(pinky-brain is the pinky CLI under a name no other program uses; `pinky` works too)\n'
step "$pinky" init --no-mcp
cp -R "$here/examples/sample-notes/." documentation/
step "$pinky" reindex
step "$pinky" search "timeout al cerrar el pool de postgres" --limit 3
step "$pinky" search "retry flaky API calls with exponential backoff" --limit 3
step "$pinky" search "come rilasciare in produzione" --limit 3
step "$pinky" search "csv decimal" --type gotcha --limit 3
step "$pinky" list --type gotcha
step "$pinky" stats

# The demo fails loudly if cross-lingual retrieval regresses.
top=$("$pinky" search "timeout al cerrar el pool de postgres" --limit 3 --json \
      | python3 -c 'import json,sys; print(" ".join(h["slug"] for h in json.load(sys.stdin)["hits"]))')
case " $top " in
  *" gotcha/postgres-pool-hangs-on-shutdown "*) printf '\nOK: the Spanish query found the English note (%s)\n' "$top" ;;
  *) printf '\nFAIL: the Spanish query did not find the English note in its top 3: %s\n' "$top" >&2; exit 1 ;;
esac
