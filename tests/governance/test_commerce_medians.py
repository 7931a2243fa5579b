"""A commerce task's proximity is taken over its confirmed successes (issue 44, item 6):
a failed attempt's totals entered the cell's medians, and a failure that chose a cheaper,
non-equivalent offer dragged the premium range below zero. The gate's cell, the public
evidence page and the verifier's recomputation from the attempts export now read the
successes only.

Seed, "Commerce results report proximity to the lowest valid total".
"""

import json

import pytest

from governance.selectors import cell_list
from mica.exports.attempts import attempts_document
from mica.methodology.selectors import edition_current
from mica_verify import cells as verifier
from tests.factories import api_auth, attempt_payload, publishable_world
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

SHOP = "sd-all-in-price-comparison"
SEARCH = {
    "evidence_id": "search-1",
    "evidence_type": "locale-formatted-artifact",
    "sha256": "c" * 64,
}
PROOF = attempt_payload()["evidence"]
FAILED = {"outcome": "recoverable-failure", "accuracy": 0}


def shopping(n, chosen, reference, **changes):
    commerce = {
        "currency": "KRW",
        "chosen_total": chosen,
        "reference_total": reference,
        "reference_observed_at": "2026-11-30T10:30:00+09:00",
        "reference_evidence_id": "search-1",
    }
    return rerun(n, task=SHOP, commerce=commerce, evidence=[*PROOF, SEARCH], **changes)


@pytest.fixture
def shopped(client, staff, canonical_content, django_capture_on_commit_callbacks):
    """One cell (acme-agent 2.1, KR, shopping and delivery) on the validated all-in price
    comparison: two confirmed successes with their totals; a failure that chose an offer
    far above the lowest valid total, a failure that chose a cheaper offer that was not
    equivalent (below it), and a failure that chose nothing."""
    publishable_world(task=SHOP)
    payloads = [
        shopping(1, "23900", "22900"),
        shopping(2, "23000", "22500"),
        shopping(3, "30000", "22900", **FAILED),
        shopping(4, "19900", "22900", **FAILED),
        rerun(5, task=SHOP, evidence=[*PROOF, SEARCH], **FAILED),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            "/api/v1/attempts/",
            json.dumps(payloads),
            content_type="application/json",
            **api_auth(staff),
        )
    assert answer.status_code == 201, answer.json()
    return cell_list().get()


def test_the_cells_medians_are_over_its_confirmed_successes(shopped):
    """Seed: "Price proximity. MICA reports the chosen total, reference total, absolute
    difference and percentage premium. No result is called the market-wide absolute
    lowest price."

    The finding: the three failures' totals entered the medians (five attempts, four with
    totals), and the failure below the lowest valid total showed a premium of -13.10%.
    Over the two successes (23,900 against 22,900 and 23,000 against 22,500) the medians
    and the range are theirs alone, and no premium is negative."""
    commerce = shopped.task_scores[SHOP]["commerce"]
    assert (commerce["attempts"], commerce["attempts_without_totals"]) == (2, 0)
    assert commerce["median_chosen_total"] == 23450
    assert commerce["median_reference_total"] == 22700
    assert commerce["median_difference"] == 750
    assert commerce["median_premium_percent"] == pytest.approx(
        (100 * 1000 / 22900 + 100 * 500 / 22500) / 2
    )
    assert commerce["lowest_premium_percent"] == pytest.approx(100 * 500 / 22500)
    assert commerce["highest_premium_percent"] == pytest.approx(100 * 1000 / 22900)
    # The failures still count where failures count: five eligible runs, two successes.
    task = shopped.task_scores[SHOP]
    assert (task["eligible_runs"], task["successes"]) == (5, 2)


def test_the_evidence_page_shows_the_successes_proximity(client, shopped):
    """Seed: "Commerce results report proximity to the lowest valid total", on the public
    page of the cell: the successes' medians and range, never the failures'."""
    page = client.get(f"/evidence/{shopped.cell_id}/").text
    # The cell's proximity table; each attempt's own line below it keeps its totals.
    table = page[page.index('<h2 id="commerce">') :]
    table = table[: table.index("</table>")]
    assert "<td>KRW 23,450</td>" in table and "<td>KRW 22,700</td>" in table
    assert "+2.22% to +4.37%" in table
    assert "-13.10%" not in table and "+31.00%" not in table


def test_the_verifier_recomputes_the_same_proximity_from_the_attempts_export(shopped):
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium." The verifier reads the attempts export (every counted attempt
    with its totals and whether it is a confirmed success) and takes the medians over the
    same successes, so it agrees with the gate's cell."""
    (exported,) = attempts_document(edition_current())["cells"]
    runs = [attempt for attempt in exported["attempts"] if verifier.counted(attempt)]
    assert len(runs) == 5
    assert sum(run["commerce"] is not None for run in runs) == 4
    recomputed = verifier.commerce(runs)
    published = dict(shopped.task_scores[SHOP]["commerce"])
    assert recomputed.pop("currency") == published.pop("currency") == "KRW"
    assert recomputed == pytest.approx(published, rel=1e-12)
    assert recomputed["attempts"] == 2
