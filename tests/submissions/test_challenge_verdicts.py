"""A scoring challenge's recompute verdict, wherever the public register shows it: the list,
the detail page, the API and the export, figures stated at their precision on pages."""

import json

import pytest

from mica.exports.documents import corrections_document
from mica.methodology.selectors import edition_current
from submissions.challenges import (
    challenge_confirm,
    challenge_file,
    challenge_transition,
    confirmation_token,
)
from tests.factories import LeadFactory, challenge_payload

pytestmark = pytest.mark.django_db

# p50 of 6.6 s and 6.8 s by R-7 is 6.699999999999999 in floating point.
LATENCIES = [6.6, 6.8]
UNROUNDED = "6.699999999999999"


def scoring_challenge(metric, claimed, key):
    payload = challenge_payload(
        challenge_type="scoring",
        citations=[],
        claimed_metric=metric,
        claimed_value=claimed,
        idempotency_key=key,
        scoring_inputs={
            "eligible_runs": 4,
            "successes": 3,
            "success_latencies_seconds": LATENCIES,
            "total_cost_usd": "0.3",
        },
    )
    challenge, _created = challenge_file(payload=payload)
    challenge_confirm(token=confirmation_token(challenge))
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=LeadFactory()
    )
    challenge.refresh_from_db()
    return challenge


@pytest.fixture
def verdicts(canonical_content, eager_celery, django_capture_on_commit_callbacks):
    """One scoring challenge the recompute reproduces (p50 latency 6.7 s), one it does not
    (accuracy 0.8 claimed, 0.75 recomputed), and a method challenge, all screened."""
    with django_capture_on_commit_callbacks(execute=True):
        reproduced = scoring_challenge("p50-latency", 6.7, "verdict-1")
        differs = scoring_challenge("accuracy", 0.8, "verdict-2")
        method, _created = challenge_file(payload=challenge_payload(idempotency_key="verdict-3"))
        challenge_confirm(token=confirmation_token(method))
        challenge_transition(
            challenge_id=method.pk, action="screen", reason="In scope.", actor=LeadFactory()
        )
    reproduced.refresh_from_db()
    differs.refresh_from_db()
    assert reproduced.recompute["recomputed"] == float(UNROUNDED)
    return reproduced, differs, method


def row_of(page, challenge):
    start = page.index(f">#{challenge.pk}</a>")
    return page[start : page.index("</tr>", start)]


@pytest.mark.parametrize(
    "prefix, words",
    [
        ("", {"reproduced": "Reproduced", "differs": "Differs", "none": "Not a scoring"}),
        ("/ko", {"reproduced": "재현됨", "differs": "불일치", "none": "채점 이의 제기 아님"}),
    ],
)
def test_the_challenge_list_shows_each_verdict_with_rounded_figures(
    client, verdicts, prefix, words
):
    """PORTAL.md: "scoring challenges recomputed automatically from their submitted
    inputs", in the public register of challenges. The list says what the recompute found
    and states the figures as the results pages do (seconds to one decimal, accuracy to
    three), never a float's last digits."""
    reproduced, differs, method = verdicts
    page = client.get(f"{prefix}/challenges/").text
    assert words["reproduced"] in row_of(page, reproduced)
    assert "6.7" in row_of(page, reproduced)
    assert words["differs"] in row_of(page, differs)
    assert "0.800" in row_of(page, differs) and "0.750" in row_of(page, differs)
    assert words["none"] in row_of(page, method)
    assert UNROUNDED not in page


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_detail_page_states_the_figures_at_their_precision(client, verdicts, prefix):
    reproduced, differs, _method = verdicts
    page = client.get(f"{prefix}/challenges/{reproduced.pk}/").text
    assert "6.7" in page and UNROUNDED not in page
    page = client.get(f"{prefix}/challenges/{differs.pk}/").text
    assert "0.800" in page and "0.750" in page


def test_the_api_and_the_export_carry_the_verdict_with_every_digit(client, verdicts):
    """The JSON keeps full precision: a reader re-derives from it, a page only states it."""
    reproduced, differs, method = verdicts
    listed = {c["id"]: c for c in client.get("/api/v1/challenges/").json()["results"]}
    assert listed[reproduced.pk]["recompute"]["verdict"] == "reproduced"
    assert listed[reproduced.pk]["recompute"]["recomputed"] == float(UNROUNDED)
    assert listed[differs.pk]["recompute"]["verdict"] == "differs"
    assert listed[method.pk]["recompute"] is None
    document = json.loads(json.dumps(corrections_document(edition_current())))
    by_challenge = {d["challenge"]: d["recompute"] for d in document["challenge_decisions"]}
    assert by_challenge[reproduced.pk]["verdict"] == "reproduced"
    assert by_challenge[reproduced.pk]["recomputed"] == float(UNROUNDED)
    assert by_challenge[differs.pk] == {**differs.recompute, "verdict": "differs"}
    assert by_challenge[method.pk] is None
