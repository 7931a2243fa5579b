"""The shell as a keyboard user and a reader switching languages meet it."""

import pytest

from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


def test_skip_link_is_first_and_moves_focus_to_main(page, site):
    page.goto(f"{site}/")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent.trim()")
    assert focused == "Skip to main content"
    assert page.locator(".skip-link").is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_focus_is_visible_on_links(page, site):
    page.goto(f"{site}/")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_language_switch_keeps_path_and_query(page, site):
    page.goto(f"{site}/api/docs/?market=KR&family=email-calendar")
    page.get_by_role("link", name="한국어").click()
    page.wait_for_load_state()
    assert page.url == f"{site}/ko/api/docs/?market=KR&family=email-calendar"
    assert page.locator("html").get_attribute("lang") == "ko"
    assert page.get_by_role("heading", level=1).inner_text() == "MICA API"
    page.get_by_role("link", name="English").click()
    page.wait_for_load_state()
    assert page.url == f"{site}/api/docs/?market=KR&family=email-calendar"


def test_pages_work_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{site}/ko/")
        assert page.get_by_role("heading", level=1).inner_text() == "다국적 소비자 에이전트 지수"
        page.get_by_role("link", name="English").click()
        assert page.url == f"{site}/"
    finally:
        context.close()
