"""The files a shell command or a patch touches, for hosts without Read/Write tools (Codex reads with the shell and
edits with apply_patch).

Runs on the per-tool hooks' hot path, so it imports nothing (no `re`, no `shlex`: ~5 ms between them) and reads the
command with a small tokenizer of its own. It is a heuristic: a command is cut into segments at `;`, `&&`, `||`, `|`
and line breaks (a heredoc's body is not read as commands), and the words of a segment that starts with a program
known to read or change files (cat, less, head, sed, vim, ...) name the files. A caller keeps only the names that are
regular files, which discards whatever was not a path after all.
"""

from __future__ import annotations

# Programs whose file arguments the agent reads; `head -n 5 f`: the options that take a value.
READERS = frozenset(("cat", "bat", "batcat", "less", "more", "most", "head", "tail", "nl", "view", "wc", "sed", "awk",
                     "grep", "egrep", "rg", "diff", "file", "stat", "xxd", "hexdump", "od", "strings", "sort", "uniq",
                     "cut", "python", "python3", "node", "jq", "yq"))
EDITORS = frozenset(("vim", "vi", "nvim", "nano", "emacs", "ed", "code", "pico", "micro", "tee", "touch", "truncate"))
WITH_VALUE = {"head": "nckq", "tail": "nckqs", "grep": "efmABCd", "rg": "efmABCgtT", "sed": "ef", "awk": "fFv",
              "cut": "dfcb", "sort": "kto", "jq": "", "diff": "U", "wc": "", "nl": "bsvw", "od": "jNtA"}
PATTERN_FIRST = frozenset(("grep", "egrep", "rg", "awk", "jq"))  # their first plain word is a pattern, not a file
PREFIXES = frozenset(("sudo", "command", "exec", "time", "nice", "env", "xargs"))
PATCH_HEADS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")


def patch_paths(text: str) -> list[str]:
    """The files an apply_patch patch names (`*** Update File: src/db.py`, Add, Delete, Move to), in order."""
    found: list[str] = []
    if "*** " not in text:
        return found
    for line in text.splitlines():
        line = line.strip()
        for head in PATCH_HEADS:
            if line.startswith(head):
                path = line[len(head):].strip()
                if path and path not in found:
                    found.append(path)
    return found


def _words(segment: str) -> list[str]:
    """Shell words of one simple command: quotes and backslashes honoured, no expansion."""
    words: list[str] = []
    word, quote, escaped, any_ = "", "", False, False
    for char in segment:
        if escaped:
            word, escaped = word + char, False
        elif quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                escaped = True
            else:
                word += char
        elif char in "'\"":
            quote, any_ = char, True
        elif char == "\\":
            escaped = True
        elif char in " \t":
            if word or any_:
                words.append(word)
            word, any_ = "", False
        else:
            word += char
    if word or any_:
        words.append(word)
    return words


def _segments(command: str) -> list[str]:
    """Simple commands of the first line of each statement; a heredoc's body (after `<<`) is skipped."""
    out: list[str] = []
    for line in command.split("\n"):
        if "<<" in line:
            out.append(line.split("<<", 1)[0])
            break  # the rest is the heredoc's body (apply_patch's patch, a file's new content)
        for part in line.replace("&&", ";").replace("||", ";").replace("|", ";").replace("&", ";").split(";"):
            if part.strip():
                out.append(part)
    return out


def _redirects(words: list[str]) -> tuple[list[str], list[str]]:
    """(words without redirections, files written by `>`/`>>`)."""
    kept, written, target = [], [], False
    for word in words:
        if target:
            written.append(word)
            target = False
        elif word in (">", ">>", "1>", "2>", "&>"):
            target = True
        elif word.startswith((">>", ">")) and len(word) > 2 and not word.startswith(">&"):
            written.append(word.lstrip(">"))
        elif word.startswith("<") and len(word) > 1:
            kept.append(word[1:])
        elif word not in ("<", "2>&1"):
            kept.append(word)
    return kept, written


def _program(words: list[str]) -> tuple[str, list[str]]:
    """(program name, its arguments), past `VAR=value` assignments and prefixes like sudo/env."""
    index = 0
    while index < len(words) and ("=" in words[index].split("/")[0] or words[index] in PREFIXES):
        index += 1
    if index >= len(words):
        return "", []
    return words[index].rsplit("/", 1)[-1], words[index + 1:]


def _file_args(program: str, args: list[str]) -> list[str]:
    values = WITH_VALUE.get(program, "")
    files: list[str] = []
    skip, pattern_due = False, program in PATTERN_FIRST or program == "sed"
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            continue
        if arg.startswith("-") and len(arg) > 1:
            if len(arg) == 2 and arg[1] in values:
                skip = True
                if arg[1] in "ef" and program in ("sed", "grep", "rg", "awk"):
                    pattern_due = False  # the script/pattern came as an option
            continue
        if pattern_due:
            pattern_due = False
            continue
        files.append(arg)
    return files


def command_paths(command: str) -> tuple[list[str], list[str]]:
    """(files the shell command reads, files it changes) as written in the command (relative or absolute)."""
    read: list[str] = []
    changed: list[str] = list(patch_paths(command)) if "apply_patch" in command or "*** Begin Patch" in command else []
    for segment in _segments(command):
        words, written = _redirects(_words(segment))
        changed += [w for w in written if w and w not in changed and w != "/dev/null"]
        program, args = _program(words)
        if program in READERS:
            files = _file_args(program, args)
            target = changed if program == "sed" and any(a.startswith("-i") or a == "--in-place" for a in args) \
                else read
            target += [f for f in files if f not in target]
        elif program in EDITORS:
            changed += [a for a in args if not a.startswith("-") and a not in changed]
    return read, changed


# The context a host puts in front of the user's words, in tags: pinky's own SessionStart context as Gemini CLI passes
# it on, and Gemini CLI's session context (date, OS, "Workspace Directories", the folder tree), which it prepends to
# the first prompt.
CONTEXT_TAGS = ("hook_context", "session_context")
# A host's context sent as a message of its own without tags: older Gemini CLIs' session context, and its IDE mode's
# editor context. Such a message holds nothing the user typed.
CONTEXT_OPENINGS = ("This is the Gemini CLI. We are setting up the context for our chat.",
                    "Here is the user's editor context as a JSON object.")


def without_hook_context(text: str) -> str:
    """`text` without the context blocks a host adds to the user's prompt (`<hook_context>…</hook_context>`,
    `<session_context>…</session_context>`); '' for a message that is only a host's context (CONTEXT_OPENINGS)."""
    for tag in CONTEXT_TAGS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        while opening in text:
            start = text.index(opening)
            end = text.find(closing, start)
            if end < 0:
                text = text[:start]
                break
            text = text[:start] + text[end + len(closing):]
    text = text.strip()
    return "" if text.startswith(CONTEXT_OPENINGS) else text
