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
from itertools import groupby
from math import fsum
from operator import itemgetter
from typing import NamedTuple

from django.db import transaction
from django.db.models import BooleanField, Case, Count, Exists, FloatField, OuterRef, Q, When
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy as _

from catalogue.models import (
    APPLYING,
    Lifecycle,
    LocalReview,
    ReviewState,
    TaskSet,
    TaskVersion,
    handoff_is_completion,
    idempotency_declared,
)
from catalogue.selectors import task_public_list
from governance.aggregates import (
    cell_reliability,
    commerce_proximity,
    memory_record,
    repeats_k_max,
    task_reliability,
)
from governance.gate_inputs import gate_inputs_fingerprint
from governance.models import GateCell
from markets.models import RepresentativePlatform
from mica import scoring
from mica.methodology.selectors import edition_current
from mica.text import lazy_format
from mica.vocabulary import PROOF_OF_FINAL_STATE, EvidenceType
from submissions.models import (
    COUNTED,
    FALLBACK_JUSTIFIED,
    INVALIDATED,
    Attempt,
    AttemptClass,
    AttemptInvalidation,
    DataStatus,
    EvidenceRecord,
    InvalidationReversal,
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
CELL = ("snapshot_id", "market_id", "family_id")


def _weakest(values, order):
    present = [value for value in order if value in values]
    return present[0] if present else order[0]


def confirmed_success():
    """The condition of a confirmed success: the outcome, with its proof, complete as the
    task's contract says, and nothing that fails it (a retry's duplicate, a prohibited
    state, a critical safety event)."""
    return Q(
        _proven(),
        _idempotency_guarded(),
        outcome=Outcome.CONFIRMED_SUCCESS,
        retry_created_duplicate=False,
        prohibited_state_violation=False,
        critical_safety_event=False,
    )


def _evidence(*kinds):
    return Exists(EvidenceRecord.objects.filter(attempt=OuterRef("pk"), evidence_type__in=kinds))


def _contract(declares):
    return Exists(TaskVersion.objects.filter(declares, pk=OuterRef("task_version_id")))


def _proven():
    """Seed: "an authoritative receipt, a post-action readback, or a handoff record"; the
    handoff only "when the task contract declares that boundary as the completion point"."""
    return _evidence(*PROOF_OF_FINAL_STATE) | (
        _evidence(EvidenceType.HANDOFF_CHECKPOINT) & _contract(handoff_is_completion())
    )


def _idempotency_guarded():
    """Seed: "Where a repeat could create a second order ... the task contract requires an
    idempotency record"."""
    return ~_contract(idempotency_declared()) | _evidence(EvidenceType.RETRY_IDEMPOTENCY_RECORD)


# Seed: "Every published run cell names the platform actually used, its version and
# snapshot date, the selection evidence": a run before pre-registration was checked has
# no registered platform, and its cell stays blocked.
LINEAGE_COMPLETE = (
    ~Q(platform="")
    & ~Q(platform_version="")
    & Q(platform_snapshot_date__isnull=False)
    & Q(representative_platform__isnull=False)
)


class Version(NamedTuple):
    """What the gate reads of a task version: its task, whether the task is validated, and
    the references its audit values are taken against."""

    task: str
    task_id: int
    public: bool
    validated: bool
    speed_reference: float | None
    cost_reference: float | None


class Versions(dict):
    """Every task version by id, read in one query; a version created since is read when
    first met (its change of the inputs makes the recompute go round again anyway)."""

    COLUMNS = (
        "pk",
        "definition__slug",
        "definition_id",
        "definition__task_set",
        "definition__lifecycle",
        "speed_reference_seconds",
        "cost_reference_usd",
    )

    @classmethod
    def read(cls, **filters):
        versions = cls()
        for pk, slug, task_id, task_set, lifecycle, speed, cost in TaskVersion.objects.filter(
            **filters
        ).values_list(*cls.COLUMNS):
            versions[pk] = Version(
                task=slug,
                task_id=task_id,
                public=task_set == TaskSet.PUBLIC,
                validated=lifecycle == Lifecycle.VALIDATED,
                speed_reference=float(speed) if speed is not None else None,
                cost_reference=float(cost) if cost is not None else None,
            )
        return versions

    def __missing__(self, pk):
        self.update(Versions.read(pk=pk))
        return self[pk]


class Run(NamedTuple):
    """One counted attempt as the gate reads it (a tuple: a full recompute builds a million)."""

    version_id: int
    version: Version
    localized: bool
    success: bool
    seconds: float
    cost: float
    lineage_complete: bool
    memory_exercised: bool | None
    chosen_total: float | None  # a commerce attempt's all-in total, and its reference
    reference_total: float | None
    currency: str


def _flagged(condition):
    return Case(When(condition, then=True), default=False, output_field=BooleanField())


def _cell_runs(attempts, versions):
    """Each cell's counted attempts, streamed in one query ordered by cell, success and
    lineage judged in SQL beside the other columns: (cell key, [Run, …]) per cell."""
    rows = (
        attempts.filter(COUNTED)
        .annotate(
            localized=_flagged(Q(attempt_class=AttemptClass.VALIDATED_LOCALIZED)),
            success=_flagged(confirmed_success()),
            cost=Cast("observed_cost_usd", FloatField()),
            lineage_complete=_flagged(LINEAGE_COMPLETE),
            chosen=Cast("chosen_total", FloatField()),
            reference=Cast("reference_total", FloatField()),
        )
        .order_by(*CELL, "pk")
        .values_list(
            *CELL,
            "task_version_id",
            "localized",
            "success",
            "wall_clock_seconds",
            "cost",
            "lineage_complete",
            "memory_exercised",
            "chosen",
            "reference",
            "commerce_currency",
        )
        .iterator(chunk_size=20_000)
    )
    for key, group in groupby(rows, key=itemgetter(0, 1, 2)):
        yield (
            key,
            [
                Run(version_id, versions[version_id], *flags)
                for _s, _m, _f, version_id, *flags in group
            ],
        )


SYNTHETIC = scoring.AuditScore(None, "synthetic-attempt")
NOT_VALIDATED = scoring.AuditScore(None, "task-not-validated")


def _audit_score(run):
    """Seed: "A product may be derived per eligible validated attempt for audit"."""
    if not run.localized:
        return SYNTHETIC
    version = run.version
    if not version.validated:
        return NOT_VALIDATED
    return scoring.audit_score(
        run.success, run.seconds, run.cost, version.speed_reference, version.cost_reference
    )


def _task_scores(scored, k_max):
    """Per public task: the mean audit value, every exclusion named, and the raw axes beside
    it. A holdout task's attempts count in the cell's figures and are never named (seed: "A
    holdout item is never reachable from a public artifact")."""
    by_task = {}
    for pair in scored:
        version = pair[0].version
        if version.public:
            by_task.setdefault(version.task, []).append(pair)
    return {slug: _task_score(pairs, k_max) for slug, pairs in sorted(by_task.items())}


def _task_score(pairs, k_max):
    measured = [score.value for _run, score in pairs if score.value is not None]
    successes = sum(run.success for run, _score in pairs)
    return {
        "value": fsum(measured) / len(measured) if measured else None,
        "scored_attempts": len(measured),
        "excluded_attempts": len(pairs) - len(measured),
        "exclusion_reasons": sorted({score.reason for _run, score in pairs if score.value is None}),
        # Seed: "The raw success outcome, raw wall-clock latency and raw evaluation
        # cost stay published in their own units beside every score".
        "eligible_runs": len(pairs),
        "successes": successes,
        **task_reliability(len(pairs), successes, k_max),
        # Seed: "Commerce results report proximity to the lowest valid total", apart from
        # the score, over the confirmed successes: a failed attempt's total is not a
        # result, and a cheaper offer that was not valid is one way to fail. None for a
        # task whose successes recorded no total.
        "commerce": commerce_proximity(
            [
                (run.chosen_total, run.reference_total, run.currency)
                for run, _score in pairs
                if run.success
            ]
        ),
        "median_success_seconds": scoring.percentile(
            [run.seconds for run, _score in pairs if run.success], 0.5
        ),
        "total_cost_usd": fsum(run.cost for run, _score in pairs),
    }


def _components(scored):
    """Per public task, the raw axes of each attempt that has an audit value, with the
    references it was scored against: [accuracy, seconds, USD, speed reference, cost
    reference]. What the sensitivity analysis renormalizes and re-aggregates, and what lets
    anyone redo it (seed: "task-level results are published so the analysis can be redone
    independently"). None when no public attempt has a score."""
    by_task = {}
    for run, score in scored:
        if score.value is not None and run.version.public:
            by_task.setdefault(run.version.task, []).append(
                [
                    1.0 if run.success else 0.0,
                    run.seconds,
                    run.cost,
                    run.version.speed_reference,
                    run.version.cost_reference,
                ]
            )
    return dict(sorted(by_task.items())) or None


def _sensitivity_ready(scored):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy". Every counted attempt that could carry an audit value (a localized
    attempt on a validated task) must carry one, so the analysis covers every attempt the
    figures count; a synthetic attempt never can, and a candidate task blocks on its own."""
    could = [score for _run, score in scored if score not in (SYNTHETIC, NOT_VALIDATED)]
    return bool(could) and all(score.value is not None for score in could)


def _latency_figures(runs):
    successes = [run.seconds for run in runs if run.success]
    return {
        "p50_seconds": scoring.percentile(successes, 0.5),
        "p95_seconds": scoring.percentile(successes, 0.95),
        "eligible_median_seconds": scoring.percentile([run.seconds for run in runs], 0.5),
    }


@dataclass(frozen=True)
class CellInputs:
    """What every cell is judged against besides its own attempts, read once per recompute."""

    edition: object
    fingerprint: str
    canonical: dict  # (market_id, family_id) -> the pre-registered canonical task ids
    reviewed: frozenset  # (market_id, version_id) with an approved local review
    versions: Versions

    @classmethod
    def current(cls):
        edition = edition_current()
        return cls(
            edition=edition,
            fingerprint=gate_inputs_fingerprint(edition),
            canonical=_canonical_task_ids(),
            reviewed=frozenset(
                LocalReview.objects.filter(state=ReviewState.APPROVED).values_list(
                    "market_id", "version_id"
                )
            ),
            versions=Versions.read(),
        )


def _canonical_task_ids():
    """The pre-registered canonical sets: per market and family, the public tasks that
    apply there (one query)."""
    canonical = {}
    rows = (
        task_public_list()
        .filter(current_version__applicability__status__in=APPLYING)
        .values_list("current_version__applicability__market_id", "family_id", "pk")
        .order_by()
    )
    for market_id, family_id, task_id in rows:
        canonical.setdefault((market_id, family_id), set()).add(task_id)
    return canonical


def _flag(value):
    return "with_" + value.replace("-", "_")


def _cell_counts(attempts):
    """Per cell, in one GROUP BY: the attempts, those the gate drops and why, the safety
    events, and which verification classes (counted) and data statuses (any) occur."""
    rows = (
        attempts.values(*CELL)
        .annotate(
            attempts=Count("pk"),
            ineligible_runs=Count("pk", filter=Q(eligible=False)),
            # Kept and never counted: an undeclared model or tool, an invalidation, or a
            # fallback without an accepted outage record.
            invalid_runs=Count(
                "pk", filter=~Q(invalid_reason="") | INVALIDATED | ~FALLBACK_JUSTIFIED
            ),
            # Every attempt's event counts, invalidated or not: nothing erases it.
            safety=Count("pk", filter=Q(critical_safety_event=True)),
            **{
                _flag(v): Count("pk", filter=COUNTED & Q(verification=v))
                for v in VERIFICATION_ORDER
            },
            **{_flag(d): Count("pk", filter=Q(data_status=d)) for d in DATA_STATUS_ORDER},
        )
        .order_by()
    )
    return {tuple(row[field] for field in CELL): row for row in rows}


def _coverage_figures(runs, canonical):
    runs_per_task = {}
    for run in runs:
        task_id = run.version.task_id
        if task_id in canonical:
            runs_per_task[task_id] = runs_per_task.get(task_id, 0) + 1
    return {
        "tasks_attempted": len(runs_per_task),
        "tasks_defined": len(canonical),
        # Seed: "what share of a market's canonical tasks must be attempted".
        "coverage": len(runs_per_task) / len(canonical) if canonical else None,
        "fewest_runs_per_task": min(runs_per_task.values()) if runs_per_task else None,
    }


def _repeats(runs):
    """Each task's (eligible runs, successes) in the cell, holdout tasks included."""
    per_task = {}
    for run in runs:
        n, c = per_task.get(run.version.task_id, (0, 0))
        per_task[run.version.task_id] = (n + 1, c + run.success)
    return per_task


def _figures(counts, runs, canonical, runs_per_task):
    scored = [(run, _audit_score(run)) for run in runs]
    per_task = _repeats(runs)
    successes = sum(run.success for run in runs)
    total_cost = fsum(run.cost for run in runs)
    interval = scoring.wilson_interval(successes, len(runs))
    return {
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
        **_coverage_figures(runs, canonical),
        "discard_rate": scoring.discard_rate(counts["ineligible_runs"], counts["attempts"]),
        "critical_safety_events": counts["safety"],
        # Seed: "reliability across repeats are required before any comparison".
        "reliability": cell_reliability(per_task, runs_per_task),
        "memory": memory_record(run.memory_exercised for run in runs),
        "task_scores": _task_scores(scored, repeats_k_max(per_task, runs_per_task)),
        "components": _components(scored),
        "sensitivity_ready": _sensitivity_ready(scored),
    }


def _thresholds(edition):
    def number(value):
        return float(value) if value is not None else None

    return scoring.Thresholds(
        min_eligible_runs=edition.min_eligible_runs if edition else None,
        min_coverage=number(edition.min_coverage) if edition else None,
        runs_per_task=edition.runs_per_task if edition else None,
        max_discard_rate=number(edition.max_ineligible_discard_rate) if edition else None,
    )


def _blockers(figures, runs, verification, data_status, market_id, inputs):
    evidence = scoring.CellEvidence(
        critical_safety_events=figures["critical_safety_events"],
        data_status=data_status,
        verification=verification,
        eligible_runs=figures["eligible_runs"],
        attempts=figures["attempts"],
        ineligible_runs=figures["ineligible_runs"],
        coverage=figures["coverage"],
        fewest_runs_per_task=figures["fewest_runs_per_task"],
        tasks_validated=all(run.version.validated for run in runs),
        # Every task version run here has an approved local review in this market.
        locally_reviewed=all((market_id, run.version_id) in inputs.reviewed for run in runs),
        lineage_complete=all(run.lineage_complete for run in runs),
        # A cell with nothing public to analyse has no analysis to publish beside it.
        sensitivity_ready=figures["sensitivity_ready"] and figures["components"] is not None,
    )
    return [
        blocker.value for blocker in scoring.gate_blockers(evidence, _thresholds(inputs.edition))
    ]


# --- The platforms a cell's runs used, and access parity across its table ----------------

PARITY = scoring.Blocker.PLATFORM_PARITY.value
NO_PLATFORMS = ([], {})


def _selection_evidence(platform):
    """The frozen registration a pre-registered platform was chosen from."""
    registration = platform.registration
    market_edition = registration.market_edition
    return {
        "registration": registration.pk,
        "market": market_edition.market.code,
        "task_family": registration.task_family,
        "edition": market_edition.edition.slug,
        "status": registration.status,
        "pre_registered_at": registration.registered_at.isoformat()
        if registration.registered_at
        else None,
        "supersedes": registration.supersedes_id,
    }


def _platform_entry(platform, name, version, day, fallback):
    # A run recorded before platforms were checked against the registry has its own
    # words for the platform and no selection evidence.
    registered = platform is not None
    return {
        "platform": platform.name_en if registered else name,
        "platform_ko": platform.name_ko if registered else name,
        "native_name": platform.native_name if registered else "",
        "rank": platform.rank if registered else None,
        "version": version,
        "snapshot_date": day.isoformat() if day else None,
        "fallback": fallback,
        "selection_evidence": _selection_evidence(platform) if registered else None,
    }


def _cell_platforms(attempts):
    """Per cell, in one grouped query: the platforms its counted runs used (name, version,
    snapshot date, fallback, selection evidence, runs), and per task version the names of
    the platforms used, which access parity compares across a table."""
    rows = (
        attempts.filter(COUNTED)
        .values_list(
            *CELL,
            "task_version_id",
            "representative_platform_id",
            "platform",
            "platform_version",
            "platform_snapshot_date",
            "fallback_invoked",
        )
        .annotate(runs=Count("pk"))
        .order_by()
    )
    rows = list(rows)
    registered = RepresentativePlatform.objects.select_related(
        "registration__market_edition__market", "registration__market_edition__edition"
    ).in_bulk({row[4] for row in rows if row[4] is not None})
    cells = {}
    for *key, version_id, platform_id, name, version, day, fallback, runs in rows:
        platform = registered.get(platform_id)
        used, by_version = cells.setdefault(tuple(key), ({}, {}))
        entry = (platform_id, name if platform is None else "", version, day, fallback)
        if entry not in used:
            used[entry] = {**_platform_entry(platform, name, version, day, fallback), "runs": 0}
        used[entry]["runs"] += runs
        by_version.setdefault(str(version_id), set()).add(
            name if platform is None else platform.name_en
        )
    return {
        key: (
            sorted(used.values(), key=_platform_order),
            {v: sorted(names) for v, names in by_version.items()},
        )
        for key, (used, by_version) in cells.items()
    }


def _platform_order(entry):
    return (entry["rank"] or 0, entry["platform"], entry["version"], entry["snapshot_date"] or "")


def _conflict_view(conflict, cells, versions):
    version = versions[conflict.version]
    return {
        # A holdout task is never named in public; its conflict still blocks.
        "task": version.task if version.public else None,
        "platforms": list(conflict.platforms),
        "other_cell": cells[conflict.other_cell].cell_id,
        "other_platforms": list(conflict.other_platforms),
    }


def _parity_judged(tables, inputs):
    """Seed: "Every evaluated system receives the same selected platform". Within each
    table (market × family), the cells computed under the current inputs that no other
    blocker holds back are the ones a reader compares; a task version two of them ran on
    different platforms blocks both, each naming the other."""
    for market_id, family_id in sorted(tables):
        cells = {
            cell.pk: cell
            for cell in GateCell.objects.filter(
                market_id=market_id, family_id=family_id, inputs_fingerprint=inputs.fingerprint
            ).select_related("snapshot__system", "market", "family")
        }
        compared = {
            pk: {int(v): names for v, names in cell.platform_versions.items()}
            for pk, cell in cells.items()
            if not [b for b in cell.blockers if b != PARITY]
        }
        conflicts = scoring.platform_parity_conflicts(compared)
        for pk, cell in cells.items():
            parity = [_conflict_view(c, cells, inputs.versions) for c in conflicts.get(pk, [])]
            blockers = [b for b in cell.blockers if b != PARITY] + ([PARITY] if parity else [])
            if (blockers, parity) != (cell.blockers, cell.platform_parity):
                GateCell.objects.filter(pk=pk).update(
                    blockers=blockers, publication_eligible=not blockers, platform_parity=parity
                )


def _cell_write(key, counts, runs, inputs, platforms=NO_PLATFORMS):
    snapshot_id, market_id, family_id = key
    figures = _figures(
        counts,
        runs,
        inputs.canonical.get((market_id, family_id), set()),
        _thresholds(inputs.edition).runs_per_task,
    )
    verification = _weakest({v for v in VERIFICATION_ORDER if counts[_flag(v)]}, VERIFICATION_ORDER)
    data_status = _weakest({d for d in DATA_STATUS_ORDER if counts[_flag(d)]}, DATA_STATUS_ORDER)
    blockers = _blockers(figures, runs, verification, data_status, market_id, inputs)
    figures.pop("fewest_runs_per_task")
    figures.pop("sensitivity_ready")
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
            "inputs_fingerprint": inputs.fingerprint,
            "platforms": platforms[0],
            "platform_versions": platforms[1],
            # Judged across the table once every cell of this pass is written.
            "platform_parity": [],
        },
    )
    return cell


def _cells_filter(keys):
    cells = Q(pk__in=[])
    for snapshot_id, market_id, family_id in keys:
        cells |= Q(snapshot_id=snapshot_id, market_id=market_id, family_id=family_id)
    return cells


def cells_compute(keys, inputs, progress=lambda done, total: None):
    """Compute the cells named by `keys` (every cell with an attempt when None) from their
    attempts in two grouped queries, under `inputs`; a named cell with no attempt left
    disappears. Returns the cells written, by key."""
    attempts = (
        Attempt.objects.all() if keys is None else Attempt.objects.filter(_cells_filter(keys))
    )
    written = {}
    with transaction.atomic():
        counts = _cell_counts(attempts)
        platforms = _cell_platforms(attempts)
        runs = dict.fromkeys(counts, [])
        for key, cell_runs in _cell_runs(attempts, inputs.versions):
            if key in counts:  # else committed between the two reads: see _cells_behind
                written[key] = _cell_write(
                    key, counts[key], cell_runs, inputs, platforms.get(key, NO_PLATFORMS)
                )
                runs.pop(key)
            progress(len(written), len(counts))
        # A cell whose attempts are all uncounted still has figures (and its blockers).
        for key in runs:
            written[key] = _cell_write(key, counts[key], [], inputs)
            progress(len(written), len(counts))
        gone = (
            GateCell.objects.all() if keys is None else GateCell.objects.filter(_cells_filter(keys))
        )
        gone.exclude(pk__in=[cell.pk for cell in written.values()]).delete()
        tables = {(market_id, family_id) for _s, market_id, family_id in [*written, *(keys or [])]}
        _parity_judged(tables, inputs)
    return written


def cell_recompute(snapshot_id, market_id, family_id):
    """Recompute one cell from its attempts under the current edition and inputs."""
    key = (snapshot_id, market_id, family_id)
    return cells_compute([key], CellInputs.current()).get(key)


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


def _cells_progress(progress):
    def report(done, total):
        if done % 25 == 0 or done == total:
            cells = lazy_format(_("%(done)d of %(total)d cells"), done=done, total=total)
            progress(round(100 * done / total), cells)

    return report


def _records_now():
    """What a full pass read, in counts: attempts and the decisions on them are append-only,
    so equal counts after the pass mean none of them committed while it ran."""
    return (
        Attempt.objects.count(),
        AttemptInvalidation.objects.count(),
        InvalidationReversal.objects.count(),
    )


def _cells_behind(cells):
    """The cells whose stored attempt counts no longer match their records: a commit that
    landed between the pass's reads and its writes (attempts are never deleted)."""
    current = _cell_counts(Attempt.objects.all())
    return {
        key
        for key, counts in current.items()
        if key not in cells
        or (cells[key].attempts, cells[key].invalid_runs)
        != (counts["attempts"], counts["invalid_runs"])
    }


def _recompute_until_fresh(progress):
    while True:
        inputs = CellInputs.current()
        records = _records_now()
        cells = cells_compute(None, inputs, _cells_progress(progress))
        while records != _records_now():
            records = _records_now()
            cells.update(cells_compute(_cells_behind(cells), inputs))
        if gate_inputs_fingerprint(edition_current()) == inputs.fingerprint:
            return len(cells)


def cells_follow_outage(sender, *, outage, **kwargs):
    """An outage accepted or rejected changes which runs on a fallback below its platform
    count (submissions.models.FALLBACK_JUSTIFIED): their cells are recomputed in the
    transaction of the decision."""
    keys = (
        Attempt.objects.filter(
            fallback_invoked=True,
            representative_platform__registration=outage.platform.registration_id,
            representative_platform__rank__gt=outage.platform.rank,
            platform_snapshot_date__gte=outage.first_day,
            platform_snapshot_date__lte=outage.last_day,
        )
        .values_list(*CELL)
        .distinct()
        .order_by()
    )
    cells_compute(list(keys), CellInputs.current())


def cells_follow_attempts(sender, *, cells, **kwargs):
    """Only the cells that received an attempt are recomputed, in the same transaction,
    so a stored attempt and the figures derived from it never disagree."""
    cells_compute(list(cells), CellInputs.current())
