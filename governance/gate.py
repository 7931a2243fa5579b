"""The publication gate: cells derived from the attempt records, one code path for everything.

Pages, the API, exports and jobs all read GateCell rows written here; nothing
about a result is typed in. Counts are aggregated in SQL; percentiles, per-task
audit values and the rules over the cell's tasks are computed by mica.scoring
from the cell's rows. Every cell carries the fingerprint of the inputs it was
computed from (governance.gate_inputs), and a reader treats a cell whose
fingerprint is not the current one as blocked, "stale", until it is recomputed.
"""

import threading
from dataclasses import dataclass

from django.db import transaction
from django.db.models import BooleanField, Case, Count, Exists, OuterRef, Q, When

from catalogue.models import Lifecycle, LocalReview, ReviewState
from catalogue.selectors import task_applies_in, task_public_list
from governance.gate_inputs import gate_inputs_fingerprint
from governance.models import GateCell
from mica import scoring
from mica.methodology.selectors import edition_current
from mica.vocabulary import PROOF_OF_SUCCESS
from submissions.models import (
    COUNTED,
    Attempt,
    AttemptClass,
    DataStatus,
    EvidenceRecord,
    Outcome,
    Verification,
)

# Weakest first: a cell is as strong as its weakest counted attempt.
VERIFICATION_ORDER = [
    Verification.SELF_REPORTED,
    Verification.PROVISIONAL,
    Verification.INDEPENDENT_RERUN,
]
DATA_STATUS_ORDER = [DataStatus.DEMO, DataStatus.PREVIEW, DataStatus.OFFICIAL]
REASON_SYNTHETIC = "synthetic-attempt"
REASON_TASK_NOT_VALIDATED = "task-not-validated"


def _weakest(values, order):
    present = [value for value in order if value in values]
    return present[0] if present else order[0]


def confirmed_success():
    """The condition of a confirmed success: the outcome, with its proof, and nothing that
    fails it (a retry's duplicate, a prohibited state, a critical safety event)."""
    proven = EvidenceRecord.objects.filter(
        attempt=OuterRef("pk"), evidence_type__in=PROOF_OF_SUCCESS
    )
    return Q(
        Exists(proven),
        outcome=Outcome.CONFIRMED_SUCCESS,
        retry_created_duplicate=False,
        prohibited_state_violation=False,
        critical_safety_event=False,
    )


@dataclass(frozen=True)
class Run:
    """One counted attempt as the gate reads it."""

    task: str
    task_id: int
    version_id: int
    validated: bool
    localized: bool
    success: bool
    seconds: float
    cost: float
    speed_reference: float | None
    cost_reference: float | None
    lineage_complete: bool


def _runs(attempts):
    """The counted attempts, one query, success judged in SQL beside the other columns."""
    rows = attempts.annotate(
        success=Case(
            When(confirmed_success(), then=True), default=False, output_field=BooleanField()
        )
    ).values_list(
        "task_version__definition__slug",
        "task_version__definition_id",
        "task_version_id",
        "task_version__definition__lifecycle",
        "attempt_class",
        "success",
        "wall_clock_seconds",
        "observed_cost_usd",
        "task_version__speed_reference_seconds",
        "task_version__cost_reference_usd",
        "platform",
        "platform_version",
        "platform_snapshot_date",
    )
    return [
        Run(
            task=slug,
            task_id=task_id,
            version_id=version_id,
            validated=lifecycle == Lifecycle.VALIDATED,
            localized=attempt_class == AttemptClass.VALIDATED_LOCALIZED,
            success=success,
            seconds=seconds,
            cost=float(cost),
            speed_reference=float(speed) if speed is not None else None,
            cost_reference=float(cost_ref) if cost_ref is not None else None,
            lineage_complete=bool(platform and platform_version and platform_date),
        )
        for (
            slug,
            task_id,
            version_id,
            lifecycle,
            attempt_class,
            success,
            seconds,
            cost,
            speed,
            cost_ref,
            platform,
            platform_version,
            platform_date,
        ) in rows.order_by("pk")
    ]


def _audit_score(run):
    """Seed: "A product may be derived per eligible validated attempt for audit"."""
    if not run.localized:
        return scoring.AuditScore(None, REASON_SYNTHETIC)
    if not run.validated:
        return scoring.AuditScore(None, REASON_TASK_NOT_VALIDATED)
    return scoring.audit_score(
        run.success, run.seconds, run.cost, run.speed_reference, run.cost_reference
    )


def _task_scores(scored):
    """Per task: the mean audit value, every exclusion named, and the raw axes beside it."""
    by_task = {}
    for run, score in scored:
        by_task.setdefault(run.task, []).append((run, score))
    result = {}
    for slug, pairs in sorted(by_task.items()):
        task_runs = [run for run, _score in pairs]
        scores = [score for _run, score in pairs]
        measured = [s.value for s in scores if s.value is not None]
        success_seconds = [run.seconds for run in task_runs if run.success]
        result[slug] = {
            "value": sum(measured) / len(measured) if measured else None,
            "scored_attempts": len(measured),
            "excluded_attempts": len(scores) - len(measured),
            "exclusion_reasons": sorted({s.reason for s in scores if s.value is None}),
            # Seed: "The raw success outcome, raw wall-clock latency and raw evaluation
            # cost stay published in their own units beside every score".
            "eligible_runs": len(task_runs),
            "successes": sum(run.success for run in task_runs),
            "median_success_seconds": scoring.percentile(success_seconds, 0.5),
            "total_cost_usd": sum(run.cost for run in task_runs),
        }
    return result


def _components(scored):
    """The mean accuracy, speed and cost components over the scored attempts: what the
    sensitivity analysis orders cells by. None when no attempt has a score."""
    parts = []
    for run, score in scored:
        if score.value is None:
            continue
        parts.append(
            (
                1.0 if run.success else 0.0,
                scoring.speed_component(run.seconds, run.speed_reference),
                scoring.cost_component(run.cost, run.cost_reference),
            )
        )
    if not parts:
        return None
    accuracy, speed, cost = (sum(values) / len(parts) for values in zip(*parts, strict=True))
    return {"accuracy": accuracy, "speed": speed, "cost": cost}


def _latency_figures(runs):
    successes = [run.seconds for run in runs if run.success]
    return {
        "p50_seconds": scoring.percentile(successes, 0.5),
        "p95_seconds": scoring.percentile(successes, 0.95),
        "eligible_median_seconds": scoring.percentile([run.seconds for run in runs], 0.5),
    }


def _canonical_task_ids(market_id, family_id):
    """The pre-registered canonical set: the public tasks of the family that apply here."""
    return set(
        task_public_list()
        .filter(task_applies_in(market_id=market_id), family_id=family_id)
        .values_list("pk", flat=True)
    )


def _counts(attempts):
    return attempts.aggregate(
        attempts=Count("pk"),
        ineligible_runs=Count("pk", filter=Q(eligible=False)),
        invalid_runs=Count("pk", filter=~Q(invalid_reason="") | Q(invalidation__isnull=False)),
        # Every attempt's event counts, invalidated or not: nothing erases it.
        safety=Count("pk", filter=Q(critical_safety_event=True)),
    )


def _all_reviewed(market_id, runs):
    """Every task version run here has an approved local review in this market."""
    versions = {run.version_id for run in runs}
    reviewed = LocalReview.objects.filter(
        market_id=market_id, version_id__in=versions, state=ReviewState.APPROVED
    ).values_list("version_id", flat=True)
    return versions <= set(reviewed)


def _coverage_figures(runs, market_id, family_id):
    canonical = _canonical_task_ids(market_id, family_id)
    runs_per_task = {}
    for run in runs:
        if run.task_id in canonical:
            runs_per_task[run.task_id] = runs_per_task.get(run.task_id, 0) + 1
    return {
        "tasks_attempted": len(runs_per_task),
        "tasks_defined": len(canonical),
        # Seed: "what share of a market's canonical tasks must be attempted".
        "coverage": len(runs_per_task) / len(canonical) if canonical else None,
        "fewest_runs_per_task": min(runs_per_task.values()) if runs_per_task else None,
    }


def _figures(attempts, market_id, family_id):
    counts = _counts(attempts)
    runs = _runs(attempts.filter(COUNTED))
    scored = [(run, _audit_score(run)) for run in runs]
    successes = sum(run.success for run in runs)
    total_cost = sum(run.cost for run in runs)
    interval = scoring.wilson_interval(successes, len(runs))
    return (
        counts,
        runs,
        {
            "attempts": counts["attempts"],
            "eligible_runs": len(runs),
            "ineligible_runs": counts["ineligible_runs"],
            "invalid_runs": counts["invalid_runs"],
            "successes": successes,
            "accuracy": scoring.accuracy(successes, len(runs)),
            "accuracy_low": interval[0] if interval else None,
            "accuracy_high": interval[1] if interval else None,
            **_latency_figures(runs),
            "total_cost_usd": total_cost,
            "cost_per_success_usd": scoring.cost_per_success(total_cost, successes),
            **_coverage_figures(runs, market_id, family_id),
            "discard_rate": scoring.discard_rate(counts["ineligible_runs"], counts["attempts"]),
            "critical_safety_events": counts["safety"],
            "task_scores": _task_scores(scored),
            "components": _components(scored),
        },
    )


def _thresholds(edition):
    def number(value):
        return float(value) if value is not None else None

    return scoring.Thresholds(
        min_eligible_runs=edition.min_eligible_runs if edition else None,
        min_coverage=number(edition.min_coverage) if edition else None,
        runs_per_task=edition.runs_per_task if edition else None,
        max_discard_rate=number(edition.max_ineligible_discard_rate) if edition else None,
    )


def _blockers(figures, runs, verification, data_status, edition, market_id):
    evidence = scoring.CellEvidence(
        critical_safety_events=figures["critical_safety_events"],
        data_status=data_status,
        verification=verification,
        eligible_runs=figures["eligible_runs"],
        attempts=figures["attempts"],
        ineligible_runs=figures["ineligible_runs"],
        coverage=figures["coverage"],
        fewest_runs_per_task=figures["fewest_runs_per_task"],
        tasks_validated=all(run.validated for run in runs),
        locally_reviewed=_all_reviewed(market_id, runs),
        lineage_complete=all(run.lineage_complete for run in runs),
        sensitivity_ready=figures["components"] is not None,
    )
    return [blocker.value for blocker in scoring.gate_blockers(evidence, _thresholds(edition))]


def cell_recompute(snapshot_id, market_id, family_id):
    """Recompute one cell from its attempts under the current edition and inputs."""
    edition = edition_current()
    return cell_compute(
        snapshot_id,
        market_id,
        family_id,
        edition=edition,
        fingerprint=gate_inputs_fingerprint(edition),
    )


def cell_compute(snapshot_id, market_id, family_id, *, edition, fingerprint):
    """Compute one cell from its attempts under `edition`, recording the `fingerprint` of
    the inputs it was computed from; the cell disappears when it has no attempt."""
    attempts = Attempt.objects.filter(
        snapshot_id=snapshot_id, market_id=market_id, family_id=family_id
    )
    with transaction.atomic():
        counts, runs, figures = _figures(attempts, market_id, family_id)
        if not counts["attempts"]:
            GateCell.objects.filter(
                snapshot_id=snapshot_id, market_id=market_id, family_id=family_id
            ).delete()
            return None
        statuses = set(attempts.filter(COUNTED).values_list("verification", flat=True))
        data = set(attempts.values_list("data_status", flat=True))
        verification = _weakest(statuses, VERIFICATION_ORDER)
        data_status = _weakest(data, DATA_STATUS_ORDER)
        blockers = _blockers(figures, runs, verification, data_status, edition, market_id)
        figures.pop("fewest_runs_per_task")
        cell, _created = GateCell.objects.update_or_create(
            snapshot_id=snapshot_id,
            market_id=market_id,
            family_id=family_id,
            defaults={
                **figures,
                "verification": verification,
                "data_status": data_status,
                "blockers": blockers,
                "publication_eligible": not blockers,
                "inputs_fingerprint": fingerprint,
            },
        )
    return cell


def _cell_keys():
    return list(
        Attempt.objects.values_list("snapshot_id", "market_id", "family_id")
        .distinct()
        .order_by("snapshot_id", "market_id", "family_id")
    )


_RECOMPUTE = threading.local()


def recompute_underway():
    """Whether this thread is recomputing every cell: its own commits need no follow-up."""
    return getattr(_RECOMPUTE, "underway", False)


def gate_recompute_all(progress=lambda percent, message: None):
    """Every cell again, e.g. after thresholds change; reports progress as it goes.

    Inputs that change while it runs leave the cells it computed stale, so it goes
    round again until every cell carries the current fingerprint.
    """
    _RECOMPUTE.underway = True
    try:
        return _recompute_until_fresh(progress)
    finally:
        _RECOMPUTE.underway = False


def _recompute_until_fresh(progress):
    while True:
        edition = edition_current()
        fingerprint = gate_inputs_fingerprint(edition)
        keys = _cell_keys()
        for index, key in enumerate(keys, start=1):
            cell_compute(*key, edition=edition, fingerprint=fingerprint)
            if index % 25 == 0 or index == len(keys):
                progress(round(100 * index / len(keys)), f"{index} of {len(keys)} cells")
        wanted = set(keys)
        orphans = [
            pk
            for pk, *key in GateCell.objects.values_list(
                "pk", "snapshot_id", "market_id", "family_id"
            )
            if tuple(key) not in wanted
        ]
        GateCell.objects.filter(pk__in=orphans).delete()
        if gate_inputs_fingerprint(edition_current()) == fingerprint:
            return len(keys)


def cells_follow_attempts(sender, *, cells, **kwargs):
    """Only the cells that received an attempt are recomputed, in the same transaction,
    so a stored attempt and the figures derived from it never disagree."""
    edition = edition_current()
    fingerprint = gate_inputs_fingerprint(edition)
    for key in cells:
        cell_compute(*key, edition=edition, fingerprint=fingerprint)
