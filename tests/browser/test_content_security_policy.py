"""Issue 17, "no Content-Security-Policy": every page type, in both languages, works under
the policy it is served with. Chromium reports each blocked script, style or request as
a `securitypolicyviolation` event and a console error; there must be none, and the pages'
own scripts (the menu, the planner) must still run."""

import pytest

from tests.browser.test_accessibility import public_pages
from tests.browser.test_admin_history import sign_in
from tests.factories import LeadFactory, totp_device

pytestmark = pytest.mark.browser

# Registered before any page script runs (Playwright injects it outside the page's CSP).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI}`);
});
"""


@pytest.fixture
def watched(page):
    """The page, and the CSP violations it met (events and console errors alike)."""
    console = []
    page.add_init_script(RECORD_VIOLATIONS)
    page.on(
        "console",
        lambda message: (
            message.type == "error"
            and "Content Security Policy" in message.text
            and console.append(message.text)
        ),
    )

    def violations():
        return page.evaluate("window.__cspViolations || []") + console

    return page, violations


def visit(page, violations, url):
    response = page.goto(url)
    assert response.headers.get("content-security-policy"), url
    page.wait_for_load_state("load")
    assert not violations(), f"{url}: {violations()}"


def test_every_public_page_type_runs_under_its_policy(watched, site):
    page, violations = watched
    for path in public_pages(page, site):
        visit(page, violations, f"{site}{path}")
    # The pages' own scripts still ran: the menu is revealed by menu.js at 320 px.
    page.set_viewport_size({"width": 320, "height": 640})
    visit(page, violations, f"{site}/ko/")
    assert page.locator(".menu-toggle").is_visible()
    visit(page, violations, f"{site}/evaluate/")
    assert page.locator("[data-planner-summary]").inner_text().strip()


def test_the_api_reference_renders_and_its_schema_loads(watched, site):
    page, violations = watched
    for prefix in ("", "/ko"):
        visit(page, violations, f"{site}{prefix}/api/docs/")
        assert page.locator("tbody tr").count() > 10
        schema = page.locator('a[href="/api/schema/"]').first.get_attribute("href")
        response = page.request.get(f"{site}{schema}")
        assert response.ok and b"openapi:" in response.body()


@pytest.fixture
def lead(site):
    totp_device(LeadFactory(username="csp-lead"))
    return "csp-lead", "pw-for-tests-only"


def test_the_admin_works_under_its_policy(watched, site, lead):
    """The login page, the second factor, the index, a list with its filters and actions,
    and a change form with its widgets."""
    page, violations = watched
    for prefix in ("", "/ko"):
        visit(page, violations, f"{site}{prefix}/admin/login/")
        assert page.locator("#id_username").is_visible()
    sign_in(page, site, lead)
    assert not violations(), violations()
    visit(page, violations, f"{site}/admin/")
    visit(page, violations, f"{site}/admin/methodology/chapteritem/")
    page.locator("#result_list tbody a").first.click()
    page.wait_for_load_state("load")
    assert page.locator("input[name=_save]").count() == 1
    assert not violations(), violations()
    visit(page, violations, f"{site}/ko/admin/jobs/jobrun/")
