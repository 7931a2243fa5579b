"""The publication gate: cells derived from the attempt records, one code path for everything.

Pages, the API, exports and jobs all read GateCell rows written here; nothing
about a result is typed in. Counts and sums are aggregated in SQL; percentiles
and per-task audit values are computed by mica.scoring from the cell's rows.
"""

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from catalogue.selectors import task_applies_in, task_public_list
from governance.models import GateCell
from mica import scoring
from mica.methodology.selectors import edition_current
from submissions.models import Attempt, DataStatus, Outcome, Verification

VALID_ELIGIBLE = Q(eligible=True, invalid_reason="")
SUCCESS = Q(outcome=Outcome.CONFIRMED_SUCCESS)
# Weakest first: a cell is as strong as its weakest eligible attempt.
VERIFICATION_ORDER = [
    Verification.SELF_REPORTED,
    Verification.PROVISIONAL,
    Verification.INDEPENDENT_RERUN,
]
DATA_STATUS_ORDER = [DataStatus.DEMO, DataStatus.PREVIEW, DataStatus.OFFICIAL]


def _weakest(values, order):
    present = [value for value in order if value in values]
    return present[0] if present else order[0]


def _counts(attempts):
    return attempts.aggregate(
        attempts=Count("pk"),
        eligible_runs=Count("pk", filter=VALID_ELIGIBLE),
        ineligible_runs=Count("pk", filter=Q(eligible=False)),
        invalid_runs=Count("pk", filter=~Q(invalid_reason="")),
        successes=Count("pk", filter=VALID_ELIGIBLE & SUCCESS),
        total_cost=Coalesce(
            Sum("observed_cost_usd", filter=VALID_ELIGIBLE),
            0,
            output_field=Attempt._meta.get_field("observed_cost_usd"),
        ),
        safety=Count("pk", filter=Q(critical_safety_event=True)),
        tasks_attempted=Count("task_version__definition", filter=VALID_ELIGIBLE, distinct=True),
    )


def _task_scores(rows):
    """Per task: the mean audit value of its eligible attempts, with every exclusion named."""
    by_task = {}
    for slug, outcome, seconds, cost, speed_ref, cost_ref in rows:
        score = scoring.audit_score(
            outcome == Outcome.CONFIRMED_SUCCESS,
            seconds,
            float(cost),
            float(speed_ref) if speed_ref is not None else None,
            float(cost_ref) if cost_ref is not None else None,
        )
        by_task.setdefault(slug, []).append(score)
    result = {}
    for slug, scores in sorted(by_task.items()):
        measured = [s.value for s in scores if s.value is not None]
        reasons = sorted({s.reason for s in scores if s.value is None})
        result[slug] = {
            "value": sum(measured) / len(measured) if measured else None,
            "scored_attempts": len(measured),
            "excluded_attempts": len(scores) - len(measured),
            "exclusion_reasons": reasons,
        }
    return result


def _latency_figures(rows):
    successes = [
        seconds for _slug, outcome, seconds, *_rest in rows if outcome == Outcome.CONFIRMED_SUCCESS
    ]
    everything = [seconds for _slug, _outcome, seconds, *_rest in rows]
    return {
        "p50_seconds": scoring.percentile(successes, 0.5),
        "p95_seconds": scoring.percentile(successes, 0.95),
        "eligible_median_seconds": scoring.percentile(everything, 0.5),
    }


def _tasks_defined(market_id, family_id):
    return (
        task_public_list()
        .filter(task_applies_in(market_id=market_id), family_id=family_id)
        .distinct()
        .count()
    )


def _figures(attempts, market_id, family_id):
    counts = _counts(attempts)
    rows = list(
        attempts.filter(VALID_ELIGIBLE).values_list(
            "task_version__definition__slug",
            "outcome",
            "wall_clock_seconds",
            "observed_cost_usd",
            "task_version__speed_reference_seconds",
            "task_version__cost_reference_usd",
        )
    )
    defined = _tasks_defined(market_id, family_id)
    interval = scoring.wilson_interval(counts["successes"], counts["eligible_runs"])
    return counts, {
        "attempts": counts["attempts"],
        "eligible_runs": counts["eligible_runs"],
        "ineligible_runs": counts["ineligible_runs"],
        "invalid_runs": counts["invalid_runs"],
        "successes": counts["successes"],
        "accuracy": scoring.accuracy(counts["successes"], counts["eligible_runs"]),
        "accuracy_low": interval[0] if interval else None,
        "accuracy_high": interval[1] if interval else None,
        **_latency_figures(rows),
        "total_cost_usd": counts["total_cost"],
        "cost_per_success_usd": scoring.cost_per_success(
            float(counts["total_cost"]), counts["successes"]
        ),
        "tasks_attempted": counts["tasks_attempted"],
        "tasks_defined": defined,
        # Holdout tasks are run but not counted in "defined"; coverage never exceeds 1.
        "coverage": min(1.0, counts["tasks_attempted"] / defined) if defined else None,
        "critical_safety_events": counts["safety"],
        "task_scores": _task_scores(rows),
    }


def _blockers(figures, verification, data_status, edition):
    return [
        blocker.value
        for blocker in scoring.gate_blockers(
            critical_safety_events=figures["critical_safety_events"],
            data_status=data_status,
            verification=verification,
            min_eligible_runs=edition.min_eligible_runs if edition else None,
            min_coverage=float(edition.min_coverage)
            if edition and edition.min_coverage is not None
            else None,
            eligible_runs=figures["eligible_runs"],
            coverage=figures["coverage"],
        )
    ]


def cell_recompute(snapshot_id, market_id, family_id, *, edition=None):
    """Recompute one cell from its attempts; the cell disappears when it has none."""
    edition = edition or edition_current()
    attempts = Attempt.objects.filter(
        snapshot_id=snapshot_id, market_id=market_id, family_id=family_id
    )
    with transaction.atomic():
        counts, figures = _figures(attempts, market_id, family_id)
        if not counts["attempts"]:
            GateCell.objects.filter(
                snapshot_id=snapshot_id, market_id=market_id, family_id=family_id
            ).delete()
            return None
        statuses = set(attempts.filter(VALID_ELIGIBLE).values_list("verification", flat=True))
        data = set(attempts.values_list("data_status", flat=True))
        verification = _weakest(statuses, VERIFICATION_ORDER)
        data_status = _weakest(data, DATA_STATUS_ORDER)
        blockers = _blockers(figures, verification, data_status, edition)
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
            },
        )
    return cell


def gate_recompute_all(progress=lambda percent, message: None):
    """Every cell again, e.g. after thresholds change; reports progress as it goes."""
    edition = edition_current()
    keys = list(
        Attempt.objects.values_list("snapshot_id", "market_id", "family_id")
        .distinct()
        .order_by("snapshot_id", "market_id", "family_id")
    )
    for index, key in enumerate(keys, start=1):
        cell_recompute(*key, edition=edition)
        if index % 25 == 0 or index == len(keys):
            progress(round(100 * index / len(keys)), f"{index} of {len(keys)} cells")
    wanted = set(keys)
    stale = [
        cell.pk
        for cell in GateCell.objects.only("snapshot_id", "market_id", "family_id")
        if (cell.snapshot_id, cell.market_id, cell.family_id) not in wanted
    ]
    GateCell.objects.filter(pk__in=stale).delete()
    return len(keys)


def cells_follow_attempts(sender, *, cells, **kwargs):
    """Only the cells that received an attempt are recomputed, in the same transaction,
    so a stored attempt and the figures derived from it never disagree."""
    for key in cells:
        cell_recompute(*key)
