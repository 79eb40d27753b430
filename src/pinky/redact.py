"""Replace credential-shaped strings with `[REDACTED:<kind>]` markers.

Why: the Stop-hook diary copies prompts and shell commands into markdown that git
syncs to other machines, so a key pasted into a prompt must never reach it. The
patterns run from most specific (known token prefixes) to least specific
(high-entropy runs), so a marker names the kind of secret when it can. Stdlib
only and precompiled, because this runs inside a hook that must start fast.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

__all__ = ["redact"]

_Sub = Callable[[re.Match[str]], str]


def _marker(kind: str) -> str:
    """The replacement text; it must never itself look like a secret."""
    return f"[REDACTED:{kind}]"


# Tokens start where a run of token characters starts (not after a `-` inside one), which also
# keeps scanning linear on long hyphenated runs.
_START = r"(?<![A-Za-z0-9_\-])"

# Known token formats: (kind, pattern). Each pattern matches only the secret itself.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("anthropic-key", _START + r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        ("openai-key", _START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        ("github-token", _START + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
        ("github-token", _START + r"github_pat_[A-Za-z0-9_]{22,}"),
        ("gitlab-token", _START + r"glpat-[A-Za-z0-9_\-]{20,}"),
        ("aws-access-key", _START + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        ("slack-token", _START + r"xox[abprse]-[A-Za-z0-9\-]{10,}"),
        ("slack-token", _START + r"xapp-\d-[A-Za-z0-9\-]{10,}"),
        ("google-key", _START + r"AIza[0-9A-Za-z_\-]{35}"),
        ("stripe-key", _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("npm-token", _START + r"npm_[A-Za-z0-9]{36}\b"),
        ("huggingface-token", _START + r"hf_[A-Za-z0-9]{30,}\b"),
        ("webhook", _START + r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+"),
        ("webhook", _START + r"discord(?:app)?\.com/api/webhooks/[A-Za-z0-9/_\-]+"),
        ("jwt", _START + r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),
    )
)

_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
    r"(?:.*?-----END \1-----|.*\Z)",  # an unterminated block is cut to the end of the text
    re.DOTALL,
)

# scheme://user:password@host: keep user and host.
_URL_PASSWORD = re.compile(
    r"((?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@]*:)(?!\[REDACTED)([^\s@/]+)(@)"
)

# Authorization: Bearer xyz / "Authorization": "token xyz" / -H 'Authorization: Basic abc'
_AUTH_HEADER = re.compile(
    r"(\b(?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?(?>(?:(?:Bearer|Basic|Token|Bot|Digest)\s+)?))"
    r"(?!\[REDACTED)([^\s\"',;]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(\bBearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)

# --password=x, --api-key x, --token=x, and curl/wget -u user:pass
_CLI_FLAG = re.compile(
    r"(--(?:[A-Za-z0-9]+-)*(?:password|passwd|token|secret|api-?key|access-key|private-key)(?:=|\s+))"
    r"(?!\[REDACTED)([^\s\"'-][^\s\"']*|\"[^\"\n]*\"|'[^'\n]*')",
    re.IGNORECASE,
)
_CLI_USER = re.compile(r"((?:\s-u\s*|--user[=\s])[\"']?[^\s:\"']+:)(?!\[REDACTED|\d+\b)([^\s\"'@]+)")

# A key name that says "secret": FOO_API_KEY, client_secret, DB_PASSWORD, authToken, ...
_SECRET_NAME = (
    r"(?:[A-Za-z_][A-Za-z0-9_.\-]{0,80}?)?"
    r"(?:api[_\-]?key|access[_\-]?key|private[_\-]?key|secret[_\-]?key|[_\-.]key|"
    r"secret|token|password|passwd|pwd|passphrase|credentials?)"
)
# A name that ends in "key" or "token" but never holds a secret.
_HARMLESS_NAME = re.compile(
    r"(?:primary|foreign|sort|partition|cache|public|pub|lookup|hash|dict|idempotency|map|row|group|"
    r"range|composite|unique|natural|surrogate|shortcut|hot)[_\-.]?key$"
    r"|^(?:max|num|n|total|count|input|output|prompt|completion)[_\-]?tokens?$",
    re.IGNORECASE,
)
_ASSIGNMENT = re.compile(
    r"(?P<pre>(?<![\w.\-])(?P<name>" + _SECRET_NAME + r")[\"']?\s*(?::=|=|:)[ \t]*)"
    r"(?:(?P<q>[\"'])(?P<qval>[^\"'\n]*)(?P=q)|(?P<val>[^\s\"'`,;&|()\[\]{}]{4,}))",
    re.IGNORECASE,
)
# Values that name a secret rather than hold one: variables, templates, code, file paths.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|/.*|~/.*|\.\.?/.*|\{.*|<.*|\[.*|%.*|none|null|nil|true|false|undefined|"
    r"\*+|x+|\.\.\.|…|your[_\-].*|.*\(.*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)$"
)

_LONG_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{48,}(?![0-9A-Za-z])")
_LONG_RUN = re.compile(r"(?<![\w/+\-])[A-Za-z0-9+/_\-]{32,}={0,2}(?![\w/+=\-]|\.\w)")


def _token_sub(kind: str) -> _Sub:
    """Replace a whole match with the marker for `kind`; key bodies without a digit are words, not keys."""
    return lambda m: (
        _marker(kind) if kind != "openai-key" or any(c.isdigit() for c in m.group(0)) else m.group(0)
    )


def _keep_prefix(kind: str) -> _Sub:
    """Keep group 1 (the label or user), replace group 2, keep any group 3."""
    return lambda m: m.group(1) + _marker(kind) + (m.group(3) if m.re.groups >= 3 else "")


def _assignment_sub(m: re.Match[str]) -> str:
    """Redact `NAME=value` only when the name is secret-like and the value is not a placeholder."""
    name, value = m.group("name"), m.group("qval") if m.group("q") else m.group("val")
    if _HARMLESS_NAME.search(name) or not value or _PLACEHOLDER.match(value):
        return m.group(0)
    if not m.group("q") and m.string[m.end() : m.end() + 1] in ("(", "["):
        return m.group(0)  # code such as `password = getpass()` or `key = os.environ["KEY"]`
    quote = m.group("q") or ""
    return f"{m.group('pre')}{quote}{_marker('secret')}{quote}"


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts, size = Counter(text), len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z0-9]")


def _looks_random(token: str) -> bool:
    """True for base64-ish noise, false for CamelCase names, slugs and paths.

    Identifiers split into word-sized pieces at case and digit boundaries; random
    base64 splits into pieces of about two characters (mean 1.8 for 32 random
    bytes, above 3 in under 1% of samples), which is what the average measures.
    """
    core = token.rstrip("=")
    if not (
        any(c.islower() for c in core) and any(c.isupper() for c in core) and any(c.isdigit() for c in core)
    ):
        return False
    if "/" in core and max(len(part) for part in core.split("/")) < 20:
        return False  # a path such as a/b/C3/d: short segments
    pieces = _SEGMENT.findall(core)
    return len(core) / len(pieces) < 3.0 and _entropy(core) >= 3.5


def _long_run_sub(m: re.Match[str]) -> str:
    return _marker("high-entropy") if _looks_random(m.group(0)) else m.group(0)


_PASSES: tuple[tuple[re.Pattern[str], _Sub], ...] = (
    (_PEM, _token_sub("private-key")),
    (_URL_PASSWORD, _keep_prefix("password")),
    *((pattern, _token_sub(kind)) for kind, pattern in _TOKENS),
    (_AUTH_HEADER, _keep_prefix("auth")),
    (_BEARER, _keep_prefix("token")),
    (_CLI_FLAG, _keep_prefix("secret")),
    (_CLI_USER, _keep_prefix("password")),
    (_ASSIGNMENT, _assignment_sub),
    (_LONG_HEX, _token_sub("hex")),
    (_LONG_RUN, _long_run_sub),
)


def redact(text: str) -> str:
    """Return `text` with every credential-shaped substring replaced by a `[REDACTED:<kind>]` marker.

    Ordinary prose, paths, UUIDs and 40-hex git SHAs pass through unchanged, and
    redacting twice gives the same result as redacting once.
    """
    if not text:
        return text
    for pattern, sub in _PASSES:
        text = pattern.sub(sub, text)
    return text
