"""Commerce proximity where it belongs (issue 44, item 6): totals were voluntary. A
shopping attempt without them was accepted, totals on an e-mail task were accepted, and a
chosen total below the "lowest valid total" was recorded (and reported as a negative
premium). Each is refused now, by name and in words, through the API; what remains
recordable is recorded.

Seed, "Commerce results report proximity to the lowest valid total". The medians over
confirmed successes are tested in tests/governance/test_commerce_medians.py.
"""

import json

import pytest

from submissions.models import Attempt
from tests.factories import api_auth, attempt_payload
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

SHOP = "sd-all-in-price-comparison"
SEARCH = {
    "evidence_id": "search-1",
    "evidence_type": "locale-formatted-artifact",
    "sha256": "c" * 64,
}
COMMERCE = {
    "currency": "KRW",
    "chosen_total": "23900",
    "reference_total": "22900",
    "reference_observed_at": "2026-11-30T10:30:00+09:00",
    "reference_evidence_id": "search-1",
}
# The readback and the idempotency record the task's contract asks of a success.
PROOF = attempt_payload()["evidence"]
FAILED = {"outcome": "recoverable-failure", "accuracy": 0}


def shopping(n, commerce=None, **changes):
    """A KR rerun of the all-in price comparison with its totals and the search's record;
    `commerce=False` reports no totals."""
    payload = rerun(n, task=SHOP, evidence=[*PROOF, SEARCH], **changes)
    if commerce is not False:
        payload["commerce"] = {**COMMERCE, **(commerce or {})}
    return payload


def post(client, user, payloads, language="en"):
    return client.post(
        "/api/v1/attempts/",
        json.dumps(payloads),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
        **api_auth(user),
    )


def refusal(response):
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    return errors["rule"][0], errors["detail"][0]


def test_a_confirmed_success_on_a_commerce_task_without_totals_is_refused(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "Price proximity. MICA reports the chosen total, reference total, absolute
    difference and percentage premium. No result is called the market-wide absolute
    lowest price."

    The finding: a shopping success without totals was accepted, so the cell's proximity
    silently left it out. A success on a commerce task is what the proximity is taken
    over; without its totals it is refused, and nothing is stored."""
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, staff, [shopping(1, commerce=False)])
    assert refusal(answer) == (
        "commerce-totals-missing",
        "A confirmed success on a commerce task must report its all-in total and the "
        "lowest valid total the reference search found.",
    )
    assert not Attempt.objects.exists()


def test_a_failure_on_a_commerce_task_may_report_no_totals(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "Constraints outrank price." A failed attempt may have chosen no offer at all:
    it is recorded without totals, never made to invent one."""
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, staff, [shopping(1, commerce=False, **FAILED)])
    assert answer.status_code == 201, answer.json()
    assert Attempt.objects.get().chosen_total is None


@pytest.mark.parametrize("outcome", [{}, FAILED], ids=["success", "failure"])
def test_totals_on_an_email_task_are_refused(
    client, staff, canonical_content, django_capture_on_commit_callbacks, outcome
):
    """Seed: "Commerce results report proximity to the lowest valid total".

    The finding: totals on an e-mail and calendar task were accepted and entered that
    task's figures as if it were a commerce result. They belong to commerce tasks only,
    whatever the outcome."""
    payload = rerun(1, commerce=COMMERCE, evidence=[*PROOF, SEARCH], **outcome)
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, staff, [payload])
    assert refusal(answer) == (
        "commerce-totals-off-task",
        "Commerce totals belong to commerce tasks only: this task's family compares no prices.",
    )
    assert not Attempt.objects.exists()


def test_a_success_below_the_lowest_valid_total_is_refused_saying_the_search_missed_it(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "Valid baseline. The reference is the lowest constraint-satisfying total
    observed across the pre-registered representative platforms, with timestamp,
    availability and evidence lineage."

    The finding: a success that chose KRW 22,000 against a "lowest valid total" of KRW
    22,900 was recorded and reported as a premium of -3.93%. A confirmed success chose a
    valid offer, so the reference search missed a lower valid total: the record is
    refused, in English and in Korean, and nothing is stored. The seed says nothing of
    flagging such a result, and a figure against a baseline known to be wrong is not one
    to publish."""
    below = shopping(1, {"chosen_total": "22000"})
    with django_capture_on_commit_callbacks(execute=True):
        english = post(client, staff, [below])
        korean = post(client, staff, [below], language="ko")
    assert refusal(english) == (
        "commerce-below-lowest",
        "This confirmed success chose a total of KRW 22000, below the lowest valid total of "
        "KRW 22900: the reference search missed a lower valid total, so it is not the "
        "lowest, and the premium cannot be reported against it.",
    )
    assert refusal(korean) == (
        "commerce-below-lowest",
        "이 확인된 성공이 고른 총액 KRW 22000은(는) 최저 유효 총액 KRW 22900보다 "
        "낮습니다. 기준 탐색이 더 낮은 유효 총액을 놓쳤으므로 그 값은 최저가 아니며, "
        "이를 기준으로 프리미엄을 보고할 수 없습니다.",
    )
    assert not Attempt.objects.exists()


def test_a_success_at_the_lowest_valid_total_is_recorded_with_no_premium(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium." Choosing the lowest valid total itself is the best a success can
    do: recorded, a premium of zero, a hundredth below it refused."""
    at = shopping(1, {"chosen_total": "22900.00"})
    just_below = shopping(2, {"chosen_total": "22899.99"})
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, staff, [at]).status_code == 201
        assert refusal(post(client, staff, [just_below]))[0] == "commerce-below-lowest"
    proximity = Attempt.objects.get().price_proximity
    assert (proximity.difference, proximity.premium_percent) == (0, 0)


def test_a_failure_below_the_lowest_valid_total_is_recorded(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "Constraints outrank price. A cheaper option is excluded when it violates
    quality, safety, seller reliability, delivery, cancellation or another declared user
    constraint." A failed attempt that chose a cheaper offer which was not equivalent
    failed for it: its totals are kept as sent, and never enter the cell's medians."""
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, staff, [shopping(1, {"chosen_total": "19900"}, **FAILED)])
    assert answer.status_code == 201, answer.json()
    assert Attempt.objects.get().chosen_total == 19900
