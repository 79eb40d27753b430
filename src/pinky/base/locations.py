"""Where the brain is: every PINKY_* name, the project root, its save dir, the index and the home.

One answer for every front end: the CLI, the MCP server and the hooks all call `locate()`, so
they read and write the same files whichever folder they start in.

A project is *initialised* when its root folder holds `pinky.toml` (written by `pinky init`,
committed with the code). Like git, the root is found by walking up from the starting folder,
so every command gives the same answer from any subfolder. The file may set:

    save_dir = "documentation"   # the knowledge folder, relative to the root
    index = "brain.db"           # the SQLite index, relative to the root (never committed)
    project = "my-repo"          # the project name in scopes (default: the root folder's name)

Explicit settings win over discovery: flags, then PINKY_SAVE_DIR / PINKY_DB / PINKY_PROJECT
(relative paths are taken from the starting folder). Outside any project there is no save dir
and the index is `$PINKY_HOME/global.db`, which holds the global brain only, so nothing is ever
created in a folder that was not initialised.

Stdlib only, and no `pathlib`/`re`/`typing`: the hooks call this on every tool use.
"""

from __future__ import annotations

import os

# --- every PINKY_* environment variable, named once -------------------------------------------------
ENV_HOME = "PINKY_HOME"
ENV_DB = "PINKY_DB"
ENV_SAVE_DIR = "PINKY_SAVE_DIR"
ENV_PROJECT = "PINKY_PROJECT"
ENV_HASH_EMBED = "PINKY_HASH_EMBED"
ENV_EMBEDDER = "PINKY_EMBEDDER"
ENV_EMBED_MODEL = "PINKY_EMBED_MODEL"
ENV_EMBED_MODEL_PATH = "PINKY_EMBED_MODEL_PATH"
ENV_EMBED_WORKERS = "PINKY_EMBED_WORKERS"  # auto | N: processes that embed a large reindex (0 or 1: this one)
ENV_QUALITY = "PINKY_QUALITY"  # e5 | off: the second-stage retriever (pinky.search.second_stage)
ENV_MODEL_CACHE = "PINKY_MODEL_CACHE"  # "off": load the default embedder from its wheel every time
ENV_CHUNK_WORDS = "PINKY_CHUNK_WORDS"
ENV_MAX_NOTE_BYTES = "PINKY_MAX_NOTE_BYTES"  # a larger note is indexed by its title and its first bytes
ENV_MAX_IMPORT_BYTES = "PINKY_MAX_IMPORT_BYTES"  # pinky import / brain_import refuse a larger file
ENV_PROGRESS_SECONDS = "PINKY_PROGRESS_SECONDS"  # between progress lines of the CLI off a terminal
ENV_MAX_RESULT_CHARS = "PINKY_MAX_RESULT_CHARS"  # a pinky-mcp tool result (text + structuredContent) fits in this
ENV_FUSION = "PINKY_FUSION"
ENV_RRF_K = "PINKY_RRF_K"
ENV_BM25_WEIGHT = "PINKY_BM25_WEIGHT"
ENV_VECTOR_WEIGHT = "PINKY_VECTOR_WEIGHT"
ENV_MIN_SIMILARITY = "PINKY_MIN_SIMILARITY"
ENV_COVERAGE_GATE = "PINKY_COVERAGE_GATE"
ENV_QUALITY_BM25_WEIGHT = "PINKY_QUALITY_BM25_WEIGHT"  # the full-text share once second-stage vectors rank
ENV_QUALITY_USE_SHARE = "PINKY_QUALITY_USE_SHARE"  # the default embedder's share of the vector side beside them
ENV_LOG = "PINKY_LOG"
ENV_TIER = "PINKY_TIER"
ENV_SQLITE_DRIVER = "PINKY_SQLITE_DRIVER"  # "sqlite3" | "sqlean": force a driver (tests, diagnosis)
ENV_NO_VEC = "PINKY_NO_VEC"  # "1": behave as if sqlite-vec could not load (tests, diagnosis)
ENV_GIT_AUTHOR = "PINKY_GIT_AUTHOR"
ENV_GIT_PASSWORD = "PINKY_GIT_PASSWORD"  # the HTTPS password or token of the global brain's remote
ENV_DIGEST_CHARS = "PINKY_DIGEST_CHARS"
ENV_REVERIFY_DAYS = "PINKY_REVERIFY_DAYS"
ENV_HOOKS_NO_BACKGROUND = "PINKY_HOOKS_NO_BACKGROUND"  # "1": hooks never spawn reindex or rollup processes
ENV_RECALL = "PINKY_RECALL"  # "off": the UserPromptSubmit hook injects nothing
ENV_RECALL_CHARS = "PINKY_RECALL_CHARS"
ENV_RECALL_MIN_SCORE = "PINKY_RECALL_MIN_SCORE"
ENV_CAPTURE = "PINKY_CAPTURE"  # off | suggest (default) | auto
ENV_RECORD_SECONDS = "PINKY_RECORD_SECONDS"  # how long the Stop and PreCompact hooks read a transcript backlog
ENV_CACHE_DIR = "PINKY_CACHE_DIR"  # where indexes of projects that cannot hold their own go (default: the user cache)

MARKER = "pinky.toml"
DEFAULT_SAVE_DIR = "documentation"
DEFAULT_INDEX = "brain.db"
GLOBAL_INDEX = "global.db"
CACHE_APP = "pinky-brain"  # the user cache folder's name for pinky (platformdirs)
MARKER_KEYS = ("save_dir", "index", "project")
FILE_INDEX_SUFFIX = "-files"
FILE_INDEX_HEADER = "pinky: names of files linked to brain entries, v1"


def _error(message: str) -> Exception:
    """A LocationError (pinky.errors), imported only when something is wrong: the hooks import this
    module on every call and loading one module less is ~0.1 ms of a ~9 ms hook."""
    from pinky.errors import LocationError

    return LocationError(message)


def __getattr__(name: str) -> object:
    if name == "LocationError":  # still importable from here, where it is raised
        from pinky.errors import LocationError

        return LocationError
    raise AttributeError(f"module 'pinky.base.locations' has no attribute {name!r}")


class Locations:
    """Absolute paths of one brain as seen from one starting folder.

    `project_root` and `save_dir` are None outside an initialised project (global brain only).
    `db_moved_from` is the project's own index path when the project folder cannot hold it (a read-only
    checkout): `db` is then in the user's cache folder, and `db_source` is that read-only index when it
    exists, read in place until something must be written (then it is copied to `db`).
    """

    __slots__ = ("db", "db_moved_from", "db_source", "home", "project", "project_explicit", "project_root",
                 "save_dir", "start")

    def __init__(self, *, start: str, home: str, db: str, project_root: str | None, save_dir: str | None,
                 project: str | None, project_explicit: bool = False, db_moved_from: str | None = None,
                 db_source: str | None = None) -> None:
        self.start = start
        self.home = home
        self.db = db
        self.project_root = project_root
        self.save_dir = save_dir
        self.project = project
        self.project_explicit = project_explicit
        self.db_moved_from = db_moved_from
        self.db_source = db_source

    @property
    def in_project(self) -> bool:
        return self.save_dir is not None

    @property
    def base_dir(self) -> str:
        """The folder tool paths are taken relative to: the project root, else where the process started."""
        return self.project_root or self.start

    @property
    def global_dir(self) -> str:
        return os.path.join(self.home, "brain")

    @property
    def read_db(self) -> str:
        """The index to read now: `db`, or the project's read-only index while `db` does not exist yet."""
        return self.db_source if self.db_source and not os.path.isfile(self.db) else self.db

    @property
    def db_note(self) -> str | None:
        """One line saying where the index is when it is not where the project would keep it."""
        return index_note(self.db_moved_from, self.db, self.db_source)

    @property
    def state_dir(self) -> str:
        return os.path.join(self.home, "state")

    def __repr__(self) -> str:
        return (f"Locations(project_root={self.project_root!r}, save_dir={self.save_dir!r}, db={self.db!r}, "
                f"home={self.home!r}, project={self.project!r})")


def _absolute(base: str, value: str) -> str:
    return os.path.normpath(os.path.join(base, os.path.expanduser(value)))


def env_number(name: str, default: float, low: float, high: float) -> float:
    """A hook's numeric setting, clamped to [low, high]; the default when unset or not a number (a hook
    fails open: a typo in a budget must not silence it)."""
    try:
        return max(low, min(high, float(os.environ.get(name, "") or default)))
    except ValueError:
        return default


def default_home() -> str:
    return os.path.join(os.path.expanduser("~"), ".pinky")


def find_project_root(start: str) -> str | None:
    """The nearest folder at or above `start` that holds pinky.toml, like git finds `.git`."""
    folder = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(folder, MARKER)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_marker(root: str) -> dict[str, str]:
    """The settings in `<root>/pinky.toml`; a file of comments only (what `pinky init` writes) is {}.

    tomllib costs ~5 ms to import, a third of a hook's budget: it is loaded only for a file that
    actually sets something."""
    path = os.path.join(root, MARKER)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _error(f"cannot read {path}: {exc}") from None
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        return {}
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _error(f"{path} is not valid TOML ({exc}); fix it or run `pinky-brain init` again") from None
    unknown = sorted(set(data) - set(MARKER_KEYS))
    if unknown:
        raise _error(f"{path}: unknown setting {unknown[0]!r}; pinky.toml takes {', '.join(MARKER_KEYS)}")
    for key, value in data.items():
        if not isinstance(value, str) or not value.strip():
            raise _error(f"{path}: {key} must be a non-empty string")
    return {key: value.strip() for key, value in data.items()}


def can_hold(index: str) -> bool:
    """Whether this process can keep the index at `index`: its folder (or the nearest one that exists,
    to be created in) is writable, and so is the file when it exists. Two access() calls, no write."""
    folder = os.path.dirname(index)
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return not os.path.exists(index) or os.access(index, os.R_OK | os.W_OK)


def cache_dir(env: dict[str, str] | os._Environ[str], start: str) -> str:
    """Where pinky keeps what a read-only project cannot hold: PINKY_CACHE_DIR, else the user's cache folder
    (platformdirs: ~/.cache/pinky-brain on Linux, ~/Library/Caches/pinky-brain on macOS)."""
    explicit = env.get(ENV_CACHE_DIR)
    if explicit:
        return _absolute(start, explicit)
    import platformdirs  # only here: a read-only project is the rare case, and the hooks start fast

    return platformdirs.user_cache_dir(CACHE_APP, appauthor=False)


def cache_index_path(cache: str, root: str, index: str) -> str:
    """`<cache>/indexes/<folder name>-<hash of its real path>/<index name>`: one per project, readable."""
    import hashlib

    real = os.path.realpath(root)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in os.path.basename(real))[:40].strip(".")
    return os.path.join(cache, "indexes", f"{name or 'project'}-{digest}", os.path.basename(index))


def index_note(moved_from: str | None, db: str, source: str | None) -> str | None:
    """The one line every front end prints (CLI stderr, doctor, brain_status) when the index moved."""
    if moved_from is None:
        return None
    folder = os.path.dirname(moved_from)
    if source and not os.path.isfile(db):
        return (f"{source} cannot be written (read-only): searching it in place; the first change copies it "
                f"to {db}")
    return f"{folder} cannot hold the index (read-only): it is kept in {db}"


def _index_home(env: dict[str, str] | os._Environ[str], start: str, root: str,
                index: str) -> tuple[str, str | None, str | None]:
    """(index, moved_from, source): the project's index, or its stand-in in the user cache when the project
    folder cannot hold it; `source` is the project's existing index, readable, to read in place meanwhile."""
    if can_hold(index):
        return index, None, None
    cached = cache_index_path(cache_dir(env, start), root, index)
    source = index if os.path.isfile(index) and os.access(index, os.R_OK) else None
    return cached, index, source


def file_index_path(db_path: str) -> str:
    """`<index>-files`, beside the index: the names of every file some entry links to. The indexer
    writes it, the hooks read it to answer most reads without opening SQLite."""
    return db_path + FILE_INDEX_SUFFIX


def start_folder(env: dict[str, str] | os._Environ[str], cwd: str | None = None) -> str:
    """Where a process started by Claude Code looks from: the session's project, else the cwd."""
    return os.path.abspath(env.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd())


def locate(*, env: dict[str, str] | os._Environ[str] | None = None, start: str | None = None,
           home: str | None = None, db: str | None = None, save_dir: str | None = None,
           project: str | None = None) -> Locations:
    """Resolve the brain's locations. Arguments (flags) win over PINKY_* variables over pinky.toml."""
    env = os.environ if env is None else env
    start = os.path.abspath(start or os.getcwd())
    home_dir = _absolute(start, home or env.get(ENV_HOME) or default_home())
    explicit_db = db or env.get(ENV_DB) or None
    explicit_save = save_dir or env.get(ENV_SAVE_DIR) or None
    explicit_project = (project or env.get(ENV_PROJECT) or "").strip() or None
    if explicit_save:
        saves = _absolute(start, explicit_save)
        marked = find_project_root(os.path.dirname(saves))  # a marker above still names the index and project
        root = marked or os.path.dirname(saves)
        settings = read_marker(marked) if marked else {}
    else:
        found = find_project_root(start)
        root = found or ""
        settings = read_marker(found) if found else {}
        saves = _absolute(found, settings.get("save_dir", DEFAULT_SAVE_DIR)) if found else ""
        if found and not saves.startswith(found + os.sep):
            raise _error(f"{os.path.join(found, MARKER)}: save_dir must be a folder inside the project")
    moved_from = source = None
    if explicit_db:
        index = _absolute(start, explicit_db)
    elif root:
        index, moved_from, source = _index_home(env, start, root, _absolute(root, settings.get("index", DEFAULT_INDEX)))
    else:
        index = os.path.join(home_dir, GLOBAL_INDEX)
    name = explicit_project or settings.get("project") or (os.path.basename(root) if root else None)
    if name and not str(name).isprintable():  # a scope and a name shown to the agent: one line, whatever
        from pinky.base.shown import plain  # the folder is called (a printable name is plain already)

        name = plain(str(name))
    return Locations(start=start, home=home_dir, db=index, project_root=root or None, save_dir=saves or None,
                     project=name or ("default" if root else None), project_explicit=explicit_project is not None,
                     db_moved_from=moved_from, db_source=source)
