"""Authors see every rule of validation while they write, not when the method lead
promotes (issue 34, item 1).

PORTAL.md, Rules the records enforce: "Promotion from candidate to validated needs:
surface, termination class, declared complexity, diagnostic axes, market applicability
for all six markets (markets = the non-`not-applicable` ones), registered speed and cost
references (pre-registered per task version, never derived from the cohort), an approved
local review in every applicable market, and a contract with obligations, invariants and
prohibited states."
"""

import re

import pytest
from django.contrib.messages import get_messages
from django.utils import translation

from catalogue.models import LocalReview, MarketApplicability, ReviewState
from catalogue.rules import (
    VALIDATION_RULES,
    task_promotion_gaps,
    task_review_submission_gaps,
    task_validation_checklist,
)
from catalogue.services import task_promote, task_version_touch
from catalogue.workflows import review_transition
from markets.models import Market
from mica.errors import ValidationFailed
from tests.factories import references_registered

pytestmark = pytest.mark.django_db

VERSIONS = "/admin/catalogue/taskversion/"
REVIEWS = "/admin/catalogue/localreview/"


def checklist_of(page):
    """{rule code: (met, [gap sentences])} as the version's page shows them."""
    section = page.split('id="validation-checklist"', 1)[1].split("</section>", 1)[0]
    parts = re.split(r'<li class="rule-(met|unmet)" data-rule="([a-z-]+)">', section)[1:]
    return {
        code: (met == "met", [gap.strip() for gap in re.findall(r"<li>(.*?)</li>", body, re.S)])
        for met, code, body in zip(parts[0::3], parts[1::3], parts[2::3], strict=True)
    }


def a_draft_review(version, people):
    return LocalReview.objects.create(
        version=version, market=Market.objects.get(code="KR"), author=people["author"]
    )


def kr_only(version):
    """Only Korea applies: one approved review is the whole of the review rule."""
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    return task_version_touch(version=version)


def test_the_checklist_is_the_rule_promotion_applies(task):
    """The checklist and the promotion's refusal are one judgement: the same gaps, in the
    same order, from the same code (catalogue.rules.VALIDATION_RULES)."""
    version = task.current_version
    version.applicability.filter(market__code="JP").delete()
    version.clauses.filter(kind="invariant").delete()
    items = task_validation_checklist(version)
    assert [item.rule.code for item in items] == [rule.code for rule in VALIDATION_RULES]
    assert [gap for item in items for gap in item.gaps] == task_promotion_gaps(task)
    unmet = {item.rule.code: item.gaps for item in items if not item.met}
    assert unmet == {
        "applicability": ["market applicability omits JP"],
        "references": ["speed and cost references are still calibration-pending"],
        "local-review": [f"no approved local review in {code}" for code in applying(version)],
        "contract": ["the contract has no invariants"],
    }


def applying(version):
    return [a.market.code for a in version.applicability.select_related("market") if a.applies]


def test_the_version_page_shows_each_rule_met_or_not_in_the_editors_language(client, people, task):
    """Issue 34, item 1: "The version's change page shows a live checklist of the
    validation rules (each met or not, in the editor's language, from the same rule code
    the promotion uses, never a second copy)"."""
    version = task.current_version
    client.force_login(people["author"])
    page = client.get(f"{VERSIONS}{version.pk}/change/").text
    shown = checklist_of(page)
    assert list(shown) == [rule.code for rule in VALIDATION_RULES]
    assert shown["design"] == (True, []) and shown["contract"] == (True, [])
    assert shown["references"] == (
        False,
        ["Speed and cost references are still calibration-pending"],
    )
    assert shown["local-review"][0] is False
    for rule in VALIDATION_RULES:
        assert str(rule.statement) in page
    assert "Not met" in page and "once the review is submitted" in page

    # Registering the references meets the rule on the next reading of the page.
    references_registered(version)
    assert checklist_of(client.get(f"{VERSIONS}{version.pk}/change/").text)["references"] == (
        True,
        [],
    )
    korean = client.get(f"/ko{VERSIONS}{version.pk}/change/").text
    assert "검증 규칙" in korean and "미충족" in korean and "충족" in korean
    with translation.override("ko"):
        for rule in VALIDATION_RULES:
            assert str(rule.statement) in korean
    assert "Rules of validation" not in korean and "Not met" not in korean


def test_a_review_is_not_submitted_while_a_rule_it_cannot_meet_is_unmet(people, task):
    """Issue 34, item 1: "submitting a local review is refused, with the same sentences,
    while a rule that the review would not fix is unmet"."""
    version = task.current_version
    version.clauses.filter(kind="prohibited").delete()
    review = a_draft_review(version, people)
    with pytest.raises(ValidationFailed) as refused:
        review_transition(review_id=review.pk, action="submit", actor=people["author"])
    gaps = task_review_submission_gaps(version)
    assert gaps == [
        "speed and cost references are still calibration-pending",
        "the contract has no prohibited states",
    ]
    assert refused.value.message == (
        "This version cannot go to a reviewer yet: " + "; ".join(gaps) + "."
    )
    with translation.override("ko"), pytest.raises(ValidationFailed) as in_korean:
        review_transition(review_id=review.pk, action="submit", actor=people["author"])
    assert "속도·비용 참조값이 아직 보정 대기 중" in in_korean.value.message
    assert "계약에 금지 상태 없음" in in_korean.value.message
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.DRAFT
    assert not review.events.exists()


def test_the_local_review_rule_alone_does_not_hold_a_review_back(people, task):
    """The one rule a review meets is the review itself: a version that lacks only its
    approvals goes to a reviewer."""
    version = references_registered(task.current_version)
    assert task_review_submission_gaps(version) == []
    assert any("no approved local review" in gap for gap in task_promotion_gaps(task))
    review = a_draft_review(version, people)
    moved = review_transition(review_id=review.pk, action="submit", actor=people["author"])
    assert moved.state == ReviewState.IN_REVIEW


def test_the_admin_refuses_the_submission_with_the_checklists_sentences(client, people, task):
    """The refusal an author meets in the review desk is the checklist's, in their
    language, and says which review it is about."""
    review = a_draft_review(task.current_version, people)
    client.force_login(people["author"])
    response = client.post(
        f"/ko{REVIEWS}", {"action": "submit", "_selected_action": [review.pk]}, follow=True
    )
    (message,) = [str(m) for m in get_messages(response.wsgi_request)]
    assert "이 버전은 아직 검토를 요청할 수 없습니다" in message
    assert "속도·비용 참조값이 아직 보정 대기 중" in message
    assert message.endswith(f"({review.version} · KR)")
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.DRAFT


def test_an_author_who_meets_the_checklist_reaches_validation_in_one_review_round(
    client, people, task
):
    """Issue 34, item 1: "fixing them voids the approval, so every new task costs an
    extra review round" — no longer: what the checklist asks before review is what the
    promotion asks, so the first approval is the one the method lead promotes on."""
    version = kr_only(references_registered(task.current_version))
    client.force_login(people["author"])
    shown = checklist_of(client.get(f"{VERSIONS}{version.pk}/change/").text)
    assert [code for code, (met, _gaps) in shown.items() if not met] == ["local-review"]
    review = a_draft_review(version, people)
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    review_transition(review_id=review.pk, action="approve", actor=people["reviewer"])
    task_promote(definition_id=task.pk, actor=people["lead"])
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.APPROVED
    assert LocalReview.objects.filter(version__definition=task).count() == 1
    shown = checklist_of(client.get(f"{VERSIONS}{version.pk}/change/").text)
    assert all(met for met, _gaps in shown.values())
