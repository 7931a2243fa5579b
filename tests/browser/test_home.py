"""The home page in Chromium: no axe violation in either language, and it reflows at 320 px."""

import pytest

from tests.browser.conftest import assert_accessible

pytestmark = pytest.mark.browser

HOME_PAGES = ["/", "/ko/"]


@pytest.mark.parametrize("path", HOME_PAGES)
def test_home_passes_axe(page, site, path):
    page.goto(f"{site}{path}")
    assert page.locator("[data-ledger]").is_visible()
    assert_accessible(page)


@pytest.mark.parametrize("path", HOME_PAGES)
def test_home_reflows_at_320_px_without_horizontal_scrolling(browser, site, path):
    context = browser.new_context(viewport={"width": 320, "height": 640})
    page = context.new_page()
    try:
        page.goto(f"{site}{path}")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} scrolls sideways by {overflow} px at 320 px"
        # Every ledger entry and market stays inside the viewport, not clipped off its edge.
        for selector in ("[data-figure]", "[data-market]", "[data-outcome-axis]"):
            boxes = page.locator(selector).evaluate_all(
                "nodes => nodes.map(n => n.getBoundingClientRect().right)"
            )
            assert boxes and max(boxes) <= 320, (selector, boxes)
    finally:
        context.close()


def test_native_market_names_carry_their_language(page, site):
    page.goto(f"{site}/ko/")
    languages = page.locator(".market-native").evaluate_all("nodes => nodes.map(n => n.lang)")
    assert len(languages) == page.locator("[data-market]").count() > 0
    assert all(languages), languages
    page.locator("[data-market] a").first.click()
    page.wait_for_load_state()
    assert "/ko/markets/" in page.url
