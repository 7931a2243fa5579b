"""MICA scoring: the method's calculations as pure functions, in one module.

The three raw axes (accuracy, latency, metered evaluation cost in USD) are the
record. Everything here is derived from them on request, so a published figure
cannot drift from the evidence it summarizes. Missing is never zero: a value
that cannot be derived is ``None`` and travels with a machine reason code, and
the page decides which phrase ("Not measured.", "No successful task.", "No
coverage in this market.") to show.

Standard library only, so the gate, the pages, the API, the exports and the
jobs all reach the same code without Django.
"""

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from types import MappingProxyType

# --- Uncertainty -----------------------------------------------------------

# Two-sided 95% normal quantile; the method states z = 1.96, not 1.959964...
Z_95 = 1.96


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """95% Wilson score interval for successes / n; None when there is no eligible run.

    Wilson, not the normal (Wald) interval, because cells are small and
    accuracies sit near 0 and 1, where Wald collapses to a zero-width interval.
    """
    _require_counts(successes, n)
    if not (math.isfinite(z) and z > 0):
        raise ValueError("z must be a positive finite number")
    if n == 0:
        return None
    p_hat = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = p_hat + z2 / (2 * n)
    margin = z * math.sqrt(p_hat * (1 - p_hat) / n + z2 / (4 * n * n))
    # The edges are exact by definition; rounding must not leave 1e-17 of
    # doubt at an observed 0% or 100%.
    low = 0.0 if successes == 0 else max(0.0, (centre - margin) / denominator)
    high = 1.0 if successes == n else min(1.0, (centre + margin) / denominator)
    return (low, high)


def _require_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0:
        raise ValueError("counts cannot be negative")
    if successes > n:
        raise ValueError("successes cannot exceed eligible runs")


def intervals_overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Closed intervals overlap; touching endpoints count, since they do not separate."""
    _require_interval(a)
    _require_interval(b)
    return a[0] <= b[1] and b[0] <= a[1]


def _require_interval(interval: tuple[float, float]) -> None:
    if not interval[0] <= interval[1]:
        raise ValueError(f"interval {interval!r} has low above high")


def separable_ranks(entries: Sequence[tuple[str, tuple[float, float]]]) -> dict[str, int | None]:
    """Ordinal rank for each entry only where its interval separates it; otherwise None.

    ``entries`` are sorted best first. The rank is the 1-based position. An
    entry is ranked only when its interval overlaps no other entry's, which
    includes its neighbours above and below; checking every entry (not just
    neighbours) keeps a wide interval two places up from being stepped over.
    """
    keys = [key for key, _ in entries]
    if len(set(keys)) != len(keys):
        raise ValueError("entry ids must be unique")
    ranks: dict[str, int | None] = {}
    for position, (key, interval) in enumerate(entries, start=1):
        others = (other for j, (_, other) in enumerate(entries, start=1) if j != position)
        separated = not any(intervals_overlap(interval, other) for other in others)
        ranks[key] = position if separated else None
    return ranks


# --- Latency ---------------------------------------------------------------

PERCENTILE_METHOD = "R-7 (linear interpolation between order statistics)"


def percentile(values: Sequence[float], p: float) -> float | None:
    """Percentile by Hyndman-Fan R-7 (numpy "linear"); None for an empty sequence.

    Published p50/p95 are taken over successful eligible runs only; the caller
    chooses the values, this function only states the method.
    """
    if not (0.0 <= p <= 1.0):
        raise ValueError("p must lie in [0, 1]")
    if any(not math.isfinite(v) for v in values):
        raise ValueError("latencies must be finite")
    if not values:
        return None
    ordered = sorted(values)
    h = (len(ordered) - 1) * p
    lower = math.floor(h)
    upper = min(lower + 1, len(ordered) - 1)
    below, above = ordered[lower], ordered[upper]
    value = below + (h - lower) * (above - below)
    # Guard: whatever the rounding, a percentile stays between the order
    # statistics it interpolates, so it is monotone in p and within [min, max].
    return min(max(value, below), above)


# --- Accuracy and cost -----------------------------------------------------


def accuracy(successes: int, eligible_runs: int) -> float | None:
    """Confirmed successes over eligible runs; None when no run was eligible."""
    _require_counts(successes, eligible_runs)
    if eligible_runs == 0:
        return None
    return successes / eligible_runs


def cost_per_success(total_eligible_cost_usd: float, successes: int) -> float | None:
    """Total eligible evaluation cost (USD) over confirmed successes.

    Undefined, so None, at zero successes: never 0 and never infinity. A zero
    total is unmetered cost, "not measured", and is also None rather than a
    perfect $0 per success; the caller tells the two apart by ``successes``
    ("No successful task." versus "Not measured.").
    """
    if successes < 0:
        raise ValueError("successes cannot be negative")
    if not math.isfinite(total_eligible_cost_usd) or total_eligible_cost_usd < 0:
        raise ValueError("cost must be a finite, non-negative USD amount")
    if successes == 0 or total_eligible_cost_usd == 0:
        return None
    return total_eligible_cost_usd / successes


# --- Reliability across repeats ----------------------------------------------
#
# Seed: "Repeated attempts, interval estimates and reliability across repeats are
# required before any comparison between systems is published." A task's repeats are
# its eligible runs in one cell; a single run has no repeat, and says so.


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """tau-bench's pass^k for one task: the chance that k of its n eligible runs, drawn
    without replacement, all succeeded when c of them did: C(c, k) / C(n, k). None when
    the task was run fewer than k times: there are no k repeats to draw."""
    _require_counts(c, n)
    if k < 1:
        raise ValueError("k counts repeats: at least 1")
    if k > n:
        return None
    return math.comb(c, k) / math.comb(n, k)


def repeats_agree(n: int, c: int) -> bool | None:
    """Whether every repeat of a task ended the same way (all succeeded, or none did);
    None for a task run once, which has nothing to agree with."""
    _require_counts(c, n)
    if n < 2:
        return None
    return c in (0, n)


@dataclass(frozen=True)
class Reliability:
    """A cell's reliability across repeats, counted from its tasks' (runs, successes)."""

    tasks: int
    tasks_repeated: int  # run at least twice
    tasks_agreeing: int
    agreement: float | None  # agreeing / repeated; None when no task was repeated
    # (k, mean pass^k over every task, or None when a task was run fewer than k times)
    pass_k: tuple[tuple[int, float | None], ...]


def reliability(per_task: Mapping[str, tuple[int, int]], k_max: int | None) -> Reliability:
    """Per-task (eligible runs, successes) to the share of repeated tasks whose repeats
    agree and pass^k for k = 1 … k_max, averaged over tasks as tau-bench reports it.

    A k that some task was not run k times has no value: a mean over the tasks that
    happened to be run more often would be a shrinking denominator, not a measurement.
    """
    agreements = [repeats_agree(n, c) for n, c in per_task.values()]
    repeated = [agree for agree in agreements if agree is not None]
    pass_k = []
    for k in range(1, (k_max or 0) + 1):
        values = [pass_hat_k(n, c, k) for n, c in per_task.values()]
        defined = bool(values) and None not in values
        pass_k.append((k, math.fsum(values) / len(values) if defined else None))
    return Reliability(
        tasks=len(per_task),
        tasks_repeated=len(repeated),
        tasks_agreeing=sum(repeated),
        agreement=sum(repeated) / len(repeated) if repeated else None,
        pass_k=tuple(pass_k),
    )


# --- Commerce: proximity to the lowest valid total ---------------------------


@dataclass(frozen=True)
class PriceProximity:
    """An attempt's all-in total against the lowest valid total the reference search found,
    in the market's currency. Reported apart from the score: it enters no audit value."""

    chosen_total: float
    reference_total: float
    difference: float  # chosen − reference; below zero when the attempt found less
    ratio: float  # chosen / reference
    premium_percent: float  # 100 × difference / reference


def price_proximity(chosen_total: float, reference_total: float) -> PriceProximity:
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium. No result is called the market-wide absolute lowest price." A
    total below the reference is a negative premium, reported as it is."""
    if not (_measured(chosen_total) and _measured(reference_total)):
        raise ValueError("totals must be positive finite amounts")
    difference = chosen_total - reference_total
    return PriceProximity(
        chosen_total=chosen_total,
        reference_total=reference_total,
        difference=difference,
        ratio=chosen_total / reference_total,
        premium_percent=100 * difference / reference_total,
    )


# --- Per-attempt audit value ----------------------------------------------


def _measured(x: float | None) -> bool:
    # Zero, negative, missing and non-finite readings are not measurements.
    return x is not None and math.isfinite(x) and x > 0


def speed_component(seconds: float | None, reference_seconds: float | None) -> float | None:
    """s = min(1, speed reference / seconds); being faster than the reference earns nothing more."""
    if not (_measured(seconds) and _measured(reference_seconds)):
        return None
    return _reference_ratio(seconds, reference_seconds, ())


def cost_component(cost_usd: float | None, reference_usd: float | None) -> float | None:
    """c = min(1, cost reference / USD); zero or unmetered cost is not measured, never perfect."""
    if not (_measured(cost_usd) and _measured(reference_usd)):
        return None
    return _reference_ratio(cost_usd, reference_usd, ())


REASON_REFERENCE_MISSING = "reference-missing"
REASON_SPEED_NOT_MEASURED = "speed-not-measured"
REASON_COST_NOT_MEASURED = "cost-not-measured"


@dataclass(frozen=True)
class AuditScore:
    """Per-attempt audit value 0..100, or None with the reason it is not measured."""

    value: float | None
    reason: str | None


def audit_score(
    confirmed_success: bool,
    seconds: float | None,
    cost_usd: float | None,
    speed_reference_s: float | None,
    cost_reference_usd: float | None,
) -> AuditScore:
    """Audit value = 100 × a × s × c, with a = 1 only for a confirmed success.

    Zero veto: any other outcome gives 0.0, a legitimate measured value, and
    speed or cost cannot compensate. But an attempt whose speed or cost was
    not measured has no value at all, whatever its outcome. References are
    pre-registered per task version; their absence is checked first because
    it is the task's gap, not the attempt's.
    """
    if not (_measured(speed_reference_s) and _measured(cost_reference_usd)):
        return AuditScore(None, REASON_REFERENCE_MISSING)
    s = speed_component(seconds, speed_reference_s)
    if s is None:
        return AuditScore(None, REASON_SPEED_NOT_MEASURED)
    c = cost_component(cost_usd, cost_reference_usd)
    if c is None:
        return AuditScore(None, REASON_COST_NOT_MEASURED)
    a = 1.0 if confirmed_success else 0.0
    # a is 0 or 1 and s, c lie in (0, 1]: the value lies in [0, 100] without a clamp.
    return AuditScore(policy_product(a, s, c), None)


# --- Aggregation -----------------------------------------------------------

REASON_NOT_SCORED = "not-scored"
REASON_NOT_IN_CANONICAL_SET = "not-in-canonical-set"
REASON_CANONICAL_TASK_MISSING = "canonical-task-missing"
REASON_NO_COVERAGE = "no-coverage"
REASON_NOT_IN_MARKET_SCOPE = "not-in-market-scope"

WITHHELD_NOTHING_SCORED = "nothing-scored"
WITHHELD_CANONICAL_SET_INCOMPLETE = "canonical-set-incomplete"
WITHHELD_MARKET_MISSING = "market-missing"


@dataclass(frozen=True)
class Aggregate:
    """A mean, what went into it, and every exclusion with its reason."""

    value: float | None
    included: tuple[str, ...]
    exclusions: tuple[tuple[str, str], ...]  # (key, reason)
    withheld_reason: str | None = None


def mean_with_exclusions(
    scores: Mapping[str, float | None], reasons: Mapping[str, str] | None = None
) -> Aggregate:
    """Arithmetic mean of the scored keys; each unscored key is listed, never counted as zero."""
    reasons = reasons or {}
    included = tuple(key for key, value in scores.items() if value is not None)
    exclusions = tuple(
        (key, reasons.get(key, REASON_NOT_SCORED)) for key, value in scores.items() if value is None
    )
    values = [scores[key] for key in included]
    if any(not math.isfinite(v) for v in values):
        raise ValueError("scores must be finite")
    if not values:
        return Aggregate(None, (), exclusions, WITHHELD_NOTHING_SCORED)
    # fsum for an exactly rounded total; the clamp keeps rounding of the
    # division from placing the mean outside its own inputs.
    mean = min(max(math.fsum(values) / len(values), min(values)), max(values))
    return Aggregate(mean, included, exclusions)


def complete_set_mean(
    scores: Mapping[str, float | None],
    canonical_keys: Iterable[str],
    reasons: Mapping[str, str] | None = None,
) -> Aggregate:
    """Family or market mean, withheld unless the pre-registered canonical set is complete.

    Complete means every canonical task has a record (its value may be None,
    and is then excluded with its reason). A missing canonical task withholds
    the figure rather than letting it be computed over a shrinking denominator.
    """
    canonical = list(dict.fromkeys(canonical_keys))
    missing = [key for key in canonical if key not in scores]
    if missing:
        exclusions = tuple((key, REASON_CANONICAL_TASK_MISSING) for key in missing)
        return Aggregate(None, (), exclusions, WITHHELD_CANONICAL_SET_INCOMPLETE)
    within = mean_with_exclusions({key: scores[key] for key in canonical}, reasons)
    outside = tuple((key, REASON_NOT_IN_CANONICAL_SET) for key in scores if key not in canonical)
    return replace(within, exclusions=within.exclusions + outside)


def macro_average(by_market: Mapping[str, float | None], markets: Sequence[str]) -> Aggregate:
    """Country macro-average: each market weighs the same, whatever its run count.

    Withheld when any market lacks a figure, because a mean over the markets
    that happen to be covered would compare coverage, not capability. There
    is no overall cross-market score beyond this per-axis macro-average.
    """
    missing = [market for market in markets if by_market.get(market) is None]
    outside = tuple((key, REASON_NOT_IN_MARKET_SCOPE) for key in by_market if key not in markets)
    if missing:
        exclusions = tuple((market, REASON_NO_COVERAGE) for market in missing) + outside
        return Aggregate(None, (), exclusions, WITHHELD_MARKET_MISSING)
    within = mean_with_exclusions({market: by_market[market] for market in markets})
    return replace(within, exclusions=within.exclusions + outside)


# --- Sensitivity -----------------------------------------------------------
#
# Seed: "No official figure may be published without a sensitivity analysis over the
# scoring policy, showing how a ranking moves under alternative normalizations and
# aggregations". Each attempt's raw speed and cost are normalized to [0, 1] one way
# or another, combined with its binary accuracy one way or another, and every figure
# above is then averaged exactly as the published one is.


def policy_product(a: float, s: float, c: float) -> float:
    """The audit value's form, 100 × a × s × c, multiplied in this order wherever it is
    computed so the analysis's baseline is the published figure to the last bit."""
    return 100.0 * a * s * c


def _reference_ratio(x: float, reference: float, cohort: Sequence[float]) -> float:
    # The policy: the pre-registered reference over the reading, capped at 1.
    return min(1.0, reference / x)


def _min_max(x: float, reference: float, cohort: Sequence[float]) -> float:
    # Best of the cohort 1, worst 0; a cohort of equal readings is all best.
    low, high = min(cohort), max(cohort)
    if high == low:
        return 1.0
    return (high - x) / (high - low)


def _rank_based(x: float, reference: float, cohort: Sequence[float]) -> float:
    # The share of the cohort's other readings this one beats, a tie counting half.
    others = len(cohort) - 1
    if others == 0:
        return 1.0
    beaten = sum(1 for y in cohort if y > x)
    tied = sum(1 for y in cohort if y == x) - 1
    return (beaten + tied / 2) / others


def _log_ratio(x: float, reference: float, cohort: Sequence[float]) -> float:
    # An overrun is penalized by its logarithm, gentler than the ratio: 1 / (1 + ln(x/r)).
    if x <= reference:
        return 1.0
    return 1.0 / (1.0 + math.log(x / reference))


Normalization = Callable[[float, float, Sequence[float]], float]

# The policy's reference ratio first. The cohort is every scored reading of the same
# task in the same market among the published cells (lower is better for both axes).
NORMALIZATIONS: Mapping[str, Normalization] = MappingProxyType(
    {
        "reference-ratio": _reference_ratio,
        "min-max": _min_max,
        "rank": _rank_based,
        "log-ratio": _log_ratio,
    }
)


def normalize(name: str, x: float, reference: float, cohort: Sequence[float]) -> float:
    """A raw reading (seconds or USD) as a component in [0, 1] under one normalization."""
    if not (_measured(x) and _measured(reference)):
        raise ValueError("a reading and its reference must be positive finite numbers")
    if x not in cohort:
        raise ValueError("the reading must belong to its cohort")
    return NORMALIZATIONS[name](x, reference, cohort)


# The policy's product first; each on the audit value's 0..100 scale.
AGGREGATIONS: Mapping[str, Callable[[float, float, float], float]] = MappingProxyType(
    {
        "product": policy_product,
        "geometric-mean": lambda a, s, c: 100.0 * (a * s * c) ** (1 / 3),
        "arithmetic-mean": lambda a, s, c: 100.0 * (a + s + c) / 3,
        "accuracy-only": lambda a, s, c: 100.0 * a,
        "without-accuracy": lambda a, s, c: 100.0 * s * c,
        "without-speed": lambda a, s, c: 100.0 * a * c,
        "without-cost": lambda a, s, c: 100.0 * a * s,
    }
)

BASELINE = ("reference-ratio", "product")


def alternatives() -> list[tuple[str, str]]:
    """Every normalization crossed with every aggregation, the policy first. Accuracy
    alone reads neither speed nor cost, so it is listed once, not once per normalization."""
    return [
        (normalization, aggregation)
        for normalization in NORMALIZATIONS
        for aggregation in AGGREGATIONS
        if aggregation != "accuracy-only" or normalization == BASELINE[0]
    ]


def ordering(values: Mapping[str, float]) -> list[str]:
    """Entry ids best (highest) first; ties go to the smaller id."""
    if any(not math.isfinite(v) for v in values.values()):
        raise ValueError("values must be finite")
    return sorted(values, key=lambda key: (-values[key], key))


def _same_entries(base: Mapping[str, float], other: Mapping[str, float]) -> None:
    if set(base) != set(other):
        raise ValueError("the two tables must hold the same entries")
    if any(not math.isfinite(v) for v in [*base.values(), *other.values()]):
        raise ValueError("values must be finite")


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def shared_ranks(values: Mapping[str, float]) -> dict[str, int]:
    """Each entry's rank, best (highest) first, tied entries sharing the best rank of
    their group ("1, 1, 3"): a tie is a tie, not an order the entry ids decide."""
    if any(not math.isfinite(v) for v in values.values()):
        raise ValueError("values must be finite")
    return {key: 1 + sum(1 for other in values.values() if other > v) for key, v in values.items()}


def kendall_tau(base: Mapping[str, float], other: Mapping[str, float]) -> float | None:
    """Kendall's tau-b between the orders two tables of values give the same entries: 1
    unmoved, -1 reversed, and a pair tied in either table neither agrees nor disagrees, so
    a tie is never a reversal. None where nothing can be compared: under two entries, or
    where one table ties every pair."""
    _same_entries(base, other)
    keys = sorted(base)
    agree = disagree = tied_base = tied_other = 0
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            x, y = _sign(base[a] - base[b]), _sign(other[a] - other[b])
            agree, disagree = agree + (x * y > 0), disagree + (x * y < 0)
            tied_base, tied_other = tied_base + (x == 0), tied_other + (y == 0)
    pairs = len(keys) * (len(keys) - 1) // 2
    denominator = math.sqrt((pairs - tied_base) * (pairs - tied_other))
    if denominator == 0:
        return None
    return (agree - disagree) / denominator


def rank_shifts(base: Mapping[str, float], other: Mapping[str, float]) -> dict[str, int]:
    """Places each entry moved from `base` to `other` by shared ranks; positive means up."""
    _same_entries(base, other)
    before, after = shared_ranks(base), shared_ranks(other)
    return {key: before[key] - after[key] for key in sorted(base)}


# --- Publication gate ------------------------------------------------------


class Blocker(str, Enum):  # noqa: UP042 - the declared form; compare by value
    """Publication blockers, in the order the gate reports them."""

    STALE = "stale"
    CRITICAL_SAFETY = "critical-safety-event"
    DEMO_OR_PREVIEW = "demo-or-preview-data"
    NOT_INDEPENDENT = "not-independent-rerun"
    TASK_NOT_VALIDATED = "task-not-validated"
    NOT_LOCALLY_REVIEWED = "not-locally-reviewed"
    LINEAGE_INCOMPLETE = "platform-lineage-incomplete"
    THRESHOLDS_UNSET = "thresholds-not-set"
    BELOW_MIN_RUNS = "below-minimum-eligible-runs"
    BELOW_RUNS_PER_TASK = "below-runs-per-task"
    ABOVE_DISCARD_RATE = "above-maximum-discard-rate"
    BELOW_MIN_COVERAGE = "below-minimum-coverage"
    NO_SENSITIVITY = "no-sensitivity-analysis"
    # Judged across the cells of one table, once each passes every rule above on its own
    # (platform_parity_conflicts): last, like "stale" first, it is not one cell's alone.
    PLATFORM_PARITY = "platform-parity"


NEVER_PUBLISHABLE_STATUSES = frozenset({"demo", "preview"})
KNOWN_DATA_STATUSES = NEVER_PUBLISHABLE_STATUSES | {"official"}
PUBLISHABLE_VERIFICATION = "independent-rerun"


@dataclass(frozen=True)
class Thresholds:
    """The edition's four publication thresholds; None is "not set"."""

    min_eligible_runs: int | None
    min_coverage: float | None  # a percentage 0..100, as the threshold is stated
    runs_per_task: int | None
    max_discard_rate: float | None  # a percentage 0..100

    @property
    def all_set(self) -> bool:
        return None not in (
            self.min_eligible_runs,
            self.min_coverage,
            self.runs_per_task,
            self.max_discard_rate,
        )


@dataclass(frozen=True)
class CellEvidence:
    """What the gate reads of one cell's records."""

    critical_safety_events: int
    data_status: str
    verification: str
    eligible_runs: int
    attempts: int
    ineligible_runs: int
    coverage: float | None  # attempted canonical tasks / canonical tasks, 0..1
    fewest_runs_per_task: int | None  # over the canonical tasks attempted
    tasks_validated: bool
    locally_reviewed: bool
    lineage_complete: bool
    sensitivity_ready: bool


def gate_blockers(cell: CellEvidence, thresholds: Thresholds) -> list[Blocker]:
    """Every blocker that applies, in order; an empty list means publishable.

    Unset thresholds refuse everything, and the threshold comparisons are then not
    made: there is no minimum to fall below. An unknown data status raises rather
    than guessing which side of the line it falls on.
    """
    _require_gate_inputs(cell, thresholds)
    rules = [
        (Blocker.CRITICAL_SAFETY, cell.critical_safety_events > 0),
        (Blocker.DEMO_OR_PREVIEW, cell.data_status in NEVER_PUBLISHABLE_STATUSES),
        (Blocker.NOT_INDEPENDENT, cell.verification != PUBLISHABLE_VERIFICATION),
        (Blocker.TASK_NOT_VALIDATED, not cell.tasks_validated),
        (Blocker.NOT_LOCALLY_REVIEWED, not cell.locally_reviewed),
        (Blocker.LINEAGE_INCOMPLETE, not cell.lineage_complete),
    ]
    blockers = [blocker for blocker, applies in rules if applies]
    if not thresholds.all_set:
        blockers.append(Blocker.THRESHOLDS_UNSET)
    else:
        blockers += _threshold_blockers(cell, thresholds)
    if not cell.sensitivity_ready:
        blockers.append(Blocker.NO_SENSITIVITY)
    return blockers


@dataclass(frozen=True)
class ParityConflict:
    """A task version a cell ran on other platforms than another cell of its table."""

    version: int
    platforms: tuple[str, ...]
    other_cell: object
    other_platforms: tuple[str, ...]


def platform_parity_conflicts(
    table: Mapping[object, Mapping[int, Iterable[str]]],
) -> dict[object, list[ParityConflict]]:
    """Seed: "The selected representative platforms, the account tier, the granted
    permissions, the initial state and the confirmation boundary are identical across
    systems for a given task version."

    `table` holds, per cell compared in one table, the platforms its counted runs used
    for each task version. A cell is in conflict for a version when another cell ran that
    version on a different set of platforms; each conflict names one cell of every other
    set (the first by key), so a table of many cells names a few, not all pairs.
    """
    by_version: dict[int, dict[tuple[str, ...], list[object]]] = {}
    for cell, versions in table.items():
        for version, platforms in versions.items():
            used = tuple(sorted(set(platforms)))
            by_version.setdefault(version, {}).setdefault(used, []).append(cell)
    conflicts: dict[object, list[ParityConflict]] = {}
    for version, groups in sorted(by_version.items()):
        if len(groups) < 2:
            continue
        for used, cells in groups.items():
            others = [(min(c), theirs) for theirs, c in groups.items() if theirs != used]
            for cell in cells:
                conflicts.setdefault(cell, []).extend(
                    ParityConflict(version, used, other, theirs) for other, theirs in sorted(others)
                )
    return conflicts


def discard_rate(ineligible_runs: int, attempts: int) -> float | None:
    """Ineligible attempts as a percentage of all attempts; None when nothing was attempted."""
    if attempts == 0:
        return None
    return 100 * ineligible_runs / attempts


def _threshold_blockers(cell: CellEvidence, thresholds: Thresholds) -> list[Blocker]:
    rate = discard_rate(cell.ineligible_runs, cell.attempts)
    fewest = cell.fewest_runs_per_task
    rules = [
        (Blocker.BELOW_MIN_RUNS, cell.eligible_runs < thresholds.min_eligible_runs),
        (Blocker.BELOW_RUNS_PER_TASK, fewest is None or fewest < thresholds.runs_per_task),
        (Blocker.ABOVE_DISCARD_RATE, rate is None or rate > thresholds.max_discard_rate),
        # Compare fractions: min_coverage / 100 rounds the same rational the same way
        # attempted / defined does, where coverage * 100 could land below it.
        (
            Blocker.BELOW_MIN_COVERAGE,
            cell.coverage is None or cell.coverage < thresholds.min_coverage / 100,
        ),
    ]
    return [blocker for blocker, applies in rules if applies]


def _require_gate_inputs(cell: CellEvidence, thresholds: Thresholds) -> None:
    if cell.critical_safety_events < 0:
        raise ValueError("critical safety events cannot be negative")
    if cell.data_status not in KNOWN_DATA_STATUSES:
        raise ValueError(f"unknown data status {cell.data_status!r}")
    # A coverage above 1 is almost certainly a percentage passed by mistake.
    if cell.coverage is not None and not (0.0 <= cell.coverage <= 1.0):
        raise ValueError("coverage is a fraction in [0, 1]")
    for name in ("min_coverage", "max_discard_rate"):
        value = getattr(thresholds, name)
        if value is not None and not (0.0 <= value <= 100.0):
            raise ValueError(f"{name} is a percentage in [0, 100]")
