"""`lynxc docs` in a real browser (Chromium through Playwright, tests/fixtures/browser.py): the
site of every bundled server, built once for the module and opened from file://."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.spec.discover import discover_specs
from lynxc.compiler.spec.load import load_spec
from tests.conftest import ROOT, lynxc_command
from tests.fixtures.browser import browser_page, chromium, screenshot, serious_violations

FIXTURES = (browser_page, chromium)  # used by name in the tests' arguments

pytestmark = pytest.mark.browser

WORD = re.compile(r"[A-Za-z]{6,}")
# The focused element's outline style: what shows where the keyboard is.
OUTLINE = """() => {
  const e = document.activeElement;
  return !e || e === document.body ? "left the page" : getComputedStyle(e).outlineStyle;
}"""
OPEN_ALL = "document.querySelectorAll('details').forEach(d => { d.open = true; })"


def bundled_servers() -> list[str]:
    """Every server of specs/, by the name its spec gives it."""
    names = []
    for path in discover_specs(ROOT / "specs"):
        loaded = load_spec(path).value
        assert loaded is not None, path
        names.append(loaded.server.server.name)
    return sorted(names)


SERVERS = bundled_servers()


def wire_tools(server: str) -> list[dict[str, Any]]:
    """The exact tools/list of the server, as its generated tools.json holds it."""
    return json.loads((ROOT / "generated" / server / "tools.json").read_text())["tools"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run(
        lynxc_command("docs", "--out", str(out)), capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return out


def url(site: Path, page: str) -> str:
    return (site / page).as_uri()


def off_file(page: Any) -> list[str]:
    return [request for request in page.requests if not request.startswith("file:")]


def test_every_server_renders_every_tool_without_errors_or_requests_off_file(
    site: Path, browser_page: Any
) -> None:
    assert SERVERS and sorted(p.name for p in site.iterdir() if p.is_dir() and p.name != "assets") == SERVERS
    for server in SERVERS:
        browser_page.goto(url(site, f"{server}/index.html"))
        assert browser_page.locator("h1").count() == 1
        listed = browser_page.eval_on_selector_all("article.tool", "nodes => nodes.map(n => n.dataset.tool)")
        assert listed == [tool["name"] for tool in wire_tools(server)], server
        for tool in wire_tools(server):
            heading = browser_page.locator(f'[id="h-tool-{tool["name"]}"]')
            assert heading.is_visible() and tool["name"] in heading.inner_text()
        browser_page.goto(url(site, f"{server}/changelog.html"))
        assert browser_page.locator(".version").count() >= 1, server
    assert browser_page.console_errors == []
    assert off_file(browser_page) == []
    # The stylesheet and the script are the bundled ones, and they did load.
    assert any(r.endswith("/assets/docs.css") for r in browser_page.requests)
    assert any(r.endswith("/assets/docs.js") for r in browser_page.requests)


def test_search_finds_a_tool_by_a_word_of_its_description(site: Path, browser_page: Any) -> None:
    browser_page.goto(url(site, "index.html"))
    for server in SERVERS:
        tools = wire_tools(server)
        if not tools:
            continue
        tool = tools[-1]
        words = sorted(set(WORD.findall(tool["description"])), key=lambda w: (-len(w), w))
        assert words, tool["name"]
        browser_page.fill("#search", words[0])
        link = browser_page.locator(f'#search-results a[href="{server}/index.html#tool-{tool["name"]}"]')
        assert link.count() == 1, (server, tool["name"], words[0])
        assert "match" in browser_page.inner_text("#search-status")
    browser_page.fill("#search", "zzqx-no-such-word")
    assert browser_page.inner_text("#search-status") == "No tool matches."
    assert browser_page.locator("#search-results li").count() == 0
    # A result leads to the tool.
    tool = wire_tools("lynx-mcp")[0]
    browser_page.fill("#search", tool["name"])
    browser_page.locator(f'#search-results a[href$="#tool-{tool["name"]}"]').click()
    assert browser_page.url.endswith(f"lynx-mcp/index.html#tool-{tool['name']}")
    assert browser_page.console_errors == [] and off_file(browser_page) == []


@pytest.mark.parametrize(("server", "version"), [("lynx-mcp", "0.2.0"), ("foxnose-knowledge", "0.3.0")])
def test_a_breaking_change_is_highlighted_in_words_and_style(
    site: Path, browser_page: Any, server: str, version: str
) -> None:
    browser_page.goto(url(site, f"{server}/changelog.html"))
    section = browser_page.locator(f'[id="v-{version}"]')
    breaking = section.locator("li.change.breaking")
    assert breaking.count() >= 1
    first = breaking.first
    assert first.locator("strong.level-breaking").inner_text() == "Breaking"
    assert "breaking" in section.locator("p").first.inner_text()
    other = section.locator("li.change:not(.breaking)")
    style = "n => getComputedStyle(n).backgroundColor + ' ' + getComputedStyle(n).borderLeftWidth"
    if other.count():
        assert first.evaluate(style) != other.first.evaluate(style)
    assert browser_page.console_errors == []


@pytest.mark.parametrize("page", ["index.html", "lynx-mcp/index.html", "lynx-mcp/changelog.html"])
def test_axe_finds_no_serious_violation(site: Path, browser_page: Any, page: str) -> None:
    browser_page.goto(url(site, page))
    if page == "lynx-mcp/index.html":
        screenshot(browser_page, "docs-lynx-mcp")
    browser_page.evaluate(OPEN_ALL)  # closed parts are checked too
    assert serious_violations(browser_page) == []


@pytest.fixture
def phone(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 375, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


def test_no_horizontal_page_scroll_at_375_px(site: Path, phone: Any) -> None:
    pages = ["index.html", *(f"{server}/index.html" for server in SERVERS), "lynx-mcp/changelog.html"]
    for page in pages:
        phone.goto(url(site, page))
        phone.evaluate(OPEN_ALL)
        width = phone.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], (page, width)


def test_tab_reaches_the_skip_link_the_search_box_and_the_links(site: Path, browser_page: Any) -> None:
    browser_page.goto(url(site, "index.html"))
    reached = []
    outlines = set()
    for _ in range(40):
        browser_page.keyboard.press("Tab")
        outlines.add(browser_page.evaluate(OUTLINE))
        reached.append(
            browser_page.evaluate("document.activeElement.id || document.activeElement.getAttribute('href')")
        )
    assert reached[0] == "#main"  # the skip link first
    assert outlines - {"left the page"} == {"solid"}  # the focus is visible on all Tab reaches
    assert "search" in reached
    for server in SERVERS[:3]:
        assert f"{server}/index.html" in reached
    # Enter on a focused server link opens its page.
    browser_page.goto(url(site, "index.html"))
    browser_page.focus(f'a[href="{SERVERS[0]}/index.html"]')
    browser_page.keyboard.press("Enter")
    browser_page.wait_for_url(re.compile(re.escape(f"{SERVERS[0]}/index.html")))
    assert browser_page.console_errors == []
