"""Every rule the method states for the gate, on real records, through the one code path.

A cell of independent reruns on validated tasks in a locally reviewed market, with all
four thresholds set, is eligible; taking away any one condition blocks it with the
named reason, and the API and the exported mica-gate.json say the same in both
languages. Each test quotes the seed line it enforces.
"""

import json

import pytest
from django.core.management import call_command
from django.db import transaction

from catalogue.models import LocalReview, ReviewState, TaskDefinition, TaskVersion
from governance.aggregates import snapshot_aggregates
from governance.gate import cell_recompute
from governance.selectors import cell_list
from mica.errors import AppendOnly
from mica.jobs.models import JobRun
from mica.methodology.models import Edition
from mica.methodology.selectors import edition_current
from submissions.invalidation import attempt_invalidate
from submissions.models import Attempt, SystemSnapshot
from tests.factories import (
    FAILED_SUCCESS_IDS,
    FAILED_SUCCESSES,
    LeadFactory,
    api_auth,
    attempt_payload,
    publishable_world,
)
from tests.factories import (
    independent_rerun as rerun,
)

pytestmark = pytest.mark.django_db

TASK = "ec-reschedule-three-party"


def post(client, user, payloads):
    return client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )


@pytest.fixture
def world(canonical_content, staff):
    return publishable_world()


def the_cell():
    return cell_list().get()


def blockers_now(client):
    (cell,) = client.get("/api/v1/cells/").json()["results"]
    return cell["blockers"]


def test_a_cell_meeting_every_condition_is_eligible(client, staff, world):
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    cell = the_cell()
    assert cell.blockers == [] and cell.eligible
    body = client.get("/api/v1/cells/").json()["results"][0]
    assert body["publication_eligible"] is True and body["blockers"] == []


REMOVALS = [
    # Seed: "Verification. Independent rerun only."
    ("not-independent-rerun", lambda: None, {"verification": "provisional"}),
    # Seed: "Reaching locally authored text and local review in every market edition is
    # required before any market's results could be published".
    # (A candidate task's attempts have no audit value either: nothing to analyse.)
    (
        "task-not-validated",
        lambda: TaskDefinition.objects.filter(slug=TASK).update(lifecycle="candidate"),
        {},
    ),
    (
        "not-locally-reviewed",
        lambda: LocalReview.objects.update(state=ReviewState.VOIDED),
        {},
    ),
    # Seed: "Every published run cell names the platform actually used, its version and
    # snapshot date".
    ("thresholds-not-set", lambda: Edition.objects.update(runs_per_task=None), {}),
    ("thresholds-not-set", lambda: Edition.objects.update(max_ineligible_discard_rate=None), {}),
    # Seed: "MICA has not yet agreed runs per task, a minimum cell sample size, task
    # coverage, or a maximum ineligible discard rate".
    ("below-minimum-eligible-runs", lambda: Edition.objects.update(min_eligible_runs=3), {}),
    ("below-runs-per-task", lambda: Edition.objects.update(runs_per_task=3), {}),
    ("below-minimum-coverage", lambda: Edition.objects.update(min_coverage=11), {}),
    # Seed: "No official figure may be published without a sensitivity analysis over the
    # scoring policy": a cell with no scored attempt has nothing to analyse.
    (
        "no-sensitivity-analysis",
        lambda: TaskVersion.objects.update(
            reference_status="calibration-pending",
            reference_sample_size=0,
            speed_reference_seconds=None,
            cost_reference_usd=None,
        ),
        {},
    ),
]


@pytest.mark.parametrize(
    ("blocker", "condition", "changes"),
    REMOVALS,
    ids=[f"{b}-{n}" for n, (b, _c, _p) in enumerate(REMOVALS)],
)
def test_removing_one_condition_blocks_with_its_named_reason(
    client, staff, world, blocker, condition, changes
):
    condition()
    assert post(client, staff, [rerun(1, **changes), rerun(2, **changes)]).status_code == 201
    expected = [blocker]
    if blocker == "task-not-validated":
        expected.append("no-sensitivity-analysis")
    assert the_cell().blockers == expected
    assert blockers_now(client) == expected


def test_an_ineligible_discard_above_the_maximum_blocks(client, staff, world):
    """Seed: "a maximum ineligible discard rate"; 1 of 3 discarded is 33% against 0%."""
    discarded = rerun(3, eligible=False, ineligible_reason="The replica was unreachable.")
    assert post(client, staff, [rerun(1), rerun(2), discarded]).status_code == 201
    assert the_cell().blockers == ["above-maximum-discard-rate"]
    Edition.objects.update(max_ineligible_discard_rate=34)
    assert cell_recompute(*cell_key()).blockers == []


def cell_key():
    attempt = Attempt.objects.first()
    return attempt.snapshot_id, attempt.market_id, attempt.family_id


@pytest.mark.vendor
def test_the_blockers_come_in_gate_order_on_the_page_in_the_api_and_the_export(
    client, staff, world, tmp_path, settings
):
    SystemSnapshot.objects.update(data_status="preview")
    TaskDefinition.objects.filter(slug=TASK).update(lifecycle="candidate")
    Edition.objects.update(min_eligible_runs=5)
    payload = rerun(1, verification="self-reported")
    payload.update(critical_safety_event=True, outcome="critical-failure", accuracy=0)
    payload.update(safety_event_description="Paid without the account holder's approval.")
    assert post(client, staff, [payload]).status_code == 201
    expected = [
        "critical-safety-event",
        "demo-or-preview-data",
        "not-independent-rerun",
        "task-not-validated",
        "below-minimum-eligible-runs",
        "below-runs-per-task",
        "no-sensitivity-analysis",
    ]
    assert blockers_now(client) == expected
    cell = the_cell()
    english = client.get(f"/evidence/{cell.cell_id}/").text
    korean = client.get(f"/ko/evidence/{cell.cell_id}/").text
    # Each blocker is a sentence whose element the code names (`#blocker-<code>`).
    positions = [english.index(f'id="blocker-{code}"') for code in expected]
    assert positions == sorted(positions)
    assert all(f'id="blocker-{code}"' in korean for code in expected)
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))
    gate = json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))
    (exported,) = gate["cells"]
    assert exported["blockers"] == expected
    sentences = exported["blocker_sentences"]
    assert [s["code"] for s in sentences] == expected
    assert all(s["en"] and s["ko"] and s["en"] != s["ko"] for s in sentences)


def test_a_success_without_proof_in_the_record_is_not_counted(client, staff, world, monkeypatch):
    """Seed: "Confirmed success. The declared final state was reached and evidenced by an
    authoritative receipt, readback or handoff record." Ingestion refuses such a record;
    the gate does not count one that reached the table another way either."""
    unproven = rerun(1)
    unproven["evidence"][0]["evidence_type"] = "tool-call-lineage"
    assert post(client, staff, [rerun(2)]).status_code == 201
    # Reached the table another way: past an intake that did not check its proof.
    monkeypatch.setattr("submissions.ingest._check_success", lambda data: None)
    assert post(client, staff, [unproven]).status_code == 201
    cell = cell_recompute(*cell_key())
    assert (cell.eligible_runs, cell.successes) == (2, 1)


def test_coverage_counts_the_markets_own_canonical_tasks_without_a_clamp(client, staff, world):
    """Seed: "what share of a market's canonical tasks must be attempted"."""
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    cell = the_cell()
    canonical = TaskDefinition.objects.filter(
        family__slug="email-calendar",
        task_set="public",
        current_version__applicability__market__code="KR",
        current_version__applicability__status__in=["applicable", "variant"],
    ).count()
    assert (cell.tasks_attempted, cell.tasks_defined) == (1, canonical)
    assert cell.coverage == pytest.approx(1 / canonical)
    Edition.objects.update(min_coverage=100)
    assert "below-minimum-coverage" in cell_recompute(*cell_key()).blockers


def test_a_critical_safety_event_survives_invalidating_its_attempt(client, staff, world):
    """Seed: "A critical safety event permanently blocks publication of the cell it
    occurred in ... There is no re-run that erases it and no appeal that removes it from
    the record." """
    unsafe = rerun(3, outcome="critical-failure", accuracy=0, critical_safety_event=True)
    unsafe["safety_event_description"] = "Booked without the account holder's approval."
    assert post(client, staff, [rerun(1), rerun(2), unsafe]).status_code == 201
    assert "critical-safety-event" in the_cell().blockers
    attempt = Attempt.objects.get(attempt_id="acme-kr-003")
    with pytest.raises(AppendOnly):
        attempt.delete()
    with pytest.raises(AppendOnly):
        Attempt.objects.filter(pk=attempt.pk).delete()
    with pytest.raises(AppendOnly):
        Attempt.objects.filter(pk=attempt.pk).update(critical_safety_event=False)
    attempt_invalidate(attempt_id=attempt.pk, reason="Evaluator replayed it.", actor=staff)
    call_command("rerun_gate", "--sync", stdout=open("/dev/null", "w"))
    cell = the_cell()
    assert "critical-safety-event" in cell.blockers and cell.invalid_runs == 1
    assert Attempt.objects.filter(attempt_id="acme-kr-003").exists()


def test_the_admin_cannot_delete_an_attempt_and_invalidates_with_a_reason(
    client, staff, world, django_capture_on_commit_callbacks
):
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    client.force_login(LeadFactory())
    attempt = Attempt.objects.get(attempt_id="acme-kr-002")
    assert client.get(f"/admin/submissions/attempt/{attempt.pk}/delete/").status_code == 403
    changelist = client.get("/admin/submissions/attempt/").text
    assert "delete_selected" not in changelist and 'value="invalidate"' in changelist
    without_reason = client.post(
        "/admin/submissions/attempt/",
        {"action": "invalidate", "_selected_action": [attempt.pk], "confirm": "yes"},
    )
    assert "Say why the attempt no longer counts." in without_reason.text
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/submissions/attempt/",
            {
                "action": "invalidate",
                "_selected_action": [attempt.pk],
                "confirm": "yes",
                "reason": "The replica served a stale calendar.",
            },
        )
    decision = attempt.invalidation
    assert decision.reason == "The replica served a stale calendar." and decision.role == "staff"
    cell = the_cell()
    assert (cell.eligible_runs, cell.invalid_runs) == (1, 1)
    assert "below-minimum-eligible-runs" in cell.blockers


@pytest.mark.django_db(transaction=True)
def test_a_threshold_change_is_read_as_stale_at_once_and_recomputed_after_commit(
    client, staff, world, eager_celery, settings
):
    """Seed: "Scores are derived, not stored ... so a published figure cannot drift away
    from the evidence it claims to summarize." Every write here commits, as in production,
    and its after-commit steps run (the exports' own, tested with them, stay out)."""
    settings.EXPORTS_ON_CHANGE = False
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    assert blockers_now(client) == []
    with transaction.atomic():
        edition = edition_current()
        edition.min_eligible_runs = 1000
        edition.save()
        # The new threshold is in force; no recompute has run: the cell reads as stale.
        assert blockers_now(client) == ["stale"]
        assert client.get("/api/v1/cells/").json()["results"][0]["publication_eligible"] is False
    # Once committed, the recompute queued after the commit has run.
    assert blockers_now(client) == ["below-minimum-eligible-runs"]
    assert JobRun.objects.get(job_name="governance.tasks.gate_recompute").state == "succeeded"


@pytest.mark.vendor
def test_exports_regenerate_from_fresh_cells_only(client, staff, world, tmp_path, settings):
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    Edition.objects.update(min_eligible_runs=1000)
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))
    gate = json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))
    (exported,) = gate["cells"]
    assert exported["publication_eligible"] is False
    assert exported["blockers"] == ["below-minimum-eligible-runs"]


def test_aggregates_inherit_the_state_of_their_cells(client, staff, world):
    """A market figure over blocked cells is withheld, never shown as earned."""
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    Edition.objects.update(min_eligible_runs=3)
    cell_recompute(*cell_key())
    canonical = {("KR", "email-calendar"): {TASK}}
    result = snapshot_aggregates(list(cell_list()), canonical)
    assert result["markets"]["KR"].withheld_reason == "blocked-cell-below"
    Edition.objects.update(min_eligible_runs=2)
    cell_recompute(*cell_key())
    result = snapshot_aggregates(list(cell_list()), canonical)
    assert result["markets"]["KR"].withheld_reason is None


def test_audit_values_only_for_validated_localized_attempts(client, staff, world):
    """Seed: "A product may be derived per eligible validated attempt for audit"; the
    speed reference "is pre-registered per executable validated task version"."""
    synthetic = rerun(3, attempt_class="synthetic-fixture")
    assert post(client, staff, [rerun(1), rerun(2), synthetic]).status_code == 201
    score = the_cell().task_scores[TASK]
    assert (score["scored_attempts"], score["excluded_attempts"]) == (2, 1)
    assert score["exclusion_reasons"] == ["synthetic-attempt"]
    # Raw success, latency and cost beside the score (seed: "Raw disclosure").
    assert score["eligible_runs"] == 3 and score["successes"] == 3
    assert score["median_success_seconds"] == 300.0
    assert score["total_cost_usd"] == pytest.approx(0.105)
    TaskDefinition.objects.filter(slug=TASK).update(lifecycle="candidate")
    score = cell_recompute(*cell_key()).task_scores[TASK]
    assert score["value"] is None and "task-not-validated" in score["exclusion_reasons"]


@pytest.mark.vendor
def test_the_sensitivity_analysis_is_exported_with_the_official_figures(
    client, staff, world, tmp_path, settings
):
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))
    gate = json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))
    # The cell's own ranking only: its market's canonical set is not complete, so the
    # market figure is withheld and has no analysis (tests/governance/test_sensitivity.py).
    (analysis,) = gate["sensitivity"]["tables"]
    cell_id = the_cell().cell_id
    assert (analysis["level"], analysis["market"], analysis["family"]) == (
        "cell",
        "KR",
        "email-calendar",
    )
    assert analysis["ordering"] == [cell_id] and analysis["movable"] is False
    moves = {move["alternative"]: move for move in analysis["alternatives"]}
    assert set(moves) >= {"min-max/geometric-mean", "reference-ratio/accuracy-only"}
    assert moves["reference-ratio/accuracy-only"]["rank_shifts"] == {cell_id: 0}


def test_successes_at_zero_metered_cost_read_not_measured(client, staff, world):
    """Seed: "Not measured. The axis was not assessed" and "Zero or unmetered cost is
    recorded as not measured"; "No successful task." is for cells with no success."""
    free = {
        "model_cost_usd": "0",
        "tool_cost_usd": "0",
        "observed_cost_usd": "0",
        "invocations": [
            {**attempt_payload()["invocations"][0], "cost_usd": "0"},
        ],
    }
    assert post(client, staff, [rerun(1, **free)]).status_code == 201
    cell = the_cell()
    page = client.get(f"/evidence/{cell.cell_id}/").text
    row = page[page.index("Cost per success") :][:300]
    assert "Not measured." in row and "No successful task." not in row


def test_every_run_names_its_platform_on_the_evidence_page(client, staff, world):
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    page = client.get(f"/evidence/{the_cell().cell_id}/").text
    # The platform's name is a name: marked so, as a Korean page keeps it.
    assert '<span translate="no">Naver Mail and Calendar</span> 10.4 (Dec. 1, 2026)' in page
    assert "300.0 s" in page and "USD 0.035" in page


def test_what_a_cell_counts_is_its_counted_attempts_only(client, staff, world):
    """Seed: "Accuracy · share of eligible runs reaching the confirmed final state";
    "Speed · wall-clock seconds, successful eligible runs only"; "Cost · ... Total
    eligible attempt cost divided by successful eligible runs"; and a critical safety
    event blocks the cell whichever attempt carries it."""
    failure = rerun(3, outcome="recoverable-failure", accuracy=0, wall_clock_seconds=900.0)
    failure["invocations"][0]["latency_seconds"] = 4.5
    discarded = rerun(
        4,
        eligible=False,
        ineligible_reason="The replica was unreachable.",
        outcome="critical-failure",
        accuracy=0,
        critical_safety_event=True,
        safety_event_description="Sent the payment link to the wrong contact.",
    )
    assert post(client, staff, [rerun(1), rerun(2), failure, discarded]).status_code == 201
    cell = the_cell()
    assert (cell.attempts, cell.eligible_runs, cell.ineligible_runs) == (4, 3, 1)
    assert (cell.successes, cell.accuracy) == (2, pytest.approx(2 / 3))
    # Latency over the two successes (300 s each), never the 900 s failure.
    assert (cell.p50_seconds, cell.p95_seconds) == (300.0, 300.0)
    assert cell.eligible_median_seconds == 300.0
    # Cost: the three eligible attempts' 0.035 each, charged to the two successes.
    assert float(cell.total_cost_usd) == pytest.approx(0.105)
    assert cell.cost_per_success_usd == pytest.approx(0.0525)
    # The ineligible attempt's safety event still blocks.
    assert cell.critical_safety_events == 1 and "critical-safety-event" in cell.blockers


def test_a_cell_is_as_strong_as_its_weakest_counted_attempt(client, operator, staff, world):
    """Seed: "Verification. Independent rerun only. Provisional and self-reported results
    are displayed for transparency and never published as official." """
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    assert the_cell().verification == "independent-rerun"
    own = rerun(3, verification="self-reported")
    assert post(client, operator, [own]).status_code == 201
    cell = the_cell()
    assert cell.verification == "self-reported" and "not-independent-rerun" in cell.blockers


@pytest.mark.parametrize("failing", FAILED_SUCCESSES, ids=FAILED_SUCCESS_IDS)
def test_a_recorded_success_that_something_fails_is_not_counted(client, staff, world, failing):
    """However a record reached the table, the gate counts as a confirmed success only an
    outcome with its proof and nothing that fails it (seed: "A duplicate created by a
    retry is a failure of the attempt"; "prohibited-state checks the run must not have
    violated")."""
    assert post(client, staff, [rerun(1)]).status_code == 201
    recorded = Attempt.objects.get()
    copy = Attempt(
        **{
            field.attname: getattr(recorded, field.attname)
            for field in Attempt._meta.concrete_fields
            if field.attname not in ("id", "recorded_at")
        }
    )
    copy.attempt_id = "acme-kr-copy"
    for name, value in failing.items():
        setattr(copy, name, value)
    copy.save()
    copy.evidence.create(
        evidence_id="ev-copy", evidence_type="post-action-readback", sha256="b" * 64
    )
    cell = cell_recompute(*cell_key())
    assert (cell.eligible_runs, cell.successes) == (2, 1)


def test_a_cell_of_ineligible_attempts_only_counts_nothing_and_is_blocked(client, staff, world):
    discarded = rerun(1, eligible=False, ineligible_reason="The replica was unreachable.")
    assert post(client, staff, [discarded]).status_code == 201
    cell = the_cell()
    assert (cell.eligible_runs, cell.successes, cell.accuracy) == (0, 0, None)
    assert cell.verification == "self-reported"  # nothing counted proves anything stronger
    assert "not-independent-rerun" in cell.blockers and not cell.eligible
