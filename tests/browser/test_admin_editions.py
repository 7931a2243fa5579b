"""The method lead sets an edition's thresholds and publishes it, clicking through the admin."""

import pytest

from mica.methodology.models import Edition
from tests.browser.conftest import assert_accessible
from tests.factories import LeadFactory, totp_code, totp_device

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, site):
    """The password, then (a lead publishes editions) the code of the lead's device."""
    device = totp_device(LeadFactory())
    page.goto(f"{site}/admin/login/")
    page.fill("#id_username", "lead")
    page.fill("#id_password", "pw-for-tests-only")
    page.click("input[type=submit]")
    page.wait_for_url(f"{site}/admin/second-factor/**")
    page.fill("#id_code", totp_code(device))
    page.click("#second-factor-form input[type=submit]")
    page.wait_for_url(f"{site}/admin/")


def test_thresholds_are_set_and_saved_in_the_edition_form(page, site):
    """Seed L401: "MICA has not yet agreed runs per task, a minimum cell sample size, task
    coverage, or a maximum ineligible discard rate" -- once agreed, they are set here."""
    sign_in(page, site)
    edition = Edition.objects.get(slug="preview-0.1")
    page.goto(f"{site}/admin/methodology/edition/{edition.pk}/change/")
    page.fill("#id_min_eligible_runs", "30")
    page.fill("#id_min_coverage", "80")
    page.fill("#id_runs_per_task", "3")
    page.fill("#id_max_ineligible_discard_rate", "10")
    with page.expect_navigation():
        page.click("input[name=_continue]")
    errors = page.locator(".errornote, .errorlist").all_inner_texts()
    assert page.locator(".messagelist .success").count() == 1, errors
    edition.refresh_from_db()
    assert edition.slug == "preview-0.1"
    assert (edition.min_eligible_runs, edition.runs_per_task) == (30, 3)
    assert float(edition.min_coverage) == 80.0
    assert float(edition.max_ineligible_discard_rate) == 10.0
    # Reopened, the form shows what was saved.
    page.reload()
    assert page.input_value("#id_min_eligible_runs") == "30"


def test_publishing_is_confirmed_on_a_page_that_lists_what_freezes(page, site):
    sign_in(page, site)
    edition = Edition.objects.get(slug="preview-0.1")
    page.goto(f"{site}/admin/methodology/edition/")
    page.check(f"input[name=_selected_action][value='{edition.pk}']")
    page.select_option("select[name=action]", "publish")
    page.click("button[name=index]")
    page.wait_for_selector("text=What will be frozen")
    assert_accessible(page)
    edition.refresh_from_db()
    assert edition.status == "draft", "nothing is published before it is confirmed"
    page.click("text=No, take me back")
    page.wait_for_url(f"{site}/admin/methodology/edition/")
    edition.refresh_from_db()
    assert edition.status == "draft"
