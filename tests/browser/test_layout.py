"""Layout at its edges: a 320 px screen, a keyboard-only reader, a printer, a link preview."""

import pytest

from tests.browser.conftest import assert_accessible, sideways_overflow
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


NARROW = {"width": 320, "height": 640}
LABELS = {"en": ("Menu", "Close menu"), "ko": ("메뉴", "메뉴 닫기")}


@pytest.fixture
def narrow(browser):
    context = browser.new_context(viewport=NARROW)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def narrow_without_javascript(browser):
    context = browser.new_context(viewport=NARROW, java_script_enabled=False)
    page = context.new_page()
    yield page
    context.close()


def toggle_of(page):
    return page.locator(".menu-toggle")


def menu_links(page):
    return page.locator("#primary-menu a")


def focused(page, expression):
    return page.evaluate(f"document.activeElement.{expression}")


def first_task_path(page, site):
    page.goto(f"{site}/tasks/")
    return page.locator("article.task h3 a").first.get_attribute("href")


@pytest.mark.parametrize("prefix, language", [("", "en"), ("/ko", "ko")])
def test_menu_opens_and_closes_by_keyboard_at_320_px(narrow, site, prefix, language):
    page = narrow
    closed_label, open_label = LABELS[language]
    page.goto(f"{site}{prefix}/")
    toggle = toggle_of(page)
    assert toggle.is_visible()
    assert toggle.inner_text() == closed_label
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.get_attribute("aria-controls") == "primary-menu"
    assert not menu_links(page).first.is_visible()

    # A keyboard reader reaches the button by Tab from the top of the page.
    for _ in range(10):
        page.keyboard.press("Tab")
        if focused(page, "className") == "menu-toggle":
            break
    assert focused(page, "className") == "menu-toggle"

    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert toggle.inner_text() == open_label
    links = menu_links(page)
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert len(hrefs) >= 5
    for href in hrefs:
        page.keyboard.press("Tab")
        assert focused(page, "getAttribute('href')") == href
        assert page.locator(f'#primary-menu a[href="{href}"]').is_visible()

    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.inner_text() == closed_label
    assert focused(page, "className") == "menu-toggle"
    assert not links.first.is_visible()

    page.keyboard.press(" ")
    assert toggle.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "false"


def test_following_a_menu_link_closes_the_menu(narrow, site):
    page = narrow
    page.goto(f"{site}/")
    toggle_of(page).click()
    assert toggle_of(page).get_attribute("aria-expanded") == "true"
    # Stay on the page, so what is left to see is the menu's own state.
    page.evaluate(
        "document.querySelector('#primary-menu a')"
        ".addEventListener('click', (event) => event.preventDefault())"
    )
    menu_links(page).first.click()
    assert toggle_of(page).get_attribute("aria-expanded") == "false"
    assert not menu_links(page).first.is_visible()


def test_following_a_menu_link_goes_there(narrow, site):
    page = narrow
    page.goto(f"{site}/ko/")
    toggle_of(page).click()
    page.locator('#primary-menu a[href="/ko/tasks/"]').click()
    page.wait_for_url(f"{site}/ko/tasks/")
    assert toggle_of(page).get_attribute("aria-expanded") == "false"
    assert page.locator('#primary-menu a[aria-current="page"]').get_attribute("href") == (
        "/ko/tasks/"
    )


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_navigation_is_usable_without_javascript_at_320_px(narrow_without_javascript, site, prefix):
    page = narrow_without_javascript
    page.goto(f"{site}{prefix}/")
    assert not toggle_of(page).is_visible()
    links = menu_links(page)
    assert links.count() >= 5
    for i in range(links.count()):
        assert links.nth(i).is_visible()
    links.filter(has_text="Tasks" if not prefix else "과제").first.click()
    page.wait_for_url(f"{site}{prefix}/tasks/")


def test_wide_screens_show_the_navigation_without_a_button(page, site):
    page.goto(f"{site}/")
    assert not toggle_of(page).is_visible()
    links = menu_links(page)
    assert links.count() >= 5, "the navigation lists its pages"
    for i in range(links.count()):
        assert links.nth(i).is_visible()


def test_open_menu_passes_axe_in_both_languages(narrow, site):
    for prefix in ("", "/ko"):
        narrow.goto(f"{site}{prefix}/")
        toggle_of(narrow).click()
        assert toggle_of(narrow).get_attribute("aria-expanded") == "true"
        assert_accessible(narrow)


def test_named_pages_reflow_at_320_px_with_the_menu_closed_and_open(narrow, site):
    page = narrow
    task = first_task_path(page, site)
    paths = ["/", "/methodology/", "/tasks/", task, "/markets/kr/", "/governance/"]
    for path in paths + [f"/ko{path}" for path in paths]:
        page.goto(f"{site}{path}")
        for state in ("closed", "open"):
            if state == "open":
                toggle_of(page).click()
            overflow = sideways_overflow(page)
            assert overflow <= 0, f"{path} scrolls sideways by {overflow} px, menu {state}"
        # Tables that cannot reflow scroll inside their own box, never the page.
        outside = page.evaluate(
            "[...document.querySelectorAll('main table')]"
            ".filter((table) => !table.closest('.table-wrap')).length"
        )
        assert outside == 0, f"{path} has a table outside .table-wrap"


def contract_text(page):
    return page.locator("article.task details .contract").first


def test_print_opens_every_task_contract_and_restores_afterwards(page, site):
    page.goto(f"{site}/tasks/")
    closed_before = page.evaluate("document.querySelectorAll('details:not([open])').length")
    assert closed_before > 0
    assert not contract_text(page).is_visible()

    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate("document.querySelectorAll('details:not([open])').length") == 0
    assert contract_text(page).is_visible()
    for chrome in (".primary-nav", ".language-switch", ".site-footer", ".skip-link"):
        assert not page.locator(chrome).is_visible(), chrome

    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    closed_after = page.evaluate("document.querySelectorAll('details:not([open])').length")
    assert closed_after == closed_before
    assert not contract_text(page).is_visible()


def test_print_shows_task_contracts_even_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{site}/ko/tasks/")
        page.emulate_media(media="print")
        # Chromium's ::details-content lets the stylesheet alone open them.
        assert contract_text(page).is_visible()
    finally:
        context.close()


def test_print_writes_out_external_link_addresses_once(page, site):
    seen = set()
    for path in ("/markets/kr/", "/methodology/"):
        page.goto(f"{site}{path}")
        page.emulate_media(media="print")
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        links = page.evaluate(
            """[...document.querySelectorAll('main a[href^="http"]')].map((link) => [
                link.textContent.trim() === link.getAttribute('href'),
                getComputedStyle(link, '::after').content,
            ])"""
        )
        for text_is_address, content in links:
            seen.add(text_is_address)
            if text_is_address:
                assert content in ("none", "normal"), path
            else:
                assert content.startswith('" (http'), (path, content)
    # Sources cited by address on the market page, references by title in the method.
    assert seen == {True, False}


def meta(page, name):
    return page.locator(f'meta[property="{name}"], meta[name="{name}"]').first.get_attribute(
        "content"
    )


@pytest.mark.parametrize(
    "prefix, locale, alternate", [("", "en_US", "ko_KR"), ("/ko", "ko_KR", "en_US")]
)
def test_social_preview_tags_point_to_a_real_image(page, site, prefix, locale, alternate):
    page.goto(f"{site}{prefix}/methodology/")
    assert meta(page, "og:url") == f"{site}{prefix}/methodology/"
    assert meta(page, "og:locale") == locale
    assert meta(page, "og:locale:alternate") == alternate
    assert meta(page, "og:title") and meta(page, "og:title") in page.title()
    assert meta(page, "og:description") == meta(page, "description")
    assert meta(page, "twitter:card") == "summary_large_image"
    image = meta(page, "og:image")
    assert image.startswith(f"{site}/static/")
    assert image.endswith(f".{locale[:2]}.png")
    response = page.request.get(image)
    assert response.status == 200
    assert response.headers["content-type"] == "image/png"
    body = response.body()
    assert body[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")
    assert (width, height) == (
        int(meta(page, "og:image:width")),
        int(meta(page, "og:image:height")),
    )
    assert meta(page, "og:image:alt")
