"""The redactor's credential table: every format a note, a prompt or a shell command can carry is
replaced, ordinary code lines are left alone, and the cost stays linear in the input.

The keys are built at run time from a seeded generator, so no literal credential sits in the repo.
The first eight rows are the formats the diary redactor missed in issue 10.
"""

from __future__ import annotations

import string

import pytest
from helpers import B62, fake, nonlinear

from pinky.base.redact import redact, redact_kinds

_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits




AWS_SECRET = fake(20, 1, B62) + "/" + fake(19, 2, B62)
HEX32 = fake(32, 3, _HEX)

# (label, text, the secret that must disappear)
FORMATS: list[tuple[str, str, str]] = [
    # --- the eight issue 10 found missing -------------------------------------------------------
    ("aws secret as a bare argument", f"aws configure set aws_secret_access_key {AWS_SECRET}", AWS_SECRET),
    ("mysql -pPASSWORD", "mysql -h db -u root -pS3cr3t!pw shop < dump.sql", "S3cr3t!pw"),
    ("sshpass -p", "sshpass -p 'Hunt3r-2x' ssh deploy@10.0.0.5", "Hunt3r-2x"),
    ("docker login -p", "docker login -u me -p Dck3rPassw0rd registry.example.com", "Dck3rPassw0rd"),
    ("twilio auth token (32 hex)", f"twilio auth token {HEX32}", HEX32),
    ("mailgun key-", "MAILGUN=" + "key-" + fake(32, 4, string.ascii_lowercase + string.digits),
     "key-" + fake(32, 4, string.ascii_lowercase + string.digits)),
    ("password is X in prose", "fyi the staging password is Tr0ub4dor&3 until friday", "Tr0ub4dor"),
    ("gcp private_key_id", '"private_key_id": "' + fake(40, 5, _HEX) + '",', fake(40, 5, _HEX)),
    # --- vendor token prefixes ------------------------------------------------------------------
    ("anthropic", "sk-ant-api03-" + fake(90, 6), "sk-ant-api03-" + fake(90, 6)),
    ("openai project", "sk-proj-" + fake(48, 7), "sk-proj-" + fake(48, 7)),
    ("github classic", "ghp_" + fake(36, 8), "ghp_" + fake(36, 8)),
    ("github fine-grained", "github_pat_11" + fake(20, 9) + "_" + fake(59, 10), fake(59, 10)),
    ("gitlab", "glpat-" + fake(20, 11), "glpat-" + fake(20, 11)),
    ("aws access key id", "AKIA" + fake(16, 12, _UPPER), "AKIA" + fake(16, 12, _UPPER)),
    ("slack bot", "xoxb-" + fake(12, 13, string.digits) + "-" + fake(24, 14), fake(24, 14)),
    ("slack app", "xapp-1-" + fake(11, 15, _UPPER) + "-" + fake(30, 16), fake(30, 16)),
    ("google api key", "AIza" + fake(35, 17), "AIza" + fake(35, 17)),
    ("google oauth secret", "GOCSPX-" + fake(28, 18), "GOCSPX-" + fake(28, 18)),
    ("stripe live", "sk_live_" + fake(24, 19), "sk_live_" + fake(24, 19)),
    ("stripe webhook secret", "whsec_" + fake(32, 20), "whsec_" + fake(32, 20)),
    ("npm", "//registry.npmjs.org/:_authToken=npm_" + fake(36, 21), "npm_" + fake(36, 21)),
    ("pypi", "password = pypi-AgEIcHlwaS5vcmc" + fake(60, 22), fake(60, 22)),
    ("huggingface", "HF_TOKEN hf_" + fake(34, 23), "hf_" + fake(34, 23)),
    ("sendgrid", "SG." + fake(22, 24) + "." + fake(43, 25), fake(43, 25)),
    ("twilio account sid", "AC" + fake(32, 26, _HEX), "AC" + fake(32, 26, _HEX)),
    ("shopify", "shpat_" + fake(32, 27, _HEX), "shpat_" + fake(32, 27, _HEX)),
    ("digitalocean", "dop_v1_" + fake(64, 28, _HEX), fake(64, 28, _HEX)),
    ("square", "sq0atp-" + fake(22, 29), "sq0atp-" + fake(22, 29)),
    ("atlassian", "ATATT3xFfGF0" + fake(40, 30), fake(40, 30)),
    ("vault", "VAULT hvs." + fake(90, 31), "hvs." + fake(90, 31)),
    ("doppler", "dp.st.prd." + fake(40, 32), fake(40, 32)),
    ("telegram bot", "bot" + fake(10, 33, string.digits).lstrip("0") + ":AA" + fake(33, 34) + "/getMe", fake(33, 34)),
    ("age secret key", "AGE-SECRET-KEY-1" + fake(58, 35, _UPPER), fake(58, 35, _UPPER)),
    ("linear", "lin_api_" + fake(40, 63), "lin_api_" + fake(40, 63)),
    ("notion", "NOTION=ntn_" + fake(46, 64), "ntn_" + fake(46, 64)),
    ("postman", "PMAK-" + fake(24, 65, _HEX) + "-" + fake(34, 66, _HEX), fake(34, 66, _HEX)),
    ("discord webhook", "https://discord.com/api/webhooks/" + fake(18, 67, string.digits) + "/" + fake(60, 68),
     fake(60, 68)),
    ("grafana service account", "glsa_" + fake(32, 69) + "_" + fake(8, 70, _HEX), fake(32, 69)),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + fake(43, 36), fake(43, 36)),
    ("slack webhook", "https://hooks.slack.com/services/T0" + fake(8, 37, _UPPER) + "/B0" + fake(8, 38, _UPPER)
     + "/" + fake(24, 39), fake(24, 39)),
    # --- shapes: headers, URLs, assignments, command lines ---------------------------------------
    ("authorization bearer", "curl -H 'Authorization: Bearer " + fake(40, 40) + "' https://x", fake(40, 40)),
    ("basic auth header", "Authorization: Basic " + fake(24, 41) + "==", fake(24, 41)),
    ("x-api-key header", "-H 'x-api-key: " + fake(32, 42) + "'", fake(32, 42)),
    ("url password", "postgres://app:Pg" + fake(12, 43) + "@db.internal:5432/app", "Pg" + fake(12, 43)),
    ("token in a query string", "https://api.example.com/v1?user=1&access_token=" + fake(30, 44), fake(30, 44)),
    ("azure sas signature", "https://acct.blob.core.windows.net/c/f?sv=2022&sig=" + fake(30, 45) + "%3D",
     fake(30, 45)),
    ("env assignment", "export DB_PASSWORD=" + "Sup3r" + fake(8, 46), fake(8, 46)),
    ("azure connection string", "AccountName=acct;AccountKey=" + fake(86, 47) + "==;EndpointSuffix=core",
     fake(86, 47)),
    ("yaml secret", "  client_secret: " + fake(24, 48), fake(24, 48)),
    ("--password flag", "psql --password=" + fake(14, 49) + " -h db", fake(14, 49)),
    ("curl -u user:pass", "curl -u admin:" + fake(12, 50) + " https://x", fake(12, 50)),
    ("redis-cli -a", "redis-cli -h cache -a R3dis" + fake(10, 51) + " ping", fake(10, 51)),
    ("openssl -passin", "openssl rsa -in k.pem -passin pass:" + fake(12, 52), fake(12, 52)),
    ("netrc", "machine api.example.com login me password N3trc" + fake(10, 53), fake(10, 53)),
    ("netrc multi-line", "machine api.example.com\n  login me\n  password N3t" + fake(10, 54) + "\n", fake(10, 54)),
    ("git config password", "git config credential.password Gc" + fake(10, 55), fake(10, 55)),
    ("prose in spanish", "la contraseña es Cl4ve" + fake(6, 56) + ".", fake(6, 56)),
    ("password in backticks", "the root password is `" + fake(10, 57, string.ascii_lowercase) + "`",
     fake(10, 57, string.ascii_lowercase)),
    ("pem private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fake(64, 58) + "\n-----END OPENSSH PRIVATE KEY-----",
     fake(64, 58)),
    ("smbclient user%pass", "smbclient //nas/share -U me%Smb" + fake(10, 59), fake(10, 59)),
    ("htpasswd -b", "htpasswd -bc .htpasswd admin Ht" + fake(10, 60), fake(10, 60)),
    ("labelled high-entropy base64", "webhook signing key: " + fake(44, 61) + "==", fake(44, 61)),
    ("long hex secret", "signing secret " + fake(64, 62, _HEX), fake(64, 62, _HEX)),
]


def test_the_table_covers_at_least_forty_formats() -> None:
    assert len(FORMATS) >= 40
    assert len({label for label, _, _ in FORMATS}) == len(FORMATS)


def test_every_known_token_kind_has_a_row() -> None:
    from pinky.base.redact import _TOKEN_FORMATS

    kinds = {kind for row in FORMATS for kind in redact_kinds(row[1])[1]}
    assert {kind for kind, _ in _TOKEN_FORMATS} <= kinds


@pytest.mark.parametrize(("label", "text", "secret"), FORMATS, ids=[row[0] for row in FORMATS])
def test_every_format_is_redacted(label: str, text: str, secret: str) -> None:
    out, kinds = redact_kinds(text)
    assert secret not in out, label
    assert "[REDACTED:" in out and kinds, label
    assert redact(out) == out  # idempotent


# Ordinary lines of code and notes that must come out unchanged.
ORDINARY = [
    # digests in lockfiles and manifests
    '"integrity": "sha512-' + fake(86, 100, B62 + "+/") + '==",',
    'hash = "sha256:' + fake(64, 101, _HEX) + '"',
    'checksum = "' + fake(64, 102, _HEX) + '"',
    "github.com/pkg/errors v0.9.1 h1:" + fake(43, 103, B62 + "+/") + "=",
    "  resolved \"https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#" + fake(40, 104, _HEX) + '"',
    "image: nginx@sha256:" + fake(64, 105, _HEX),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt  (sha256sum)",
    # identifiers
    "uuid 550e8400-e29b-41d4-a716-446655440000",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "git cherry-pick 3f78685",
    "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop",
    # css, versions, urls
    "color: #1a2b3c; background: #fff; border-color: rgba(0, 0, 0, 0.5);",
    "requires numpy>=1.26.4,<3 and pydantic==2.11.0; version 2024.11.25-beta.4+build.5678",
    "https://example.com:8443/api/v2/items?page=2&sort=name#section",
    "ssh://git@github.com/owner/repo.git",
    "see https://docs.python.org/3/library/secrets.html#secrets.token_hex",
    # code that names secrets without holding one
    "def verify_password(password: str, hashed: bytes) -> bool:",
    "const token: string = req.headers.authorization;",
    "conn = psycopg.connect(user=user, password=password, host=host)",
    "api_key = os.environ['OPENAI_API_KEY']",
    "secret_key: SecretStr = Field(...)",
    "token = self._refresh_token()",
    "headers = {'Authorization': f'Bearer {token}'}",
    "if not api_key: raise ValueError('set the api_key parameter')",
    "password = getpass.getpass('password: ')",
    # prose
    "The password is stored in the keychain; rotate the token weekly.",
    "Bearer authentication is required for every request.",
    "the token is expired, so ask for a new one",
    "the PIN is 4 digits long",
    "mysql -u root -p shop   # prompts for the password",
    "docker login --password-stdin < token.txt",
    "max_tokens=4096, primary_key = id",
    "MyVeryLongComponentNameForV2ThingsAndMore and TestHTTPServerHandlesIPv6AddressesCorrectly",
    "x86_64-unknown-linux-gnu/release/build/libsqlite3-sys-1234abcd/out",
    # digests, content ids, test vectors and public keys in prose (issue 22: all rewritten on disk before)
    "The release tarball's SHA-256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
    "the SHA-512 digest of the ISO is " + fake(128, 110, _HEX) + ".",
    "| linux-x64 | " + fake(64, 111, _HEX) + " |",
    "image id " + fake(64, 112, _HEX) + ", built friday",
    "commit " + fake(64, 113, _HEX) + " (a sha256 repository)",
    "expected_version " + fake(64, 114, _HEX),
    "the md5 of the token file is d41d8cd98f00b204e9800998ecf8427e",
    "The SHA-256 hash of the secret is " + fake(64, 115, _HEX),
    "Pinned on IPFS as QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG yesterday.",
    "CIDv1: zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA",
    "Test vector: the expected output is 9QEfOgWNkEcFXgy0BCyPZpN7VnKkL8ykvyQDgkhkUKo=",
    "HMAC-SHA256 test case 2 expects W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=",
    "value: " + fake(44, 61) + "==",
    "public key (base64): 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
    "PublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=",
    "the bundle's integrity is sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC",
    "thumbprint NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs for the public JWK",
]


def test_the_false_positive_list_is_long_enough() -> None:
    assert len(ORDINARY) >= 30


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_lines_are_not_touched(text: str) -> None:
    assert redact_kinds(text) == (text, [])


def test_redact_kinds_names_each_kind_once_and_ignores_old_markers() -> None:
    text = "[REDACTED:secret] then ghp_" + fake(36, 200) + " and ghp_" + fake(36, 201) + " and DB_PASSWORD=abc12345"
    out, kinds = redact_kinds(text)
    assert kinds == ["github-token", "secret"]
    assert redact_kinds(out) == (out, [])


@pytest.mark.parametrize(
    "unit",
    [
        "a" * 50 + "-",  # hyphenated runs
        "x_" * 30,  # compound names without a secret word
        "mysql " + "a " * 40,  # a command whose flag never comes
        "twilio " + "0" * 31 + " ",  # context without a token
        "password is " + "`" * 3,
        "A1b2" * 20 + ".",  # long runs that end in a dot
        "sk-" + "a" * 30 + " ",
        "token=" * 20,
    ],
)
def test_redaction_time_is_linear_in_the_input(unit: str) -> None:
    """Twice the input may cost ~2.5 times the time, never the 4 times of a square (timed as the scanners
    are, tests/test_linear_scanners.py: pairs back to back, CPU time of this thread, on up to 100 KB)."""
    assert nonlinear(redact, (unit,)) == []


def test_a_long_run_of_one_hex_digit_is_not_a_key() -> None:
    from pinky.base.redact import redact

    for run in ("a" * 100_000, "0" * 64, "deadbeef" * 8):
        assert redact(f"x = {run}") == f"x = {run}"
    labelled = "signing secret 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08de"
    assert "[REDACTED:hex]" in redact(labelled)


def test_an_unlabelled_random_run_is_redacted_only_in_transcript_text() -> None:
    """The diary copies prompts, where a key often comes bare: there a random run goes without a label."""
    text = "use " + fake(44, 120) + " and " + fake(64, 121, _HEX)
    assert redact(text) == text
    assert redact(text, unlabelled=True) == "use [REDACTED:high-entropy] and [REDACTED:hex]"
    digest = "The release tarball's SHA-256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855."
    assert redact(digest, unlabelled=True) != digest  # why notes never take this mode


def test_every_pass_is_gated_by_words_the_hooks_can_test_without_re() -> None:
    """`may_hold_secret` clears text for the hot hooks: every word a pass waits for must be in its list."""
    from pinky.base.redact import _PASSES
    from pinky.base.secret_words import ALL_WORDS, may_hold_secret

    for gate, pattern, _ in _PASSES:
        assert gate is not None, pattern.pattern[:40]
        if not callable(gate):
            assert set(gate) <= set(ALL_WORDS), (gate, pattern.pattern[:40])
    for _, text, _ in FORMATS:
        assert may_hold_secret(text), text
    assert not may_hold_secret("- gotcha/pg-pool-uses-a-lock [gotcha, files] PG pool hangs on exit")


def test_find_secrets_names_each_credential_by_a_fingerprint_not_its_text() -> None:
    from pinky.base.secret_scan import find_secrets

    token = "ghp_" + fake(36, 130)
    found = find_secrets(f"push with {token}\nthe db password is Tr0ub4dor&3x\n")
    assert [f.kind for f in found] == ["github-token", "password"]
    assert all(token not in f.fingerprint and len(f.fingerprint) == 64 for f in found)
    assert find_secrets(f"again: {token}")[0] == found[0]  # the same secret, wherever it stands
    assert find_secrets("SHA-256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == []


def test_the_unlabelled_gate_clears_only_text_the_unlabelled_passes_leave_alone() -> None:
    """The hook journal (pinky.hooks.journal) redacts like the diary, unlabelled keys too, and loads the redactor
    only past `may_hold_unlabelled_secret`: every text that redaction changes must pass that gate."""
    import random

    from pinky.base.redact import redact
    from pinky.base.secret_words import may_hold_unlabelled_secret

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
    rng = random.Random(7)
    texts = [f"run it with {''.join(rng.choice(alphabet) for _ in range(n))} please" for n in range(32, 60)]
    texts += [f"cat /srv/{''.join(rng.choice(alphabet[:62]) for _ in range(24))}/{'ab' * 20}" for _ in range(20)]
    texts += [f"x {rng.getrandbits(256):064x} y" for _ in range(5)]
    changed = [text for text in texts if redact(text, unlabelled=True) != text]
    assert len(changed) >= 20  # the samples do hold what the unlabelled passes take
    assert all(may_hold_unlabelled_secret(text) for text in changed)
    assert not may_hold_unlabelled_secret("cat src/pinky/hooks/journal.py && pytest -q tests/hosts")
    # pieces of every shape the narrowed gates (`--` flags, URLs) and the random runs look at, shuffled together
    pieces = ["--", "-pass", "--db-pass=", "pass ", "://", "https://", "user:", "@", "host", " ", "=", "/", "Ab3",
              "x" * 20, "Q9w" * 11, "--token ", "s3cr3t-V4lue", "git commit --amend", "a_b_c_d_e_f_g_h_i_j_k_l"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        if not may_hold_unlabelled_secret(text):
            assert redact(text, unlabelled=True) == text, text
