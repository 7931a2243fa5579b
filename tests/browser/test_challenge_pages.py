"""The challenge form (blank and with errors), register and detail: axe-clean, keyboard usable."""

import pytest

from tests.browser.conftest import assert_accessible
from tests.factories import StaffFactory

pytestmark = pytest.mark.browser


def test_challenge_form_and_its_error_state(page, site):
    for prefix in ("", "/ko"):
        page.goto(f"{site}{prefix}/submit/challenge/?section=world-first-claim")
        assert_accessible(page)
        assert page.locator("#id_section_id").input_value() == "world-first-claim"
        with page.expect_navigation():
            page.get_by_role("button").last.click()
        assert page.locator("[role=alert]").count() == 1
        assert_accessible(page)
        page.goto(f"{site}{prefix}/submit/")
        assert_accessible(page)
        page.goto(f"{site}{prefix}/challenges/")
        assert_accessible(page)


def test_filing_by_keyboard(page, site):
    page.goto(f"{site}/submit/challenge/?section=world-first-claim")
    page.select_option("#id_challenge_type", "editorial")
    page.fill("#id_what_is_wrong", "A sentence repeats itself.")
    page.fill("#id_proposed_replacement", "Say it once.")
    page.fill("#id_contact_email", "reader@example.org")
    page.focus("#id_contact_email")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "/submit/challenge/filed/" in page.url, page.content()[:2000]
    assert "Your reference number is #" in page.inner_text("main")
    assert_accessible(page)


def test_a_screened_challenge_page(page, site):

    from submissions.challenges import (
        challenge_confirm,
        challenge_file,
        challenge_transition,
        confirmation_token,
    )
    from tests.factories import challenge_payload as payload

    editor = StaffFactory(username="editor")
    challenge, _created = challenge_file(payload=payload(what_is_wrong="<b>not bold</b>"))
    challenge_confirm(token=confirmation_token(challenge))
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
    )
    for prefix in ("", "/ko"):
        page.goto(f"{site}{prefix}/challenges/{challenge.pk}/")
        assert "<b>not bold</b>" in page.inner_text("main")
        assert "https://example.org/paper" in page.inner_text("main")  # its citation
        assert_accessible(page)
        # The filer's own view through the confirmation link: number, state, the way on.
        page.goto(f"{site}{prefix}/submit/challenge/confirm/{confirmation_token(challenge)}/")
        assert f"#{challenge.pk}" in page.inner_text("main")
        assert_accessible(page)
        page.goto(f"{site}{prefix}/methodology/claims/{challenge.section_id}/")
        assert_accessible(page)
