"""An author and a reviewer through one review round and a voided approval, by clicking,
in English and in Korean (issue 34, items 1 and 2).

Issue 34, acceptance: "Browser tests, in both languages, walk each journey above end to
end as a person would (author through publication with no extra review round; a voided
review resubmitted; ...), with axe clean on every page they visit".
PORTAL.md, Four-eyes review: "any edit after approval voids it (approval pins a content
hash)".
"""

import pytest
from django.contrib.auth.models import Permission

from tests.browser.conftest import assert_accessible
from tests.factories import PASSWORD, LeadFactory, StaffFactory, grant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# One canonical task a language, so the two walks do not meet.
WALKS = [
    ("", "gc-resident-record-extract"),
    ("/ko", "ec-reschedule-three-party"),
]
WORDS = {
    "": {
        "not_met": "Not met",
        "submitted": "It is now “In review”",
        "approved": "It is now “Approved”",
        "voided": "This edit voided the approval of",
        "resubmitted": "Resubmitted for review",
        "queue": "My drafts and reviews sent back",
        "approval_shown": "approved by a local reviewer competent for the market",
    },
    "/ko": {
        "not_met": "미충족",
        "submitted": "현재 상태는 “검토 중”입니다",
        "approved": "현재 상태는 “승인됨”입니다",
        "voided": "승인이 무효가 되었습니다",
        "resubmitted": "검토를 다시 요청했습니다",
        "queue": "내 초안과 수정 요청을 받은 검토",
        "approval_shown": "해당 시장 역량을 갖춘 현지 검토자가 승인함",
    },
}


def _editor(username, role, lead):
    from markets.models import CompetenceRole

    person = StaffFactory(username=username)
    person.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="catalogue").exclude(
            codename="view_holdout"
        )
    )
    grant(person, "KR", getattr(CompetenceRole, role), lead)
    return person


@pytest.fixture
def people(site):
    lead = LeadFactory(username="round-lead")
    return {
        "author": _editor("round-author", "AUTHOR", lead),
        "reviewer": _editor("round-reviewer", "REVIEWER", lead),
    }


def sign_in(page, site, person, prefix):
    page.context.clear_cookies()
    page.goto(f"{site}{prefix}/admin/login/")
    page.fill("#id_username", person.username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")


def messages(page):
    return page.inner_text(".messagelist") if page.locator(".messagelist").count() else ""


def save(page):
    with page.expect_navigation():
        page.click("input[name=_continue]")
    return messages(page)


def run_action(page, action, row_text):
    page.locator("#result_list tr", has_text=row_text).locator("input.action-select").check()
    page.select_option("select[name=action]", action)
    with page.expect_navigation():
        page.click("button[name=index]")
    return messages(page)


def rule(page, code):
    return page.locator(f"#validation-checklist li[data-rule={code}]")


def queue_count(page, site, prefix, label):
    page.goto(f"{site}{prefix}/admin/")
    return page.locator("#work-queues tr", has_text=label).locator("td").inner_text().strip()


@pytest.mark.parametrize(("prefix", "slug"), WALKS, ids=["en", "ko"])
def test_one_review_round_and_a_voided_approval_resubmitted(page, site, people, prefix, slug):
    from catalogue.models import LocalReview, TaskDefinition

    words = WORDS[prefix]
    version = TaskDefinition.objects.get(slug=slug).current_version
    version_page = f"{site}{prefix}/admin/catalogue/taskversion/{version.pk}/change/"

    # The author reads the rules on the version's page and registers the references.
    sign_in(page, site, people["author"], prefix)
    page.goto(version_page)
    assert words["not_met"] in rule(page, "references").inner_text()
    assert_accessible(page)
    page.select_option("#id_reference_status", "registered")
    page.fill("#id_reference_sample_size", "12")
    page.fill("#id_speed_reference_seconds", "240")
    page.fill("#id_cost_reference_usd", "0.0500")
    save(page)
    assert "rule-met" in rule(page, "references").get_attribute("class")
    assert "rule-unmet" in rule(page, "local-review").get_attribute("class")

    # The review opens and goes to a reviewer: no rule it cannot meet holds it back.
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/add/")
    page.click("#id_version + .select2 .select2-selection")
    page.fill(".select2-search__field", slug)
    page.locator(".select2-results__option", has_text=slug).first.click()
    page.select_option("#id_market", str(_market("KR").pk))
    save(page)
    review = LocalReview.objects.get(version=version)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/")
    assert words["submitted"] in run_action(page, "submit", slug)

    # The reviewer comments on a part chosen from the list, and approves.
    sign_in(page, site, people["reviewer"], prefix)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/{review.pk}/change/")
    page.select_option("#id_comments-2-0-anchor", "final_state")
    page.fill("#id_comments-2-0-body", "Name the office that issues it.")
    save(page)
    assert_accessible(page)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/?mine=review")
    assert words["approved"] in run_action(page, "approve", slug)

    # The author's edit voids the approval; the save says so and where to resubmit.
    sign_in(page, site, people["author"], prefix)
    assert queue_count(page, site, prefix, words["queue"]) == "0"
    page.goto(version_page)
    page.fill("#id_title_en", version.title_en + " (revised)")
    told = save(page)
    assert words["voided"] in told, told
    assert_accessible(page)
    with page.expect_navigation():
        page.locator(".messagelist a[href*='state__exact=voided']").click()
    voided_list = page.url
    assert voided_list.endswith("/admin/catalogue/localreview/?state__exact=voided")
    assert_accessible(page)
    assert queue_count(page, site, prefix, words["queue"]) == "1"
    page.goto(voided_list)
    assert words["resubmitted"] in run_action(page, "resubmit", slug)
    assert queue_count(page, site, prefix, words["queue"]) == "0"

    # The reviewer approves the new content; the comment is still there.
    sign_in(page, site, people["reviewer"], prefix)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/{review.pk}/change/")
    comments = page.inner_text("#comments-group")
    assert "Name the office that issues it." in comments and "final_state" not in comments
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/?mine=review")
    assert words["approved"] in run_action(page, "approve", slug)
    review.refresh_from_db()
    assert review.state == "approved"
    assert list(review.events.values_list("action", flat=True)) == [
        "submit",
        "approve",
        "void",
        "resubmit",
        "approve",
    ]

    page.goto(f"{site}{prefix}/tasks/{slug}/")
    assert words["approval_shown"] in page.inner_text("main")
    assert_accessible(page)


def _market(code):
    from markets.models import Market

    return Market.objects.get(code=code)
