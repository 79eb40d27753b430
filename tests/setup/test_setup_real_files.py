"""Issue 35 item 6: `pinky-brain setup <host>` against config files as they really are on users' machines: a FIFO
or a device in the file's place, TOML shapes Codex accepts (inline tables, dotted keys), values of the wrong
type, bytes that are not UTF-8, a dotfile that is a symbolic link (stow, chezmoi), a JSON key given twice, CRLF
line endings. Either setup keeps everything (and --remove gives the bytes back), or it refuses in one line,
exit status 1, no traceback, nothing changed. Real files, real links, the real CLI."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import tomllib
from pathlib import Path

import pytest
from test_setup_hosts import BIN, GEMINI_SETTINGS, snapshot

MEMORY = 1024 * 1024 * 1024  # a setup reading /dev/zero dies at this instead of taking the machine's memory


def limited(env: dict[str, str], *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """pinky-brain with a memory cap and a timeout: a setup that hangs or reads for ever fails the test."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    try:
        return subprocess.run([str(BIN / "pinky-brain"), *args], env=env, cwd=env["HOME"], capture_output=True,
                              text=True, timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`pinky-brain {' '.join(args)}` still ran after {timeout} s")


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert all(word in done.stderr for word in words), done.stderr


def test_a_fifo_in_place_of_the_config_is_refused_without_blocking(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    os.mkfifo(settings)
    refused(limited(env, "setup", "gemini"), "settings.json", "FIFO", "not a regular file")
    assert settings.is_fifo()
    doctor = limited(env, "doctor", "--json", timeout=120)  # doctor reads the hosts' configs too
    assert doctor.returncode in (0, 1) and "Traceback" not in doctor.stderr, doctor.stderr[-2000:]


def test_a_device_in_place_of_the_config_is_refused_before_reading(env: dict[str, str]) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.symlink_to("/dev/zero")
    refused(limited(env, "setup", "codex"), "config.toml", "character device")
    assert os.readlink(config) == "/dev/zero" and not (config.parent / "hooks.json").exists()


CODEX_SHAPES = {
    "inline table": 'model = "o4"\nmcp_servers = { other = { command = "other-server", args = ["-q"] } }\n',
    "dotted keys": 'mcp_servers.other.command = "other-server"\nmodel = "o4"\n\n[tools]\nweb_search = true\n',
    "inline hooks state": 'model = "o4"\nhooks = { state = {} }\n\n[mcp_servers.other]\ncommand = "other-server"\n',
    "split tables": '[mcp_servers.a]\ncommand = "a"\n\n[tools]\nweb_search = true\n\n[mcp_servers.b]\ncommand = "b"\n',
}


@pytest.mark.parametrize("shape", sorted(CODEX_SHAPES))
def test_every_toml_shape_codex_accepts_is_kept(env: dict[str, str], shape: str) -> None:
    codex = Path(env["CODEX_HOME"])
    config = codex / "config.toml"
    config.write_text(CODEX_SHAPES[shape])
    original = tomllib.loads(CODEX_SHAPES[shape])
    done = limited(env, "setup", "codex", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    after = tomllib.loads(config.read_text())
    pinky_entry = after["mcp_servers"].pop("pinky")
    assert pinky_entry["command"].endswith("pinky-mcp")
    assert after.pop("hooks")["state"], "no trust recorded"
    original.pop("hooks", None)
    assert after == original  # every other value where it was
    assert limited(env, "setup", "codex", "--remove", timeout=120).returncode == 0
    assert config.read_text() == CODEX_SHAPES[shape]


@pytest.mark.parametrize(("name", "text", "words"), [
    ("config.toml", 'hooks = 5\n', ("`hooks` is int", "not a table")),
    ("config.toml", 'mcp_servers = "none"\n', ("`mcp_servers` is str",)),
    ("config.toml", 'hooks = { state = [1] }\n', ("`hooks.state` is list",)),
    ("config.toml", 'model = "o\xe9"\n', ("not UTF-8 text",)),
    ("hooks.json", '{"hooks": {"Stop": 5}}\n', ("`hooks.Stop` is not a list",)),
    ("hooks.json", '{"hooks": 5}\n', ("`hooks` is not an object",)),
    ("hooks.json", '{"hooks": {}, "hooks": {"Stop": []}}\n', ("the key 'hooks' twice",)),
])
def test_what_setup_cannot_keep_is_refused_in_one_line(env: dict[str, str], name: str, text: str,
                                                         words: tuple[str, ...]) -> None:
    codex = Path(env["CODEX_HOME"])
    raw = text.encode("latin-1") if "\xe9" in text else text.encode()
    (codex / name).write_bytes(raw)
    before = snapshot(Path(env["HOME"]))
    refused(limited(env, "setup", "codex", timeout=120), name, *words)
    assert snapshot(Path(env["HOME"])) == before


def test_duplicate_json_keys_are_refused_not_dropped(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    text = '{\n  "mcpServers": {"notes": {"command": "a"}},\n  "mcpServers": {"other": {"command": "b"}}\n}\n'
    settings.write_text(text)
    refused(limited(env, "setup", "gemini"), "settings.json", "'mcpServers' twice")
    assert settings.read_text() == text


def test_invalid_utf8_json_is_refused(env: dict[str, str]) -> None:
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.write_bytes(b'{"ui": {"theme": "\xff"}}\n')
    refused(limited(env, "setup", "gemini"), "settings.json", "not UTF-8")
    assert settings.read_bytes() == b'{"ui": {"theme": "\xff"}}\n'


@pytest.mark.parametrize("host", ["gemini", "codex"])
def test_a_symlinked_dotfile_stays_a_link_and_its_target_is_edited(env: dict[str, str], tmp_path: Path,
                                                                    host: str) -> None:
    home = Path(env["HOME"])
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    name, config, text = ("settings.json", home / ".gemini" / "settings.json", GEMINI_SETTINGS) if host == "gemini" \
        else ("config.toml", Path(env["CODEX_HOME"]) / "config.toml", 'model = "o4"  # mine\n')
    (dotfiles / name).write_text(text)
    (dotfiles / name).chmod(0o600)
    config.symlink_to(dotfiles / name)
    done = limited(env, "setup", host, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert config.is_symlink() and os.readlink(config) == str(dotfiles / name)
    assert "pinky-mcp" in (dotfiles / name).read_text()
    assert (dotfiles / name).stat().st_mode & 0o777 == 0o600
    assert limited(env, "setup", host, "--remove", timeout=120).returncode == 0
    assert config.is_symlink() and os.readlink(config) == str(dotfiles / name)
    assert (dotfiles / name).read_text() == text


@pytest.mark.parametrize("host", ["gemini", "codex"])
def test_crlf_line_endings_are_kept(env: dict[str, str], host: str) -> None:
    home = Path(env["HOME"])
    config, text = (home / ".gemini" / "settings.json", GEMINI_SETTINGS) if host == "gemini" else \
        (Path(env["CODEX_HOME"]) / "config.toml", '# mine\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n')
    crlf = text.replace("\n", "\r\n").encode()
    config.write_bytes(crlf)
    done = limited(env, "setup", host, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    written = config.read_bytes()
    assert b"pinky-mcp" in written and written.count(b"\n") == written.count(b"\r\n"), written
    if host == "gemini":
        hooks = (json.loads(written)["hooks"])
        assert hooks["AfterAgent"][0] == json.loads(text)["hooks"]["AfterAgent"][0]
    assert limited(env, "setup", host, "--remove", timeout=120).returncode == 0
    assert config.read_bytes() == crlf


def test_a_link_into_a_read_only_store_is_named_with_its_target(env: dict[str, str], tmp_path: Path) -> None:
    """A config that a tool such as home-manager keeps read-only elsewhere: refused, naming where it lives."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "config.toml").write_text('model = "o4"\n')
    (store / "config.toml").chmod(0o444)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.symlink_to(store / "config.toml")
    refused(limited(env, "setup", "codex", timeout=120), "is a link to", str(store / "config.toml"), "read-only")
    assert config.is_symlink() and (store / "config.toml").read_text() == 'model = "o4"\n'
    assert not (config.parent / "hooks.json").exists()


def test_a_hard_linked_config_is_refused_not_parted(env: dict[str, str], tmp_path: Path) -> None:
    kept = tmp_path / "dotfiles-settings.json"
    kept.write_text(GEMINI_SETTINGS)
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    os.link(kept, settings)
    refused(limited(env, "setup", "gemini"), "settings.json", "2 hard links")
    assert os.path.samefile(kept, settings) and kept.read_text() == GEMINI_SETTINGS
