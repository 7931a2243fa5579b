"""The scoring library against known values, hand examples and properties.

No database: every function under test is pure. Reference values are either
published (Newcombe 1998; the exact-quantile Wilson values), numpy "linear"
percentiles computed by hand, or closed forms stated next to the case.
"""

import ast
import dataclasses
import math
import sys
from pathlib import Path
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mica import scoring
from mica.scoring import (
    AGGREGATIONS,
    BASELINE,
    NORMALIZATIONS,
    PERCENTILE_METHOD,
    Z_95,
    Aggregate,
    AuditScore,
    Blocker,
    CellEvidence,
    ParityConflict,
    Thresholds,
    accuracy,
    alternatives,
    audit_score,
    complete_set_mean,
    cost_component,
    cost_per_success,
    discard_rate,
    gate_blockers,
    intervals_overlap,
    kendall_tau,
    macro_average,
    mean_with_exclusions,
    normalize,
    ordering,
    percentile,
    platform_parity_conflicts,
    policy_product,
    rank_shifts,
    separable_ranks,
    shared_ranks,
    speed_component,
    wilson_interval,
)

# No example database on disk (other work shares the tree); no deadline on a loaded machine.
PROPERTY = settings(database=None, deadline=None, max_examples=200)

MARKETS = ["KR", "JP", "SG", "TW", "AE", "TH"]


# --- Wilson interval -------------------------------------------------------


def test_method_z_is_stated_value():
    assert Z_95 == 1.96


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775328),
        (10, 10, 0.7224672, 1.0),
        (5, 10, 0.2365931, 0.7634069),
        (1, 1, 0.2065493, 1.0),
        (10, 20, 0.2992980, 0.7007020),
    ],
)
def test_wilson_matches_published_values_at_exact_quantile(successes, n, low, high):
    # Published tables use the exact 97.5% quantile 1.959964; passing it
    # checks the formula itself to 1e-6.
    z = NormalDist().inv_cdf(0.975)
    got = wilson_interval(successes, n, z)
    assert got == pytest.approx((low, high), abs=1e-6)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Closed forms at z = 1.96: 0/n -> high = z²/(n + z²); n/n -> low = n/(n + z²).
        (0, 10, 0.0, 3.8416 / 13.8416),
        (10, 10, 10 / 13.8416, 1.0),
        (1, 1, 1 / 4.8416, 1.0),
        (5, 10, 0.2365896, 0.7634104),
        # The earlier site's pinned case, 10/20 -> 0.2993-0.7007.
        (10, 20, 0.2992949, 0.7007051),
    ],
)
def test_wilson_at_method_z(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-7)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Newcombe (1998), Stat Med 17:857, Table I, method 3 (Wilson score), 4 dp.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_table(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=5e-5)


def test_wilson_edges_are_exact():
    for n in range(1, 300):
        assert wilson_interval(0, n)[0] == 0.0
        assert wilson_interval(n, n)[1] == 1.0


def test_wilson_is_none_without_runs():
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("successes", "n"), [(-1, 5), (6, 5), (0, -1), (1, 0)])
def test_wilson_rejects_impossible_counts(successes, n):
    with pytest.raises(ValueError):
        wilson_interval(successes, n)


@pytest.mark.parametrize("z", [0.0, -1.96, math.nan, math.inf])
def test_wilson_rejects_bad_z(z):
    with pytest.raises(ValueError):
        wilson_interval(1, 2, z)


@st.composite
def counts(draw, max_n=5_000):
    n = draw(st.integers(min_value=1, max_value=max_n))
    return draw(st.integers(min_value=0, max_value=n)), n


@PROPERTY
@given(counts())
def test_wilson_bounds_contain_the_observed_rate(sn):
    successes, n = sn
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


@PROPERTY
@given(counts())
def test_wilson_narrows_as_n_grows_at_fixed_rate(sn):
    successes, n = sn
    low, high = wilson_interval(successes, n)
    low2, high2 = wilson_interval(2 * successes, 2 * n)
    assert high2 - low2 < high - low


@PROPERTY
@given(counts().filter(lambda sn: 0 < sn[0] < sn[1]))
def test_wilson_bounds_solve_the_score_equation(sn):
    # Wilson's bounds are the p with (p_hat - p)² = z² p (1 - p) / n.
    successes, n = sn
    p_hat = successes / n
    for bound in wilson_interval(successes, n):
        lhs = (p_hat - bound) ** 2
        rhs = Z_95**2 * bound * (1 - bound) / n
        assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-15)


# --- Percentile ------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [
        ([1, 2, 3, 4], 0.5, 2.5),
        ([1, 2, 3, 4], 0.95, 3.85),  # h = 3 × 0.95 = 2.85 -> 3 + 0.85 × (4 - 3)
        ([10, 20, 30, 40, 50], 0.95, 48.0),  # h = 3.8 -> 40 + 0.8 × 10
        ([15, 20, 35, 40, 50], 0.4, 29.0),  # h = 1.6 -> 20 + 0.6 × 15
        ([4, 1, 3, 2], 0.25, 1.75),  # unsorted: h = 0.75 over [1, 2, 3, 4]
        ([4, 1, 3, 2], 0.0, 1.0),
        ([4, 1, 3, 2], 1.0, 4.0),
        ([7.5], 0.0, 7.5),
        ([7.5], 0.95, 7.5),
        ([7.5], 1.0, 7.5),
    ],
)
def test_percentile_r7_values(values, p, expected):
    assert percentile(values, p) == pytest.approx(expected, abs=1e-12)


def test_percentile_of_nothing_is_none():
    assert percentile([], 0.5) is None


def test_percentile_does_not_reorder_its_input():
    values = [3.0, 1.0, 2.0]
    percentile(values, 0.5)
    assert values == [3.0, 1.0, 2.0]


@pytest.mark.parametrize("p", [-0.01, 1.01, math.nan])
def test_percentile_rejects_p_outside_unit_interval(p):
    with pytest.raises(ValueError):
        percentile([1.0, 2.0], p)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_percentile_rejects_non_finite_values(bad):
    with pytest.raises(ValueError):
        percentile([1.0, bad], 0.5)


def test_percentile_method_is_named():
    assert PERCENTILE_METHOD.startswith("R-7")
    assert "linear interpolation" in PERCENTILE_METHOD


latencies = st.lists(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=40
)
fractions = st.floats(min_value=0.0, max_value=1.0)


@PROPERTY
@given(latencies, fractions, fractions)
def test_percentile_is_monotone_in_p_and_within_range(values, p1, p2):
    p1, p2 = sorted((p1, p2))
    q1, q2 = percentile(values, p1), percentile(values, p2)
    assert min(values) <= q1 <= q2 <= max(values)


@PROPERTY
@given(latencies, fractions)
def test_percentile_ignores_input_order(values, p):
    assert percentile(values, p) == percentile(list(reversed(values)), p)


# --- Accuracy and cost per success ----------------------------------------


@pytest.mark.parametrize(
    ("successes", "runs", "expected"), [(3, 4, 0.75), (0, 5, 0.0), (5, 5, 1.0), (0, 0, None)]
)
def test_accuracy(successes, runs, expected):
    assert accuracy(successes, runs) == expected


@pytest.mark.parametrize(("successes", "runs"), [(-1, 4), (5, 4)])
def test_accuracy_rejects_impossible_counts(successes, runs):
    with pytest.raises(ValueError):
        accuracy(successes, runs)


def test_cost_per_success_divides_total_by_successes():
    assert cost_per_success(1.2, 4) == pytest.approx(0.3)


@pytest.mark.parametrize("total", [1.2, 0.0])
def test_cost_per_success_undefined_at_zero_successes(total):
    # Never 0 and never infinity, even when the total cost is itself 0.
    assert cost_per_success(total, 0) is None


def test_cost_per_success_unmetered_total_is_not_measured():
    assert cost_per_success(0.0, 3) is None


@pytest.mark.parametrize(("total", "successes"), [(-0.01, 3), (1.0, -1), (math.nan, 2)])
def test_cost_per_success_rejects_invalid_inputs(total, successes):
    with pytest.raises(ValueError):
        cost_per_success(total, successes)


# --- Components and the audit value ---------------------------------------


@pytest.mark.parametrize(
    ("seconds", "reference", "expected"),
    [
        (120.0, 60.0, 0.5),
        (60.0, 60.0, 1.0),
        (30.0, 60.0, 1.0),  # faster than the reference is capped at 1
        (None, 60.0, None),
        (0.0, 60.0, None),
        (-5.0, 60.0, None),
        (math.inf, 60.0, None),
        (60.0, None, None),
        (60.0, 0.0, None),
    ],
)
def test_speed_component(seconds, reference, expected):
    assert speed_component(seconds, reference) == expected


@pytest.mark.parametrize(
    ("cost", "reference", "expected"),
    [
        (0.06, 0.03, 0.5),
        (0.01, 0.03, 1.0),  # cheaper than the reference is capped at 1
        (0.0, 0.03, None),  # zero cost is not measured, never a perfect component
        (None, 0.03, None),
        (-0.01, 0.03, None),
        (0.03, None, None),
        (0.03, 0.0, None),
    ],
)
def test_cost_component(cost, reference, expected):
    assert cost_component(cost, reference) == expected


def test_audit_score_worked_example():
    # Success at 120 s against 60 s and 0.06 against 0.03 USD: 100 × 1 × 0.5 × 0.5.
    assert audit_score(True, 120.0, 0.06, 60.0, 0.03) == AuditScore(25.0, None)


def test_audit_score_maximum_only_for_fast_metered_success():
    assert audit_score(True, 10.0, 0.01, 60.0, 0.03) == AuditScore(100.0, None)


def test_audit_score_fast_cheap_failure_is_a_measured_zero():
    result = audit_score(False, 10.0, 0.01, 60.0, 0.03)
    assert result.value == 0.0
    assert result.reason is None


@pytest.mark.parametrize("success", [True, False])
@pytest.mark.parametrize("cost", [0.0, None])
def test_audit_score_unmetered_cost_has_no_value(success, cost):
    assert audit_score(success, 10.0, cost, 60.0, 0.03) == AuditScore(None, "cost-not-measured")


@pytest.mark.parametrize("seconds", [None, 0.0])
def test_audit_score_unmeasured_speed_has_no_value(seconds):
    assert audit_score(True, seconds, 0.01, 60.0, 0.03) == AuditScore(None, "speed-not-measured")


@pytest.mark.parametrize(("speed_ref", "cost_ref"), [(None, 0.03), (60.0, None), (60.0, 0.0)])
def test_audit_score_without_reference_has_no_value(speed_ref, cost_ref):
    result = audit_score(True, 10.0, 0.01, speed_ref, cost_ref)
    assert result == AuditScore(None, "reference-missing")


def test_audit_score_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        audit_score(True, 10.0, 0.01, 60.0, 0.03).value = 0.0


positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


@PROPERTY
@given(st.booleans(), positive, positive, positive, positive)
def test_audit_score_is_bounded(success, seconds, cost, speed_ref, cost_ref):
    value = audit_score(success, seconds, cost, speed_ref, cost_ref).value
    assert 0.0 <= value <= 100.0
    if not success:
        assert value == 0.0


@PROPERTY
@given(st.booleans(), positive, positive, positive, positive, positive)
def test_audit_score_never_rewards_slower(success, t1, t2, cost, speed_ref, cost_ref):
    faster, slower = sorted((t1, t2))
    fast = audit_score(success, faster, cost, speed_ref, cost_ref).value
    slow = audit_score(success, slower, cost, speed_ref, cost_ref).value
    assert fast >= slow


@PROPERTY
@given(st.booleans(), positive, positive, positive, positive, positive)
def test_audit_score_never_rewards_dearer(success, c1, c2, seconds, speed_ref, cost_ref):
    cheaper, dearer = sorted((c1, c2))
    cheap = audit_score(success, seconds, cheaper, speed_ref, cost_ref).value
    dear = audit_score(success, seconds, dearer, speed_ref, cost_ref).value
    assert cheap >= dear


# --- Reliability across repeats ---------------------------------------------


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (4, 2, 1, 0.5),
        (4, 2, 2, 1 / 6),  # C(2,2)/C(4,2): not (2/4)**2 = 0.25, nor 2/4
        (4, 3, 2, 0.5),  # C(3,2)/C(4,2) = 3/6
        (4, 3, 3, 0.25),  # C(3,3)/C(4,3) = 1/4
        (4, 2, 3, 0.0),  # fewer successes than k: no k repeats all succeed
        (5, 5, 5, 1.0),
        (3, 0, 1, 0.0),
    ],
)
def test_pass_k_is_taus_combination_not_a_power_or_a_rate(n, c, k, expected):
    """Seed: "reliability across repeats" — as tau-bench reports it, pass^k is the chance
    that k repeats drawn from a task's n runs all succeed: C(c, k) / C(n, k)."""
    assert scoring.pass_hat_k(n, c, k) == pytest.approx(expected)
    assert scoring.pass_hat_k(n, c, k) == math.comb(c, k) / math.comb(n, k)


def test_pass_k_has_no_value_beyond_the_runs_a_task_has():
    """Seed: "Absence is not zero." A task run twice has no pass^3."""
    assert scoring.pass_hat_k(2, 2, 3) is None
    assert scoring.pass_hat_k(2, 2, 2) == 1.0
    for bad in [(2, 3, 1), (-1, 0, 1), (3, 1, 0)]:
        with pytest.raises(ValueError):
            scoring.pass_hat_k(*bad)


@pytest.mark.parametrize(
    "n, c, agree", [(1, 1, None), (1, 0, None), (2, 2, True), (3, 0, True), (3, 1, False)]
)
def test_repeats_agree_only_when_every_repeat_ended_the_same_way(n, c, agree):
    """Seed: "reliability across repeats": a task run once has nothing to agree with."""
    assert scoring.repeats_agree(n, c) is agree


def test_the_cell_averages_over_tasks_and_says_when_a_k_has_no_value():
    """Seed: "Repeated attempts ... and reliability across repeats are required before any
    comparison between systems is published." pass^k is averaged over the tasks; a k that a
    task was not run k times has no value, never a mean over the tasks run more often."""
    per_task = {"a": (4, 2), "b": (2, 2), "c": (3, 0)}
    figures = scoring.reliability(per_task, 3)
    assert (figures.tasks, figures.tasks_repeated, figures.tasks_agreeing) == (3, 3, 2)
    assert figures.agreement == pytest.approx(2 / 3)
    assert figures.pass_k[0] == (1, pytest.approx((0.5 + 1 + 0) / 3))
    assert figures.pass_k[1] == (2, pytest.approx((1 / 6 + 1 + 0) / 3))
    assert figures.pass_k[2] == (3, None)  # "b" was run twice


# --- Commerce: proximity to the lowest valid total -----------------------------


def test_proximity_reports_the_difference_and_the_premium_and_never_a_lowest_price():
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium. No result is called the market-wide absolute lowest price." A total
    below the reference is a negative premium, reported as it is."""
    above = scoring.price_proximity(23900.0, 22900.0)
    assert above.difference == 1000.0
    assert above.ratio == pytest.approx(23900 / 22900)
    assert above.premium_percent == pytest.approx(100 * 1000 / 22900)
    below = scoring.price_proximity(22000.0, 22900.0)
    assert below.difference == -900.0 and below.premium_percent < 0
    for bad in [(0.0, 1.0), (1.0, 0.0), (float("nan"), 1.0), (-5.0, 1.0)]:
        with pytest.raises(ValueError):
            scoring.price_proximity(*bad)


# --- Aggregation -----------------------------------------------------------


def test_mean_lists_every_exclusion_with_its_reason():
    result = mean_with_exclusions(
        {"t1": 50.0, "t2": None, "t3": 100.0, "t4": None}, {"t2": "ineligible"}
    )
    assert result == Aggregate(75.0, ("t1", "t3"), (("t2", "ineligible"), ("t4", "not-scored")))


def test_mean_is_arithmetic_not_geometric():
    # A geometric mean would be 0; the method's family mean is arithmetic.
    assert mean_with_exclusions({"a": 0.0, "b": 100.0}).value == 50.0


def test_mean_of_equal_values_is_that_value():
    # fsum(0.1 × 3) / 3 rounds to 0.10000000000000002; a mean never leaves its inputs.
    assert mean_with_exclusions({"a": 0.1, "b": 0.1, "c": 0.1}).value == 0.1


def test_unscored_is_excluded_not_counted_as_zero():
    assert mean_with_exclusions({"a": 80.0, "b": None}).value == 80.0


@pytest.mark.parametrize("scores", [{}, {"a": None, "b": None}])
def test_mean_withheld_when_nothing_scored(scores):
    result = mean_with_exclusions(scores)
    assert result.value is None
    assert result.withheld_reason == "nothing-scored"
    assert result.included == ()
    assert [key for key, _ in result.exclusions] == list(scores)


def test_mean_rejects_non_finite_scores():
    with pytest.raises(ValueError):
        mean_with_exclusions({"a": math.nan})


scored_maps = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=4),
    st.none() | st.floats(min_value=0.0, max_value=100.0),
    max_size=12,
)


@PROPERTY
@given(scored_maps)
def test_mean_stays_within_its_included_values(scores):
    result = mean_with_exclusions(scores)
    values = [v for v in scores.values() if v is not None]
    assert set(result.included) | {k for k, _ in result.exclusions} == set(scores)
    if values:
        assert min(values) <= result.value <= max(values)
        assert result.withheld_reason is None
    else:
        assert result.value is None


def test_complete_set_mean_over_canonical_tasks_only():
    scores = {"t1": 10.0, "t2": None, "t3": 30.0, "extra": 99.0}
    result = complete_set_mean(scores, ["t1", "t2", "t3"], {"t2": "ineligible"})
    assert result == Aggregate(
        20.0, ("t1", "t3"), (("t2", "ineligible"), ("extra", "not-in-canonical-set"))
    )


def test_complete_set_mean_withheld_when_a_canonical_task_is_missing():
    result = complete_set_mean({"t1": 10.0, "t3": 30.0}, ["t1", "t2", "t3"])
    assert result.value is None
    assert result.withheld_reason == "canonical-set-incomplete"
    assert result.included == ()
    assert result.exclusions == (("t2", "canonical-task-missing"),)


def test_macro_average_weighs_each_market_the_same():
    by_market = dict(zip(MARKETS, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], strict=True))
    result = macro_average(by_market, MARKETS)
    assert result.value == pytest.approx(0.35)
    assert result.included == tuple(MARKETS)
    assert result.withheld_reason is None


def test_macro_average_withheld_when_a_market_is_missing():
    by_market = {"KR": 0.9, "JP": 0.8, "SG": 0.7, "TW": 0.6, "TH": None}
    result = macro_average(by_market, MARKETS)
    assert result.value is None
    assert result.withheld_reason == "market-missing"
    assert result.exclusions == (("AE", "no-coverage"), ("TH", "no-coverage"))


def test_macro_average_ignores_markets_outside_scope():
    result = macro_average({"KR": 0.2, "JP": 0.4, "US": 1.0}, ["KR", "JP"])
    assert result.value == pytest.approx(0.3)
    assert result.exclusions == (("US", "not-in-market-scope"),)


# --- Sensitivity -----------------------------------------------------------
# Seed: "No official figure may be published without a sensitivity analysis over the
# scoring policy, showing how a ranking moves under alternative normalizations and
# aggregations".


def test_normalizations_and_aggregations_in_declared_order_policy_first():
    assert list(NORMALIZATIONS) == ["reference-ratio", "min-max", "rank", "log-ratio"]
    assert list(AGGREGATIONS) == [
        "product",
        "geometric-mean",
        "arithmetic-mean",
        "accuracy-only",
        "without-accuracy",
        "without-speed",
        "without-cost",
    ]
    assert BASELINE == ("reference-ratio", "product")


def test_every_normalization_is_crossed_with_every_aggregation_accuracy_alone_once():
    crossed = alternatives()
    assert crossed[0] == BASELINE and len(crossed) == len(set(crossed)) == 4 * 6 + 1
    assert [a for n, a in crossed if a == "accuracy-only"] == ["accuracy-only"]
    assert {n for n, _a in crossed} == set(NORMALIZATIONS)


COHORT = [100.0, 200.0, 200.0, 400.0]


@pytest.mark.parametrize(
    ("name", "x", "expected"),
    [
        # reference 200: at or under it is 1, over it the ratio.
        ("reference-ratio", 100.0, 1.0),
        ("reference-ratio", 400.0, 0.5),
        # min-max over the cohort: best 1, worst 0, between by distance.
        ("min-max", 100.0, 1.0),
        ("min-max", 200.0, 2 / 3),
        ("min-max", 400.0, 0.0),
        # rank: the share of the 3 others beaten, a tie counting half.
        ("rank", 100.0, 1.0),
        ("rank", 200.0, 0.5),
        ("rank", 400.0, 0.0),
        # log-ratio: 1 / (1 + ln(x / reference)).
        ("log-ratio", 100.0, 1.0),
        ("log-ratio", 200.0, 1.0),
        ("log-ratio", 400.0, 1 / (1 + math.log(2))),
    ],
)
def test_each_normalization_on_a_hand_example(name, x, expected):
    assert normalize(name, x, 200.0, COHORT) == pytest.approx(expected)


@pytest.mark.parametrize("name", ["min-max", "rank"])
def test_a_cohort_of_one_or_of_equal_readings_is_all_best(name):
    assert normalize(name, 7.0, 1.0, [7.0]) == 1.0
    assert normalize(name, 7.0, 1.0, [7.0, 7.0]) == (1.0 if name == "min-max" else 0.5)


def test_the_policy_product_is_the_audit_value():
    assert policy_product(1.0, 0.8, 0.5) == 100.0 * 1.0 * 0.8 * 0.5 == 40.0
    value = audit_score(True, 300.0, 0.07, 240.0, 0.05).value
    assert value == AGGREGATIONS["product"](
        1.0,
        normalize("reference-ratio", 300.0, 240.0, [300.0]),
        normalize("reference-ratio", 0.07, 0.05, [0.07]),
    )


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [
        ("product", 100 * 0.8 * 0.5),
        ("geometric-mean", 100 * (0.8 * 0.5) ** (1 / 3)),
        ("arithmetic-mean", 100 * (1 + 0.8 + 0.5) / 3),
        ("accuracy-only", 100.0),
        ("without-accuracy", 100 * 0.8 * 0.5),
        ("without-speed", 100 * 0.5),
        ("without-cost", 100 * 0.8),
    ],
)
def test_each_aggregation_on_the_audit_scale(aggregation, expected):
    assert AGGREGATIONS[aggregation](1.0, 0.8, 0.5) == pytest.approx(expected)
    # A failure: every form that reads accuracy gives zero; the others do not.
    failed = AGGREGATIONS[aggregation](0.0, 0.8, 0.5)
    assert (failed == 0.0) == (aggregation not in ("without-accuracy", "arithmetic-mean"))


def test_ordering_is_best_first_ties_to_the_smaller_id():
    assert ordering({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]


BASE = {"x": 3.0, "y": 2.0, "z": 1.0}


@pytest.mark.parametrize(
    ("other", "tau", "shifts"),
    [
        ({"x": 3.0, "y": 2.0, "z": 1.0}, 1.0, {"x": 0, "y": 0, "z": 0}),
        ({"z": 3.0, "y": 2.0, "x": 1.0}, -1.0, {"z": 2, "y": 0, "x": -2}),
        ({"y": 3.0, "x": 2.0, "z": 1.0}, 1 / 3, {"y": 1, "x": -1, "z": 0}),
        ({"x": 3.0, "z": 2.0, "y": 1.0}, 1 / 3, {"x": 0, "z": 1, "y": -1}),
    ],
)
def test_kendall_tau_and_rank_shifts_on_hand_examples(other, tau, shifts):
    assert kendall_tau(BASE, other) == pytest.approx(tau)
    assert rank_shifts(BASE, other) == shifts


def test_ties_are_ties_not_reversals():
    """Issue 44, item 4: "Two cells tied at 66.667 under one alternative get Kendall's tau
    -1.0 and a rank shift of 1, because ties are broken by the cell id ... Use a tau that
    accounts for ties (tau-b) and shared ranks, so a tie is never a reversal"."""
    published = {"kr-b": 70.0, "kr-a": 60.0}
    tied = {"kr-b": 66.667, "kr-a": 66.667}
    # The id order would read the tie as kr-a before kr-b: a reversal. It is none.
    assert ordering(tied) == ["kr-a", "kr-b"]
    assert kendall_tau(published, tied) is None
    assert shared_ranks(tied) == {"kr-a": 1, "kr-b": 1}
    assert rank_shifts(published, tied) == {"kr-a": 1, "kr-b": 0}
    # Identical and reversed orders read as they are.
    assert kendall_tau(published, {"kr-b": 2.0, "kr-a": 1.0}) == 1.0
    assert kendall_tau(published, {"kr-b": 1.0, "kr-a": 2.0}) == -1.0
    # With more entries, a tie counts as neither agreement nor reversal (tau-b).
    three = {"a": 3.0, "b": 2.0, "c": 1.0}
    assert kendall_tau(three, {"a": 3.0, "b": 1.0, "c": 1.0}) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau(three, {"a": 1.0, "b": 1.0, "c": 3.0}) == pytest.approx(-2 / math.sqrt(6))
    assert shared_ranks({"a": 5.0, "b": 5.0, "c": 1.0}) == {"a": 1, "b": 1, "c": 3}


def test_a_ranking_of_one_cannot_move():
    assert kendall_tau({"only": 1.0}, {"only": 2.0}) is None
    assert kendall_tau({}, {}) is None
    assert rank_shifts({"only": 1.0}, {"only": 2.0}) == {"only": 0}


@given(st.permutations(list("abcdefg")))
@PROPERTY
def test_kendall_tau_lies_in_minus_one_to_one_and_is_symmetric(permuted):
    base = {key: float(7 - i) for i, key in enumerate("abcdefg")}
    other = {key: float(7 - i) for i, key in enumerate(permuted)}
    tau = kendall_tau(base, other)
    assert -1.0 <= tau <= 1.0 and tau == pytest.approx(kendall_tau(other, base))
    assert (tau == 1.0) == (list(permuted) == list("abcdefg"))
    assert sum(rank_shifts(base, other).values()) == 0


# --- Intervals and ranks ---------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0.1, 0.3), (0.4, 0.6), False),
        ((0.4, 0.6), (0.1, 0.3), False),
        ((0.1, 0.5), (0.4, 0.6), True),
        ((0.1, 0.4), (0.4, 0.6), True),  # touching endpoints do not separate
        ((0.1, 0.9), (0.4, 0.6), True),  # nested
    ],
)
def test_intervals_overlap(a, b, expected):
    assert intervals_overlap(a, b) is expected


def test_intervals_overlap_rejects_inverted_interval():
    with pytest.raises(ValueError):
        intervals_overlap((0.6, 0.4), (0.1, 0.2))


def test_separable_ranks_only_where_intervals_separate():
    entries = [
        ("a", (0.80, 0.95)),
        ("b", (0.60, 0.70)),
        ("c", (0.40, 0.65)),
        ("d", (0.10, 0.30)),
    ]
    assert separable_ranks(entries) == {"a": 1, "b": None, "c": None, "d": 4}


def test_separable_ranks_single_entry_is_first():
    assert separable_ranks([("only", (0.2, 0.4))]) == {"only": 1}


def test_separable_ranks_touching_intervals_are_not_separated():
    assert separable_ranks([("a", (0.5, 0.7)), ("b", (0.3, 0.5))]) == {"a": None, "b": None}


def test_separable_ranks_checks_beyond_the_neighbours():
    # c clears its neighbour b but sits inside a's wide interval two places up.
    entries = [("a", (0.30, 0.95)), ("b", (0.70, 0.75)), ("c", (0.50, 0.60))]
    assert separable_ranks(entries) == {"a": None, "b": None, "c": None}


def test_separable_ranks_rejects_duplicate_ids():
    with pytest.raises(ValueError):
        separable_ranks([("a", (0.1, 0.2)), ("a", (0.5, 0.6))])


# --- Publication gate ------------------------------------------------------

PUBLISHABLE = dict(
    critical_safety_events=0,
    data_status="official",
    verification="independent-rerun",
    eligible_runs=30,
    attempts=32,
    ineligible_runs=2,
    coverage=0.8,
    fewest_runs_per_task=3,
    tasks_validated=True,
    locally_reviewed=True,
    lineage_complete=True,
    sensitivity_ready=True,
)
THRESHOLDS = dict(min_eligible_runs=30, min_coverage=80.0, runs_per_task=3, max_discard_rate=6.25)


def gate(cell=None, thresholds=None):
    return gate_blockers(
        CellEvidence(**{**PUBLISHABLE, **(cell or {})}),
        Thresholds(**{**THRESHOLDS, **(thresholds or {})}),
    )


def test_blockers_declared_in_gate_order():
    assert [b.value for b in Blocker] == [
        "stale",
        "critical-safety-event",
        "demo-or-preview-data",
        "not-independent-rerun",
        "task-not-validated",
        "not-locally-reviewed",
        "platform-lineage-incomplete",
        "thresholds-not-set",
        "below-minimum-eligible-runs",
        "below-runs-per-task",
        "above-maximum-discard-rate",
        "below-minimum-coverage",
        "no-sensitivity-analysis",
        "platform-parity",
    ]
    assert Blocker.CRITICAL_SAFETY == "critical-safety-event"


def test_gate_passes_a_cell_meeting_every_threshold_exactly():
    """2 of 32 discarded is 6.25%: at the maximum, not above it."""
    assert gate() == []


@pytest.mark.parametrize(
    ("cell", "thresholds", "blocker"),
    [
        ({"critical_safety_events": 1}, {}, Blocker.CRITICAL_SAFETY),
        ({"data_status": "demo"}, {}, Blocker.DEMO_OR_PREVIEW),
        ({"data_status": "preview"}, {}, Blocker.DEMO_OR_PREVIEW),
        ({"verification": "provisional"}, {}, Blocker.NOT_INDEPENDENT),
        ({"verification": "self-reported"}, {}, Blocker.NOT_INDEPENDENT),
        ({"tasks_validated": False}, {}, Blocker.TASK_NOT_VALIDATED),
        ({"locally_reviewed": False}, {}, Blocker.NOT_LOCALLY_REVIEWED),
        ({"lineage_complete": False}, {}, Blocker.LINEAGE_INCOMPLETE),
        ({}, {"min_eligible_runs": None}, Blocker.THRESHOLDS_UNSET),
        ({}, {"min_coverage": None}, Blocker.THRESHOLDS_UNSET),
        ({}, {"runs_per_task": None}, Blocker.THRESHOLDS_UNSET),
        ({}, {"max_discard_rate": None}, Blocker.THRESHOLDS_UNSET),
        ({"eligible_runs": 29}, {}, Blocker.BELOW_MIN_RUNS),
        ({"fewest_runs_per_task": 2}, {}, Blocker.BELOW_RUNS_PER_TASK),
        ({"fewest_runs_per_task": None}, {}, Blocker.BELOW_RUNS_PER_TASK),
        ({"ineligible_runs": 3}, {}, Blocker.ABOVE_DISCARD_RATE),
        ({"coverage": 0.79}, {}, Blocker.BELOW_MIN_COVERAGE),
        ({"coverage": None}, {}, Blocker.BELOW_MIN_COVERAGE),
        ({"sensitivity_ready": False}, {}, Blocker.NO_SENSITIVITY),
    ],
)
def test_each_blocker_alone(cell, thresholds, blocker):
    """Seed: "Publication thresholds are not set for this edition: MICA has not yet agreed
    runs per task, a minimum cell sample size, task coverage, or a maximum ineligible
    discard rate, so no result can be marked publication eligible." """
    assert gate(cell, thresholds) == [blocker]


def test_nothing_attempted_is_no_discard_rate_and_blocks():
    assert Blocker.ABOVE_DISCARD_RATE in gate({"attempts": 0, "ineligible_runs": 0})
    assert discard_rate(0, 0) is None
    assert discard_rate(1, 4) == 25.0


def test_all_blockers_in_order():
    result = gate(
        {
            "critical_safety_events": 2,
            "data_status": "demo",
            "verification": "self-reported",
            "tasks_validated": False,
            "locally_reviewed": False,
            "lineage_complete": False,
            "eligible_runs": 1,
            "fewest_runs_per_task": 1,
            "ineligible_runs": 31,
            "coverage": 0.1,
            "sensitivity_ready": False,
        }
    )
    # Stale is a reader's, parity a table's (governance.gate): never one cell's evidence.
    assert result == [
        b
        for b in Blocker
        if b not in (Blocker.STALE, Blocker.THRESHOLDS_UNSET, Blocker.PLATFORM_PARITY)
    ]


def test_unset_thresholds_refuse_without_evaluating_the_comparisons():
    result = gate(
        {"critical_safety_events": 1, "data_status": "preview", "eligible_runs": 0},
        {"min_eligible_runs": None, "min_coverage": None},
    )
    assert result == [Blocker.CRITICAL_SAFETY, Blocker.DEMO_OR_PREVIEW, Blocker.THRESHOLDS_UNSET]


def test_coverage_fraction_meets_a_percentage_threshold_exactly():
    # 29 of 100 tasks against a 29% minimum: 0.29 × 100 rounds to 28.999...96.
    assert gate({"coverage": 29 / 100}, {"min_coverage": 29.0}) == []


@pytest.mark.parametrize(
    ("cell", "thresholds"),
    [
        ({"coverage": 85.0}, {}),  # a percentage passed where a fraction belongs
        ({}, {"min_coverage": 150.0}),
        ({}, {"max_discard_rate": -1.0}),
        ({"critical_safety_events": -1}, {}),
        ({"data_status": "draft"}, {}),
    ],
)
def test_gate_rejects_malformed_inputs(cell, thresholds):
    with pytest.raises(ValueError):
        gate(cell, thresholds)


# --- Refusals name what is wrong --------------------------------------------

REFUSALS = [
    (lambda: wilson_interval(-1, 3), "counts cannot be negative"),
    (lambda: wilson_interval(4, 3), "successes cannot exceed eligible runs"),
    (lambda: wilson_interval(1, 3, z=0.0), "z must be a positive finite number"),
    (lambda: intervals_overlap((0.6, 0.4), (0.1, 0.2)), "interval (0.6, 0.4) has low above high"),
    (lambda: separable_ranks([("a", (0, 1)), ("a", (0, 1))]), "entry ids must be unique"),
    (lambda: percentile([1.0], 1.5), "p must lie in [0, 1]"),
    (lambda: percentile([1.0, math.inf], 0.5), "latencies must be finite"),
    (lambda: cost_per_success(1.0, -1), "successes cannot be negative"),
    (lambda: cost_per_success(-1.0, 1), "cost must be a finite, non-negative USD amount"),
    (lambda: mean_with_exclusions({"a": math.nan}), "scores must be finite"),
    (
        lambda: normalize("min-max", 0.0, 1.0, [0.0]),
        "a reading and its reference must be positive finite numbers",
    ),
    (
        lambda: normalize("rank", 1.0, math.inf, [1.0]),
        "a reading and its reference must be positive finite numbers",
    ),
    (lambda: normalize("rank", 1.0, 1.0, [2.0]), "the reading must belong to its cohort"),
    (lambda: ordering({"a": math.nan}), "values must be finite"),
    (lambda: kendall_tau({"a": 1.0}, {"b": 1.0}), "the two tables must hold the same entries"),
    (lambda: rank_shifts({"a": 1.0}, {"a": math.inf}), "values must be finite"),
    (lambda: shared_ranks({"a": math.nan}), "values must be finite"),
    (lambda: gate({"critical_safety_events": -1}), "critical safety events cannot be negative"),
    (lambda: gate({"data_status": "draft"}), "unknown data status 'draft'"),
    (lambda: gate({"coverage": 1.5}), "coverage is a fraction in [0, 1]"),
    (lambda: gate({}, {"min_coverage": 100.5}), "min_coverage is a percentage in [0, 100]"),
    (lambda: gate({}, {"max_discard_rate": -0.5}), "max_discard_rate is a percentage in [0, 100]"),
]


@pytest.mark.parametrize(("call", "message"), REFUSALS, ids=[m for _c, m in REFUSALS])
def test_every_refusal_names_what_is_wrong(call, message):
    with pytest.raises(ValueError) as refused:
        call()
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("cell", "thresholds"),
    [
        ({"coverage": 0.0}, {"min_coverage": 0.0}),
        ({"coverage": 1.0}, {"min_coverage": 100.0}),
        ({}, {"min_coverage": 0.5, "max_discard_rate": 100.0}),
        ({"ineligible_runs": 0}, {"max_discard_rate": 0.0}),
    ],
)
def test_the_edges_of_every_range_are_inside_it(cell, thresholds):
    """Coverage is a fraction in [0, 1] and thresholds percentages in [0, 100], edges
    included: a cell at 0 % against a 0 % minimum or at 100 % against 100 % passes."""
    assert gate(cell, thresholds) == []


def test_a_coverage_just_below_a_full_minimum_is_below_it():
    assert gate({"coverage": 0.995}, {"min_coverage": 100.0}) == [Blocker.BELOW_MIN_COVERAGE]


def test_zero_width_intervals_and_components_at_zero_are_valid():
    assert intervals_overlap((0.5, 0.5), (0.5, 0.5))
    assert ordering({"a": 0.0}) == ["a"] and policy_product(0.0, 1.0, 1.0) == 0.0


def test_any_positive_z_is_accepted():
    low, high = wilson_interval(1, 2, z=0.5)
    assert 0 < low < 0.5 < high < 1


def test_a_withheld_macro_average_includes_nothing():
    result = macro_average({"KR": 0.5}, MARKETS)
    assert result.included == () and result.value is None


# --- Module boundary -------------------------------------------------------


def test_scoring_imports_only_the_standard_library():
    tree = ast.parse(Path(scoring.__file__).read_text(encoding="utf-8"))
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    allowed = set(sys.stdlib_module_names)
    if "mutants" in Path(scoring.__file__).parts:
        allowed.add("mutmut")  # the trampoline of a copy `make mutation` made
    assert imported <= allowed
    assert "django" not in imported


# --- Access parity across a table ----------------------------------------------------


def test_parity_conflicts_name_each_other_per_task_version():
    """Seed: "identical across systems for a given task version"."""
    table = {
        "a": {1: ["Naver"], 2: ["Naver"]},
        "b": {1: ["Naver"], 2: ["Daum"]},
        "c": {1: ["Naver"]},
    }
    assert platform_parity_conflicts(table) == {
        "a": [ParityConflict(2, ("Naver",), "b", ("Daum",))],
        "b": [ParityConflict(2, ("Daum",), "a", ("Naver",))],
    }


def test_a_version_run_on_two_platforms_differs_from_one_run_on_either():
    table = {"a": {1: ["Naver", "Daum"]}, "b": {1: ["Naver"]}, "c": {1: ["Daum", "Naver"]}}
    conflicts = platform_parity_conflicts(table)
    assert set(conflicts) == {"a", "b", "c"}
    assert conflicts["b"] == [ParityConflict(1, ("Naver",), "a", ("Daum", "Naver"))]


def test_one_cell_alone_or_versions_run_by_one_system_only_have_no_conflict():
    assert platform_parity_conflicts({"a": {1: ["Naver"]}}) == {}
    assert platform_parity_conflicts({"a": {1: ["Naver"]}, "b": {2: ["Daum"]}}) == {}
    assert platform_parity_conflicts({}) == {}
