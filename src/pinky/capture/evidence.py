"""Capture at the right moment: does this turn show that something was learned?

The Stop hook passes the turn's transcript events here. Three signs count, each with the
evidence quoted back to the agent:
- *fixed*: a command failed and a later run of the same command passed, after an edit or with a
  changed command line (a flaky rerun of the identical command with no edit is not knowledge);
- *error fixed*: a command failed with an error naming a file, that file was then edited, and no
  later run of the command failed again;
- *correction*: the user corrected the agent or stated a rule ("no, use X", "never Y", "X instead").
Exploration is not evidence: a `grep` with no match or an `ls` of a missing folder exits non-zero
too. The rules are measured on the transcript fixtures in tests/support/capture_fixtures.py
(`benchmarks/bench_capture.py` prints precision and recall). Stdlib only: the Stop hook runs it.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from pinky.capture.transcript import SENTENCE_BREAK, WRITE_TOOLS, message_content, prompt_text, tool_uses

__all__ = ["Evidence", "Timeline", "command_key", "find_evidence", "saved_in"]

# Commands that look things up: their failures say nothing learned.
EXPLORATORY = frozenset("""ls cat head tail less more grep egrep fgrep rg ag find fd which type command test [ echo
printf pwd cd diff stat file wc tree du df env printenv whoami id ps top sleep true false man help curl wget
""".split())
GIT_LOOKUPS = frozenset("status diff log show grep rev-parse branch remote config ls-files blame fetch".split())
WRAPPERS = ("uv run", "poetry run", "pipenv run", "pdm run", "hatch run", "bundle exec", "pnpm exec", "npx",
            "bunx", "sudo", "time", "nice", "command")
_WRAPPER_WORDS = tuple(wrapper.split() for wrapper in WRAPPERS)
SUBCOMMAND_TOOLS = frozenset("""npm yarn pnpm bun deno cargo go make just git docker docker-compose kubectl helm
terraform dotnet mvn gradle gradlew pip pip3 uv poetry tox nox python python3 node ruby bash sh rake mix
""".split())

_COMMAND_SPLIT = re.compile(r"&&|\|\||;|\n")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_EXIT_CODE = re.compile(r"^\s*Exit code (\d+)")
_ERROR_LINE = re.compile(
    r"(?:Traceback|Error\b|error\b|error\[|FAILED|FAIL\b|panicked|Exception|fatal:|cannot|not found|No such)")
# A name starts where its run of name characters starts: tried from every offset of a long run (a
# failed command's output may print one), the scan was quadratic.
_FILE_IN_TEXT = re.compile(r"(?<![\w./-])[\w./-]*\w\.(?:py|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|cs|php|swift|"
                           r"sh|toml|yaml|yml|json|cfg|ini|md|sql|html|css|vue|ex|exs)\b")
_CORRECTION = re.compile(
    r"""^\s*(?:no|nope|wrong|not\s+quite|stop)(?!\s+(?:problem|worries|rush|thanks|need))\b[\s,.!:;-]
      |\b(?:that'?s|that\s+is|this\s+is|it'?s)\s+(?:wrong|not\s+right|incorrect|not\s+how|not\s+what)
      |\b(?:don'?t|do\s+not|never)\s+(?:use|call|run|edit|touch|add|import|commit|push|put|write)\b
      |\b(?:always|must)\s+(?:use|run|call)\b
      |\buse\s+\S+(?:\s+\S+)?\s+instead\b|\binstead\s+of\b
      |\bwe\s+(?:always|never|don'?t)\s+\w+
      |\byou\s+(?:should\s+have|forgot\s+to|need\s+to\s+use)\b
      |\bactually[,\s]+(?:it|we|you|the|that|this)\b""",
    re.IGNORECASE | re.VERBOSE)
# Every correction pattern contains one of these words: a prompt without any skips the patterns.
_CORRECTION_WORDS = ("no", "wrong", "stop", "not", "don", "never", "always", "must", "instead", "you", "actually")
RECENT_PROMPTS = 20  # a turn has a prompt or a few; older ones were judged at their own Stop
_SAVE_COMMAND = re.compile(r"(?:^|[\s;&|(])(?:pinky|pinky-brain)\s+save\b")
LINE = 140
OUTPUT_KEPT = 8000  # of a failed command's output, searched for the file names it blames
MAX_RUNS = 10_000  # command runs (and edits) of a turn that are judged: the newest


@dataclass(frozen=True)
class Evidence:
    """One sign that the turn learned something: its kind and a one-line quote to show the agent."""

    kind: str  # "fixed" | "error-fixed" | "correction"
    text: str


@dataclass(frozen=True)
class _Run:
    """One command run, kept small: a 200 MB turn must not be held twice over."""

    key: str
    shown: str  # the command as quoted back, whitespace collapsed and cut
    same: int  # hash of the command with whitespace collapsed: a plain rerun has the same
    failed: bool
    error: str
    at: int
    named: frozenset[str] = frozenset()  # file names a failure's output blames


def _clip(text: str, limit: int = LINE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _strip_wrappers(words: list[str]) -> list[str]:
    """The words after env assignments and runners; an index moves, not copies of the list (a command
    of 100,000 `A=1` words was quadratic)."""
    at, changed = 0, True
    while at < len(words) and changed:
        changed = False
        while at < len(words) and _ENV_ASSIGN.match(words[at]):
            at, changed = at + 1, True
        for parts in _WRAPPER_WORDS:
            if words[at:at + len(parts)] == parts:
                at, changed = at + len(parts), True
        if words[at:at + 1] == ["timeout"] and len(words) - at > 1:
            at, changed = at + 2, True
        if len(words) - at > 2 and words[at].rsplit("/", 1)[-1].startswith("python") and words[at + 1] == "-m":
            at, changed = at + 2, True
    return words[at:]


def command_key(command: str) -> str:
    """What makes two runs 'the same command': the program (after `cd x &&`, env assignments and
    runners like `uv run`/`python -m`), plus its subcommand or script for tools that have one."""
    segment = _COMMAND_SPLIT.split(command)
    words: list[str] = []
    for part in segment:
        words = part.split()
        if words and words[0] != "cd":
            break
    words = _strip_wrappers(words)
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program in SUBCOMMAND_TOOLS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        return f"{program} {rest[0]}" if rest else program
    return program


def _exploratory(key: str) -> bool:
    program, _, sub = key.partition(" ")
    return program in EXPLORATORY or (program == "git" and sub in GIT_LOOKUPS) or not program


def _result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return content if isinstance(content, str) else ""


def _failed(block: dict, text: str) -> bool:
    code = _EXIT_CODE.match(text)
    return bool(block.get("is_error")) or bool(code and code.group(1) != "0")


def _error_line(text: str) -> str:
    for line in text.splitlines():
        if _ERROR_LINE.search(line) and not _EXIT_CODE.match(line):
            return _clip(line.strip(), 100)
    return next((_clip(ln.strip(), 100) for ln in text.splitlines() if ln.strip() and not _EXIT_CODE.match(ln)), "")


class Timeline:
    """A turn's command runs (with their outcome), edited files and prompts, fed one event at a time.

    The newest MAX_RUNS runs and edits and RECENT_PROMPTS prompts are kept, each in a few fields, so a
    turn of any length costs bounded memory; `evidence()` judges them in linear time."""

    def __init__(self) -> None:
        self.saved = False
        self._at = 0
        self._pending: dict[str, tuple[str, int]] = {}
        self.runs: deque[_Run] = deque(maxlen=MAX_RUNS)
        self.edits: deque[tuple[int, str]] = deque(maxlen=MAX_RUNS)  # (position, file name)
        self.prompts: deque[str] = deque(maxlen=RECENT_PROMPTS)

    def add(self, event: dict) -> None:
        at, self._at = self._at, self._at + 1
        kind = event.get("type")
        if kind == "assistant":
            sidechain = bool(event.get("isSidechain"))
            for block in tool_uses(event):
                self.saved = self.saved or _saves(block["name"], block["input"])
                if not sidechain:
                    self._add_call(block, at)
        elif kind == "user" and not event.get("isSidechain"):
            prompt = prompt_text(event)
            if prompt:
                self.prompts.append(prompt)
            content = message_content(event)
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    started = self._pending.pop(str(block.get("tool_use_id")), None)
                    if started:
                        self.runs.append(_run(started[0], started[1], block))

    def _add_call(self, block: dict, at: int) -> None:
        name, args = block["name"], block["input"]
        if name == "Bash" and isinstance(args.get("command"), str):
            self._pending[str(block.get("id"))] = (args["command"], at)
            if len(self._pending) > MAX_RUNS:  # calls that never got a result
                del self._pending[next(iter(self._pending))]
        elif name in WRITE_TOOLS and isinstance(args.get(WRITE_TOOLS[name]), str):
            self.edits.append((at, args[WRITE_TOOLS[name]].rsplit("/", 1)[-1]))

    def evidence(self) -> list[Evidence]:
        """The signs of learned knowledge: fixed failures first, then corrections."""
        runs, edits = list(self.runs), list(self.edits)
        return _fixed(runs, edits) + _error_fixed(runs, edits) + _corrections(list(self.prompts))


def _run(command: str, at: int, block: dict) -> _Run:
    text = _result_text(block)
    failed = _failed(block, text)
    flat = " ".join(command.split())
    named = frozenset(m.group(0).rsplit("/", 1)[-1] for m in _FILE_IN_TEXT.finditer(text[:OUTPUT_KEPT])) \
        if failed else frozenset()
    return _Run(command_key(command), _clip(flat, 60), hash(flat), failed, _error_line(text) if failed else "", at,
                named)


def _edited_between(edits: list[tuple[int, str]], start: int, end: int, limit: int) -> list[str]:
    """Up to `limit` distinct names of the files edited strictly between two positions, in edit order."""
    names: dict[str, None] = {}
    for at, name in itertools.islice(edits, bisect_right(edits, start, key=_position), None):
        if at >= end or len(names) >= limit:
            break
        names.setdefault(name)
    return list(names)


def _position(edit: tuple[int, str]) -> int:
    return edit[0]


def _fixed(runs: list[_Run], edits: list[tuple[int, str]]) -> list[Evidence]:
    """A command that failed and later passed, after an edit or changed: the first such failure."""
    final = {run.key: run for run in runs}  # each command's last run in the turn
    next_success: list[_Run | None] = [None] * len(runs)
    upcoming: dict[str, _Run] = {}  # scanning backwards: each command's next successful run
    for index in range(len(runs) - 1, -1, -1):
        run = runs[index]
        if run.failed:
            next_success[index] = upcoming.get(run.key)
        else:
            upcoming[run.key] = run
    for index, failure in enumerate(runs):
        success = next_success[index]
        if success is None or _exploratory(failure.key) or final[failure.key].failed:
            continue  # not a failure, never passed later, a lookup, or still failing at the end of the turn
        files = _edited_between(edits, failure.at, success.at, 3)
        if not files and success.same == failure.same:
            continue  # the same command passing on a rerun with nothing changed: flaky, not learned
        how = f"after editing {', '.join(files)}" if files else f"as `{success.shown}`"
        error = f" ({failure.error})" if failure.error else ""
        return [Evidence("fixed", f"`{failure.shown}` failed{error}, then passed {how}")]
    return []


def _error_fixed(runs: list[_Run], edits: list[tuple[int, str]]) -> list[Evidence]:
    """A failure whose output names a file that was then edited, its command never failing again."""
    last_failure = {run.key: index for index, run in enumerate(runs) if run.failed}
    edits_of: dict[str, list[int]] = {}  # file name -> the indexes of its edits, ascending
    for index, (_, name) in enumerate(edits):
        edits_of.setdefault(name, []).append(index)
    for index, failure in enumerate(runs):
        if not failure.failed or _exploratory(failure.key) or not failure.error or last_failure[failure.key] > index:
            continue
        after = bisect_right(edits, failure.at, key=_position)  # the first edit made after the failure
        touched = []  # (index of its first edit after the failure, file name)
        for name in failure.named:
            indexes = edits_of.get(name, [])
            k = bisect_left(indexes, after)
            if k < len(indexes):
                touched.append((indexes[k], name))
        if touched:
            return [Evidence("error-fixed", f"`{failure.shown}` failed ({failure.error}); "
                                            f"{min(touched)[1]} was then edited")]
    return []


def _corrections(prompts: list[str]) -> list[Evidence]:
    for prompt in prompts[-RECENT_PROMPTS:]:
        lowered = prompt[:4000].lower()
        if not any(word in lowered for word in _CORRECTION_WORDS):
            continue
        for sentence in SENTENCE_BREAK.split(prompt[:4000]):
            if _CORRECTION.search(sentence):
                return [Evidence("correction", f"the user said: \"{_clip(sentence, 120)}\"")]
    return []


def find_evidence(events: Iterable[dict]) -> list[Evidence]:
    """The signs of learned knowledge in a turn's events: fixed failures first, then corrections."""
    timeline = Timeline()
    for event in events:
        timeline.add(event)
    return timeline.evidence()


def saved_in(events: Iterable[dict]) -> bool:
    """Whether the agent saved to the brain in these events (MCP brain_save or `pinky save`)."""
    return any(_saves(block["name"], block["input"]) for event in events if event.get("type") == "assistant"
               for block in tool_uses(event))


def _saves(name: str, args: dict) -> bool:
    if name == "brain_save" or name.endswith("__brain_save"):
        return True
    return name == "Bash" and bool(_SAVE_COMMAND.search(str(args.get("command") or "")))
