"""The catalogue's pages in a browser (issue 31, item 1): each page passes axe and reflows
at 320 px in both languages, the page links are reached and followed with the keyboard
alone, and a filter chosen in the form stays on as the reader pages through."""

import pytest

from tests.browser.conftest import assert_accessible, assert_reflows

pytestmark = pytest.mark.browser


@pytest.fixture
def paged_site(site, settings):
    settings.CATALOGUE_PAGE_SIZE = 30
    return site


def test_pages_of_the_catalogue_pass_axe_and_reflow_in_both_languages(
    page, narrow_page, paged_site
):
    for path in ("/tasks/?page=2", "/ko/tasks/?page=4", "/tasks/?lifecycle=candidate&page=2"):
        page.goto(f"{paged_site}{path}")
        assert_accessible(page)
        assert_reflows(narrow_page, f"{paged_site}{path}")


def test_the_next_page_is_reached_and_followed_with_the_keyboard(page, paged_site):
    page.goto(f"{paged_site}/ko/tasks/")
    for _ in range(120):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('rel')") == "next":
            break
    else:
        pytest.fail("no Tab reached the link to the next page")
    assert page.evaluate("document.activeElement.textContent") == "다음 쪽"
    page.keyboard.press("Enter")
    page.wait_for_url(f"{paged_site}/ko/tasks/?page=2")
    assert "과제 100개 중 31–60번째입니다." in page.inner_text("main")
    current = page.locator('.pagination a[aria-current="page"]').first
    assert current.inner_text() == "2" and current.get_attribute("aria-label") == "2쪽"


def test_a_filter_stays_on_across_pages(page, paged_site):
    page.goto(f"{paged_site}/tasks/")
    page.select_option("#id_lifecycle", "candidate")
    page.get_by_role("button", name="Show tasks").click()
    page.wait_for_url("**/tasks/?*lifecycle=candidate*")
    page.locator('a[rel="next"]').first.click()
    page.wait_for_url("**/tasks/?lifecycle=candidate&page=2")
    assert "Tasks 31–" in page.inner_text("main")
    assert page.locator("#id_lifecycle").input_value() == "candidate"
