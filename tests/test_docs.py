"""Docs that tests keep honest: every command, option and environment variable is documented."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import click
import pytest

from pinky.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = (ROOT / "documentation" / "CLI.md").read_text(encoding="utf-8")
ALL_DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *ROOT.glob("documentation/*.md")])


def _sections() -> dict[str, str]:
    parts = re.split(r"^## pinky-brain ([\w-]+).*$", CLI_DOC, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_has_help_and_a_section(name: str) -> None:
    command = cli.commands[name]
    assert command.help and "Example" in command.help, f"{name} needs help text with an Example"
    assert name in _sections(), f"documentation/CLI.md has no '## pinky-brain {name}' section"


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_option_is_documented(name: str) -> None:
    section = _sections().get(name, "")
    for param in cli.commands[name].params:
        if isinstance(param, click.Option):
            assert param.help, f"pinky {name} {param.opts[0]} has no help"
            longest = max(param.opts, key=len)
            assert longest in section, f"pinky {name} {longest} is not in its CLI.md section"


def test_every_environment_variable_is_documented() -> None:
    names = set()
    for path in (ROOT / "src").rglob("*.py"):
        names |= set(re.findall(r"\bPINKY_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    missing = sorted(n for n in names if n not in ALL_DOCS)
    assert not missing, f"undocumented environment variables: {missing}"


# --- claims the docs make about the code: counts, defaults, what a command writes -------------------------------
# Each check reads what a sentence or table states and compares it with the code or with what running it does,
# so a doc that drifts (a hook added, a default flipped) fails here instead of misleading a user.

CLAIM_FILES = [ROOT / "README.md", *sorted(ROOT.glob("documentation/*.md")), ROOT / "plugin" / "bin" / "README.md",
               ROOT / "plugin" / ".claude-plugin" / "plugin.json", ROOT / ".claude-plugin" / "marketplace.json"]
NUMBER_WORDS = {word: n for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NOT_ADJECTIVES = {"of", "the", "these", "those", "other", "more", "its", "their", "and", "or", "with", "to", "a"}


def _counts_claimed(noun: str) -> list[tuple[str, int, str]]:
    """(file, number, phrase) for every 'six fast hooks', '14 tools' (a number, up to two adjectives, `noun`)."""
    pattern = re.compile(rf"\b(\d+|{'|'.join(NUMBER_WORDS)})((?:\s+[\w-]+){{0,2}}?)\s+{noun}\b", re.IGNORECASE)
    found = []
    for path in CLAIM_FILES:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            if NOT_ADJECTIVES & set(match.group(2).lower().split()):
                continue
            number = match.group(1).lower()
            found.append((str(path.relative_to(ROOT)), int(number) if number.isdigit() else NUMBER_WORDS[number],
                          match.group(0)))
    return found


def test_every_count_of_hooks_is_the_number_the_plugin_registers() -> None:
    config = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    hooks = sum(len(group["hooks"]) for groups in config["hooks"].values() for group in groups)
    claims = _counts_claimed("hooks")
    assert claims, "no doc says how many hooks the plugin brings"
    wrong = [claim for claim in claims if claim[1] != hooks]
    assert not wrong, f"plugin/hooks/hooks.json registers {hooks} hooks; these say otherwise: {wrong}"


def test_the_tiers_table_lists_each_tiers_tools_and_every_count_of_tools_is_a_tiers() -> None:
    from pinky.mcp.tiers import TIERS, TOOL_TIERS, tools_for

    doc = (ROOT / "documentation" / "MCP.md").read_text(encoding="utf-8")
    for tier, specs in TOOL_TIERS.items():
        row = re.search(rf"^\| `{tier}`.*\|(.*)\|$", doc, flags=re.MULTILINE)
        assert row, f"MCP.md's tiers table has no row for {tier}"
        listed = set(re.findall(r"brain_\w+", row.group(1)))
        assert listed == {spec.name for spec in specs}, f"MCP.md says tier {tier} adds {sorted(listed)}"
    counts = {len(tools_for(tier)) for tier in TIERS}
    wrong = [claim for claim in _counts_claimed("(?:MCP )?tools") if claim[1] not in counts]
    assert not wrong, f"the tiers offer {sorted(counts)} tools; these say otherwise: {wrong}"


# Defaults: "(default 10)", "default `skip`", "Default `project`", "`hybrid` (default)". A bare "(default)"
# that names no value is refused: it is how "Write the .mcp.json entry (default) or not" hid a flipped default.
STATED_DEFAULT = re.compile(r"`([^`]+)`\s+\(default\)|\(default\)|[Dd]efault:?\s+(`[^`]+`|[\w.-]+)")
OPTION = re.compile(r"`(-{1,2}[\w-]+)")


def _stated_defaults(text: str) -> list[tuple[str, str | None, str]]:
    """(option, stated value or None when it names none, the words) from option table rows and from
    inline "`--opt X` (default V)"; the value as written, backticks kept (plain words may be prose)."""
    found: list[tuple[str, str | None, str]] = []
    for line in text.splitlines():
        if line.startswith("| `-"):
            clauses = [(OPTION.search(line).group(1), line)]  # type: ignore[union-attr]
        else:
            clauses = [(m.group(1), line[m.start():m.start() + 200])
                       for m in re.finditer(r"`(--[\w-]+)[^`]*`\s*\((?=default)", line)]
        for option, clause in clauses:
            for match in STATED_DEFAULT.finditer(clause):
                value = f"`{match.group(1)}`" if match.group(1) else match.group(2)
                found.append((option, value.rstrip(".") if value else None, match.group(0)))
                if not line.startswith("|"):
                    break  # inline: the first default after the option is its own
    return found


def _click_default(param: click.Parameter) -> str | None:
    if isinstance(param, click.Option) and param.secondary_opts:
        return param.opts[0] if param.default else param.secondary_opts[0]
    return None if param.default is None or str(param.default).startswith("Sentinel") else str(param.default)


def _same(stated: str, actual: str | None, param: click.Parameter) -> bool | None:
    """Whether a stated default is the code's; None when it is words ('today', 'the current one'): a number,
    a `value` in backticks, or a bare word that is one of the option's choices is compared."""
    bare = stated.strip("`")
    if re.fullmatch(r"-?[\d.]+", bare):
        return actual is not None and float(bare) == float(actual)
    if stated.startswith("`") or (isinstance(param.type, click.Choice) and bare in param.type.choices):
        return bare == actual
    return None


def _default_problems(command: click.Command, claims: list[tuple[str, str | None, str]]) -> list[str]:
    problems = []
    for option, stated, words in claims:
        param = next((p for p in command.params if option in p.opts or option in getattr(p, "secondary_opts", [])),
                     None)
        if param is None:
            continue
        actual = _click_default(param)
        if stated is None:
            problems.append(f"pinky {command.name} {option}: {words!r} does not say which value is the default "
                            f"({actual})")
        elif _same(stated, actual, param) is False:
            problems.append(f"pinky {command.name} {option}: the docs say {words!r}, the code's default is {actual!r}")
    return problems


def test_every_default_the_docs_state_is_the_codes() -> None:
    """CLI.md's option rows and inline mentions against click; an option's default stated in another doc
    against every command that has the option; MCP.md's argument tables against the tools' signatures."""
    problems = []
    for name, section in _sections().items():
        if name in cli.commands:
            problems += _default_problems(cli.commands[name], _stated_defaults(section))
    for path in CLAIM_FILES:
        if path.name != "CLI.md" and path.suffix == ".md":
            claims = _stated_defaults(path.read_text(encoding="utf-8"))
            problems += [f"{path.name}: {p}" for c in cli.commands.values() for p in _default_problems(c, claims)]
    problems += _argument_default_problems()
    assert not problems, "\n".join(problems)


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def _argument_tables() -> list[tuple[str, str, str]]:
    """(tool, argument, stated default) from MCP.md's `| Argument | Type | Default | ... |` tables."""
    doc = (ROOT / "documentation" / "MCP.md").read_text(encoding="utf-8")
    found = []
    for section in re.split(r"^### ", doc, flags=re.MULTILINE)[1:]:
        tool = section.split()[0]
        lines = section.splitlines()
        header = next((line for line in lines if line.startswith("| Argument")), "")
        if "Default" not in header:
            continue
        column = _cells(header).index("Default")
        for line in lines:
            cells = _cells(line)
            if not line.startswith("| `") or len(cells) <= column:
                continue
            names = re.findall(r"`(\w+)`", cells[0])
            defaults = [part.strip() for part in cells[column].split(" / ")]
            found += [(tool, name, default) for name, default in zip(names, defaults, strict=False)]
    return found


def _argument_default_problems() -> list[str]:
    from pinky.mcp.common import with_cause
    from pinky.mcp.sdk import make_tool
    from pinky.mcp.tiers import tools_for

    schemas = {spec.name: make_tool(with_cause(spec.fn), title=spec.title, annotations=spec.annotations)
               .fn_metadata.arg_model.model_json_schema() for spec in tools_for("admin")}
    claims = _argument_tables()
    assert len(claims) > 20, "MCP.md's argument tables were not found"
    problems = []
    for tool, name, stated in claims:
        schema = schemas[tool]
        actual = None if name in schema.get("required", []) else schema["properties"][name].get("default")
        if stated == "—":
            ok = actual is None
        elif re.fullmatch(r"`[^`]+`|-?[\d,.]+", stated):
            ok = json.dumps(actual).strip('"') == stated.strip("`").replace(",", "")
        else:
            continue  # words, e.g. "suggested, else `note`"
        if not ok:
            problems.append(f"MCP.md: {tool} {name}: the docs say {stated!r}, the signature's default is {actual!r}")
    return problems


# What a command writes: checked by running it in an empty folder.
PATH_TOKEN = re.compile(r"`(\.?[\w-]+(?:[./][\w-]+)*/?)`")


def _paths_in(text: str) -> list[str]:
    return [token for token in PATH_TOKEN.findall(text) if "." in token or "/" in token]


def _run_pinky(folder: Path, *args: str) -> None:
    from helpers import console_script

    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([*console_script("pinky"), *args], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"pinky {' '.join(args)}: {done.stderr}"


def test_what_init_writes_is_what_cli_md_says(tmp_path: Path) -> None:
    """Every file the init section says `pinky init` writes is there after a plain run (or after a run with
    the option the sentence names: "with `--mcp`"), and everything a plain run writes is in the sentence."""
    sentence = re.search(r"It writes (.*?)\. Idempotent", _sections()["init"], flags=re.DOTALL)
    assert sentence, "CLI.md's init section has no 'It writes …' sentence"
    claims, last = [], 0
    text = sentence.group(1)
    for match in PATH_TOKEN.finditer(text):
        if "." in match.group(1) or "/" in match.group(1):
            option = re.search(r"with `(--[\w-]+)`", text[last:match.start()])
            claims.append((match.group(1), option.group(1) if option else None))
            last = match.end()
    assert claims
    for option in {option for _, option in claims}:
        folder = tmp_path / (option or "plain").strip("-")
        _run_pinky(folder, "init", *([option] if option else []))
        missing = [path for path, wanted in claims if wanted == option and not (folder / path).exists()]
        assert not missing, f"`pinky init {option or ''}` did not write {missing}, which CLI.md says it writes"
        if option is None:
            written = {p.name for p in folder.iterdir()}
            unsaid = written - {path.strip("/").split("/")[0] for path, _ in claims}
            assert not unsaid, f"`pinky init` also writes {sorted(unsaid)}, which CLI.md does not say"


WHAT_WRITES = re.compile(r"\(what ((?:`pinky(?:-brain)? [^`]+`(?:,? (?:and|or) )?)+) writes?\b")
WRITES_FILE = re.compile(r"`(pinky(?:-brain)? [^`]+)` (?:writes|has written) `([^`]+)`")


def _writes_claims() -> list[tuple[str, list[str], list[str], str | None]]:
    """(doc, commands, files named, the JSON block shown) for "in `F` (what `pinky X` writes)" and for
    "`pinky X` writes `F`"."""
    claims: list[tuple[str, list[str], list[str], str | None]] = []
    for path in CLAIM_FILES:
        text = path.read_text(encoding="utf-8")
        for match in WHAT_WRITES.finditer(text):
            before = re.split(r"[.:]\s|\n\n", text[:match.start()])[-1]  # the sentence so far
            block = re.match(r"[^\n]*(?:\n[^\n]+)*\n\n```json\n(.*?)```", text[match.end():], flags=re.DOTALL)
            commands = re.findall(r"`(pinky(?:-brain)? [^`]+)`", match.group(1))
            claims.append((path.name, commands, _paths_in(before), block.group(1) if block else None))
        claims += [(path.name, [m.group(1)], [m.group(2)], None) for m in WRITES_FILE.finditer(text)]
    return claims


def test_every_claim_that_a_command_writes_a_file_holds(tmp_path: Path) -> None:
    claims = _writes_claims()
    assert len(claims) >= 3
    for n, (doc, commands, files, block) in enumerate(claims):
        assert files, f"{doc}: a claim about what {commands} write names no file"
        for m, command in enumerate(commands):
            folder = tmp_path / f"{n}-{m}"
            args = command.split()[1:]
            if args[0] != "init":
                _run_pinky(folder, "init")
            _run_pinky(folder, *args)
            present = [name for name in files if (folder / name).exists()]
            assert present, f"{doc}: `{command}` wrote none of {files}"
            if block is not None:
                written = json.loads((folder / present[0]).read_text(encoding="utf-8"))
                assert json.loads(block) == written, f"{doc}: the {present[0]} shown is not what `{command}` writes"


# --- code in the docs -------------------------------------------------------------------------------------------

PYTHON_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
DOCS_WITH_CODE = [ROOT / "README.md", *sorted(ROOT.glob("documentation/*.md"))]


def python_blocks() -> list[tuple[str, str]]:
    found = []
    for path in DOCS_WITH_CODE:
        text = path.read_text(encoding="utf-8")
        for match in PYTHON_BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def test_the_docs_show_python_code() -> None:
    assert any(name.startswith("README.md") for name, _ in python_blocks())


@pytest.mark.parametrize("where,code", python_blocks(), ids=[name for name, _ in python_blocks()])
def test_every_python_block_of_the_docs_compiles(where: str, code: str) -> None:
    """Issue 31 item 9: the README's "As a library" block was a SyntaxError (`from pinky-brain import ...`)."""
    compile(code, where, "exec")
