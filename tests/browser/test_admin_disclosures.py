"""A disclosure changed in the admin, by clicking: the governance page shows the new
statement with the old one in its history, and the API links the two by id."""

import json

import pytest

from tests.browser.conftest import assert_accessible
from tests.factories import PASSWORD, StaffFactory

pytestmark = pytest.mark.browser

NEW_TEXT = "MICA is funded by one foundation grant, renewed each year."


@pytest.fixture
def keeper(site):
    """Staff who keep the register (the governance permissions); no second factor needed."""
    StaffFactory(username="register-keeper", app_permissions=("governance",))
    return "register-keeper", PASSWORD


def sign_in(page, site, keeper):
    username, password = keeper
    page.goto(f"{site}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("input[type=submit]")


def test_a_disclosure_changed_in_the_admin_reaches_the_page_and_the_api(page, site, keeper):
    """Seed 000: "What must be disclosed. … funding and its terms"; the register's rule: a
    change is a new statement superseding the old, which stays public as history."""
    from governance.selectors import disclosure_current

    old = disclosure_current().get(key="funding")
    sign_in(page, site, keeper)
    page.goto(f"{site}/admin/governance/disclosurestatement/?standing=current")
    assert_accessible(page)
    with page.expect_navigation():
        page.get_by_role("link", name="funding", exact=True).click()
    assert_accessible(page)
    page.fill("#id_statement_en", NEW_TEXT)
    page.fill("#id_amount_min", "10000")
    page.fill("#id_amount_max", "50000")
    page.fill("#id_amount_currency", "USD")
    page.fill("#id_amount_period", "year")
    with page.expect_navigation():
        page.click("input[name=_save]")
    assert page.locator(".messagelist .success").count() == 1, page.content()[:2000]

    new = disclosure_current().get(key="funding")
    assert new.pk != old.pk and new.supersedes_id == old.pk

    page.goto(f"{site}/governance/")
    register = page.inner_text("#d-funding").strip()
    assert register.startswith(new.title_en)
    current = page.locator("section[aria-labelledby=d-funding]").inner_text()
    assert NEW_TEXT in current and "USD 10000–50000 / year" in current
    page.click("details summary")
    earlier = page.locator(f"#statement-{old.pk}").inner_text()
    assert old.statement_en[:60] in earlier and NEW_TEXT not in earlier
    assert_accessible(page)

    page.goto(f"{site}/ko/governance/")
    page.click("details summary")
    assert old.statement_ko[:30] in page.locator(f"#statement-{old.pk}").inner_text()
    assert_accessible(page)

    rows = json.loads(page.request.get(f"{site}/api/v1/disclosures/").text())
    by_id = {row["id"]: row for row in rows}
    assert by_id[new.pk]["supersedes"] == old.pk and by_id[new.pk]["statement_en"] == NEW_TEXT
    assert by_id[old.pk]["superseded_by"] == new.pk and by_id[old.pk]["superseded_at"]


def test_the_korean_register_admin_passes_axe(page, site, keeper):
    from governance.selectors import disclosure_current

    sign_in(page, site, keeper)
    page.goto(f"{site}/ko/admin/governance/disclosurestatement/")
    assert_accessible(page)
    funding = disclosure_current().get(key="funding")
    page.goto(f"{site}/ko/admin/governance/disclosurestatement/{funding.pk}/change/")
    assert page.locator("#id_statement_ko").count() == 1
    assert_accessible(page)
