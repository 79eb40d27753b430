"""The words without which no text holds a secret `pinky.base.redact` would hide, tested without `re`.

Why: the hot hooks (pre-read, pre-write) show note titles and first lines to the agent, and must
start in about the interpreter's own time; importing `re` and compiling the redactor costs two to
three times that. `may_hold_secret` answers with plain substring tests, so a hook imports the
redactor only for text that could need it (most text names no secret). `pinky.base.redact` gates
each of its passes on these same words, so a text this module clears is one `redact` returns
unchanged; `tests/base/test_redact_formats.py` checks that every pass's words are listed here.
"""

from __future__ import annotations

__all__ = ["LABEL_WORDS", "PROSE_WORDS", "SECRET_WORDS", "TOKEN_PREFIXES", "describe", "explain", "may_hold_secret",
           "may_hold_unlabelled_secret"]

# The literal start of every known token format (pinky.base.redact._TOKEN_FORMATS), lower-cased; the one
# format without a literal start, Twilio's `AC`/`SK` + 32 hex digits, is caught by `has_hex_run`.
TOKEN_PREFIXES = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-", "glcbt-",
    "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "akia", "asia", "abia", "acca", "xox", "xapp-",
    "aiza", "gocspx-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_", "npm_", "pypi-age", "hf_",
    "sg.", "key-", "shpat_", "shpss_", "shpca_", "shppa_", "doo_v1_", "dop_v1_", "dor_v1_", "sq0atp-",
    "sq0csp-", "atatt3", "glsa_", "glc_", "hvs.", "hvb.", "hvr.", "dp.", "lin_api_", "lin_oauth_",
    "secret_", "ntn_", "pmak-", "age-secret-key-1", "hooks.slack.com", "discord", "eyj",
)
# A name that says its value is a secret: API_KEY=, client_secret:, DB_PASSWORD=, authToken:, ...
SECRET_WORDS = ("key", "secret", "token", "passw", "pwd", "passphrase", "credential")
# "the password is X", "la contraseña es X", "PIN is X" (the regex wants a space or tab after "pin").
PROSE_WORDS = (*SECRET_WORDS, "pin ", "pin\t", "passcode", "contrase", "clave", "mot de passe")
# What may label a long random value as a credential: "signing secret <hex>", "auth token <hex>".
LABEL_WORDS = ("secret", "token", "passw", "passphrase", "credential", "auth", "twilio", "key")
# Shapes of their own: a PEM block, a URL with a password, headers, flags, commands, a telegram token.
OTHER_WORDS = (
    "private key", "://", ":aa", "?sig", "&sig", "signature", "authorization", "bearer", "--", "--user",
    "mysql", "mariadb", "sshpass", "login", "redis-cli", "smbclient", "htpasswd", "pass:", "machine",
    "password",
)
ALL_WORDS = tuple(dict.fromkeys((*TOKEN_PREFIXES, *PROSE_WORDS, *LABEL_WORDS, *OTHER_WORDS)))
# What may_hold_secret looks for: the token prefixes go through has_token, and two gates too wide for shell commands
# are narrowed to what their pattern cannot do without (its pass still runs on the wide word). `--`: a flag named
# password, pass, token, secret or key: the last three are words of their own, and a `pass` flag holds `-pass`
# (`--pass`, `--db-pass`). `://`: a password in a URL comes before an `@`.
_NARROWED = {"--": "-pass", "://": "@"}
_WORDS = tuple(dict.fromkeys(_NARROWED.get(word, word) for word in (*PROSE_WORDS, *LABEL_WORDS, *OTHER_WORDS)))

_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
_HEX_TABLE = bytes(ord("x") if chr(code) in "0123456789abcdefABCDEF" else ord(" ") for code in range(256))


def has_hex_run(text: str, length: int = 32) -> bool:
    """True when `text` holds `length` hex digits in a row (a C-speed scan: no `re`)."""
    return b"x" * length in text.encode("ascii", "replace").translate(_HEX_TABLE)


_RUN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_RUN_TABLE = bytes(code if code in _RUN_CHARS else ord(" ") for code in range(256))
RANDOM_RUN = 32  # the shortest run of [A-Za-z0-9+/_-] in which `redact(unlabelled=True)` sees a random key


def has_random_run(text: str) -> bool:
    """True when `text` holds a run of RANDOM_RUN characters of [A-Za-z0-9+/_-] with an upper-case letter, a
    lower-case one and a digit: what the unlabelled pass needs before it looks closer (a path, a snake_case
    name or a hex digest has no such run). Split at C speed; no `re`."""
    for run in text.encode("ascii", "replace").translate(_RUN_TABLE).split():
        if len(run) >= RANDOM_RUN and not run.isupper() and not run.islower() and any(c in b"0123456789" for c in run):
            return True
    return False


def has_dash_u(lower: str) -> bool:
    """`-u` after white space, as in `curl -u user:pass` (a `-u` inside a slug is not one)."""
    at = lower.find("-u")
    while at != -1:
        if at and lower[at - 1].isspace():
            return True
        at = lower.find("-u", at + 2)
    return False


def has_token(lower: str, text: str) -> bool:
    """A known token format's literal start where a token can start (not inside a word: `task-queue`
    holds no `sk-` key), or Twilio's 32 hex digits (its one format without a literal start)."""
    return any(_starts_a_token(lower, prefix) for prefix in TOKEN_PREFIXES) or has_hex_run(text)


def _starts_a_token(lower: str, prefix: str) -> bool:
    """`prefix` in `lower` after no letter, digit, `_` or `-` (pinky.base.redact's `_START`)."""
    at = lower.find(prefix)
    while at != -1:
        if not at or lower[at - 1] not in _TOKEN_CHARS:
            return True
        at = lower.find(prefix, at + 1)
    return False


def has_cli_user(lower: str, text: str) -> bool:
    """`curl -u user:pass` or `--user user:pass`."""
    return "--user" in lower or has_dash_u(lower)


def may_hold_secret(text: str) -> bool:
    """False only when `pinky.base.redact.redact(text)` would return `text` unchanged."""
    if not text:
        return False
    lower = text.lower()
    return any(word in lower for word in _WORDS) or has_token(lower, text) or has_dash_u(lower)


def may_hold_unlabelled_secret(text: str) -> bool:
    """False only when `pinky.base.redact.redact(text, unlabelled=True)` would return `text` unchanged: beside
    `may_hold_secret`'s words (a long hex run among them), the unlabelled passes need a random-looking run
    (`has_random_run`)."""
    return may_hold_secret(text) or has_random_run(text)


# Why each kind is a credential: said in save, update and sync results beside the kind (stdlib: the CLI imports it).
_REASONS = {
    "private-key": "a PEM private key block",
    "password": "a password (in a URL, a command line, or a value labelled password)",
    "secret": "a value assigned to a name that says secret, token, key or password",
    "auth": "the value of an Authorization header",
    "token": "a Bearer token",
    "hex": "a long hex value labelled as a secret, token or key",
    "high-entropy": "a random-looking value labelled as a secret, token or key",
    "telegram-token": "the Telegram bot token format",
    "webhook": "a Slack or Discord webhook URL, which works as a credential",
    "jwt": "a JSON Web Token",
}


def explain(kinds: list[str]) -> list[dict[str, str]]:
    """`{kind, reason}` for each kind of secret: why it was taken for a credential."""
    return [{"kind": kind, "reason": _REASONS.get(kind, f"the {kind.replace('-', ' ')} format")} for kind in kinds]


def describe(kinds: list[str]) -> str:
    """The kinds with their reasons, for one line: `github-token (the github token format), …`."""
    return ", ".join(f"{item['kind']} ({item['reason']})" for item in explain(kinds))
