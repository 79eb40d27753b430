"""HTTPS credentials for sync: never in the brain's git config, found at run time instead.

`origin` is recorded without a password. A run takes the password, in this order, from the URL
given with `--remote` (that run only), `$PINKY_GIT_PASSWORD`, or git's credential store file
(`~/.git-credentials`, then `$XDG_CONFIG_HOME/git/credentials`: one `https://user:token@host`
per line, as `git credential-store` writes it). A password given in a `--remote` URL is saved in
that store file (mode 600) once the remote has answered, so later runs find it there.

dulwich is imported inside functions only: ``import pinky.sync`` must stay cheap for the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from pinky.base import fileio
from pinky.base.locations import ENV_GIT_PASSWORD

HTTP_SCHEMES = ("http", "https")
DEFAULT_USER = "pinky"  # hosts that take a token as the password accept any user name


def split_password(url: str) -> tuple[str, str | None]:
    """``https://me:tok@host/x`` -> (``https://me@host/x``, ``tok``); other URLs are returned as they are."""
    if "://" not in url:
        return url, None
    parts = urlsplit(url)
    if parts.password is None:
        return url, None
    user = f"{parts.username}@" if parts.username else ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=user + host)), unquote(parts.password)


def auth_for(url: str) -> tuple[str, str | None, str | None]:
    """(URL without its password, username, password) to give dulwich for this run."""
    clean, password = split_password(url)
    parts = urlsplit(clean) if "://" in clean else None
    if parts is None or parts.scheme not in HTTP_SCHEMES or not parts.hostname:
        return clean, None, None
    user = unquote(parts.username) if parts.username else None
    if password is None:
        password = os.environ.get(ENV_GIT_PASSWORD) or None
    if password is not None:
        return clean, user or DEFAULT_USER, password
    from dulwich import client

    stores = list(client.DEFAULT_GIT_CREDENTIALS_PATHS)
    for stored_user, stored_password in client.get_credentials_from_store(parts.scheme, parts.hostname, fnames=stores):
        if user is None or stored_user == user:
            return clean, stored_user, stored_password
    return clean, None, None


def remember(url: str) -> str | None:
    """Save the password of a ``--remote`` URL in git's credential store; a note saying where, or None."""
    clean, password = split_password(url)
    parts = urlsplit(clean) if "://" in clean else None
    if password is None or parts is None or parts.scheme not in HTTP_SCHEMES or not parts.hostname:
        return None
    user = unquote(parts.username) if parts.username else DEFAULT_USER
    host = parts.netloc.rpartition("@")[2]
    line = f"{parts.scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    store = store_file()
    lines = store.read_text(encoding="utf-8").splitlines() if store.is_file() else []
    prefix = f"{parts.scheme}://{quote(user, safe='')}:"
    kept = [old for old in lines if not (old.startswith(prefix) and old.endswith(f"@{host}"))]
    if line not in lines or len(kept) != len(lines) - 1:
        fileio.atomic_write(store, "".join(f"{old}\n" for old in [*kept, line]), mode=0o600)
    return f"the password in the remote URL is kept in {store} (mode 600), not in the brain's git config"


def store_file() -> Path:
    """The credential store file git reads first that exists; else ``~/.git-credentials``."""
    from dulwich.client import DEFAULT_GIT_CREDENTIALS_PATHS

    existing = [Path(p) for p in DEFAULT_GIT_CREDENTIALS_PATHS if os.path.isfile(p)]
    return existing[0] if existing else Path(DEFAULT_GIT_CREDENTIALS_PATHS[0])
