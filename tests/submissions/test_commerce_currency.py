"""A commerce attempt's totals are in its market's own currency, never in USD (issue 44,
item 8: a one-line mutant that let USD totals through in any market survived the suite,
whose only wrong currency was another market's).

USD is the currency of the evaluation's own cost, never of the goods an agent handled: a
total in USD would be compared with a reference in the market's currency, or converted at
a rate the record does not keep. Ingestion refuses it by name (submissions.ingest,
`_check_commerce`).
"""

import json

import pytest

from submissions.models import Attempt
from tests.factories import api_auth, attempt_payload
from tests.factories import independent_rerun as rerun

# Recording the attempts reaches the record's triggers, which differ by database.
pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

SEARCH = {
    "evidence_id": "search-1",
    "evidence_type": "locale-formatted-artifact",
    "sha256": "c" * 64,
}
OWN_CURRENCY = {"KR": "KRW", "JP": "JPY"}


def commerce_attempt(market, currency):
    # The all-in price comparison: totals belong to a commerce task's attempt only.
    return rerun(
        1,
        market=market,
        task="sd-all-in-price-comparison",
        commerce={
            "currency": currency,
            "chosen_total": "23900",
            "reference_total": "22900",
            "reference_observed_at": "2026-10-30T10:30:00+09:00",
            "reference_evidence_id": "search-1",
        },
        evidence=[*attempt_payload()["evidence"], SEARCH],
    )


def post(client, user, payloads):
    return client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )


@pytest.mark.parametrize("market", sorted(OWN_CURRENCY))
def test_commerce_totals_in_usd_are_refused_in_every_market(
    client, staff, canonical_content, market
):
    """Seed: "Names, addresses, phone numbers, dates, time zones, currencies and units must
    use locally valid formats." and "Evaluation execution cost: the model, tool and API
    spend of running the task, in USD. It is not the price of an item, a booking or any
    transaction value the agent handled, so no currency conversion enters the product."

    USD is a valid currency code and the evaluation's own currency, yet it is not the
    market's: the totals are refused, named, and nothing is stored."""
    answer = post(client, staff, [commerce_attempt(market, "USD")])
    assert answer.status_code == 400, answer.json()
    errors = answer.json()["errors"]
    assert errors["rule"] == ["commerce-currency"]
    assert errors["detail"] == [
        f"Commerce totals must be in {OWN_CURRENCY[market]}, the currency of the attempt's market."
    ]
    assert not Attempt.objects.exists()


@pytest.mark.parametrize("market", sorted(OWN_CURRENCY))
def test_commerce_totals_in_the_markets_own_currency_are_recorded(
    client, staff, canonical_content, market
):
    """The same attempt in the market's own currency is recorded with it: the refusal
    above is for the currency alone."""
    answer = post(client, staff, [commerce_attempt(market, OWN_CURRENCY[market])])
    assert answer.status_code == 201, answer.json()
    assert Attempt.objects.get().commerce_currency == OWN_CURRENCY[market]
