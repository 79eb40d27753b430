"""Entry point that `run` execs: launch.py <data dir> <mode> [args...] (see pinky_launcher.py).

It imports the launcher from a bytecode cache in the plugin's data folder: compiling the launcher from source
on every start took about a third of a hook's time, and the plugin folder may be read-only or run with
PYTHONDONTWRITEBYTECODE. Only the launcher's imports are affected (pinky_launcher.BytecodeCache loads the
modules it imports later the same way); pinky itself runs with the interpreter's settings.
"""

import sys

_saved = sys.pycache_prefix, sys.dont_write_bytecode
if sys.argv[1:2] and sys.argv[1]:
    sys.pycache_prefix, sys.dont_write_bytecode = sys.argv[1] + "/runtime/pycache", False
import pinky_launcher  # noqa: E402

sys.pycache_prefix, sys.dont_write_bytecode = _saved
sys.exit(pinky_launcher.main(sys.argv[1:]))
