"""Preparing the runtime: a venv in <data>/runtime/<key>, made with the standard tools (python -m venv, then pip
install of the package source the plugin ships in package/), so pip's own configuration applies: PIP_INDEX_URL,
PIP_FIND_LINKS, PIP_NO_INDEX, pip.conf.

It is built under a file lock, so hooks and the MCP server starting together prepare once; hooks and the server
start it as a detached process (it outlives a short session). A failure is recorded, with the line of pip's
output that names its cause and a fingerprint of pip's settings. A new session (the MCP server's start: Claude Code
starts one per session) and the CLI (`pinky-brain`, in the foreground) try again at once; hooks, which run on every
Read and Edit, try again after RETRY_AFTER_FAILURE seconds, or at once when pip's settings changed (a PIP_*
variable, a pip.conf): what failed may have changed. While it runs, the step it
is on is kept in runtime/progress; when it is done, how long each step took goes into runtime/last-preparation:
the stand-in server's brain_status reads both to say what is happening and how long it should still take.
Everything is also written to runtime/prepare.log. A new runtime prunes the older ones nothing needs (prune).

The standard library is imported inside the functions that use it: the launcher imports this module with the
pycache prefix pointing at its own bytecode cache (see launch.py), and stdlib modules imported at module level
would be compiled into that cache too.
"""

import os
import sys

from pinky_runtime_lookup import (
    READY,
    LauncherError,
    entry_script,
    is_ready,
    remember_python,
    runtime_home,
    venv_python,
    write_atomic,
)

KEEP_OLD = 1  # runtimes kept besides the newest (~200 MB each): a session started before an update uses it
RETRY_AFTER_FAILURE = 600  # seconds: hooks do not retry a failed preparation sooner unless pip's settings changed
# The steps of a preparation, in order, with what brain_status calls them and about how long each took on a
# 2-core machine from a local wheelhouse (benchmarks/bench_plugin_first_start.py): the estimate until one has
# been timed on this machine. Their sum, 47 s, is between the 37 s it took with the machine at load 6 and the
# 107 to 126 s it took at load 9 (with two CPU hogs); install is the longest step however busy the machine.
STEPS = (("venv", "creating its Python environment (python -m venv, which also installs pip)", 12.0),
         ("resolve", "pip is collecting pinky's dependencies and building pinky's wheel", 6.0),
         ("install", "pip is installing the packages (numpy, onnxruntime, the MCP SDK, ...)", 25.0),
         ("check", "checking that pinky imports", 4.0))
MEASURED = "40 s to 2 minutes on a 2-core machine, depending on how busy it is"  # what STEPS' figures came from


# --- building it ------------------------------------------------------------------------------------


def prepare(data: str, root: str, key: str, out) -> str:  # noqa: ANN001 - a text stream
    """Build the runtime for `key` unless it is ready; returns its folder. Under the lock, so concurrent
    callers wait for the one that builds and then find it ready."""
    import fcntl
    import time

    home = runtime_home(data)
    os.makedirs(home, exist_ok=True)
    venv = os.path.join(home, key)
    lock = os.open(os.path.join(home, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by close(), also when this process dies
        if is_ready(venv):
            return venv
        forget_failure(data)  # tried again: brain_status shows this try's progress, not the old failure
        with open(log_path(data), "a", encoding="utf-8", errors="replace") as log:
            # The foreground (CLI) run shows one progress line; pip's output goes to the log only.
            screen, out = (None if _same_file(out, log) else out), log
            progress = Progress(data, key, screen)
            out.write(f"pinky: preparing runtime {venv} ({time.strftime('%Y-%m-%d %H:%M:%S')}, {sys.executable})\n")
            out.flush()
            try:
                build(venv, os.path.join(root, "package"), home, out, progress)
            except LauncherError as exc:
                record_failure(data, key, str(exc))
                raise LauncherError(f"{exc}. Full output: {log_path(data)}") from None
            finally:
                progress.close()
            seconds = progress.finish()
            progress.say(f"pinky-brain: runtime ready in {seconds} s")
            from pinky_runtime_previous import source_schema, write_schema

            write_schema(venv, source_schema(root))  # what it installed: read when it is the previous one
            write_atomic(os.path.join(venv, READY), f"key {key}\npython {sys.version.split()[0]}\nseconds {seconds}\n")
            remember_python(data, venv)
            forget_failure(data)
            prune(home, venv)
            out.write(f"pinky: runtime ready in {seconds} s\n")
            out.flush()
        return venv
    finally:
        os.close(lock)


def build(venv: str, package: str, home: str, out, progress: "Progress") -> None:  # noqa: ANN001 - a text stream
    """python -m venv, then pip install of a clean copy of the package source (no bytecode, symlinks
    followed), then an import check. The venv is made where it stays: pip writes its path into scripts."""
    import shutil
    import tempfile

    clear_half_built(venv, home)
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    progress.step("venv")
    _run([sys.executable, "-m", "venv", venv], out, "python -m venv",
         f" (on Debian or Ubuntu: apt install python{version}-venv)")
    progress.step("resolve")
    with tempfile.TemporaryDirectory(prefix=".build-", dir=home) as temp:
        source = os.path.join(temp, "pinky-brain")
        shutil.copytree(package, source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        _run([venv_python(venv), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
              "--progress-bar", "off", source], out, "pip install",
             " (pip needs the package index, or PIP_INDEX_URL / PIP_FIND_LINKS / pip.conf pointing at a mirror"
             " or a wheelhouse that also holds hatchling)", progress.pip_line)
    progress.step("check")
    imports = "import pinky.cli.main, pinky.hooks.dispatch, pinky.mcp.server"
    _run([venv_python(venv), "-c", imports], out, "import check")


def clear_half_built(venv: str, home: str) -> None:
    """Take away what a build that died half-way left at `venv` (we hold the lock, so nobody is building it).
    Moved aside first, then removed without failing: a pip the dead build started may still be writing into it,
    and removing it in place raised "Directory not empty" at the user. What is left is swept by prune()."""
    import shutil
    import tempfile

    if os.path.lexists(venv):
        aside = tempfile.mkdtemp(prefix=".trash-", dir=home)
        os.replace(venv, os.path.join(aside, "venv"))
        shutil.rmtree(aside, ignore_errors=True)


def _run(command: list[str], out, what: str, hint: str = "",  # noqa: ANN001 - a text stream
         each_line=None) -> None:  # noqa: ANN001 - a callable taking a line
    """Run a step with its output copied to `out` (and each line given to `each_line`); a failure becomes one
    line with the line of the output that names the cause (failure_cause)."""
    import collections
    import subprocess

    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace")
    tail: collections.deque[str] = collections.deque(maxlen=50)
    errors: list[str] = []  # pip's own "ERROR:" lines, nested output included (only the last is kept)
    assert process.stdout is not None
    for line in process.stdout:
        out.write(line)
        text = line.strip()
        if text:
            tail.append(text)
            if text.startswith("ERROR:"):
                errors[:] = [text]
            if each_line is not None:
                each_line(text)
    out.flush()
    if process.wait():
        cause = failure_cause([*errors, *tail])
        raise LauncherError(f"{what} failed (exit {process.returncode}): {cause[:300]}{hint}")


# Lines of pip's output that say only that something failed somewhere: the cause is on another line.
_NOISE = ("note:", "hint:", "[end of output]", "│", "╰─>", "×", "exit code:", "error: subprocess-exited-with-error",
          "error: metadata-generation-failed", "See above for output", "Traceback (most recent call last)")


def failure_cause(lines: list[str]) -> str:
    """The line of a failed step's output that names the cause: pip's last `ERROR:` line ("No matching
    distribution found for hatchling>=1.21"), else the last line that is not one of pip's generic ones ("This
    error originates from a subprocess ..."), which for a Python traceback is the exception."""
    errors = [line for line in lines if line.startswith("ERROR:")]
    if errors:
        return errors[-1][len("ERROR:"):].strip()
    telling = [line for line in lines if not line.startswith(_NOISE)]
    return telling[-1] if telling else lines[-1] if lines else "no output"


def _same_file(a, b) -> bool:  # noqa: ANN001 - text streams
    try:
        return os.path.samestat(os.fstat(a.fileno()), os.fstat(b.fileno()))
    except (OSError, AttributeError, ValueError):
        return False


# --- progress: what the preparation is doing now, and how long the last one took ---------------------------


class Progress:
    """The step a preparation is on and the line pip is on, kept in runtime/progress (rewritten when either
    changes); finish() moves the steps' durations into runtime/last-preparation."""

    def __init__(self, data: str, key: str, screen=None) -> None:  # noqa: ANN001 - a text stream or None
        import time

        self.data, self.key, self.started = data, key, time.time()
        self.screen = screen  # a terminal (the CLI preparing in the foreground): one line for the step
        self.shown = False  # a progress line without its newline is on the terminal
        self.steps: list[tuple[str, float]] = []  # (step, when it started)
        self.detail = ""

    def step(self, name: str, detail: str = "") -> None:
        import time

        now, order = time.time(), [step[0] for step in STEPS]
        current = self.steps[-1][0] if self.steps else None
        if current is None or order.index(name) > order.index(current):
            self.steps.append((name, now))
            self.detail = ""
            index = order.index(name)
            self.say(f"pinky-brain: preparing its runtime, step {index + 1} of {len(STEPS)}: {STEPS[index][1]}",
                     line=False)
        elif name != current or detail == self.detail:
            return  # pip goes back to collecting between building and installing: still the later step
        self.detail = detail
        try:
            write_atomic(progress_path(self.data), _dumps({"key": self.key, "started": self.started,
                                                          "steps": self.steps, "detail": self.detail}))
        except OSError:
            pass  # only a report: the preparation goes on

    def pip_line(self, line: str) -> None:
        if line.startswith("Installing collected packages:"):
            count = len(line.split(":", 1)[1].split(","))
            self.step("install", f"{count} packages")
        elif line.startswith(("Collecting ", "Downloading ", "Processing ", "Installing build dependencies",
                              "Getting requirements", "Preparing metadata", "Building wheel")):
            words = line.split(":")[0].split(" (")[0]
            if words.startswith("Processing "):  # a path: its last part says enough
                words = "Processing " + words.rstrip("/").rsplit("/", 1)[-1]
            self.step("resolve", words[:100])

    def finish(self) -> float:
        """Record how long each step took (for the next preparation's estimate); the total, in seconds."""
        import time

        now = time.time()
        ends = [when for _, when in self.steps[1:]] + [now]
        durations = {name: round(end - when, 1) for (name, when), end in zip(self.steps, ends, strict=True)}
        seconds = round(now - self.started, 1)
        write_atomic(last_path(self.data), _dumps({"seconds": seconds, "steps": durations, "finished": now,
                                                   "python": sys.version.split()[0]}))
        return seconds

    def say(self, text: str, line: bool = True) -> None:
        """Show `text` on the terminal, if there is one: a progress line (line=False) replaces the last one on
        a terminal that can (a tty), else each is a line of its own."""
        if self.screen is None:
            return
        try:
            tty = self.screen.isatty()
        except (AttributeError, ValueError):
            tty = False
        back = "\r\033[K" if self.shown else ""
        if tty and not line:
            self.screen.write(back + text)
            self.shown = True
        else:
            self.screen.write(back + text + "\n" if tty else text + "\n")
            self.shown = False
        self.screen.flush()

    def close(self) -> None:
        if self.shown and self.screen is not None:
            self.screen.write("\n")  # what follows (an error) starts a line of its own
            self.shown = False
        try:
            os.unlink(progress_path(self.data))
        except FileNotFoundError:
            pass


def progress_path(data: str) -> str:
    return os.path.join(runtime_home(data), "progress")


def last_path(data: str) -> str:
    return os.path.join(runtime_home(data), "last-preparation")


def _dumps(value: object) -> str:
    import json

    return json.dumps(value) + "\n"


def _read_json(path: str) -> dict | None:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def last_timing(data: str) -> dict[str, float] | None:
    """Each step's seconds in the last preparation on this machine, or None before the first one."""
    last = _read_json(last_path(data))
    steps = last.get("steps") if last else None
    if not isinstance(steps, dict) or not steps:
        return None
    try:
        return {name: float(steps.get(name, 0)) for name, _, _ in STEPS}
    except (TypeError, ValueError):
        return None


def progress_report(data: str, key: str) -> tuple[str, float]:
    """What the preparation of `key` is doing, in a sentence or two, and about how many seconds it still needs:
    the step it is on and for how long, the time since it started, and the estimate: the steps still to do as
    long as they took in the last preparation on this machine (STEPS' measured figures before there is one),
    at this one's pace so far (a busy machine is slower on every step)."""
    import time

    now = time.time()
    last = last_timing(data)
    expected = last or {name: seconds for name, _, seconds in STEPS}
    progress = _read_json(progress_path(data))
    if not progress or progress.get("key") != key or not progress.get("steps"):
        left = sum(expected.values())
        return "Its preparation is starting.", left
    names = [name for name, _, _ in STEPS]
    steps = [(str(name), float(when)) for name, when in progress["steps"] if name in names]
    current, since = steps[-1]
    index = names.index(current)
    label = STEPS[index][1]
    detail = str(progress.get("detail") or "")
    in_step, elapsed = max(0.0, now - since), max(0.0, now - float(progress.get("started", since)))
    done = sum(expected[name] for name in names[:index]) + min(in_step, expected[current])
    pace = min(5.0, max(0.5, elapsed / done)) if done >= 1 else 1.0
    left = max(0.0, expected[current] * pace - in_step) + pace * sum(expected[name] for name in names[index + 1:])
    text = (f"Step {index + 1} of {len(STEPS)}: {label}" + (f" (now: {detail})" if detail else "")
            + f", for {in_step:.0f} s; {elapsed:.0f} s since it started.")
    text += (f" No preparation has been timed on this machine yet; one took {MEASURED}." if last is None
             else f" The last one here took {sum(last.values()):.0f} s.")
    if left >= 1:
        text += f" At this one's pace, about {left:.0f} s are left."
    else:
        text += " It is slower than expected (a busy machine, or a slow package index) and should end soon."
    return text, left


def prune(home: str, keep: str) -> None:
    """Delete half-built runtimes and build folders, and the older runtimes nothing needs (called under the
    lock, so nothing is being built). A runtime stays while a plugin folder still needs it (named_keys: the
    clone a marketplace was added from and Claude Code's copy of it may need different ones, and each would
    otherwise rebuild the one the other deleted), while a process runs from it (its lease, see
    pinky_runtime_lookup.lease), and the newest KEEP_OLD others stay too. The launcher's bytecode cache stays."""
    import shutil

    named, old = named_keys(home), []
    for entry in os.scandir(home):
        if not entry.is_dir(follow_symlinks=False) or entry.name in ("keys", "pycache") or entry.path == keep:
            continue
        if entry.name.startswith("."):  # a .build- folder left by a killed build, or a pruned runtime
            shutil.rmtree(entry.path, ignore_errors=True)
            continue
        marker = os.path.join(entry.path, READY)
        if os.path.isfile(marker):
            if entry.name not in named:
                old.append((os.stat(marker).st_mtime, entry.path))
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
    for _, path in sorted(old, reverse=True)[KEEP_OLD:]:
        remove_unless_running(path)


def named_keys(home: str) -> set[str]:
    """The runtimes a plugin folder on this machine needs now: the keys recorded in runtime/keys/ for a folder
    whose package source is still what the key was computed from. A record whose folder is gone (an old
    plugin version Claude Code removed) is deleted."""
    from pinky_runtime_lookup import source_files, stat_signature

    keys, folder = set(), os.path.join(home, "keys")
    try:
        records = [entry.path for entry in os.scandir(folder) if entry.name.endswith(".txt")]
    except OSError:
        return keys
    for record in records:
        try:
            with open(record, encoding="utf-8") as handle:
                root, _tag, key, signature = handle.read().split("\n", 3)
        except (OSError, ValueError):
            continue
        try:
            current = stat_signature(source_files(os.path.join(root, "package")))
        except (OSError, LauncherError):
            try:
                os.unlink(record)  # the plugin folder is gone
            except OSError:
                pass
            continue
        if current == signature:
            keys.add(key)
    return keys


def remove_unless_running(path: str) -> None:
    """Delete a runtime unless a process holds its lease: under an exclusive lock on its ready marker it is
    first moved aside (a launcher waiting for the lease then sees it gone), then deleted."""
    import fcntl
    import shutil

    try:
        fd = os.open(os.path.join(path, READY), os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        aside = os.path.join(os.path.dirname(path), f".pruned-{os.path.basename(path)}-{os.getpid()}")
        os.rename(path, aside)
    except OSError:
        return  # in use (BlockingIOError), or already gone
    finally:
        os.close(fd)
    shutil.rmtree(aside, ignore_errors=True)


# --- bookkeeping: the log, the failure record, the lock, the background start -------------------------


def log_path(data: str) -> str:
    return os.path.join(runtime_home(data), "prepare.log")


def record_failure(data: str, key: str, message: str) -> None:
    import time

    text = " ".join(message.split("\n"))
    write_atomic(os.path.join(runtime_home(data), "failed"), f"{key}\n{time.time()}\n{text}\n{pip_settings()}")


def forget_failure(data: str) -> None:
    try:
        os.unlink(os.path.join(runtime_home(data), "failed"))
    except FileNotFoundError:
        pass


def failure_record(data: str, key: str) -> tuple[float, str, str | None] | None:
    """(when, message, pip settings fingerprint) of the last failed preparation of `key`, if any."""
    try:
        with open(os.path.join(runtime_home(data), "failed"), encoding="utf-8") as handle:
            parts = handle.read().split("\n", 3)
        failed_key, when, message = parts[:3]
        return (float(when), message, parts[3] if len(parts) > 3 else None) if failed_key == key else None
    except (OSError, ValueError):
        return None


def recent_failure(data: str, key: str, max_age: float | None = RETRY_AFTER_FAILURE,
                   since: float | None = None) -> str | None:
    """The message of the last failed preparation of `key` while it is not to be retried yet: younger than
    `max_age` seconds, made at or after `since` (a session tries once itself), with pip's settings unchanged.
    max_age=None: the last failure however old, to report it."""
    import time

    record = failure_record(data, key)
    if record is None:
        return None
    when, message, settings = record
    if max_age is None:
        return message
    if time.time() - when > max_age or (since is not None and when < since):
        return None
    if settings is not None and settings != pip_settings():
        return None
    return message


def pip_settings() -> str:
    """A fingerprint of what pip reads besides the package source: its PIP_* variables and its configuration
    files (path, size, mtime). A failure recorded under other settings is retried."""
    from pinky_runtime_lookup import _name_for

    env = os.environ
    parts = sorted(f"{name}={value}" for name, value in env.items() if name.startswith("PIP_"))
    home = os.path.expanduser("~")
    folders = [*(env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep),
               env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")]
    files = [os.path.join(folder, "pip", "pip.conf") for folder in folders if folder]
    files += ["/etc/pip.conf", os.path.join(home, ".pip", "pip.conf"), env.get("PIP_CONFIG_FILE") or ""]
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            continue
        parts.append(f"{path} {info.st_size} {info.st_mtime_ns}")
    return _name_for("\n".join(parts))


def failure_text(data: str, key: str, message: str) -> str:
    """A failed preparation, said to the user: the cause, the log, how to try again and when it happens anyway."""
    import time

    record = failure_record(data, key)
    when = (record[0] if record else time.time()) + RETRY_AFTER_FAILURE
    minutes = max(1, round((when - time.time()) / 60))
    at = time.strftime("%H:%M", time.localtime(when))
    return (f"pinky-brain could not prepare its runtime: {message}. Log: {log_path(data)}. Fix that, then run "
            "`pinky-brain` in the agent's shell (it prepares in the foreground and shows what fails) or start a new "
            f"session: either tries again at once. Hooks try again at {at} (in about {minutes} min), or as soon as "
            "pip's settings (PIP_* variables, pip.conf) change")


def preparing_now(data: str) -> bool:
    """Whether some process holds the preparation lock."""
    import fcntl

    path = os.path.join(runtime_home(data), ".lock")
    if not os.path.exists(path):
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def start_preparing(data: str, key: str, since: float | None = None) -> str:
    """Make sure a detached process prepares the runtime (it outlives a short session); say what is going on.
    `since`: when this session started (a failure from before it is tried again). Every hook asks while the
    previous runtime serves, so subprocess is imported only to start one."""
    failure = recent_failure(data, key, since=since)
    if failure:
        return failure_text(data, key, failure)
    if not preparing_now(data):
        import subprocess

        os.makedirs(runtime_home(data), exist_ok=True)
        with open(log_path(data), "ab") as log:
            subprocess.Popen([sys.executable, entry_script(), data, "prepare"], cwd=runtime_home(data),
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                             start_new_session=True)
    return ("pinky-brain is preparing its runtime in the background (the first start after installing or updating "
            f"the plugin installs its Python packages; log: {log_path(data)})")
