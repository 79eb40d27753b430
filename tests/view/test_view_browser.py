"""`pinky view` in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): search as you
type, open a note, follow a link in the graph, verify a stale entry and see it leave the review list, undo it,
the diary, and a hostile note whose `<script>` never runs. One browser and one server for the module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_helpers import CHROMIUM, CHROMIUM_ARGS, HOSTILE_TITLE, View, make_brain, running_view, snapshot, wait_for

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    if os.environ.get("CI"):  # CI installs it (.ci/run): a missing browser there is a failure, not a skip
        pytest.fail(f"{CHROMIUM} is missing in CI", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[View, Path]]:
    project = tmp_path_factory.mktemp("view-browser") / "proj"
    docs = make_brain(project)
    with running_view(project, tmp_path_factory.mktemp("home")) as view:
        yield view, docs


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def tab(browser: Any, served: tuple[View, Path]) -> Iterator[Any]:
    """One tab for the module, signed in once through the one-time link (the page keeps the session secret in
    its origin's localStorage)."""
    view, _ = served
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.goto(view.url)
    page.wait_for_selector("#results .card")
    yield page
    context.close()


@pytest.fixture
def page(tab: Any, served: tuple[View, Path]) -> Iterator[Any]:
    """The tab, reloaded on the search page; fails the test on any script error or dialog."""
    view, _ = served
    errors: list[str] = []

    def on_error(error: Any) -> None:
        errors.append(str(error))

    def on_dialog(dialog: Any) -> None:
        errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    tab.on("pageerror", on_error)
    tab.on("dialog", on_dialog)
    tab.goto(view.base + "/#/search")
    tab.reload()
    tab.wait_for_selector("#results .card")
    yield tab
    tab.remove_listener("pageerror", on_error)
    tab.remove_listener("dialog", on_dialog)
    assert not errors, errors


def until(page: Any, expression: str, timeout: float = 20.0) -> Any:
    """Poll a JavaScript expression until it is truthy (Playwright's wait_for_function evaluates strings with
    eval, which the page's Content-Security-Policy forbids, as it should)."""
    value = wait_for(lambda: page.evaluate(expression), timeout)
    assert value, f"never true: {expression}"
    return value


def test_search_as_you_type_shows_type_scope_staleness_and_why_it_ranked(page: Any) -> None:
    assert page.url.endswith("/#/search") or page.url.endswith("/")  # the token left the address bar
    page.click("#q")
    page.keyboard.type("postgres pool", delay=30)
    until(page, "document.querySelector('#results').dataset.query === 'postgres pool'")
    hit = page.locator('#results .hit[data-slug="gotcha/pool-timeout"]')
    text = hit.inner_text()
    assert "Pool timeout on shutdown" in text and "gotcha" in text and "project:proj" in text
    parts = hit.locator(".parts").inner_text()  # why it ranked: each side's score and rank
    assert "full text #" in parts and "score" not in hit.inner_text()
    page.fill("#q", "cache flag restart")
    stale = page.locator('#results .hit[data-slug="gotcha/old-cache-flag"]')
    stale.wait_for()
    assert "stale: unverified for" in stale.inner_text()
    page.select_option("#f-type", "decision")
    page.fill("#q", "postgres")
    until(page, "document.querySelector('#results').dataset.query === 'postgres'")
    page.wait_for_selector('#results .hit[data-slug="decision/use-pgbouncer"]')
    assert page.locator("#results .hit").count() == 1


def test_open_a_note_shows_markdown_fields_links_code_and_history(page: Any) -> None:
    page.fill("#q", "pool shutdown")
    page.click('#results .hit[data-slug="gotcha/pool-timeout"] a.title')
    page.wait_for_selector("#note-title")
    assert page.inner_text("#note-title") == "Pool timeout on shutdown"
    assert page.locator(".md strong").inner_text() == "pool"  # rendered markdown
    assert page.locator(".md code").first.inner_text() == "pool.close(timeout=5)"
    body = page.inner_text("main")
    assert "depends_on" in body and "Use PgBouncer in front of postgres" in body and "2026-01-10 → now" in body
    assert "src/db/pool.py:1" in body  # the breadcrumb in code, with its line
    assert "useful 0" in body and "last_verified" in body
    page.wait_for_selector("#history .timeline")
    assert "why does the pool hang" in page.inner_text("#history")
    page.click(".md a.wikilink")
    until(page, "document.querySelector('#note-title')?.textContent.startsWith('Use PgBouncer')")


def test_follow_a_link_in_the_graph(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/graph/gotcha/pool-timeout?depth=2")
    until(page, "window.pinkyPerf.graph && window.pinkyPerf.graph.settled_ms !== null")
    nodes = page.evaluate("window.pinkyGraph.graphData().nodes.map(n => n.id)")
    assert {"gotcha/pool-timeout", "decision/use-pgbouncer", "src/db/pool.py"} <= set(nodes)
    rels = page.evaluate("window.pinkyGraph.graphData().links.map(l => l.rel)")
    assert "depends_on" in rels
    page.wait_for_timeout(400)  # zoomToFit's transition
    x, y = page.evaluate("""(() => {
        const n = window.pinkyGraph.graphData().nodes.find(n => n.id === 'decision/use-pgbouncer');
        const p = window.pinkyGraph.graph2ScreenCoords(n.x, n.y); const r = document.querySelector('#graph canvas')
        .getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; })()""")
    page.mouse.move(x, y)
    until(page, "!document.getElementById('tooltip').hidden")  # the graph saw the pointer over the node
    assert "decision/use-pgbouncer" in page.inner_text("#tooltip")
    page.mouse.click(x, y)
    until(page, "location.hash === '#/note/decision%2Fuse-pgbouncer'")
    page.wait_for_selector("#note-title")
    assert page.inner_text("#note-title").startswith("Use PgBouncer")


def test_the_whole_brain_graph_draws_every_note(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/graph")
    until(page, "window.pinkyPerf.graph !== null")
    nodes = page.evaluate("window.pinkyGraph.graphData().nodes.map(n => n.id)")
    assert set(nodes) == {"gotcha/pool-timeout", "decision/use-pgbouncer", "gotcha/old-cache-flag", "note/hostile",
                          "note/old-links", "src/db/pool.py"}  # the code file the note page lists too
    files = page.evaluate("window.pinkyGraph.graphData().nodes.filter(n => n.kind === 'file').map(n => n.id)")
    assert files == ["src/db/pool.py"]
    assert "5 notes, 1 code file," in page.inner_text("main")


def test_the_graph_has_a_legend_for_its_nodes_in_colours_no_relation_uses(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/graph/gotcha%2Fpool-timeout?depth=2")
    until(page, "window.pinkyPerf.graph !== null")
    rels = page.evaluate("[...document.querySelectorAll('.legend.rels i')].map(i => i.dataset.colour)")
    kinds = page.evaluate("Object.fromEntries([...document.querySelectorAll('.legend.nodes [data-kind]')]"
                          ".map(s => [s.dataset.kind, s.querySelector('i').dataset.colour]))")
    assert {"gotcha", "decision", "file"} <= set(kinds), kinds
    assert rels and not set(kinds.values()) & set(rels), (kinds, rels)
    assert page.evaluate("getComputedStyle(document.querySelector('.legend.nodes i')).backgroundColor") \
        != "rgba(0, 0, 0, 0)"  # the swatch is painted


def test_the_page_says_verified_today_and_names_pinky_brain_view(page: Any) -> None:
    page.fill("#q", "postgres pool")
    hit = page.locator('#results .hit[data-slug="gotcha/pool-timeout"]')
    hit.wait_for()
    assert "verified today" in hit.inner_text() and "0d ago" not in hit.inner_text()
    banner = page.evaluate("document.getElementById('readonly').textContent")
    assert "pinky-brain view" in banner and "pinky view" not in banner


def test_verify_a_stale_entry_it_leaves_the_review_list_and_undo_brings_it_back(
        page: Any, served: tuple[View, Path]) -> None:
    _, docs = served
    path = docs / "gotcha" / "old-cache-flag.md"
    original = path.read_bytes()
    page.goto(page.url.split("#")[0] + "#/review")
    card = page.locator('#stale .card[data-slug="gotcha/old-cache-flag"]')
    card.wait_for()
    assert "unverified for" in card.inner_text()
    card.get_by_role("button", name="Verify").click()
    card.wait_for(state="detached")
    assert b"last_verified:" in path.read_bytes()
    page.locator("#toast button[data-undo]").click()
    page.locator('#stale .card[data-slug="gotcha/old-cache-flag"]').wait_for()
    assert path.read_bytes() == original
    assert "(undone)" in page.inner_text("#changes")


def test_the_diary_links_to_the_notes_a_day_mentions(page: Any) -> None:
    page.goto(page.url.split("#")[0] + "#/diary")
    day = page.locator('.day[data-slug="diary/2026-11-20"]')
    day.wait_for()
    assert "why does the pool hang" in day.inner_text()
    months = page.evaluate("[...document.querySelectorAll('#diary .month-head')].map(h => h.textContent)")
    assert months == ["2026-11"], months  # the week 2026-W47 ends in November: no "2026-W4" heading
    assert page.locator('.day.weekly[data-slug="diary/weekly/2026-W47"]').count() == 1
    day.locator(".chips a").first.click()
    page.wait_for_selector("#note-title")
    assert page.inner_text("#note-title") == "Pool timeout on shutdown"


def test_a_hostile_note_shows_its_script_as_text_and_nothing_runs(page: Any, served: tuple[View, Path]) -> None:
    _, docs = served
    before = snapshot(docs)
    page.fill("#q", "hostile")
    page.wait_for_selector('#results .hit[data-slug="note/hostile"]')
    assert "<script>window.__pwned=1</script>" in page.inner_text('#results .hit[data-slug="note/hostile"]')
    page.click('#results .hit[data-slug="note/hostile"] a.title')
    page.wait_for_selector("#note-title")
    assert page.inner_text("#note-title") == HOSTILE_TITLE
    assert "<script>window.__pwned = 3</script>" in page.inner_text(".md")
    assert page.locator("main script, main img[src='x'], main [onerror]").count() == 0
    page.click(".md a:has-text('click me')") if page.locator(".md a:has-text('click me')").count() else None
    page.goto(page.url.split("#")[0] + "#/graph")
    until(page, "window.pinkyPerf.graph !== null")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert snapshot(docs) == before


def test_without_signing_in_a_browser_reads_nothing_and_the_used_link_fails(
        browser: Any, tab: Any, served: tuple[View, Path]) -> None:
    """A second browser (no session) gets the page's empty shell, which says it is signed out, 401 from the API
    and the raw files, a refusal for a change, and the sign-in link the first tab used is spent: it fails here,
    said on the page. No cookie is set anywhere, in either browser."""
    view, docs = served
    before = snapshot(docs)
    context = browser.new_context()
    other = context.new_page()
    other.goto(view.base + "/#/review")
    other.wait_for_selector("#readonly:not([hidden])")
    assert "sign-in link" in other.inner_text("#readonly") and "Pool timeout" not in other.content()
    for path in ("/api/search?q=pool", "/api/note?slug=pool-timeout", "/raw/project/gotcha/pool-timeout.md"):
        answer = context.request.get(view.base + path)
        assert answer.status == 401 and "ool" not in answer.text(), path
    answer = context.request.post(view.base + "/api/verify", data={"slug": "old-cache-flag"},
                                  headers={"Authorization": "Bearer guess", "Origin": view.base})
    assert answer.status in (401, 403)
    other.goto(view.url)  # the link the module's tab signed in with
    other.wait_for_selector("#toast:not([hidden])")
    assert "used already or has expired" in other.inner_text("#toast") and "sign-in=" not in other.url
    assert other.evaluate("localStorage.length") == 0
    assert context.cookies() == [] and tab.context.cookies() == []
    context.close()
    assert snapshot(docs) == before


def test_a_new_tab_a_reload_the_back_button_and_a_spent_link_keep_the_session(
        tab: Any, served: tuple[View, Path]) -> None:
    """The session is the origin's, not the tab's: a new tab opened on the address reads and changes (a
    verify, undone); a reload, the back button and a spent link opened in the signed-in tab (a link pasted
    again, or the back button to it) keep it: no "signed out", the code gone from the address."""
    view, docs = served
    original = (docs / "gotcha" / "old-cache-flag.md").read_bytes()
    fresh = tab.context.new_page()
    fresh.goto(view.base + "/#/review")
    card = fresh.locator('#stale .card[data-slug="gotcha/old-cache-flag"]')
    card.get_by_role("button", name="Verify").click()
    card.wait_for(state="detached")
    fresh.locator("#toast button[data-undo]").click()
    fresh.locator('#stale .card[data-slug="gotcha/old-cache-flag"]').wait_for()
    assert (docs / "gotcha" / "old-cache-flag.md").read_bytes() == original
    fresh.goto(view.base + "/#/note/gotcha%2Fpool-timeout")
    fresh.wait_for_selector("#note-title")
    fresh.go_back()
    fresh.wait_for_selector('#stale .card[data-slug="gotcha/old-cache-flag"]')
    fresh.reload()
    fresh.wait_for_selector('#stale .card[data-slug="gotcha/old-cache-flag"]')
    fresh.goto(view.url)  # the spent link, in a tab that is signed in
    fresh.wait_for_selector("#results .card")
    until(fresh, "location.hash === '#/search'")
    assert fresh.evaluate("document.getElementById('readonly').hidden") is True
    assert fresh.locator("#toast:not([hidden])").count() == 0
    fresh.close()


def test_the_five_views_log_nothing_to_the_console(tab: Any, served: tuple[View, Path]) -> None:
    """No Content-Security-Policy violation (an inline style the policy blocks is a style not applied), no
    error, no warning: every console message across search, a note, its graph, the whole brain, review and
    the diary fails the test."""
    view, _ = served
    messages: list[str] = []

    def on_console(message: Any) -> None:
        messages.append(f"{message.type}: {message.text}")

    tab.on("console", on_console)
    try:
        tab.goto(view.base + "/#/search")
        tab.reload()
        tab.wait_for_selector("#results .card")
        tab.fill("#q", "pool")
        until(tab, "document.querySelector('#results').dataset.query === 'pool'")
        tab.goto(view.base + "/#/note/gotcha%2Fpool-timeout")
        tab.wait_for_selector("#history .timeline")
        for hash_ in ("#/graph/gotcha%2Fpool-timeout?depth=2", "#/graph"):
            tab.goto(view.base + "/" + hash_)
            until(tab, "window.pinkyPerf.graph && window.pinkyPerf.graph.settled_ms !== null")
            tab.mouse.move(640, 500)
        tab.goto(view.base + "/#/review")
        tab.wait_for_selector("#duplicates .section-head .count")
        tab.wait_for_selector("#contradictions .section-head .count")
        tab.goto(view.base + "/#/diary")
        tab.wait_for_selector(".day")
        tab.wait_for_timeout(300)
    finally:
        tab.remove_listener("console", on_console)
    assert messages == [], "\n".join(messages)


def test_a_note_with_a_malformed_escape_in_a_link_renders_and_its_buttons_work(page: Any) -> None:
    """`[old page](caf%E9.md)` (Latin-1, not UTF-8) made decodeURIComponent throw "URI malformed": the note
    stayed on "loading…" with its buttons. It renders, the link keeps its text as written, Verify answers."""
    page.goto(page.url.split("#")[0] + "#/note/note%2Fold-links")
    page.wait_for_selector("#note-title")
    assert page.inner_text("#note-title") == "Old links"
    assert page.locator(".md a", has_text="old page").get_attribute("href") == "#/note/" + "note%2Fcaf%25E9"
    assert page.locator(".md a.wikilink").inner_text() == "pool-timeout"
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#toast:not([hidden])")
    assert "verified" in page.inner_text("#toast")


def test_search_shows_ranks_and_bands_cuts_below_the_floor_and_says_nothing_relevant(page: Any) -> None:
    """"postgres shutdown" listed every note down to a negative fused score: now the hits under the prompt
    hook's relevance floor are hidden behind a button, each hit shows its rank and band (no raw score), a
    query nothing reaches the floor for says "Nothing relevant", and history comes last with a word why."""
    page.fill("#q", "postgres shutdown")
    until(page, "document.querySelector('#results').dataset.query === 'postgres shutdown'")
    cards = page.locator("#results .hit")
    assert [cards.nth(i).get_attribute("data-slug") for i in range(cards.count())] == ["gotcha/pool-timeout"]
    text = page.inner_text("#results")
    assert "#1" in text and "strong match" in text and "score" not in text
    assert not any(word.startswith(("-", "−")) and word[1:2].isdigit() for word in text.split())
    assert "1 relevant of" in page.inner_text("#search-status")
    page.click("#weak-hits")  # the weaker ones, on request, marked so
    page.wait_for_selector('#results .hit:nth-of-type(2)')
    weaker = page.locator('#results .hit:not([data-slug="gotcha/pool-timeout"])')
    assert weaker.count() >= 1
    assert all("below the relevance floor" in weaker.nth(i).inner_text() for i in range(weaker.count()))
    page.fill("#q", "kubernetes helm rollback")  # a new query hides the weaker hits again
    until(page, "document.querySelector('#results').dataset.query === 'kubernetes helm rollback'")
    assert "Nothing relevant to “kubernetes helm rollback”" in page.inner_text("#results")
    assert page.locator("#results .hit").count() == 0
    page.fill("#q", "pool hang")
    until(page, "document.querySelector('#results').dataset.query === 'pool hang'")
    assert "Show 2 weaker hits" in page.inner_text("#weak-hits")
    page.click("#weak-hits")
    slugs = page.evaluate("[...document.querySelectorAll('#results .hit, #history-head')].map(n => n.dataset.slug"
                          " || 'history')")
    assert slugs.index("history") == slugs.index("diary/2026-11-20") - 1 and slugs[-1].startswith("diary/"), slugs
    assert "diary lines record what happened" in page.inner_text("#history-head")
