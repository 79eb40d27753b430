"""The runtime that serves while the one a plugin update needs is prepared: the previous one, when it is safe.

A plugin update (or a commit in the clone a marketplace was added from) brings new package source, so a new
runtime, which takes 40 s to 2 minutes to prepare. Meanwhile hooks and the MCP server run pinky from the runtime
prepared last before it, so the first session after an update has every brain tool and its digest, and the
next start after the new runtime is ready runs the new version.

Safe means: the previous runtime's pinky knows the same index schema (pinky.store.migrations' list) as the new
source. An older pinky takes an index whose schema it does not know for a newer pinky's and rebuilds it from the
markdown (pinky.indexing.index), so with an update that migrates the index the two versions would rebuild the
index in turn for as long as both run. Then nothing serves from the previous runtime: the stand-in server
offers brain_status until the new one is ready, as on a first install, and says why.

Imported only when the runtime this plugin needs is not ready (never on a hook's hot path); the standard library
inside the functions, for the reason pinky_runtime_prepare.py gives.
"""

import os

from pinky_runtime_lookup import READY, is_ready, runtime_home, venv_python

SCHEMA = "pinky-schema"  # in a runtime: its pinky's migration names, one a line (written once, then read)


def previous_runtime(data: str, root: str, venv: str) -> tuple[str | None, str]:
    """(the ready runtime to serve from while `venv` is prepared, or None; why none, for brain_status)."""
    newest = newest_ready(runtime_home(data), venv)
    if newest is None:
        return None, "no earlier runtime is ready"
    wanted, found = source_schema(root), runtime_schema(newest)
    if found is None:
        return None, f"the previous runtime ({os.path.basename(newest)}) does not start"
    if wanted != found:
        return None, (f"this update changes the index's schema ({len(found)} -> {len(wanted)} migrations), and the "
                      "previous version would take an index the new one migrated for damage and rebuild it")
    return newest, ""


def newest_ready(home: str, exclude: str) -> str | None:
    """The ready runtime prepared last, besides `exclude` (by the time of its ready marker)."""
    best: tuple[float, str] | None = None
    try:
        entries = list(os.scandir(home))
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith(".") or entry.path == exclude or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            when = os.stat(os.path.join(entry.path, READY)).st_mtime
        except OSError:
            continue
        if (best is None or when > best[0]) and is_ready(entry.path):
            best = (when, entry.path)
    return best[1] if best else None


def source_schema(root: str) -> list[str]:
    """The migration names in the plugin's package source, in order: each `def` after an `@migration` line of
    pinky/store/migrations.py (tests/test_plugin_previous.py checks this against migrations.KNOWN)."""
    path = os.path.join(root, "package", "src", "pinky", "store", "migrations.py")
    names, decorated = [], False
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("@migration"):
                    decorated = True
                elif decorated and line.startswith("def "):
                    names.append(line[4:].split("(", 1)[0].strip())
                    decorated = False
    except OSError:
        return []
    return names


def runtime_schema(venv: str) -> list[str] | None:
    """The migration names the runtime's pinky knows: from its SCHEMA file, else asked of its interpreter once
    (runtimes prepared before that file was written) and kept. None when its pinky does not import. Every hook
    asks while the previous runtime serves: subprocess (10 ms to import) only when the file is missing."""
    path = os.path.join(venv, SCHEMA)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().split()
    except OSError:
        pass
    import subprocess

    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        done = subprocess.run([venv_python(venv), "-c", "import pinky.store.migrations as m; print(*m.KNOWN)"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode:
        return None
    names = done.stdout.split()
    write_schema(venv, names)
    return names


def write_schema(venv: str, names: list[str]) -> None:
    from pinky_runtime_lookup import write_atomic

    try:
        write_atomic(os.path.join(venv, SCHEMA), "".join(f"{name}\n" for name in names))
    except OSError:
        pass  # only a cache: asked again next time
