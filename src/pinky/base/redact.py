"""Replace credentials with `[REDACTED:<kind>]` markers, and find them without replacing them.

Why: notes and the diary are markdown that git syncs to other machines, and what pinky shows the
agent goes to a model. What pinky writes (save, update, the diary, rollups) and everything it
shows the agent run through `redact`; `pinky sync` uses `scan` to hold a note back from
the push without rewriting it. Only credentials with high confidence count: known token formats,
PEM private keys, passwords in URLs, `Authorization` headers, command lines that take a password,
values labelled password/token/secret/key, and long random runs a word on their line labels
(`signing secret 9f86…`) while none names a digest. A bare hex digest, a SHA-256 in prose, an IPFS
CID, a base64 test vector, a UUID or a git SHA never counts: rewriting a checksum is a loss.
`unlabelled=True` also takes unlabelled random runs: for lines the diary copies from a transcript,
where a pasted key comes bare. Patterns run from most specific to least, so a marker names the
kind of secret when it can.

Stdlib only and precompiled, because this runs inside a hook that must start fast. Linear time:
every pattern either starts at a literal prefix or at the start of a run of its own characters,
and every scan that looks ahead for context is bounded (`{0,200}`), so no input can make a
pattern backtrack over the whole text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from os.path import commonprefix

from pinky.base.secret_words import LABEL_WORDS, PROSE_WORDS, SECRET_WORDS, has_cli_user, has_token

__all__ = ["redact", "redact_kinds", "scan"]

_Sub = Callable[[re.Match[str]], str]
_MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9\-]+)\]")


def _marker(kind: str) -> str:
    """The replacement text; it must never itself look like a secret."""
    return f"[REDACTED:{kind}]"


# Tokens start where a run of token characters starts (not after a `-` inside one), which also
# keeps scanning linear on long hyphenated runs.
_START = r"(?<![A-Za-z0-9_\-])"
_END = r"(?![A-Za-z0-9_\-])"

# Known token formats: (kind, pattern). Each pattern matches only the secret itself; they run as
# one alternation (one scan of the text), the first listed winning at a given position.
_TOKEN_FORMATS: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("github-token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab-token", r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas)-[A-Za-z0-9_\-]{20,}"),
    ("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("slack-token", r"xox[abprse]-[A-Za-z0-9\-]{10,}"),
    ("slack-token", r"xapp-\d-[A-Za-z0-9\-]{10,}"),
    ("google-key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google-oauth", r"GOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe-key", r"whsec_[A-Za-z0-9]{24,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}\b"),
    ("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}\b"),
    ("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    ("mailgun-key", r"key-[0-9a-zA-Z]{32}" + _END),
    ("twilio-key", r"(?:AC|SK)[0-9a-f]{32}" + _END),
    ("shopify-token", r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _END),
    ("digitalocean-token", r"do[opr]_v1_[0-9a-f]{64}" + _END),
    ("square-token", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}"),
    ("atlassian-token", r"ATATT3[A-Za-z0-9_\-=]{20,}"),
    ("grafana-token", r"gl(?:sa|c)_[A-Za-z0-9_\-=]{30,}"),
    ("vault-token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("doppler-token", r"dp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_\-.]{20,}"),
    ("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    ("notion-token", r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _END),
    ("postman-key", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    ("age-key", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("webhook", r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+"),
    ("webhook", r"discord(?:app)?\.com/api/webhooks/[A-Za-z0-9/_\-]+"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),
)
_TOKEN_KINDS = {f"t{i}": kind for i, (kind, _) in enumerate(_TOKEN_FORMATS)}
# Every format starts with one of these letters; checking that first lets the scan skip most
# positions at once (4x faster than trying each format everywhere).
_TOKEN_FIRST = "AGPSdeghklnprswx"
_TOKENS = re.compile(
    _START + f"(?=[{_TOKEN_FIRST}])(?:" + "|".join(f"(?P<t{i}>{p})" for i, (_, p) in enumerate(_TOKEN_FORMATS)) + ")"
)
_TELEGRAM = re.compile(r"(?:(?<=bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _END)  # also in /bot<token>/ URLs

_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
    r"(?:.*?-----END \1-----|.*\Z)",  # an unterminated block is cut to the end of the text
    re.DOTALL,
)

# scheme://user:password@host: keep user and host.
_URL_PASSWORD = re.compile(
    r"((?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@]*:)(?!\[REDACTED)([^\s@/]+)(@)"
)
# A signed URL's signature or a token in a query string: ?sig=..., &access_token=...
_QUERY_SECRET = re.compile(
    r"([?&](?:sig|signature|x-amz-signature|x-goog-signature|access_token|refresh_token|id_token|"
    r"api_?key|apikey|token|secret|password|client_secret)=)(?!\[REDACTED)([^\s&#\"'<>]{6,})",
    re.IGNORECASE,
)

# Authorization: Bearer xyz / "Authorization": "token xyz" / -H 'Authorization: Basic abc'
_AUTH_HEADER = re.compile(
    r"(\b(?:Proxy-)?Authorization[\"']?\s*[:=]\s*[\"']?(?>(?:(?:Bearer|Basic|Token|Bot|Digest)\s+)?))"
    r"(?!\[REDACTED)([^\s\"',;)]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(\bBearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)

# --password=x, --api-key x, --token=x, and curl/wget -u user:pass
_CLI_FLAG = re.compile(
    r"(--(?:[A-Za-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|access-key|private-key)(?:=|\s+))"
    r"(?!\[REDACTED)([^\s\"'-][^\s\"']*|\"[^\"\n]*\"|'[^'\n]*')",
    re.IGNORECASE,
)
_CLI_USER = re.compile(r"((?:\s-u\s*|--user[=\s])[\"']?[^\s:\"']+:)(?!\[REDACTED|\d+\b)([^\s\"'@]+)")
_VALUE = r"(?!\[REDACTED)(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\-][^\s\"']*)"
_ARGS = r"[^\n;&|]{0,200}?"  # the rest of one command, bounded
# Commands whose short flag takes a password: (trigger word, pattern with the prefix in group 1).
_COMMANDS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (tuple(triggers.split()), re.compile(pattern))
    for triggers, pattern in (
        # mysql -pSECRET (attached; a bare -p prompts, and `-p db` names a database)
        ("mysql mariadb", r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlsh|mariadb"
         r"(?:-dump|-admin)?)\b" + _ARGS + r"\s-p)" + r"(?!\[REDACTED)([^\s\"'][^\s]*|\"[^\"\n]*\"|'[^'\n]*')"),
        ("sshpass", r"(\bsshpass\b" + _ARGS + r"\s-p\s*)" + _VALUE),
        ("login", r"(\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)\s+login\b" + _ARGS
         + r"\s-p\s+)" + _VALUE),
        ("redis-cli", r"(\bredis-cli\b" + _ARGS + r"\s-a\s+)" + _VALUE),
        ("smbclient", r"(\bsmbclient\b" + _ARGS + r"\s-U\s*[^\s%]+%)" + _VALUE),
        ("htpasswd", r"(\bhtpasswd\s+-[A-Za-z]*b[A-Za-z]*\s+\S+\s+\S+\s+)" + _VALUE),
        ("pass:", r"(\s-pass(?:in|out)?\s+pass:)" + _VALUE),
        ("machine", r"(\bmachine\s+\S+\s+login\s+\S+\s+password\s+)" + _VALUE),  # ~/.netrc on one line
    )
)

# A key name that says "secret": FOO_API_KEY, client_secret, DB_PASSWORD, authToken, ...
_SECRET_WORD = (
    r"(?:api[_\-]?key|access[_\-]?key|private[_\-]?key(?:[_\-]?id)?|secret[_\-]?key|account[_\-]?key|"
    r"[_\-.]key|secret|token|password|passwd|pwd|passphrase|credentials?)"
)
_SECRET_NAME = r"(?:[A-Za-z_][A-Za-z0-9_.\-]{0,80}?)?" + _SECRET_WORD
# A name that ends in "key" or "token" but never holds a secret.
_HARMLESS_NAME = re.compile(
    r"(?:primary|foreign|sort|partition|cache|public|pub|lookup|hash|dict|idempotency|map|row|group|"
    r"range|composite|unique|natural|surrogate|shortcut|hot)[_\-.]?key$"
    r"|^(?:max|num|n|total|count|input|output|prompt|completion)[_\-]?tokens?$",
    re.IGNORECASE,
)
_ASSIGNMENT = re.compile(
    # the lookahead rejects at once a word that no `=` or `:` follows (most of them)
    r"(?P<pre>(?<![\w.\-])(?=[A-Za-z0-9_.\-]{1,120}[\"']?\s*[:=])"
    r"(?P<name>" + _SECRET_NAME + r")[\"']?\s*(?::=|=|:)[ \t]*)"
    r"(?:(?P<q>[\"'])(?P<qval>[^\"'\n]*)(?P=q)|(?P<val>[^\s\"'`,;&|()\[\]{}]{4,}))",
    re.IGNORECASE,
)
# `aws configure set aws_secret_access_key VALUE`, `git config user.password VALUE`: a compound
# secret name (it has a _ - or .), a space, then a value that looks like a credential.
_NAME_SPACE_VALUE = re.compile(
    r"((?<![\w.\-])[A-Za-z][A-Za-z0-9]*[_\-.]" r"(?:[A-Za-z0-9]+[_\-.]){0,6}?" + _SECRET_WORD + r"[ \t]+)"
    r"(?!\[REDACTED)([^\s\"'`,;()\[\]{}]{6,})",
    re.IGNORECASE,
)
# Prose: "the password is X", "la contraseña es X", "password was `X`"; a netrc `password X` line.
_PROSE = re.compile(
    r"(\b(?=[acmpstACMPST])(?:password|passwd|passphrase|passcode|pin|contrase[ñn]a|clave|mot de passe|passwort|"
    r"secret(?: key)?|api key|access key|auth token|token)[ \t]+(?:is|was|is now|es|era|è|e|ist|est)"
    r"[ \t]*:?[ \t]*)(?!\[REDACTED)(`[^`\n]{1,200}`|\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s`\"']{4,})",
    re.IGNORECASE,
)
_NETRC_LINE = re.compile(r"(?m)(^[ \t]*password[ \t]+)(?!\[REDACTED)(\S+)(?=[ \t]*$)")
# Values that name a secret rather than hold one: variables, templates, code, file paths, types.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|/.*|~/.*|\.\.?/.*|\{.*|<.*|\[.*|%.*|none|null|nil|true|false|undefined|"
    r"str|bytes|string|int|integer|number|bool|boolean|float|any|object|dict|list|optional|"
    r"raise|return|pass|continue|break|await|yield|lambda|not|and|or|if|else|elif|in|is|del|assert|"
    r"import|from|def|class|with|for|while|try|except|finally|print|echo|throw|new|typeof|const|let|var|"
    r"\*+|x+|\.\.\.|…|your[_\-].*|.*\(.*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)$"
)
_TYPE_NAME = re.compile(r"^(?:[A-Z][a-z]+)+$")  # `token: Token`, `password: SecretStr`
_SECRET_IN_NAME = re.compile(r"(?i)key|secret|token|passw|pwd|credential|auth")

_LONG_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{48,}(?![0-9A-Za-z])")
# A 32-hex value near a word that says what it is: a Twilio or Datadog token, not an MD5 sum.
_HEX32 = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")
_LONG_RUN = re.compile(r"(?<![\w/+\-])[A-Za-z0-9+/_\-]{32,}={0,2}(?![\w/+=\-]|\.\w)")
# What may precede a long hex or base64 run that is a digest, a data URI or a public key.
_BENIGN_BEFORE = re.compile(
    r"(?:base64,|\bh1:|\b(?:sha(?:1|224|256|384|512)?|md5|blake2[bs]?|sha3-\d+|xxh\d+)[:=\-]|"
    r"\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+|"
    r"\b(?:checksum|digest|hash|integrity|shasum|etag|sha\d*sum)[\"']?\s*[:=]?\s*[\"']?)$",
    re.IGNORECASE,
)

# A word that labels the run after it a credential, and one that says it is a digest or an identifier.
_LABEL = re.compile(
    r"(?i)\b(?:secrets?|tokens?|passwords?|passwd|passphrase|credentials?|auth|twilio|"
    r"(?:api|access|private|secret|signing|encryption|master|client|account|session|shared|hmac)[_\- ]?keys?)"
    r"(?![a-z])"
)
_DIGEST_WORD = re.compile(
    r"(?i)\b(?:sha(?:\d|-\d|\b)|md5|blake|hash(?!i)|digest|checksum|fingerprint|thumbprint|cid\b|ipfs|"
    r"multihash|integrity|etag|vector)"
)


def _token_sub(kind: str) -> _Sub:
    """Replace a whole match with the marker for `kind`."""
    return lambda m: _marker(kind)


def _known_token_sub(m: re.Match[str]) -> str:
    """The marker for the format that matched; `sk-` bodies without a digit are words, not keys."""
    kind = _TOKEN_KINDS[m.lastgroup or ""]
    return _marker(kind) if kind != "openai-key" or any(c.isdigit() for c in m.group(0)) else m.group(0)


def _keep_prefix(kind: str) -> _Sub:
    """Keep group 1 (the label or user), replace group 2, keep any group 3."""
    return lambda m: m.group(1) + _marker(kind) + (m.group(3) if m.re.groups >= 3 else "")


def _is_placeholder(value: str) -> bool:
    """A value that names a secret rather than holds one: `$VAR`, `<your key>`, `str`, `Token`, `db_password`."""
    return bool(
        _PLACEHOLDER.match(value)
        or _TYPE_NAME.match(value)
        or (value.isidentifier() and _SECRET_IN_NAME.search(value))
    )


def _credential_like(value: str, minimum: int = 6) -> bool:
    """An unquoted word that could be a password: long enough, not a placeholder, and not a plain word."""
    if len(value) < minimum or _is_placeholder(value):
        return False
    has_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return has_case or any(c.isdigit() or c in "!@#$%^&*+=/~?<>|\\" for c in value)


def _checked_value(kind: str, minimum: int = 6) -> _Sub:
    """Like `_keep_prefix`, for values that may be quoted or end a sentence: `is "x".`, `is x.`"""

    def sub(m: re.Match[str]) -> str:
        value = m.group(2)
        if _DIGEST_WORD.search(_line_before(m)):
            return m.group(0)  # "the SHA-256 of the secret is 2c26…" holds a digest, not the secret
        if value[:1] in "\"'`" and value[-1:] == value[:1]:
            return m.group(0) if _is_placeholder(value[1:-1]) else m.group(1) + value[0] + _marker(kind) + value[0]
        core = value.rstrip(".,:;!?)")
        if not _credential_like(core, minimum):
            return m.group(0)
        return m.group(1) + _marker(kind) + value[len(core) :]

    return sub


def _header_sub(m: re.Match[str]) -> str:
    """`Authorization: <value>`, unless the value is a type or a variable (`authorization: str`, `f'{x}'`)."""
    value = m.group(2)
    return m.group(0) if len(value) < 4 or _is_placeholder(value) else m.group(1) + _marker("auth")


def _bearer_sub(m: re.Match[str]) -> str:
    """`Bearer <token>`; "Bearer authentication" in prose is not a token."""
    return m.group(1) + _marker("token") if _credential_like(m.group(2), 8) else m.group(0)


def _assignment_sub(m: re.Match[str]) -> str:
    """Redact `NAME=value` only when the name is secret-like and the value is not a placeholder."""
    name, value = m.group("name"), m.group("qval") if m.group("q") else m.group("val")
    if _HARMLESS_NAME.search(name) or not value or _PLACEHOLDER.match(value):
        return m.group(0)
    if not m.group("q"):
        if m.string[m.end() : m.end() + 1] in ("(", "["):
            return m.group(0)  # code such as `password = getpass()` or `key = os.environ["KEY"]`
        if _is_placeholder(value):
            return m.group(0)  # `password=password`, `token: Token`
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


def _benign(m: re.Match[str]) -> bool:
    """A digest (`sha256:…`, `h1:…`, `checksum = "…"`, a `sha256sum` line), a data URI or a public key."""
    after = m.string[m.end() : m.end() + 3]
    if len(after) == 3 and after[0] == " " and after[1] in " *" and not after[2].isspace():
        return True  # `<digest>  <file>`, as sha256sum and md5sum print it
    return _BENIGN_BEFORE.search(m.string, max(0, m.start() - 40), m.start()) is not None


def _hex_sub(m: re.Match[str]) -> str:
    """A long hex run is a key unless it is a digest, or too regular to be random (`aaaa…`, `0000…`:
    random hex has ~4 bits a character)."""
    run = m.group(0)
    return run if _benign(m) or _entropy(run[:4096]) < 3.0 else _marker("hex")


def _long_run_sub(m: re.Match[str]) -> str:
    return _marker("high-entropy") if _looks_random(m.group(0)) and not _benign(m) else m.group(0)


def _line_before(m: re.Match[str], width: int = 80) -> str:
    """Up to `width` characters before the match, on its line: where a label or a digest's name stands."""
    text, start = m.string, m.start()
    window = max(0, start - width)
    return text[max(window, text.rfind("\n", window, start) + 1) : start]  # no newline: the window, not the text


def _labelled(m: re.Match[str]) -> bool:
    """A word within 60 characters before the run labels it a credential, and none says it is a digest."""
    before = _line_before(m)
    last = max((label.end() for label in _LABEL.finditer(before)), default=None)
    return last is not None and len(before) - last <= 60 and not _DIGEST_WORD.search(before) and not _benign(m)


def _labelled_hex_sub(m: re.Match[str]) -> str:
    """A labelled hex run (`twilio auth token 0f3a…`); too regular to be random (`0000…`) is no key."""
    return _marker("hex") if _labelled(m) and _entropy(m.group(0)[:4096]) >= 3.0 else m.group(0)


def _labelled_run_sub(m: re.Match[str]) -> str:
    """A labelled random-looking base64 run (`signing key: q83v…`)."""
    return _marker("high-entropy") if _labelled(m) and _looks_random(m.group(0)) else m.group(0)


_Gate = tuple[str, ...] | Callable[[str, str], bool] | None
# (gate, pattern, replacement): a pass runs only when one of its words occurs in the lowercased text
# (pinky.base.secret_words, which the hooks test without loading this module), or its gate says so;
# None: always. Most text names no secret, so most passes are skipped.
_PASSES: tuple[tuple[_Gate, re.Pattern[str], _Sub], ...] = (
    (("private key",), _PEM, _token_sub("private-key")),
    (("://",), _URL_PASSWORD, _keep_prefix("password")),
    (has_token, _TOKENS, _known_token_sub),
    ((":aa",), _TELEGRAM, _token_sub("telegram-token")),
    (("?sig", "&sig", "signature", "token", "key", "secret", "passw"), _QUERY_SECRET, _keep_prefix("secret")),
    (("authorization",), _AUTH_HEADER, _header_sub),
    (("bearer",), _BEARER, _bearer_sub),
    (("--",), _CLI_FLAG, _keep_prefix("secret")),
    (has_cli_user, _CLI_USER, _keep_prefix("password")),
    *((triggers, pattern, _keep_prefix("password")) for triggers, pattern in _COMMANDS),
    (SECRET_WORDS, _ASSIGNMENT, _assignment_sub),
    (SECRET_WORDS, _NAME_SPACE_VALUE, _checked_value("secret")),
    (PROSE_WORDS, _PROSE, _checked_value("password", 4)),
    (("password",), _NETRC_LINE, _checked_value("password")),
    (LABEL_WORDS, _HEX32, _labelled_hex_sub),
    (LABEL_WORDS, _LONG_HEX, _labelled_hex_sub),
    (LABEL_WORDS, _LONG_RUN, _labelled_run_sub),
)
# For transcript text: long random runs count without a label too (digests and public keys excepted).
_UNLABELLED_PASSES = (*_PASSES, (None, _LONG_HEX, _hex_sub), (None, _LONG_RUN, _long_run_sub))


def _runs(gate: _Gate, lower: str, text: str) -> bool:
    if gate is None:
        return True
    return gate(lower, text) if callable(gate) else any(word in lower for word in gate)


def _scan(text: str, passes: tuple[tuple[_Gate, re.Pattern[str], _Sub], ...],
          record: Callable[[str, str], None] | None = None) -> str:
    """Run the passes over `text`; with `record`, call it with each replacement's kind and secret."""
    lower = text.lower()
    for gate, pattern, sub in passes:
        if _runs(gate, lower, text):
            changed = pattern.sub(sub if record is None else _recording(sub, record), text)
            if changed != text:
                text, lower = changed, changed.lower()  # a marker can be the next pass's context
    return text


def redact(text: str, *, unlabelled: bool = False) -> str:
    """Return `text` with every credential replaced by a `[REDACTED:<kind>]` marker.

    Ordinary prose, code, paths, digests (in prose too), IPFS CIDs, base64 test vectors, UUIDs, git
    SHAs, data URIs and public keys pass through unchanged, and redacting twice gives the same result
    as once. `unlabelled`: also long random-looking runs nothing labels (text from a transcript).
    """
    return _scan(text, _UNLABELLED_PASSES if unlabelled else _PASSES) if text else text


def redact_kinds(text: str) -> tuple[str, list[str]]:
    """`redact(text)` and the sorted kinds of secret it replaced (empty when nothing was)."""
    out = redact(text)
    if out == text:
        return out, []
    added = Counter(_MARKER_RE.findall(out))
    added.subtract(Counter(_MARKER_RE.findall(text)))
    return out, sorted(kind for kind, count in added.items() if count > 0)


def scan(text: str, record: Callable[[str, str], None]) -> None:
    """Run `redact`'s passes over `text` and keep nothing but `record(kind, secret)` for each credential
    it would replace (`pinky.base.secret_scan`, which sync and import use to report without rewriting)."""
    if text:
        _scan(text, _PASSES, record)


def _recording(sub: _Sub, record: Callable[[str, str], None]) -> _Sub:
    def recorded(m: re.Match[str]) -> str:
        old, new = m.group(0), sub(m)
        if new != old:
            head = len(commonprefix([old, new]))
            tail = len(commonprefix([old[head:][::-1], new[head:][::-1]]))
            marker = _MARKER_RE.search(new)
            record(marker.group(1) if marker else "secret", old[head : len(old) - tail])
        return new

    return recorded
