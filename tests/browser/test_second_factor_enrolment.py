"""Second-factor enrolment in Chromium: the enrolment-code step and the QR code work under
the page's Content-Security-Policy, pass axe-core's WCAG 2.2 A/AA audit in both languages,
and the device the QR code carries confirms the enrolment."""

import pytest

from governance.models import PersonDeclaration
from tests.browser.conftest import assert_accessible
from tests.browser.test_content_security_policy import visit, watched  # noqa: F401 (fixture)
from tests.factories import PASSWORD, StaffFactory, totp_code

pytestmark = pytest.mark.browser


@pytest.fixture
def keeper(site):
    person = StaffFactory(username="enrolling-keeper")
    PersonDeclaration.objects.create(user=person, holdout_access=True)
    return person


def test_enrolment_with_a_code_under_the_policy_and_accessible(watched, site, keeper):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from mica.site.enrolment import enrolment_code_issue

    page, violations = watched
    _record, code = enrolment_code_issue(user=keeper, actor=None)
    page.goto(f"{site}/ko/admin/login/")
    page.fill("#id_username", "enrolling-keeper")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    page.wait_for_url(f"{site}/ko/admin/second-factor/enrol/**")
    assert not violations(), violations()
    assert_accessible(page)
    page.fill("#id_enrolment_code", code)
    with page.expect_navigation():
        page.click("#enrolment-code-form input[type=submit]")
    qr = page.locator("#otp-qr-code svg")
    assert qr.is_visible() and qr.get_attribute("role") == "img"
    assert qr.bounding_box()["width"] > 100
    assert not violations(), violations()
    assert_accessible(page)
    visit(page, violations, f"{site}/admin/second-factor/enrol/")
    assert_accessible(page)
    page.fill("#id_code", totp_code(TOTPDevice.objects.get(user=keeper, confirmed=False)))
    with page.expect_navigation():
        page.click("#second-factor-form input[type=submit]")
    assert page.url.rstrip("/").endswith("/admin")
    assert TOTPDevice.objects.filter(user=keeper, confirmed=True).exists()
