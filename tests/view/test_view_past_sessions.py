"""The page's review list offers what past sessions learned (`pinky-brain import-sessions` candidates), says when
sessions still wait to be taken in, and dismisses a candidate with an undo: in a real headless Chromium on the
sessions the real Claude Code, Codex and Gemini CLIs recorded (tests/capture/session_fixtures.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import console_script
from view_helpers import CHROMIUM, CHROMIUM_ARGS, running_view, view_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "capture"))
from session_fixtures import claude_session, codex_session, gemini_session  # noqa: E402

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)", allow_module_level=True)


def test_the_review_list_offers_past_sessions_learnings_and_the_sessions_still_waiting(tmp_path: Path) -> None:
    root, home, pinky_home = tmp_path / "proj", tmp_path / "home", tmp_path / "pinky-home"
    (root / "documentation").mkdir(parents=True)
    (root / "pinky.toml").write_text("", encoding="utf-8")
    claude_session(root, home).write()
    codex_session(root, home).write()
    env = {**view_env(pinky_home), "HOME": str(home)}
    subprocess.run([*console_script("pinky-brain"), "import-sessions"], cwd=root, env=env, check=True,
                   capture_output=True)
    gemini_session(root, home).write()  # a session that came after the import: it waits
    with running_view(root, pinky_home, env_extra={"HOME": str(home)}) as view, \
            playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page: Any = browser.new_page()
        page.goto(view.url)
        page.wait_for_function("() => localStorage.length > 0")  # signed in before leaving the page: under load the
        # sign-in request may not have been answered yet, and the next page would be signed out
        page.goto(view.base + "/#/review")
        section = page.locator("#past-sessions")
        page.locator("#past-sessions .card").first.wait_for()
        text = section.inner_text()
        assert "Learned in past sessions" in text
        assert "1 past session of this project on this machine (Gemini CLI)" in text
        assert "pinky-brain import-sessions" in text
        assert "`pytest tests/test_db.py` failed" in text and "the user said" in text
        fixed = page.locator("#past-sessions .card", has_text="pytest tests/test_db.py")
        fixed.get_by_role("button", name="Dismiss").click()
        fixed.wait_for(state="detached")
        listed = subprocess.run([*console_script("pinky-brain"), "import-sessions", "--candidates", "--json"], cwd=root,
                                env=env, check=True, capture_output=True, text=True).stdout
        assert "pytest tests/test_db.py" not in listed and "correction" in listed
        page.locator("#toast button[data-undo]").click()
        page.locator("#past-sessions .card", has_text="pytest tests/test_db.py").wait_for()
        browser.close()
