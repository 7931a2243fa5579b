"""The home page in Chromium: no axe violation in either language, and it reflows at 320 px."""

import pytest

from tests.browser.conftest import assert_accessible, assert_reflows
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


HOME_PAGES = ["/", "/ko/"]


@pytest.mark.parametrize("path", HOME_PAGES)
def test_home_passes_axe(page, site, path):
    page.goto(f"{site}{path}")
    assert page.locator("[data-ledger]").is_visible()
    assert_accessible(page)


@pytest.mark.parametrize("path", HOME_PAGES)
def test_home_reflows_at_320_px_without_horizontal_scrolling(narrow_page, site, path):
    assert_reflows(narrow_page, f"{site}{path}")
    # Every ledger entry and market stays inside the viewport, not clipped off its edge.
    for selector in ("[data-figure]", "[data-market]", "[data-outcome-axis]"):
        boxes = narrow_page.locator(selector).evaluate_all(
            "nodes => nodes.map(n => n.getBoundingClientRect().right)"
        )
        assert boxes and max(boxes) <= 320, (selector, boxes)


def test_native_market_names_carry_their_language(page, site):
    page.goto(f"{site}/ko/")
    languages = page.locator(".market-native").evaluate_all("nodes => nodes.map(n => n.lang)")
    assert len(languages) == page.locator("[data-market]").count() > 0
    assert all(languages), languages
    page.locator("[data-market] a").first.click()
    page.wait_for_load_state()
    assert "/ko/markets/" in page.url
