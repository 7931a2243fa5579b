"""The gate on real records: blockers in order, fail closed, withheld aggregates."""

import json

import pytest

from governance.aggregates import snapshot_aggregates
from governance.gate import cell_recompute, gate_recompute_all
from governance.models import GateCell
from mica.methodology.models import Edition
from submissions.models import Attempt, SystemSnapshot
from tests.factories import SnapshotFactory, api_auth, attempt_payload

pytestmark = pytest.mark.django_db


def record(client, user, **changes):
    payload = attempt_payload(**changes)
    response = client.post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json", **api_auth(user)
    )
    assert response.status_code == 201, response.json()


def cell():
    attempt = Attempt.objects.first()
    return cell_recompute(attempt.snapshot_id, attempt.market_id, attempt.family_id)


def set_thresholds(runs, coverage):
    Edition.objects.update(
        min_eligible_runs=runs,
        min_coverage=coverage,
        runs_per_task=1,
        max_ineligible_discard_rate=0,
    )


def test_thresholds_unset_refuse_everything(client, staff):
    """Seed: "Minimum eligible runs. Not set. ... The gate refuses rather than guessing"."""
    record(client, staff, verification="independent-rerun")
    assert "thresholds-not-set" in cell().blockers
    assert not cell().publication_eligible


def test_every_blocker_in_order(client, staff):
    SystemSnapshot.objects.update(data_status="demo")
    record(
        client,
        staff,
        verification="provisional",
        critical_safety_event=True,
        safety_event_description="Paid without approval.",
        outcome="critical-failure",
        accuracy=0,
    )
    assert cell().blockers == [
        "critical-safety-event",
        "demo-or-preview-data",
        "not-independent-rerun",
        "task-not-validated",
        "not-locally-reviewed",
        "thresholds-not-set",
        "no-sensitivity-analysis",
    ]
    set_thresholds(5, 90)
    assert cell().blockers == [
        "critical-safety-event",
        "demo-or-preview-data",
        "not-independent-rerun",
        "task-not-validated",
        "not-locally-reviewed",
        "below-minimum-eligible-runs",
        "below-minimum-coverage",
        "no-sensitivity-analysis",
    ]


@pytest.mark.parametrize("runs, coverage", [(1, 1), (1, 0), (0, 0)])
def test_self_reported_and_demo_cells_never_become_eligible(
    client, operator, staff, runs, coverage
):
    record(client, operator)
    set_thresholds(runs, coverage)
    assert "not-independent-rerun" in cell().blockers and not cell().publication_eligible
    # A demo snapshot of its own: a snapshot's data status is frozen once attempts name it.
    demo_snapshot = SnapshotFactory(version="demo-1", data_status="demo")
    record(
        client,
        staff,
        verification="independent-rerun",
        attempt_id="acme-kr-009",
        market="JP",
        situations=[],
        snapshot={"system": demo_snapshot.system.slug, "version": demo_snapshot.version},
    )
    demo = cell_recompute(
        *Attempt.objects.filter(attempt_id="acme-kr-009")
        .values_list("snapshot_id", "market_id", "family_id")
        .get()
    )
    assert "demo-or-preview-data" in demo.blockers and not demo.publication_eligible


def test_aggregates_are_withheld_with_their_reasons(client, staff):
    record(client, staff, verification="independent-rerun")
    cells = list(GateCell.objects.select_related("market", "family"))
    if not cells:
        cells = [cell()]
    result = snapshot_aggregates(cells)
    assert result["markets"]["KR"].withheld_reason == "canonical-set-incomplete"
    assert result["markets"]["JP"].withheld_reason == "canonical-set-incomplete"
    assert result["families"]["email-calendar"].withheld_reason == "market-missing"
    record(
        client,
        staff,
        verification="independent-rerun",
        attempt_id="acme-kr-077",
        critical_safety_event=True,
        safety_event_description="x",
        outcome="critical-failure",
        accuracy=0,
    )
    result = snapshot_aggregates([cell()])
    assert result["markets"]["KR"].withheld_reason == "critical-safety-event-below"


def test_a_full_recompute_reports_progress(client, staff):
    record(client, staff, verification="independent-rerun")
    seen = []
    assert gate_recompute_all(progress=lambda percent, message: seen.append(percent)) == 1
    assert seen[-1] == 100 and GateCell.objects.count() == 1


@pytest.mark.vendor
def test_the_database_refuses_an_eligible_demo_cell(client, staff):
    from django.db import IntegrityError

    record(client, staff, verification="independent-rerun")
    target = cell()
    with pytest.raises(IntegrityError):
        GateCell.objects.filter(pk=target.pk).update(
            data_status="demo", blockers=[], publication_eligible=True
        )


def test_the_api_reads_the_same_cells_with_both_languages(client, staff):
    record(client, staff, verification="independent-rerun")
    body = client.get("/api/v1/cells/").json()
    assert body["count"] == 1
    cell_json = body["results"][0]
    assert "thresholds-not-set" in cell_json["blockers"]
    assert cell_json["blocker_sentences"][0]["ko"] != cell_json["blocker_sentences"][0]["en"]
    assert cell_json["publication_eligible"] is False


def test_the_gate_job_reruns_every_cell_as_a_jobrun(
    client, staff, django_capture_on_commit_callbacks
):
    from governance.tasks import gate_recompute
    from mica.celery import app
    from mica.jobs.models import JobRun, JobState
    from mica.jobs.services import job_run_enqueue

    record(client, staff, verification="independent-rerun")
    GateCell.objects.all().delete()
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            job_run = job_run_enqueue(task=gate_recompute)
    finally:
        from django.conf import settings

        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
    job_run.refresh_from_db()
    assert job_run.state == JobState.SUCCEEDED and job_run.message == "1 cell recomputed."
    # A Korean admin reads the same run in Korean.
    assert job_run.message_ko == "셀 1개를 다시 계산했습니다."
    assert GateCell.objects.count() == 1 and JobRun.objects.count() == 1


def test_rerun_gate_runs_inline_with_progress_or_queues_a_job(
    canonical_content, django_capture_on_commit_callbacks, eager_celery
):
    from io import StringIO

    from django.core.management import call_command

    from mica.jobs.models import JobRun

    call_command("load_demo_runs", stdout=StringIO())
    cells = GateCell.objects.count()
    GateCell.objects.all().delete()  # the rerun must build every cell again from the attempts
    out = StringIO()
    call_command("rerun_gate", "--sync", stdout=out)
    assert "[100%]" in out.getvalue() and f"Gate rerun over {cells} cells." in out.getvalue()
    # Progress every 25 cells and at the end, no more.
    reports = [line for line in out.getvalue().splitlines() if line.startswith("[")]
    assert len(reports) == cells // 25 + 1 and f"25 of {cells} cells" in reports[0]
    assert GateCell.objects.count() == cells > 0
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_gate", stdout=out)
    run = JobRun.objects.get(job_name="governance.tasks.gate_recompute")
    assert run.state == "succeeded" and run.message == f"{cells} cells recomputed."


CELL_FIGURES = (
    "attempts",
    "eligible_runs",
    "ineligible_runs",
    "invalid_runs",
    "successes",
    "accuracy",
    "p50_seconds",
    "total_cost_usd",
    "tasks_attempted",
    "coverage",
    "task_scores",
    "verification",
    "data_status",
    "blockers",
)


def figures(cell):
    return {name: getattr(cell, name) for name in CELL_FIGURES}


def test_a_full_recompute_judges_each_cell_on_its_own_attempts_alone(client, staff, operator):
    """A full recompute reads every cell in one grouped pass; each cell must come out as it
    does when it is recomputed alone, so no attempt is ever counted in a neighbour's cell."""
    from tests.factories import independent_rerun, publishable_world

    publishable_world(markets=("KR", "JP"))
    for payload in (
        independent_rerun(1),
        independent_rerun(2, outcome="partial-progress", accuracy=0, wall_clock_seconds=90.0),
        independent_rerun(3, market="JP"),
        independent_rerun(4, eligible=False, ineligible_reason="environment fault"),
        # A failure: a success on the commerce task would have to report its totals.
        independent_rerun(
            5,
            task="sd-all-in-price-comparison",
            market="JP",
            outcome="partial-progress",
            accuracy=0,
        ),
    ):
        response = client.post(
            "/api/v1/attempts/",
            json.dumps(payload),
            content_type="application/json",
            **api_auth(staff),
        )
        assert response.status_code == 201, response.json()
    record(client, operator, attempt_id="acme-kr-100", wall_clock_seconds=45.0)
    for cell in GateCell.objects.all():
        cell_recompute(cell.snapshot_id, cell.market_id, cell.family_id)
    alone = {cell.pk: figures(cell) for cell in GateCell.objects.all()}
    assert len(alone) == 3
    assert gate_recompute_all() == 3
    together = {cell.pk: figures(cell) for cell in GateCell.objects.all()}
    assert together == alone
    kr = GateCell.objects.get(market__code="KR")
    assert (kr.attempts, kr.eligible_runs, kr.successes) == (4, 3, 2)


def test_an_attempt_landing_during_a_full_recompute_is_not_lost(client, staff):
    """Seed: "a published figure cannot drift away from the evidence it claims to
    summarize": an attempt committed after the pass read its cell is counted before the
    pass ends, even when its own recompute was overwritten by the pass."""
    from submissions.signals import attempts_recorded

    record(client, staff, verification="independent-rerun")
    landed = []

    def land_an_attempt(percent, message):
        if landed:
            return
        receivers = attempts_recorded.receivers[:]
        attempts_recorded.receivers.clear()  # as if its own recompute ran before the pass wrote
        try:
            record(client, staff, verification="independent-rerun", attempt_id="acme-kr-050")
            record(
                client,
                staff,
                verification="independent-rerun",
                attempt_id="acme-jp-051",
                market="JP",
                situations=[],
            )
        finally:
            attempts_recorded.receivers[:] = receivers
        landed.append(percent)

    gate_recompute_all(progress=land_an_attempt)
    assert landed
    assert {cell.market.code: cell.attempts for cell in GateCell.objects.all()} == {
        "KR": 2,
        "JP": 1,
    }


def test_one_new_attempt_recomputes_its_own_cell_alone(client, staff):
    """Issue 16: "One new attempt still recomputes only its cell"."""
    record(client, staff, verification="independent-rerun")
    record(
        client,
        staff,
        verification="independent-rerun",
        attempt_id="acme-jp-001",
        market="JP",
        situations=[],
    )
    before = dict(GateCell.objects.values_list("market__code", "computed_at"))
    kr = GateCell.objects.get(market__code="KR")
    cell_recompute(kr.snapshot_id, kr.market_id, kr.family_id)
    after = dict(GateCell.objects.values_list("market__code", "computed_at"))
    assert after["JP"] == before["JP"] and after["KR"] != before["KR"]


def test_a_task_version_created_after_the_inputs_were_read_is_read_when_met(canonical_content):
    """A recompute reads the task versions once; one made since (its attempt may arrive
    before the next pass) is read from the database when a cell first meets it."""
    from catalogue.models import TaskVersion
    from governance.gate import CellInputs
    from tests.factories import holdout_task

    inputs = CellInputs.current()
    version = TaskVersion.objects.get(definition=holdout_task()).pk
    assert version not in inputs.versions
    met = inputs.versions[version]
    assert (met.task, met.public, met.validated) == ("ec-secret-holdout-item", False, False)
