"""Every regular expression pinky applies to text a user or an agent wrote runs in linear time.

A note body, a title, a query, a prompt, a shell command or its output can be anything: a pattern
that backtracked over the rest of the text at every offset turned a body of 100,000 newlines into
150 s of a frozen MCP server (issue 22). So every compiled pattern of every module is listed in
`PATTERNS` with the shapes of text that could hurt it, and is timed on 50 and on 100 KB of each
shape: the generic ones (newlines, spaces, one long word, digits, blank lines with an indent, runs
of punctuation) and its own (prefixes and near misses of what it matches, repeated). Twice the text
may cost ~2.5x the time, never the 4x of a square. A pattern with no unbounded repeat does constant
work at each offset and is linear by construction: it is checked for that instead of timed.

New scanners join the table: a module global holding a pattern missing from it fails
`test_every_pattern_is_in_the_table`, and a pattern written where a function runs it
(`re.split(r"...", text)`) fails `test_patterns_are_compiled_at_module_level`. `_scanners` times
the functions that read such text end to end the same way, loops around the patterns included.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from capture_fixtures import bash, edit, prompt, say
from helpers import FLOOR, RATIO, SIZE, near_duplicates, nonlinear, scaling

import pinky

# Shapes every scanner meets: newlines, spaces, one long word, runs of punctuation; and for every
# pattern also digits and blank lines with an indent.
BASIC = ("\n", " ", "a", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
GENERIC = (*BASIC, "1", "\n ")

# (module, global) -> units of its own to repeat: prefixes and near misses of what it matches.
PATTERNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("pinky.services.brain_sync", "_URL_SECRET"): ("://", "://a:", "://:"),
    ("pinky.capture.evidence", "_ENV_ASSIGN"): ("A=",),
    ("pinky.capture.evidence", "_EXIT_CODE"): ("Exit code ", "\t"),
    ("pinky.capture.evidence", "_ERROR_LINE"): ("error[", "Error"),
    ("pinky.capture.evidence", "_FILE_IN_TEXT"): ("a.", "a.p", "a/", "a.py.", "a-"),
    ("pinky.capture.evidence", "_CORRECTION"): ("no ", "use ", "use a ", "that is ", "we ", "actually ", "don't ",
                                                "you "),
    ("pinky.capture.evidence", "_SAVE_COMMAND"): ("pinky ", "pinky-brain ", ";pinky"),
    ("pinky.capture.evidence", "_COMMAND_SPLIT"): ("&", "|"),
    ("pinky.capture.checkpoint", "_DECISION"): ("decide ", "we'll ", "let's ", "the plan ", "we will "),
    ("pinky.capture.checkpoint", "_OPEN"): ("still ", "haven't yet ", "later ", "follow-", "next "),
    ("pinky.text.chunking", "_HEADING"): ("# ", " #", "#\t"),
    ("pinky.text.chunking", "_FENCE"): ("```", "~", "\n   `"),
    ("pinky.text.chunking", "_SENTENCE_END"): (". ", ";"),
    ("pinky.knowledge.classify", "_COMPILED"): ("1.", "\n1", "\n 1", "aerror", "how "),
    ("pinky.knowledge.classify", "_WORD"): ("+#",),
    ("pinky.knowledge.classify", "_TAG_BREAK"): (" _",),
    ("pinky.cli.sync", "_CONFLICT_PART"): (".conflict-", ".conflict-abc"),
    ("pinky.hygiene.differences", "_TOKEN"): ("1.", "1,", "v1.", "a'"),
    ("pinky.base.dates", "_SPAN"): (" 1",),
    ("pinky.embed.embedding", "_TOKEN"): (),
    ("pinky.text.model_input", "_NON_SPACE"): (),
    ("pinky.knowledge.entries", "_NON_SLUG"): (),
    ("pinky.hygiene.evergreen", "_LIMIT_BEFORE"): ("under ", "than ~ "),
    ("pinky.hygiene.evergreen", "_PATTERNS"): ("1,000 ", "1.5 ", "a.py:", "lines 1 to ", "abcdef1"),
    ("pinky.text.lexical", "_TOKEN"): (),
    ("pinky.search.history", "HISTORY"): ("3 ", "last ", "what did ", "2026-", "2026-w", "nov 3"),
    ("pinky.sync.run", "_OBJECT_ID"): (),
    ("pinky.setup.cli_install", "_PLAIN"): ("a", "a$", "/a "),
    ("pinky.setup.codex_trust", "_WORD_START"): ("A", "aB"),
    ("pinky.setup.broken", "BREAKS"): (" ", "\\", " a"),
    ("pinky.setup.formats", "_FIRST_INDENT"): ("{\n ", "{ \t", "{\r\n\t"),
    ("pinky.capture.brain_calls", "_BRAIN_TOOL"): ("_brain_", "brain_save_", "__brain_update"),
    ("pinky.capture.brain_calls", "_ANSWER"): ("Saved a → ", "Saved a → b,", "Updated  → "),
    ("pinky.text.lexical", "_CAMEL_BREAK"): ("aB", "ABc", "AB"),
    ("pinky.text.lexical", "_FEEDBACK_WORD"): (),
    ("pinky.text.linkrefs", "WIKI_LINK"): ("[[", "[[a", "[[a|", "[[a#"),
    ("pinky.text.linkrefs", "MD_LINK"): ("](", "](a", "](a.md#", "](a.m"),
    ("pinky.text.linkrefs", "_RELATION"): (),
    ("pinky.text.markdown", "_FENCE_LINE"): ("---", "---\n", "--- ", "---\n\n"),
    ("pinky.text.markdown", "_PATH_LIKE"): ("a/", "a.", "a-", "/a", "a.b/"),
    ("pinky.text.markdown", "_SEPARATORS"): ("-_",),
    ("pinky.capture.recorder", "_WHITESPACE"): (),
    ("pinky.capture.recorder", "_NOT_TEXT"): ("\x00", "\ufffd", "\x00a"),
    ("pinky.base.redact", "_MARKER_RE"): ("[REDACTED:",),
    ("pinky.base.redact", "_TOKENS"): ("sk-", "sk-a", "ghp_", "AKIA", "xoxb-", "eyJa.", "eyJaaaaa.eyJ", "SG.",
                                       "hooks."),
    ("pinky.base.redact", "_TELEGRAM"): ("12345678:AA", "1"),
    ("pinky.base.redact", "_PEM"): ("-----BEGIN PRIVATE KEY-----", "-----BEGIN A "),
    ("pinky.base.redact", "_URL_PASSWORD"): ("a://", "a://b:", "a+"),
    ("pinky.base.redact", "_QUERY_SECRET"): ("?token=", "&sig="),
    ("pinky.base.redact", "_AUTH_HEADER"): ("Authorization: ", "Authorization: Bearer "),
    ("pinky.base.redact", "_BEARER"): ("Bearer ", "Bearer a"),
    ("pinky.base.redact", "_CLI_FLAG"): ("--password ", "--a-", "--a-token"),
    ("pinky.base.redact", "_CLI_USER"): (" -u ", " -u a", "--user "),
    ("pinky.base.redact", "_COMMANDS"): ("mysql ", "mysql -p", "sshpass ", "docker login ", "redis-cli ", "smbclient ",
                                    "htpasswd -b ", " -pass ", "machine a login b password "),
    ("pinky.base.redact", "_HARMLESS_NAME"): ("primary_", "max_"),
    ("pinky.base.redact", "_ASSIGNMENT"): ("a_key=", "a_key", "token", "a.", "x_"),
    ("pinky.base.redact", "_NAME_SPACE_VALUE"): ("a_api_key ", "a_", "a_b_c_token"),
    ("pinky.base.redact", "_PROSE"): ("password is ", "token was ", "password "),
    ("pinky.base.redact", "_NETRC_LINE"): ("password ", "\npassword a "),
    ("pinky.base.redact", "_PLACEHOLDER"): ("a(", "a.b"),
    ("pinky.base.redact", "_TYPE_NAME"): ("Aa",),
    ("pinky.base.redact", "_SECRET_IN_NAME"): (),
    ("pinky.base.redact", "_LONG_HEX"): ("a1",),
    ("pinky.base.redact", "_HEX32"): ("a1",),
    ("pinky.base.redact", "_LONG_RUN"): ("a1B+", "a1B."),
    ("pinky.base.redact", "_BENIGN_BEFORE"): ("sha256:", "checksum ", "ssh-rsa "),
    ("pinky.base.redact", "_SEGMENT"): ("Aa1",),
    ("pinky.base.redact", "_LABEL"): ("api ", "secret ", "signing "),
    ("pinky.base.redact", "_DIGEST_WORD"): ("sha", "sha-", "hash"),
    ("pinky.knowledge.archive", "_COPY"): ("a.", "a.2026-01-01T", "a.2026-01-01T000000Z-", ".md"),
    ("pinky.text.frontmatter_edit", "_LINES"): (),
    ("pinky.text.frontmatter_edit", "_FENCE"): ("---", "--- "),
    ("pinky.text.frontmatter_edit", "_SEQUENCE_ITEM"): ("- ", " -", "\t-"),
    ("pinky.text.frontmatter_edit", "_COMMENT"): (" #", "\t"),
    ("pinky.text.frontmatter_edit", "_LINE_END"): ("\r", "\r\n"),
    ("pinky.text.frontmatter_edit", "_KEY_COLON"): (":", ": "),
    ("pinky.text.frontmatter_edit", "_SIMPLE_KEY"): ("a:", "a :", "a.b-", "a\t"),
    ("pinky.capture.rollup", "_WEEK_RE"): ("2024-W", "2024-"),
    ("pinky.capture.rollup", "_MONTH_RE"): ("2024-",),
    ("pinky.capture.rollup", "_SPECIFIC_RE"): (),
    ("pinky.capture.rollup", "_LIST_BREAK"): (", ",),
    ("pinky.sync.run", "_AUTHOR"): ("a <", "a <b", "a b <"),
    ("pinky.sync.merge", "_CONFLICT_RE"): (".conflict-abcdefa", ".conflict-abcdefa."),
    ("pinky.sync.remote", "_HTTP_REASON"): ("Caused by X(", "Caused by X('Y(", ")", "'"),
    ("pinky.capture.transcript", "_SYNTHETIC_PROMPT"): ("<a-", " <a-b"),
    ("pinky.capture.transcript", "_COMMIT_MESSAGE"): (" -m ", ' -m "', ' -m "\\', " --message ", " -am '"),
    ("pinky.capture.transcript", "_SEGMENT"): (),
    ("pinky.capture.transcript", "_GIT"): ("git ",),
    ("pinky.capture.transcript", "_COMMIT_WORD"): (" commit",),
    ("pinky.capture.transcript", "_HEREDOC_START"): ("$(cat <<",),
    ("pinky.capture.transcript", "_ESCAPED"): ("\\",),
    ("pinky.capture.transcript", "SENTENCE_BREAK"): (". ", "!\n"),
}


def _modules() -> Iterator[Any]:
    for info in pkgutil.walk_packages(pinky.__path__, "pinky."):
        if not info.name.endswith("__main__"):
            yield importlib.import_module(info.name)


def _patterns_in(value: Any, depth: int = 0) -> Iterator[re.Pattern[str]]:
    """The compiled patterns in a module global: itself, or inside its dicts, lists and tuples."""
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 4 and isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item, depth + 1)
    elif depth < 4 and isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _patterns_in(item, depth + 1)


def _table_patterns(module: str, name: str) -> list[re.Pattern[str]]:
    return list(_patterns_in(getattr(importlib.import_module(module), name)))


def _scan(pattern: re.Pattern[str]) -> Callable[[str], Any]:
    def work(text: str) -> None:
        for _ in pattern.finditer(text):
            pass
    return work


# A repeat of at most this many is bounded: its work at one offset does not grow with the text.
BOUNDED_REPEAT = 200


def unbounded(pattern: re.Pattern[str]) -> bool:
    """Whether the pattern has a repeat without a small bound (`*`, `+`, `{n,}`), in lookarounds too.
    One without any does at most a constant amount of work at each offset: linear by construction
    (`\\bsegfault\\b`, `[0-9a-f]{32}`), so only the others need timing."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser

    def walk(items: Any) -> bool:
        for op, arg in items:
            if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                if arg[1] == c.MAXREPEAT or arg[1] > BOUNDED_REPEAT or walk(arg[2]):
                    return True
            elif op is c.BRANCH:
                if any(walk(branch) for branch in arg[1]):
                    return True
            elif op in (c.SUBPATTERN, c.ASSERT, c.ASSERT_NOT):
                if walk(arg[-1]):
                    return True
            elif op is c.ATOMIC_GROUP:
                if walk(arg):
                    return True
            elif op is c.GROUPREF_EXISTS and (walk(arg[1]) or (arg[2] is not None and walk(arg[2]))):
                return True
        return False

    return walk(_parser.parse(pattern.pattern, pattern.flags))


def _pattern_cases() -> Iterator[Any]:
    for (module, name), own in PATTERNS.items():
        yield pytest.param(module, name, own, id=f"{module.removeprefix('pinky.')}.{name}")


@pytest.mark.parametrize("module,name,own", list(_pattern_cases()))
def test_pattern_is_linear_on_every_shape(module: str, name: str, own: tuple[str, ...]) -> None:
    timed = [pattern for pattern in _table_patterns(module, name) if unbounded(pattern)]
    slow = [f"{pattern.pattern[:60]!r} on {line}" for pattern in timed
            for line in nonlinear(_scan(pattern), (*GENERIC, *own))]
    assert not slow, "\n".join(slow)


def test_the_structural_shortcut_sees_repeats_everywhere() -> None:
    """Only patterns without an unbounded repeat skip the timing: a repeat inside a group, a branch,
    a lookaround or an atomic group counts."""
    assert not unbounded(re.compile(r"\bsegfault\b|[0-9a-f]{32}|(?:ab|cd){2,9}"))
    for text in (r"a+", r"(?:x|y\s*)", r"(?=[a-f]*\d)", r"(?<!a)(?>b+)", r"x{3,}", r"(a)?(?(1)b*|c)", r"\d{1,500}"):
        assert unbounded(re.compile(text)), text


def test_every_pattern_is_in_the_table() -> None:
    """A compiled pattern in any module global must be listed in PATTERNS (or be one listed there)."""
    listed = {id(p) for module, name in PATTERNS for p in _table_patterns(module, name)}
    missing = [f"{module.__name__}.{name}" for module in _modules() for name, value in vars(module).items()
               if any(id(p) not in listed for p in _patterns_in(value))]
    assert not missing, f"add these to PATTERNS, with the shapes of text that could hurt them: {missing}"


_RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def test_patterns_are_compiled_at_module_level() -> None:
    """A pattern written where a function runs it (`re.split(r"...", text)`) escapes the table: every
    constant pattern is compiled into a module global instead. Patterns built around `re.escape` of a
    value (a slug being renamed) are literal text and stay where they are."""
    inline = []
    for path in sorted(Path(pinky.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = {id(node) for stmt in tree.body for node in ast.walk(stmt)
                     if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RE_CALLS
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and id(node) not in top_level
                    and not any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "escape"
                                for n in ast.walk(node.args[0]))):
                inline.append(f"{path.relative_to(Path(pinky.__file__).parent)}:{node.lineno}")
    assert not inline, f"compile these patterns at module level and add them to PATTERNS: {inline}"


# --- the functions that run them ----------------------------------------------------------------------

def _failed_then_fixed(output: str) -> list[dict]:
    """A turn whose failing command printed `output`, a file edited, and the command passing."""
    return [*bash("pytest", output, code=1), *edit("src/a.py"), *bash("pytest", "ok")]


def _scanners() -> dict[str, tuple[Callable[[str], Any], tuple[str, ...]]]:
    """name -> (work on one text, the units to repeat): every function that reads text a user or an agent
    wrote, end to end, with the patterns above and the loops around them."""
    from pinky.base import redact
    from pinky.capture import checkpoint, transcript
    from pinky.capture import evidence as capture
    from pinky.embed import embedding
    from pinky.hygiene import differences, evergreen
    from pinky.knowledge import classify, entries
    from pinky.search import gaps, recall
    from pinky.search import hybrid as search
    from pinky.services import brain_sync
    from pinky.text import breadcrumbs, chunking, lexical, linkrefs, markdown
    return {
        # the rules are timed one by one above: here, the shapes of the defect (a body of newlines)
        "classify.rule_type (a save without a type)": (lambda t: classify.rule_type(t[:500], t),
                                                       ("\n", "\n1")),
        "classify.neighbour_tags": (lambda t: classify.neighbour_tags([["db"]], t, ["db", "ops"]), (*BASIC, "+#")),
        "classify.tag_key": (classify.tag_key, (*BASIC, " _")),
        "chunking.chunk_markdown": (chunking.chunk_markdown, (*BASIC, "# ", "```\n", "a. ", "\n\n")),
        "markdown.parse_text (a whole note)": (lambda t: markdown.parse_text(t, "note/x.md"),
                                               (*BASIC, "---\n", "[[a]] ", "](a.md) ", "a/b.py ")),
        "markdown.parse_text (frontmatter)": (lambda t: markdown.parse_text(f"---\ntitle: {t}\n---\nbody", "x.md"),
                                              (*BASIC, "a: ", "- ")),
        "markdown.first_heading": (markdown.first_heading, (*BASIC, "# ", " #")),
        "linkrefs.body_links": (linkrefs.body_links, (*BASIC, "[[", "[[a|", "](a.md", "](")),
        "lexical.identifier_parts": (lambda t: lexical.identifier_parts([t]), (*BASIC, "aB", "ABc")),
        "lexical.query_terms": (lexical.query_terms, (*BASIC, "\"a ")),
        "lexical.query_identifier_parts": (lexical.query_identifier_parts, (*BASIC, "aB_")),
        "differences.tokens": (lambda t: differences.tokens(differences.prose(t)), (*BASIC, "1.", "```\n")),
        # the patterns are timed above: here, texts full of findings (an excerpt each)
        "evergreen.find_volatile": (evergreen.find_volatile, ("L12 ", "as of 2024-01 ")),
        "redact.redact_kinds": (redact.redact_kinds, (*BASIC, "sk-", "password is ", "a_key=", "--token ", "A1b2+")),
        "transcript.commit_subject": (transcript.commit_subject, (*BASIC, "git commit -m \"", "git ", " commit")),
        "transcript.prompt_text": (lambda t: transcript.prompt_text(prompt(t)), (*BASIC, "<a-b>")),
        "capture.command_key": (capture.command_key, (*BASIC, "uv run ", "A=1 ", "cd x && ")),
        "capture.find_evidence (a prompt)": (lambda t: capture.find_evidence([prompt(t)]), (*BASIC, "no ", "use a ")),
        "capture.find_evidence (a failure's output)": (lambda t: capture.find_evidence(_failed_then_fixed(t)),
                                                       (*BASIC, "a.", "a.py", "Error ")),
        "capture.saved_in": (lambda t: capture.saved_in(bash(t)), (*BASIC, "pinky ")),
        "checkpoint.decisions_and_open_threads": (lambda t: checkpoint.decisions_and_open_threads([say(t)]),
                                                  (*BASIC, "we'll use ", "TODO. ", "still ")),
        "breadcrumbs.breadcrumbs": (lambda t: breadcrumbs.breadcrumbs(t.encode()), (*BASIC, "Brain: ", "Brain: a/b, ")),
        "embedding.HashEmbedder": (lambda t: embedding.HashEmbedder().embed([t]), BASIC),
        "gaps.word_hashes": (gaps.word_hashes, BASIC),
        "recall.prompt_terms": (recall.prompt_terms, BASIC),
        "recall.asks": (recall.asks, (*BASIC, ". ", ".\n", "?", "\n")),
        "search.snippet": (lambda t: search.snippet(t, "pool timeout under load"), (*BASIC, "pool ")),
        "entries.slugify": (entries.slugify, BASIC),
        "brain_sync.hide_secret": (brain_sync.hide_secret, (*BASIC, "://a:", "://")),
    }


def _scanner_cases() -> Iterator[Any]:
    for name, (work, units) in _scanners().items():
        yield pytest.param(work, units, id=name)


@pytest.mark.parametrize("work,units", list(_scanner_cases()))
def test_scanner_is_linear_on_every_shape(work: Callable[[str], Any], units: tuple[str, ...]) -> None:
    slow = nonlinear(work, units)
    assert not slow, "\n".join(slow)


def test_near_duplicates_are_compared_in_linear_time() -> None:
    """`pinky check` aligns two near-duplicate notes word by word: 115 KB each took 43 s when the
    alignment was difflib's on the whole texts (quadratic in how often their words recur)."""
    from pinky.hygiene.differences import contradicts

    n, small, large = scaling(contradicts, lambda size: near_duplicates(size, vocabulary=4))
    assert large <= RATIO * max(small, FLOOR), f"{n:,} chars: {small:.2f} s, {2 * n:,}: {large:.2f} s"
    assert [(d.kind, d.a, d.b) for d in contradicts(*near_duplicates(2 * SIZE))] == [("port", "8080", "9090")]


def test_the_timing_finds_a_quadratic_scan() -> None:
    """The check itself can fail: `a*b` searched on a run of "a" tries every start and scans to the end."""
    def ratio(pattern: str) -> float:
        _, small, large = scaling(re.compile(pattern).search, lambda n: "a" * n, size=4000)
        return large / max(small, FLOOR)

    assert ratio(r"a*b") > RATIO
    assert ratio(r"b") <= RATIO
