"""A claim's history in the admin, by clicking: edit twice, compare 1 with 3, revert to 1."""

import re

import pytest

from tests.browser.conftest import assert_accessible
from tests.factories import LeadFactory, totp_code, totp_device

pytestmark = pytest.mark.browser

PLAIN = re.compile(r"^[\w\s.,;:()\-–·%]+$")


@pytest.fixture
def lead(site):

    totp_device(LeadFactory(username="history-lead"))
    return "history-lead", "pw-for-tests-only"


def sign_in(page, site, lead):
    """The password, then (a lead publishes editions) the code of the lead's device."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    username, password = lead
    page.goto(f"{site}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("input[type=submit]")
    page.wait_for_url(f"{site}/admin/second-factor/**")
    page.fill("#id_code", totp_code(TOTPDevice.objects.get(user__username=username)))
    with page.expect_navigation():
        page.click("#second-factor-form input[type=submit]")


def plain_claim():
    """A claim /methodology/ shows, in words the page prints as they are."""
    from mica.methodology.models import ChapterItem

    claims = ChapterItem.objects.filter(item_type="claim", edition__status="draft")
    return next(
        item
        for item in claims.order_by("pk")
        if PLAIN.match(item.detail_en) and PLAIN.match(item.detail_ko)
    )


def save_change(page, field, text):
    page.fill(field, text)
    with page.expect_navigation():
        page.click("input[name=_save]")
    assert page.locator(".messagelist .success").count() == 1, page.content()[:2000]


def test_edit_compare_and_revert_a_claim_by_clicking(page, site, lead):
    item = plain_claim()
    original_en, original_ko = item.detail_en, item.detail_ko
    sign_in(page, site, lead)
    change = f"{site}/admin/methodology/chapteritem/{item.pk}/change/"

    page.goto(change)
    save_change(page, "#id_detail_en", "A first rewrite of this claim, in English.")
    page.goto(change)
    save_change(page, "#id_detail_ko", "이 주장을 한국어로 다시 썼습니다.")

    page.goto(change)
    with page.expect_navigation():
        page.click("a.historylink")
    assert page.locator("table.history-revisions tbody tr").count() == 3
    assert page.locator("table.history-revisions").inner_text().count("history-lead") == 2
    assert_accessible(page)

    page.select_option("#history-old", "1")
    page.select_option("#history-new", "3")
    with page.expect_navigation():
        page.click(".history-compare-form input[type=submit]")
    diff = page.inner_text("table.history-diff")
    assert original_en[:40] in diff and "A first rewrite of this claim" in diff
    assert original_ko[:20] in diff and "이 주장을 한국어로 다시 썼습니다." in diff
    assert page.locator("table.history-diff ins").count() >= 2
    assert_accessible(page)

    with page.expect_navigation():
        page.get_by_role("link", name="Revision 1", exact=True).first.click()
    assert page.input_value("#id_detail_en") == original_en
    assert_accessible(page)
    with page.expect_navigation():
        page.get_by_role("button", name="Revert to revision 1").first.click()
    assert "Revision 1 is restored as revision 4." in page.inner_text(".messagelist")
    rows = page.locator("table.history-revisions tbody tr")
    assert rows.count() == 4
    assert "Reverted to revision 1" in rows.first.inner_text()
    assert_accessible(page)

    page.goto(f"{site}/methodology/")
    assert original_en in page.inner_text("main")
    assert "A first rewrite of this claim" not in page.content()
    page.goto(f"{site}/ko/methodology/")
    assert original_ko in page.inner_text("main")
    assert "이 주장을 한국어로 다시 썼습니다." not in page.content()


def test_the_korean_history_pages_pass_axe(page, site, lead):
    from django.db import transaction

    item = plain_claim()
    item.detail_ko = item.detail_ko + " 보완."
    with transaction.atomic():
        item.save()
    sign_in(page, site, lead)
    history = f"{site}/ko/admin/methodology/chapteritem/{item.pk}/history/"
    page.goto(history)
    assert "두 개정 비교" in page.inner_text("#content-main")
    assert_accessible(page)
    page.goto(f"{history}compare/?old=1&new=2")
    assert "달라진 필드" in page.inner_text("#content-main")
    assert_accessible(page)
