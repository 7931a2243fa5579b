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

The arithmetic of one attempt's proximity (mica.scoring.price_proximity) is tested with the
scoring library, in tests/mica/test_scoring.py.
"""

import csv
import datetime
import io
import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from governance.selectors import cell_list
from submissions.models import Attempt
from tests.factories import api_auth, attempt_payload, publishable_world
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
    "sha256": "c" * 64,
}
# The readback and the idempotency record the task's contract asks of a success.
PROOF = attempt_payload()["evidence"]
SHOP = "sd-all-in-price-comparison"
FAILED = {"outcome": "recoverable-failure", "accuracy": 0}


def commerce_attempt(n, commerce=None, **changes):
    """An attempt on the all-in price comparison with its totals: totals belong to a
    commerce task's attempts only (tests/submissions/test_commerce_proximity.py)."""
    changes.setdefault("task", SHOP)
    return rerun(
        n,
        commerce={**COMMERCE, **(commerce or {})},
        evidence=[*PROOF, SEARCH],
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


def test_the_search_may_be_as_old_as_2000_and_never_later_than_now(
    client, staff, canonical_content
):
    """Seed: "with timestamp": a time a run can have, from the first day of 2000 to now."""
    oldest = commerce_attempt(1, {"reference_observed_at": "2000-01-01T00:00:00+00:00"})
    assert post(client, staff, [oldest]).status_code == 201
    soon = (timezone.now() + datetime.timedelta(minutes=5)).isoformat()
    later = commerce_attempt(2, {"reference_observed_at": soon})
    assert refused_rule(post(client, staff, [later])) == "commerce-reference-time"


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


# --- The gate, the pages, the API and the exports ----------------------------------------


@pytest.fixture
def shopped(client, staff, canonical_content):
    """One cell (acme-agent 2.1, KR, shopping and delivery) of the all-in price comparison
    on a validated task with its references: two confirmed successes with their totals
    above the lowest valid total their searches found, a failure whose total is below it
    and a failure without totals (neither enters the proximity, taken over successes);
    memory exercised in one, declared and not exercised in one, not stated in two."""
    publishable_world(task=SHOP)
    payloads = [
        commerce_attempt(1, task=SHOP, memory_exercised=True),
        commerce_attempt(
            2,
            {"chosen_total": "23000", "reference_total": "22500"},
            task=SHOP,
            memory_exercised=False,
        ),
        commerce_attempt(3, {"chosen_total": "22000"}, task=SHOP, **FAILED),
        rerun(4, task=SHOP, **FAILED),
    ]
    assert post(client, staff, payloads).status_code == 201
    return cell_list().get()


def test_each_commerce_task_reports_its_proximity_apart_from_the_score(shopped):
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium. No result is called the market-wide absolute lowest price." """
    task = shopped.task_scores[SHOP]
    commerce = task["commerce"]
    assert commerce["currency"] == "KRW"
    assert (commerce["attempts"], commerce["attempts_without_totals"]) == (2, 0)
    # The successes chose 23900 and 23000 against 22900 and 22500.
    assert commerce["median_chosen_total"] == 23450
    assert commerce["median_reference_total"] == 22700
    assert commerce["median_difference"] == 750
    assert commerce["median_ratio"] == pytest.approx((23900 / 22900 + 23000 / 22500) / 2)
    assert commerce["median_premium_percent"] == pytest.approx(
        (100 * 1000 / 22900 + 100 * 500 / 22500) / 2
    )
    assert commerce["lowest_premium_percent"] == pytest.approx(100 * 500 / 22500)
    assert commerce["highest_premium_percent"] == pytest.approx(100 * 1000 / 22900)
    # Apart from the score: each success's audit value reads speed and cost only (240 s /
    # 300 s and USD 0.05 / 0.035), whatever the premium; each failure's is 0.
    assert task["value"] == pytest.approx(40.0)


def test_a_task_without_totals_reports_no_commerce_result_not_a_zero(
    client, staff, canonical_content
):
    """Seed: "Absence is not zero": a task whose attempts recorded no total has no
    proximity, never a premium of 0."""
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    (entry,) = cell_list().get().task_scores.values()
    assert entry["commerce"] is None


def test_the_cell_records_memory_declared_but_not_exercised(shopped):
    """Seed: "memory declared but not exercised is recorded as such"."""
    assert shopped.memory == {"exercised": 1, "declared_not_exercised": 1, "not_stated": 2}


def test_the_cells_page_shows_proximity_and_memory_in_both_languages(client, shopped):
    """Seed: "Commerce results report proximity to the lowest valid total" and "memory
    declared but not exercised is recorded as such", in English and Korean."""
    english = client.get(f"/evidence/{shopped.cell_id}/").text
    assert "Proximity to the lowest valid total" in english
    assert "<td>KRW 23,450</td>" in english and "<td>KRW 22,700</td>" in english
    assert "<td>KRW 750</td>" in english and "<td>+3.29%</td>" in english
    assert "+2.22% to +4.37%" in english
    # Each attempt's own totals on its lineage line, with the search's time and evidence.
    assert "total KRW 23,900 against the lowest valid total KRW 22,900: KRW 1,000, +4.37%" in (
        " ".join(english.split())
    )
    assert "2026-10-30 01:30 UTC" in english and "<code>search-1</code>" in english
    assert "Exercised in 1; declared, not exercised in 1; not stated in 2." in english
    assert "memory: declared, not exercised" in " ".join(english.split())
    korean = client.get(f"/ko/evidence/{shopped.cell_id}/").text
    assert "최저 유효 총액과의 근접도" in korean
    assert "사용함 1건, 선언했으나 사용하지 않음 1건, 밝히지 않음 2건." in korean
    system = client.get("/systems/acme-agent/").text
    assert "Exercised in 1; declared, not exercised in 1; not stated in 2." in system


@pytest.mark.vendor
def test_the_api_and_the_exports_carry_proximity_and_memory(client, shopped, settings, tmp_path):
    """Seed: "Commerce results report proximity to the lowest valid total"; in
    /api/v1/cells/, and in mica-gate.json (checked against its schema) and mica-gate.csv."""
    (cell,) = client.get("/api/v1/cells/").json()["results"]
    assert cell["task_scores"][SHOP]["commerce"]["median_difference"] == 750
    assert cell["memory"]["declared_not_exercised"] == 1
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=io.StringIO())
    gate = json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))
    (exported,) = gate["cells"]
    assert exported["task_scores"][SHOP]["commerce"]["attempts"] == 2
    assert exported["memory"] == {"exercised": 1, "declared_not_exercised": 1, "not_stated": 2}
    (row,) = csv.DictReader(io.StringIO((tmp_path / "current" / "mica-gate.csv").read_text()))
    assert (row["memory_exercised"], row["memory_declared_not_exercised"]) == ("1", "1")
    assert row["memory_not_stated"] == "2"
