"""redact() must remove every credential shape we know and leave ordinary text alone."""

from __future__ import annotations

import string

import pytest
from helpers import B62, fake
from hypothesis import given
from hypothesis import strategies as st

from pinky.base.redact import redact

ANTHROPIC = "sk-ant-api03-" + fake(80, 1) + "-" + fake(6, 2) + "AA"
OPENAI = "sk-proj-" + fake(48, 3)
OPENAI_LEGACY = "sk-" + fake(48, 4)
GITHUB_CLASSIC = "ghp_" + fake(36, 5)
GITHUB_OAUTH = "gho_" + fake(36, 6)
GITHUB_APP = "ghs_" + fake(36, 7)
GITHUB_FINE = "github_pat_11" + fake(20, 8) + "_" + fake(59, 9)
AWS_ID = "AKIA" + fake(16, 10, string.ascii_uppercase + string.digits)
AWS_SECRET = fake(40, 11)
SLACK = "xoxb-" + fake(12, 12, string.digits) + "-" + fake(13, 13, string.digits) + "-" + fake(24, 14)
GOOGLE = "AIza" + fake(35, 15)
STRIPE = "sk_live_" + fake(24, 16)
STRIPE_RESTRICTED = "rk_live_" + fake(24, 17)
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + fake(43, 18)
BEARER = fake(40, 19)
PASSWORD = "Tr0ub4dor&3x!"


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"use {ANTHROPIC} please", ANTHROPIC, "anthropic-key"),
        (f"key={OPENAI}", OPENAI, "openai-key"),
        (f"old key {OPENAI_LEGACY}.", OPENAI_LEGACY, "openai-key"),
        (f"git clone https://{GITHUB_CLASSIC}@github.com/o/r", GITHUB_CLASSIC, "github-token"),
        (GITHUB_OAUTH, GITHUB_OAUTH, "github-token"),
        (f"({GITHUB_APP})", GITHUB_APP, "github-token"),
        (f"token {GITHUB_FINE}", GITHUB_FINE, "github-token"),
        (f"id {AWS_ID} here", AWS_ID, "aws-access-key"),
        (f"SLACK={SLACK}", SLACK, "slack-token"),
        (f"maps key {GOOGLE}", GOOGLE, "google-key"),
        (f"stripe {STRIPE}", STRIPE, "stripe-key"),
        (f"stripe {STRIPE_RESTRICTED}", STRIPE_RESTRICTED, "stripe-key"),
        (f"cookie={JWT}; path=/", JWT, "jwt"),
    ],
)
def test_known_token_formats_are_replaced_with_a_named_marker(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out


def test_anthropic_key_is_not_reported_as_openai() -> None:
    assert redact(ANTHROPIC) == "[REDACTED:anthropic-key]"


def test_surrounding_text_survives_a_token() -> None:
    assert redact(f"please use {GITHUB_CLASSIC} for the push") == (
        "please use [REDACTED:github-token] for the push"
    )


@pytest.mark.parametrize(
    "text",
    [
        f'curl -H "Authorization: Bearer {BEARER}" https://api.example.com/v1',
        f"Authorization: Bearer {BEARER}",
        f"authorization: token {BEARER}",
        f'{{"Authorization": "Basic {BEARER}"}}',
        f"requests.get(url, headers={{'Authorization': 'Bearer {BEARER}'}})",
        f"send it as Bearer {BEARER} in the header",
    ],
)
def test_bearer_tokens_and_authorization_headers(text: str) -> None:
    out = redact(text)
    assert BEARER not in out
    assert "[REDACTED:" in out


def test_authorization_header_keeps_its_scheme() -> None:
    assert redact(f"Authorization: Bearer {BEARER}") == "Authorization: Bearer [REDACTED:auth]"


def test_pem_private_key_block_is_removed_whole() -> None:
    body = "\n".join(fake(64, 20 + i, B62 + "+/") for i in range(5))
    text = f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact(text) == "before\n[REDACTED:private-key]\nafter"


@pytest.mark.parametrize(
    "label", ["PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
)
def test_every_pem_private_key_label(label: str) -> None:
    text = f"-----BEGIN {label}-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END {label}-----"
    assert redact(text) == "[REDACTED:private-key]"


def test_truncated_pem_block_is_cut_to_the_end() -> None:
    text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJD"
    out = redact(text)
    assert "b3Bl" not in out and "QUJD" not in out
    assert out.startswith("key:\n")


def test_public_certificate_is_not_a_private_key() -> None:
    text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgres://admin:s3cr3tP4ss@db.example.com:5432/app",
            "postgres://admin:[REDACTED:password]@db.example.com:5432/app",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:[REDACTED:password]@cache:6379/0"),
        ("https://bob:p%40ss@example.com/x", "https://bob:[REDACTED:password]@example.com/x"),
    ],
)
def test_url_password_is_redacted_but_user_and_host_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_url_without_password_is_kept() -> None:
    for text in (
        "https://example.com:8080/path",
        "ssh://git@github.com/o/r.git",
        "http://localhost:3000/?a=b",
    ):
        assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:secret]"),
        ("export OPENAI_API_KEY=abc123xyz", "export OPENAI_API_KEY=[REDACTED:secret]"),
        ("STRIPE_SECRET='not a real one'", "STRIPE_SECRET='[REDACTED:secret]'"),
        ('GITHUB_TOKEN="abcd1234"', 'GITHUB_TOKEN="[REDACTED:secret]"'),
        ("AWS_SECRET_ACCESS_KEY=" + AWS_SECRET, "AWS_SECRET_ACCESS_KEY=[REDACTED:secret]"),
        ("aws_secret_access_key = " + AWS_SECRET, "aws_secret_access_key = [REDACTED:secret]"),
        (
            '{"client_secret": "abc def 123", "name": "x"}',
            '{"client_secret": "[REDACTED:secret]", "name": "x"}',
        ),
        ("password: correcthorse", "password: [REDACTED:secret]"),
        ("  PASSWD: abcd1234", "  PASSWD: [REDACTED:secret]"),
        ("private_key: 'abcdefgh'", "private_key: '[REDACTED:secret]'"),
        ("const authToken = 'q8Zp2LmN4xYv';", "const authToken = '[REDACTED:secret]';"),
        ("apiKey: 'AbCdEf123456'", "apiKey: '[REDACTED:secret]'"),
        ("SESSION_KEY := deadbeefcafe", "SESSION_KEY := [REDACTED:secret]"),
    ],
)
def test_env_style_assignments_with_secret_names(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_multiline_env_file_only_touches_secret_lines() -> None:
    text = "DEBUG=true\nPORT=8080\nDATABASE_URL=sqlite:///x.db\nAPI_KEY=abc123def\nLOG_LEVEL=info"
    assert (
        redact(text)
        == "DEBUG=true\nPORT=8080\nDATABASE_URL=sqlite:///x.db\nAPI_KEY=[REDACTED:secret]\nLOG_LEVEL=info"
    )


@pytest.mark.parametrize(
    "text",
    [
        "SECRET_KEY=${SECRET_KEY}",
        "API_KEY=$API_KEY",
        "token = self.token",
        "api_key = os.environ['API_KEY']",
        "password = getpass()",
        'password: "<your password>"',
        "PASSWORD=xxxx",
        "ssh_private_key: ~/.ssh/id_ed25519",
        "max_tokens=4096",
        "primary_key = id",
        "sort_key: name",
        "public_key: ssh-ed25519",
        "API_KEY=",
    ],
)
def test_assignments_that_only_name_a_secret_are_kept(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"mysql --password={PASSWORD} -u root", PASSWORD),
        (f"gh auth login --with-token --token {BEARER}", BEARER),
        (f"tool --api-key {BEARER} run", BEARER),
        ("curl -u alice:wonderland https://example.com", "wonderland"),
    ],
)
def test_command_line_secrets(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out


def test_a_labelled_long_hex_is_redacted_but_a_git_sha_and_a_bare_digest_are_kept() -> None:
    sha1 = fake(40, 30, "0123456789abcdef")
    sha256 = fake(64, 31, "0123456789abcdef")
    out = redact(f"commit {sha1} has the signing secret {sha256}")
    assert sha1 in out
    assert sha256 not in out and "[REDACTED:hex]" in out
    assert redact(f"commit {sha1} has value {sha256}") == f"commit {sha1} has value {sha256}"  # nothing labels it


def test_a_long_hex_labelled_as_a_digest_is_kept() -> None:
    sha256 = fake(64, 31, "0123456789abcdef")
    for text in (f"digest {sha256}", f"sha256:{sha256}", f'"checksum": "{sha256}"', f"{sha256}  file.tar.gz"):
        assert redact(text) == text


def test_high_entropy_base64_is_redacted_when_labelled_or_in_transcript_text() -> None:
    blob = fake(44, 32, B62 + "+/") + "=="
    assert redact(f"the api key is {blob}.") == "the api key is [REDACTED:password]."
    assert redact(f"the signing key {blob}.") == "the signing key [REDACTED:high-entropy]."
    assert redact(f"the value is {blob}.") == f"the value is {blob}."  # a test vector looks the same
    assert redact(f"the value is {blob}.", unlabelled=True) == "the value is [REDACTED:high-entropy]."


@pytest.mark.parametrize(
    "text",
    [
        "Fix the login bug in src/auth/session.py and add a test.",
        "the current directory has line endings; HTTP 404 is fine",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b and 3f78685",
        "uuid 550e8400-e29b-41d4-a716-446655440000",
        "/home/me/projects/pinky-brain/src/pinky/SomeVeryLongModuleNameForTesting2.py",
        "class MyVeryLongComponentNameForV2ThingsAndMore: pass",
        "TestHTTPServerHandlesIPv6AddressesCorrectly",
        "tests/test_redact.py::test_keeps_forty_hex_git_sha_in_prose",
        "pip install scikit-learn && sk-learn-is-not-a-key",
        "git push -u origin main",
        "docker run -u 1000:1000 image",
        "git commit -m 'Fix login race'",
        "The password is stored in the keychain; rotate the token weekly.",
        "Use a secret manager. Keys: see docs.",
        "x86_64-unknown-linux-gnu/release/build/libsqlite3-sys-1234abcd/out",
        "https://github.com/owner/repo/blob/main/src/pinky/base/redact.py#L10",
        "",
    ],
)
def test_ordinary_text_is_not_mangled(text: str) -> None:
    assert redact(text) == text


def test_every_secret_in_one_blob_is_gone() -> None:
    secrets = [
        ANTHROPIC,
        OPENAI,
        GITHUB_CLASSIC,
        GITHUB_FINE,
        AWS_ID,
        AWS_SECRET,
        SLACK,
        GOOGLE,
        STRIPE,
        JWT,
        PASSWORD,
    ]
    text = (
        f"ANTHROPIC_API_KEY={ANTHROPIC}\nOPENAI_API_KEY={OPENAI}\ngh: {GITHUB_CLASSIC} {GITHUB_FINE}\n"
        f"aws {AWS_ID}\naws_secret_access_key={AWS_SECRET}\nslack {SLACK} maps {GOOGLE} pay {STRIPE}\n"
        f"jwt {JWT}\nDB_PASSWORD='{PASSWORD}'\n"
    )
    out = redact(text)
    for secret in secrets:
        assert secret not in out


@given(st.text(max_size=300))
def test_redact_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def test_redact_is_idempotent_on_secrets() -> None:
    text = f"Authorization: Bearer {JWT} and postgres://u:{PASSWORD}@h/db and API_KEY={OPENAI}"
    once = redact(text)
    assert redact(once) == once
