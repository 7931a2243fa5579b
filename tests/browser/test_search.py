"""The search page in Chromium: axe-clean with and without results, in both languages."""

from urllib.parse import quote

import pytest

from tests.browser.conftest import assert_accessible, assert_reflows
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


SEARCHES = [
    "/search/",
    "/ko/search/",
    "/search/?q=localization",
    f"/ko/search/?q={quote('현지')}",
    "/search/?q=zzqxv",
    f"/ko/search/?q={quote('?!')}",
    f"/search/?q={'x' * 300}",
    # The hint that sends a query to the other language version, both ways.
    f"/search/?q={quote('환불')}",
    "/ko/search/?q=refundable",
    # Market page text, linked to its section.
    "/search/?q=Kakao",
    f"/ko/search/?q={quote('서울')}",
]


@pytest.mark.parametrize("path", SEARCHES)
def test_search_pages_pass_axe(page, site, path):
    page.goto(f"{site}{path}")
    assert_accessible(page)


@pytest.mark.parametrize(
    "start, words, marked",
    [("/search/", "locality", "Locality"), ("/ko/search/", "현지성", "현지성")],
)
def test_the_form_searches_and_marks_hits(page, site, start, words, marked):
    page.goto(f"{site}{start}")
    page.get_by_role("search").get_by_role("searchbox").fill(words)
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assert page.locator("section[aria-labelledby=results-claims] mark").first.inner_text() == marked
    assert_accessible(page)


def test_a_long_query_reflows_at_320_px(narrow_page, site):
    for path in (f"/search/?q={'x' * 300}", f"/ko/search/?q={quote('현지성' * 60)}"):
        assert_reflows(narrow_page, f"{site}{path}")


def test_the_other_language_hint_leads_to_that_versions_hits(page, site):
    page.goto(f"{site}/search/?q={quote('환불')}")
    page.get_by_role("link", name="Search the Korean version").click()
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "ko"
    assert page.locator("section[aria-labelledby=results-tasks] mark").first.inner_text() == "환불"
    assert_accessible(page)
