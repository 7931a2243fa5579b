"""A local reviewer's desk in the admin, by clicking, in both languages: the queues on the
index, a review's page with its comments, and sending a review back with a request."""

import pytest
from django.contrib.auth.models import Permission

from catalogue.models import LocalReview, ReviewEvent, TaskDefinition
from catalogue.services import review_comment_add
from catalogue.workflows import review_transition
from markets.models import CompetenceRole, Market
from tests.browser.conftest import assert_accessible
from tests.factories import LeadFactory, StaffFactory, grant, references_registered

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["", "/ko"]


@pytest.fixture
def desk(site):
    """A KR review in review, with a comment, and the KR reviewer who may decide it."""
    lead = LeadFactory()
    author = StaffFactory(username="desk-author")
    reviewer = StaffFactory(username="desk-reviewer")
    reviewer.user_permissions.add(
        # Without the holdout: a reviewer who signs in with the password alone.
        *Permission.objects.filter(content_type__app_label="catalogue").exclude(
            codename="view_holdout"
        ),
        Permission.objects.get(codename="view_challenge"),
        Permission.objects.get(codename="change_chapteritem"),
    )
    grant(author, "KR", CompetenceRole.AUTHOR, lead)
    grant(reviewer, "KR", CompetenceRole.REVIEWER, lead)
    definition = TaskDefinition.objects.get(slug="gc-resident-record-extract")
    review = LocalReview.objects.create(
        version=references_registered(definition.current_version),
        market=Market.objects.get(code="KR"),
        author=author,
    )
    review_transition(review_id=review.pk, action="submit", actor=author)
    review_comment_add(
        review=review, anchor="final_state", body="Which office issues it?", actor=reviewer
    )
    return review


def sign_in(page, site):
    page.goto(f"{site}/admin/login/")
    page.fill("#id_username", "desk-reviewer")
    page.fill("#id_password", "pw-for-tests-only")
    with page.expect_navigation():
        page.click("input[type=submit]")


def test_the_reviewer_desk_is_accessible_in_both_languages(page, site, desk):
    """Issue 19: "Axe clean on the new admin screens in both languages"."""
    sign_in(page, site)
    for prefix in LANGUAGES:
        page.goto(f"{site}{prefix}/admin/")
        assert page.locator("#work-queues tbody tr").count() == 3
        assert_accessible(page)
        page.goto(f"{site}{prefix}/admin/catalogue/localreview/{desk.pk}/change/")
        assert page.locator("text=Which office issues it?").count() >= 1
        assert_accessible(page)
        page.goto(f"{site}{prefix}/admin/catalogue/localreview/?mine=review")
        page.check(f"input[name=_selected_action][value='{desk.pk}']")
        page.select_option("select[name=action]", "request_changes")
        with page.expect_navigation():
            page.click("button[name=index]")
        assert page.locator("#id_reason").count() == 1
        assert_accessible(page)


def test_a_review_is_sent_back_with_its_request_by_clicking(page, site, desk):
    """Issue 19: ""needs changes" with the request attached"; item 4: "one message per
    action ... the message quotes the new state"."""
    sign_in(page, site)
    page.goto(f"{site}/ko/admin/catalogue/localreview/?mine=review")
    page.check(f"input[name=_selected_action][value='{desk.pk}']")
    page.select_option("select[name=action]", "request_changes")
    with page.expect_navigation():
        page.click("button[name=index]")
    page.fill("#id_reason", "발급 기관을 최종 상태에 적어 주세요.")
    with page.expect_navigation():
        page.click("form input[type=submit]")
    messages = [text.strip() for text in page.locator(".messagelist li").all_text_contents()]
    assert messages == [
        f"수정을 요청했습니다: {desk.version} · KR. 현재 상태는 “수정 요청됨”입니다."
    ], messages
    event = ReviewEvent.objects.get(action="request_changes")
    assert event.reason == "발급 기관을 최종 상태에 적어 주세요."
