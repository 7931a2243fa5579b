"""Headless Chromium (Debian's package, driven by Playwright) against a live server."""

import os

import pytest

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the Django ORM
    # calls the tests make around it are still synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def site(live_server, canonical_content, settings):
    """The live server's base URL, with the canonical content loaded; it is the site URL
    too, as pages build their absolute links from it (never from the Host header)."""
    settings.SITE_URL = live_server.url
    return live_server.url


def assert_accessible(page):
    """Fail on any WCAG 2.0/2.1/2.2 A or AA violation axe-core finds."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(
        page,
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]},
    )
    violations = results.response["violations"]
    report = "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} -> "
        + "; ".join(node["target"][0] for node in v["nodes"][:5])
        for v in violations
    )
    assert not violations, f"{page.url}\n{report}"


@pytest.fixture
def narrow_page(browser):
    """A page 320 CSS px wide: the width WCAG 1.4.10 asks content to reflow to."""
    context = browser.new_context(viewport={"width": 320, "height": 640})
    yield context.new_page()
    context.close()


def sideways_overflow(page):
    """How many px the page scrolls sideways (0 or less when it reflows)."""
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def assert_reflows(page, url):
    page.goto(url)
    overflow = sideways_overflow(page)
    width = page.viewport_size["width"]
    assert overflow <= 0, f"{url} scrolls sideways by {overflow} px at {width} px"
