"""Reliability across repeats, counted from the attempt records by the gate.

Seed: "Repeated attempts, interval estimates and reliability across repeats are required
before any comparison between systems is published." Per task and per cell: the share of
tasks whose repeats agree, and pass^k as tau-bench reports it (per task C(c, k) / C(n, k),
averaged over tasks) for k = 1 … runs per task; beside accuracy on the cell's page and the
results, in /api/v1/cells/ and in mica-gate.json and mica-gate.csv, in both languages.
The arithmetic of one task (mica.scoring.pass_hat_k, repeats_agree, reliability) is tested
with the scoring library, in tests/mica/test_scoring.py.
"""

import csv
import io
import json
from math import comb

import pytest
from django.core.management import call_command

from governance import gate_inputs
from governance.aggregates import cell_reliability, repeats_k_max, task_reliability
from governance.selectors import cell_list
from mica.methodology.models import Edition
from tests.factories import api_auth, publishable_world
from tests.factories import independent_rerun as rerun

TASK = "ec-reschedule-three-party"
OTHER = "ec-holiday-aware-series"
FAILURE = {"outcome": "recoverable-failure", "accuracy": 0, "evidence": []}


# --- A cell's figures, without a database ----------------------------------------------


def test_a_cell_without_repeats_says_so_and_never_zero():
    """Seed: "Absence is not zero." — no repeated task, no agreement (None, not 0)."""
    figures = cell_reliability({"a": (1, 1), "b": (1, 0)}, None)
    assert figures["tasks_repeated"] == 0 and figures["agreement"] is None
    assert figures["k_max"] == 1
    assert figures["pass_k"] == [{"k": 1, "value": 0.5}]
    empty = cell_reliability({}, None)
    assert empty["k_max"] is None and empty["pass_k"] == [] and empty["agreement"] is None


def test_k_runs_to_the_editions_runs_per_task_or_else_the_fewest_runs_of_a_task():
    """Seed ("for k = 1 … runs per task"): the edition's threshold sets k's range; while it
    is unset, the cell's own fewest runs per task does."""
    per_task = {"a": (4, 2), "b": (3, 3)}
    assert repeats_k_max(per_task, None) == 3
    assert repeats_k_max(per_task, 2) == 2
    assert repeats_k_max(per_task, 5) == 5
    assert repeats_k_max(per_task, 0) == 3  # no run asked for: the cell's own
    assert [e["k"] for e in cell_reliability(per_task, None)["pass_k"]] == [1, 2, 3]
    assert task_reliability(3, 3, 4) == {
        "repeats_agree": True,
        "pass_k": [
            {"k": 1, "value": 1.0},
            {"k": 2, "value": 1.0},
            {"k": 3, "value": 1.0},
            {"k": 4, "value": None},
        ],
    }


# --- On real records, through the gate, the API, the pages and the exports --------------


def post(client, user, payloads):
    response = client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )
    assert response.status_code == 201, response.json()


@pytest.fixture
def repeated(client, staff, canonical_content):
    """One cell (acme-agent 2.1, KR, e-mail and calendar): TASK run three times (two
    successes, one failure), OTHER twice (both successes)."""
    post(
        client,
        staff,
        [
            rerun(1, task=TASK),
            rerun(2, task=TASK),
            rerun(3, task=TASK, **FAILURE),
            rerun(4, task=OTHER),
            rerun(5, task=OTHER),
        ],
    )
    return cell_list().get()


EXPECTED_PASS_1 = (2 / 3 + 1) / 2
EXPECTED_PASS_2 = (comb(2, 2) / comb(3, 2) + 1) / 2


@pytest.mark.django_db
def test_the_gate_counts_each_tasks_repeats_from_the_records(repeated):
    """Seed: "Repeated attempts, interval estimates and reliability across repeats are
    required before any comparison between systems is published." """
    reliability = repeated.reliability
    assert reliability["tasks"] == 2 and reliability["tasks_repeated"] == 2
    assert reliability["tasks_agreeing"] == 1 and reliability["agreement"] == 0.5
    # No runs per task in the edition yet: k runs to the fewest runs of a task, two.
    assert reliability["k_max"] == 2
    assert [e["k"] for e in reliability["pass_k"]] == [1, 2]
    assert reliability["pass_k"][0]["value"] == pytest.approx(EXPECTED_PASS_1)
    assert reliability["pass_k"][1]["value"] == pytest.approx(EXPECTED_PASS_2)
    # Per task, beside its raw runs and successes.
    task = repeated.task_scores[TASK]
    assert (task["eligible_runs"], task["successes"], task["repeats_agree"]) == (3, 2, False)
    assert task["pass_k"] == [
        {"k": 1, "value": pytest.approx(2 / 3)},
        {"k": 2, "value": pytest.approx(1 / 3)},
    ]
    assert repeated.task_scores[OTHER]["repeats_agree"] is True


@pytest.mark.django_db
def test_the_editions_runs_per_task_sets_k_and_a_short_task_leaves_its_k_empty(
    client, staff, repeated
):
    """Seed: "reliability across repeats"; k = 1 … runs per task, and a k that a task was
    not run k times is absent, not zero."""
    Edition.objects.update(
        min_eligible_runs=1, min_coverage=1, runs_per_task=3, max_ineligible_discard_rate=0
    )
    post(client, staff, [rerun(6, task=TASK)])  # recomputes the cell under the edition
    reliability = cell_list().get().reliability
    assert reliability["k_max"] == 3
    assert reliability["pass_k"][2] == {"k": 3, "value": None}
    assert reliability["pass_k"][0]["value"] == pytest.approx((3 / 4 + 1) / 2)
    cells = client.get("/api/v1/cells/").json()["results"]
    assert cells[0]["reliability"]["pass_k"][2] == {"k": 3, "value": None}
    page = client.get(f"/evidence/{cells[0]['cell']}/").text
    assert "pass^3: no value, a task was run fewer than 3 times" in page


@pytest.mark.django_db
def test_the_cells_page_shows_reliability_beside_accuracy_in_both_languages(client, repeated):
    """Seed: "MICA reports raw success rates ... with reliability across repeats when
    available"; per cell and per public task, in English and Korean."""
    english = client.get(f"/evidence/{repeated.cell_id}/").text
    accuracy = english.index("Accuracy")
    assert accuracy < english.index("Reliability across repeats") < english.index("p50 latency")
    assert "Repeats agree in 1 of 2 tasks run more than once (0.500)" in english
    assert f"pass^1 {EXPECTED_PASS_1:.3f} · pass^2 {EXPECTED_PASS_2:.3f}" in english
    assert "Repeats disagree." in english and "All repeats agree." in english
    korean = client.get(f"/ko/evidence/{repeated.cell_id}/").text
    assert "반복 신뢰도" in korean
    assert "두 번 이상 실행한 과제 2개 중 1개에서 반복 결과가 일치합니다 (0.500)" in korean
    assert "반복 결과가 엇갈립니다." in korean


@pytest.mark.django_db
def test_a_cell_run_once_per_task_says_no_task_was_repeated(client, staff, canonical_content):
    """Seed: "Absence is not zero." — a cell with no repeats says so, not 0."""
    post(client, staff, [rerun(1, task=TASK)])
    cell = cell_list().get()
    assert cell.reliability["agreement"] is None
    api = client.get("/api/v1/cells/").json()["results"][0]["reliability"]
    assert api["agreement"] is None and api["tasks_repeated"] == 0
    assert "No task was repeated." in client.get(f"/evidence/{cell.cell_id}/").text
    assert "반복한 과제가 없습니다." in client.get(f"/ko/evidence/{cell.cell_id}/").text
    assert "Run once: no repeat." in client.get(f"/evidence/{cell.cell_id}/").text


@pytest.mark.vendor
@pytest.mark.django_db
def test_the_exports_carry_reliability_per_cell_and_per_task(client, repeated, settings, tmp_path):
    """Seed: "Repeated attempts ... and reliability across repeats are required"; exported
    in mica-gate.json (checked against its schema) and as two columns of mica-gate.csv."""
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=io.StringIO())
    gate = json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))
    (cell,) = gate["cells"]
    assert cell["reliability"]["agreement"] == 0.5
    assert cell["reliability"]["pass_k"][1]["value"] == pytest.approx(EXPECTED_PASS_2)
    assert cell["task_scores"][TASK]["pass_k"][1]["value"] == pytest.approx(1 / 3)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "current" / "mica-gate.csv").read_text())))
    assert rows[0]["repeats_agreement"] == "0.5"
    assert rows[0]["pass_k"] == f"1={EXPECTED_PASS_1!r};2={EXPECTED_PASS_2!r}"


@pytest.mark.django_db
def test_published_results_show_reliability_beside_accuracy(client, staff, canonical_content):
    """Seed: "Repeated attempts, interval estimates and reliability across repeats are
    required before any comparison between systems is published": the results table shows
    them for every published cell, in both languages."""
    publishable_world()
    post(client, staff, [rerun(1), rerun(2)])
    assert cell_list().get().eligible
    english = client.get("/results/").text
    columns = [
        ">Accuracy (95% interval)</th>",
        ">Reliability across repeats</th>",
        ">p50 latency</th>",
    ]
    positions = [english.index(column) for column in columns]
    assert positions == sorted(positions)
    assert "Repeats agree in 1 of 1 task run more than once (1.000)" in english
    assert "pass^1 1.000 · pass^2 1.000" in english
    assert "반복 신뢰도" in client.get("/ko/results/").text


@pytest.mark.django_db
def test_a_cell_computed_before_the_gate_counted_repeats_is_stale(client, repeated, monkeypatch):
    """Seed: "Scores are derived, not stored ... so a published figure cannot drift away
    from the evidence it claims to summarize": a cell computed before its figures included
    reliability across repeats is read as stale, never shown without them."""
    assert repeated.is_fresh
    monkeypatch.setattr(gate_inputs, "CELL_FIGURES", ())
    (cell,) = client.get("/api/v1/cells/").json()["results"]
    assert cell["blockers"] == ["stale"]
