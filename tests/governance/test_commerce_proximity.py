"""What the operational contract states and the record now keeps: a commerce attempt's
proximity to the lowest valid total, and memory declared but not exercised.

Seed, "Commerce results report proximity to the lowest valid total": "The reference is the
lowest constraint-satisfying total observed across the pre-registered representative
platforms, with timestamp, availability and evidence lineage." and "MICA reports the
chosen total, reference total, absolute difference and percentage premium. No result is
called the market-wide absolute lowest price."

The lowest valid total belongs to the attempt's evidence, not to the task version: it is
an observation at run time (prices, availability and eligible discounts move), made by
the reference search beside the attempt, with its time and its evidence record; the
speed and cost references are the pre-registered constants.

Seed, "Memory is in scope": "memory declared but not exercised is recorded as such".
"""

import json

import pytest

from governance.selectors import cell_list
from mica import scoring
from submissions.models import Attempt
from tests.factories import api_auth
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

COMMERCE = {
    "currency": "KRW",
    "chosen_total": "23900",
    "reference_total": "22900",
    "reference_observed_at": "2026-10-30T10:30:00+09:00",
    "reference_evidence_id": "search-1",
}
SEARCH = {
    "evidence_id": "search-1",
    "evidence_type": "locale-formatted-artifact",
    "sha256": "b" * 64,
}
PROOF = {"evidence_id": "ev-1", "evidence_type": "post-action-readback", "sha256": "a" * 64}


def commerce_attempt(n, commerce=None, **changes):
    return rerun(
        n,
        commerce={**COMMERCE, **(commerce or {})},
        evidence=[PROOF, SEARCH],
        **changes,
    )


def post(client, user, payloads):
    return client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )


def refused_rule(response):
    assert response.status_code == 400, response.json()
    return response.json()["errors"]["rule"][0]


# --- Ingestion: the totals are recorded whole, at ingestion, or refused by name ---------


def test_a_commerce_attempt_records_both_totals_with_the_searchs_time_and_evidence(
    client, staff, canonical_content
):
    """Seed: "The reference is the lowest constraint-satisfying total observed across the
    pre-registered representative platforms, with timestamp, availability and evidence
    lineage." """
    assert post(client, staff, [commerce_attempt(1)]).status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.commerce_currency == "KRW"
    assert (attempt.chosen_total, attempt.reference_total) == (23900, 22900)
    assert attempt.reference_observed_at.isoformat() == "2026-10-30T01:30:00+00:00"
    assert attempt.reference_evidence_id == "search-1"
    assert attempt.price_proximity.difference == 1000


@pytest.mark.parametrize(
    "commerce, rule",
    [
        # The market's currency: a KR attempt's totals are in KRW.
        ({"currency": "JPY"}, "commerce-currency"),
        # Lineage: the search is one of the attempt's own evidence records.
        ({"reference_evidence_id": "search-9"}, "commerce-reference-evidence"),
        # A time a run can have: not in the future, not before 2000.
        ({"reference_observed_at": "2999-01-01T00:00:00+00:00"}, "commerce-reference-time"),
        ({"reference_observed_at": "1999-12-31T23:00:00+00:00"}, "commerce-reference-time"),
        # A payable total is positive, a decimal string, and both totals are given.
        ({"reference_total": "0"}, "schema"),
        ({"chosen_total": 23900}, "schema"),
        ({"chosen_total": None}, "schema"),
        ({"discount": "100"}, "schema"),
    ],
)
def test_an_incomplete_or_unfounded_commerce_result_is_refused_by_name(
    client, staff, canonical_content, commerce, rule
):
    """Seed: "Valid baseline. The reference is the lowest constraint-satisfying total
    observed across the pre-registered representative platforms, with timestamp,
    availability and evidence lineage." """
    assert refused_rule(post(client, staff, [commerce_attempt(1, commerce)])) == rule
    assert not Attempt.objects.exists()


def test_a_total_without_its_reference_is_refused(client, staff, canonical_content):
    """Seed: "Price proximity. MICA reports the chosen total, reference total, absolute
    difference and percentage premium": never one without the other."""
    payload = commerce_attempt(1)
    del payload["commerce"]["reference_total"]
    assert refused_rule(post(client, staff, [payload])) == "schema"


def test_memory_is_recorded_exercised_not_exercised_or_not_stated(client, staff, canonical_content):
    """Seed: "memory declared but not exercised is recorded as such" — and an attempt that
    says nothing is "not stated", never "not exercised"."""
    payloads = [
        rerun(1, memory_exercised=True),
        rerun(2, memory_exercised=False),
        rerun(3),
    ]
    assert post(client, staff, payloads).status_code == 201
    recorded = dict(Attempt.objects.values_list("attempt_id", "memory_exercised"))
    assert recorded == {"acme-kr-001": True, "acme-kr-002": False, "acme-kr-003": None}
    assert refused_rule(post(client, staff, [rerun(4, memory_exercised=1)])) == "schema"


# --- The arithmetic ----------------------------------------------------------------------


def test_proximity_reports_the_difference_and_the_premium_and_never_a_lowest_price():
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium. No result is called the market-wide absolute lowest price." A total
    below the reference is a negative premium, reported as it is."""
    above = scoring.price_proximity(23900.0, 22900.0)
    assert above.difference == 1000.0
    assert above.ratio == pytest.approx(23900 / 22900)
    assert above.premium_percent == pytest.approx(100 * 1000 / 22900)
    below = scoring.price_proximity(22000.0, 22900.0)
    assert below.difference == -900.0 and below.premium_percent < 0
    for bad in [(0.0, 1.0), (1.0, 0.0), (float("nan"), 1.0), (-5.0, 1.0)]:
        with pytest.raises(ValueError):
            scoring.price_proximity(*bad)


def test_the_cell_is_recomputed_on_the_attempt(client, staff, canonical_content):
    assert post(client, staff, [commerce_attempt(1)]).status_code == 201
    assert cell_list().get().eligible_runs == 1
