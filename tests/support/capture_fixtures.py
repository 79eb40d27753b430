"""Real-shaped Claude Code turns with the capture decision a careful person would make.

Each fixture is (name, should_ask, events): the events are transcript lines as Claude Code writes
them (user prompts, assistant tool_use blocks, user tool_result blocks with `is_error` and Bash's
"Exit code N" text). Used by tests/capture/test_capture.py and benchmarks/bench_capture.py (precision and
recall of the Stop hook's trigger).
"""

from __future__ import annotations

import itertools

_ids = itertools.count(1)


def prompt(text: str) -> dict:
    return {"type": "user", "isSidechain": False, "message": {"role": "user", "content": text}}


def say(text: str) -> dict:
    return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def call(name: str, tool_input: dict, output: str = "", *, error: bool = False, sidechain: bool = False) -> list[dict]:
    """One tool call and its result, as two transcript lines."""
    tool_id = f"toolu_{next(_ids):04d}"
    use = {"type": "assistant", "isSidechain": sidechain,
           "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                         "input": tool_input}]}}
    result = {"type": "user", "isSidechain": sidechain,
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                       "content": output, "is_error": error}]}}
    return [use, result]


def bash(command: str, output: str = "", code: int = 0, **kw: bool) -> list[dict]:
    if code:
        return call("Bash", {"command": command}, f"Exit code {code}\n{output}", error=True, **kw)
    return call("Bash", {"command": command}, output, **kw)


def edit(path: str, **kw: bool) -> list[dict]:
    return call("Edit", {"file_path": path, "old_string": "a", "new_string": "b"},
                f"The file {path} has been updated.", **kw)


def read(path: str) -> list[dict]:
    return call("Read", {"file_path": path}, "     1\tdef f():\n     2\t    return 1\n")


def turn(*parts: dict | list[dict]) -> list[dict]:
    out: list[dict] = []
    for part in parts:
        out.extend(part if isinstance(part, list) else [part])
    return out


FIXTURES: list[tuple[str, bool, list[dict]]] = [
    ("pytest timeout fixed in pool.py", True, turn(
        prompt("the orders tests hang, can you look?"),
        bash("python -m pytest tests/test_orders.py -x", "E   TimeoutError: QueuePool limit of size 5 overflow 10 "
             "reached\nFAILED tests/test_orders.py::test_bulk", 1),
        read("/w/app/db/pool.py"), edit("/w/app/db/pool.py"),
        bash("python -m pytest tests/test_orders.py -x", "12 passed in 3.1s"), say("Fixed: the pool was too small."))),
    ("npm build missing module", True, turn(
        prompt("build is broken"),
        bash("npm run build", "Module not found: Error: Can't resolve './utils' in '/w/src'", 1),
        edit("/w/src/index.ts"), bash("npm run build", "webpack compiled successfully"))),
    ("cargo test fixed", True, turn(
        prompt("make the parser tests pass"),
        bash("cargo test parser", "thread 'parser::tests::empty' panicked at src/parser.rs:41", 101),
        edit("/w/src/parser.rs"), bash("cargo test parser", "test result: ok. 14 passed"))),
    ("pip package name learned", True, turn(
        prompt("install the yaml library"),
        bash("pip install yaml", "ERROR: Could not find a version that satisfies the requirement yaml", 1),
        bash("pip install pyyaml", "Successfully installed PyYAML-6.0.2"))),
    ("user correction pnpm", True, turn(
        prompt("no, use pnpm, not npm: the lockfile is pnpm-lock.yaml"),
        bash("pnpm install", "Done in 4.2s"))),
    ("user states a rule", True, turn(
        prompt("We always run alembic upgrade head before the integration tests, otherwise they fail."),
        bash("alembic upgrade head", "Running upgrade -> 3f2a"), say("Noted."))),
    ("plain question", False, turn(
        prompt("what does the retry decorator in utils.py do?"), read("/w/utils.py"),
        say("It retries the call three times with exponential backoff."))),
    ("grep without a match", False, turn(
        prompt("where is the session timeout configured?"),
        bash("grep -rn SESSION_TIMEOUT src", "", 1), bash("grep -rn session_timeout src", "src/settings.py:12"),
        say("In src/settings.py line 12."))),
    ("ls of a missing folder", False, turn(
        prompt("list the migrations"), bash("ls migrations", "ls: cannot access 'migrations': No such file", 2),
        bash("ls db/migrations", "0001_init.py\n0002_users.py"))),
    ("flaky rerun without change", False, turn(
        prompt("run the tests"), bash("pytest -q", "FAILED tests/test_net.py::test_fetch - ConnectionReset", 1),
        bash("pytest -q", "120 passed"), say("All green on a second run; test_fetch looks flaky."))),
    ("still failing at the end", False, turn(
        prompt("fix the failing test"), bash("pytest tests/test_x.py", "AssertionError: 3 != 4", 1),
        edit("/w/app/x.py"), bash("pytest tests/test_x.py", "AssertionError: 3 != 5", 1),
        say("Still failing; I need more information."))),
    ("routine edit and commit", False, turn(
        prompt("fix the typo in the README and commit"), edit("/w/README.md"),
        bash("git status", " M README.md"), bash("git commit -am 'Fix typo'", "[main 1a2b3c] Fix typo"))),
    ("traceback fixed without rerun", True, turn(
        prompt("the app crashes on start"),
        bash("python -m app", 'Traceback (most recent call last):\n  File "app/config.py", line 8\n'
             "KeyError: 'DATABASE_URL' in app/config.py", 1),
        edit("/w/app/config.py"), say("config.py now falls back to sqlite when DATABASE_URL is unset."))),
    ("feature request done first time", False, turn(
        prompt("please add a --verbose flag to the CLI"), edit("/w/cli.py"),
        bash("pytest -q tests/test_cli.py", "9 passed"))),
    ("correction about logging", True, turn(
        prompt("Don't use print for logging in this module; use the structlog logger."), edit("/w/app/jobs.py"))),
    ("lint fixed", True, turn(
        prompt("make lint pass"), bash("make lint", "src/x.py:10:121: E501 Line too long (130 > 120)", 2),
        edit("/w/src/x.py"), bash("make lint", "All checks passed!"))),
    ("docker dns workaround", True, turn(
        prompt("docker build fails on the VPN"),
        bash("docker build -t api .", "Temporary failure resolving 'deb.debian.org'", 1),
        bash("docker build --network host -t api .", "Successfully tagged api:latest"))),
    ("push after pull", False, turn(
        prompt("push it"), bash("git push", "! [rejected] main -> main (fetch first)", 1),
        bash("git pull --rebase", "Successfully rebased"), bash("git push", "main -> main"))),
    ("general knowledge answer", False, turn(
        prompt("explain the difference between a list and a tuple in python"),
        say("Lists are mutable, tuples are not..."))),
    ("no problem, thanks", False, turn(
        prompt("No problem, thanks! That's all for today."), say("Glad to help."))),
    ("sidechain failure and fix", False, turn(
        prompt("investigate the slow query"),
        bash("pytest tests/test_q.py", "FAILED", 1, sidechain=True), edit("/w/q.py", sidechain=True),
        bash("pytest tests/test_q.py", "1 passed", sidechain=True), say("The subagent found it."))),
    ("actually, the config is elsewhere", True, turn(
        prompt("Actually, the settings live in config/settings.toml, not in .env"), read("/w/config/settings.toml"))),
    ("typescript error fixed", True, turn(
        prompt("fix the type errors"),
        bash("npx tsc --noEmit", "src/api.ts(14,7): error TS2345: Argument of type 'string' is not assignable", 2),
        edit("/w/src/api.ts"), bash("npx tsc --noEmit", ""))),
    ("show me the failure", False, turn(
        prompt("run the tests so I can see the failure"), bash("pytest -q", "FAILED tests/test_a.py::test_b", 1),
        say("Here is the failure: test_b asserts the old format."))),
    ("use staging instead", True, turn(
        prompt("use the staging database instead of prod for these checks"), edit("/w/scripts/check.sh"))),
    ("make it faster instead", False, turn(
        prompt("can you make it faster instead?"), edit("/w/app/report.py"), bash("pytest -q", "40 passed"))),
    ("never mind", False, turn(
        prompt("never mind, let's look at the dashboard tomorrow"), say("Sure."))),
    ("go test fixed", True, turn(
        prompt("tests are red after the merge"),
        bash("go test ./...", "--- FAIL: TestParse (0.00s)\n    parse_test.go:22: got 3 want 4", 1),
        edit("/w/parse.go"), bash("go test ./...", "ok  example.com/p 0.2s"))),
    ("renamed variable", False, turn(
        prompt("rename tmp to buffer in io.py"), edit("/w/io.py"), bash("python -m pytest -q", "88 passed"))),
    ("a test that fails as expected in TDD", False, turn(
        prompt("write a failing test for the empty-cart bug first"), edit("/w/tests/test_cart.py"),
        bash("pytest tests/test_cart.py", "FAILED tests/test_cart.py::test_empty - assert 0 == 1", 1),
        say("The test fails as expected; shall I fix it?"))),
]

# Written after the rules were settled and never used to change them: how the trigger does on turns
# it was not shaped on (benchmarks/bench_capture.py reports them apart).
HELD_OUT: list[tuple[str, bool, list[dict]]] = [
    ("outdated snapshot updated", False, turn(
        prompt("the header snapshot test fails after the redesign"),
        bash("npx jest header", "1 snapshot failed", 1), bash("npx jest header -u", "1 snapshot updated"))),
    ("mypy error fixed", True, turn(
        prompt("make mypy happy"), bash("mypy src", "src/models.py:30: error: Incompatible return value type", 1),
        edit("/w/src/models.py"), bash("mypy src", "Success: no issues found in 41 source files"))),
    ("wrong file correction", True, turn(
        prompt("That's not the right file, the handler is in api/routes.py"), read("/w/api/routes.py"))),
    ("health check before the server was up", False, turn(
        prompt("is the server healthy?"), bash("curl -fsS localhost:8000/health", "Connection refused", 7),
        bash("make serve &", ""), bash("curl -fsS localhost:8000/health", "ok"))),
    ("psql needs a role", True, turn(
        prompt("check the database is reachable"),
        bash("psql -c 'select 1'", 'psql: error: FATAL:  role "root" does not exist', 2),
        bash("psql -U postgres -c 'select 1'", " ?column? \n----------\n        1"))),
    ("thanks, it works", False, turn(prompt("thanks, that works"), say("Great."))),
    ("test-fix loop in a feature", True, turn(
        prompt("add a discount field to the order API"), edit("/w/api/orders.py"),
        bash("npm test", "FAIL api/orders.test.ts: expected 200, got 500", 1), edit("/w/api/orders.py"),
        bash("npm test", "Tests: 31 passed"))),
    ("never push to main", True, turn(
        prompt("Stop, don't push to main directly; open a pull request instead."),
        bash("gh pr create --fill", "https://github.com/o/r/pull/7"))),
]
