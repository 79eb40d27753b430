"""Entry point that `run` execs: launch.py <data dir> <mode> [args...] (see pinky_launcher.py).

It imports the launcher from a bytecode cache in the plugin's data folder: compiling the launcher from source
on every start took about a third of a hook's time, and the plugin folder may be read-only or run with
PYTHONDONTWRITEBYTECODE. Only the launcher's imports are affected (pinky_launcher.BytecodeCache loads the
modules it imports later the same way); pinky itself runs with the interpreter's settings. A hook in its common
case imports pinky_runtime_lookup alone (run_hook_here); everything else goes through pinky_launcher.main.
"""

import sys

_saved = sys.pycache_prefix, sys.dont_write_bytecode
_cache = sys.argv[1] + "/runtime/pycache" if sys.argv[1:2] and sys.argv[1] else None


def _cached_import(name: str):  # noqa: ANN202 - a module
    if _cache:
        sys.pycache_prefix, sys.dont_write_bytecode = _cache, False
    try:
        return __import__(name)
    finally:
        sys.pycache_prefix, sys.dont_write_bytecode = _saved


_code = _cached_import("pinky_runtime_lookup").run_hook_here(sys.argv[1:])  # None: not a hook's hot path
if _code is None:
    _code = _cached_import("pinky_launcher").main(sys.argv[1:])
sys.exit(_code)
