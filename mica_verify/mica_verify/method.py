"""The method's formulas, written from its text ("Scoring" in the methodology), not from
the portal's code. Missing is None, never zero."""

import math

Z = 1.96  # the method states z = 1.96


def accuracy(successes, runs):
    return successes / runs if runs else None


def wilson(successes, runs):
    """The 95% Wilson score interval, exact at 0% and 100%; None without a run."""
    if not runs:
        return None
    p = successes / runs
    spread = Z * math.sqrt(p * (1 - p) / runs + Z * Z / (4 * runs * runs))
    centre = p + Z * Z / (2 * runs)
    scale = 1 + Z * Z / runs
    low = 0.0 if successes == 0 else max(0.0, (centre - spread) / scale)
    high = 1.0 if successes == runs else min(1.0, (centre + spread) / scale)
    return low, high


def percentile_r7(values, p):
    """Hyndman and Fan's R-7: linear interpolation between order statistics."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    value = ordered[below] + (position - below) * (ordered[above] - ordered[below])
    return min(max(value, ordered[below]), ordered[above])


def cost_per_success(total_usd, successes):
    """Undefined at zero successes; a zero total is unmetered, "not measured"."""
    if successes == 0 or total_usd == 0:
        return None
    return total_usd / successes


def discard_rate(discarded, attempts):
    return 100 * discarded / attempts if attempts else None


def pass_hat_k(runs, successes, k):
    """The chance that k of a task's runs drawn without replacement all succeeded."""
    if k > runs:
        return None
    return math.comb(successes, k) / math.comb(runs, k)


def measured(x):
    return x is not None and math.isfinite(x) and x > 0


def audit_value(success, seconds, cost, speed_reference, cost_reference):
    """100 × a × min(1, speed ref / s) × min(1, cost ref / USD): (value, reason)."""
    if not (measured(speed_reference) and measured(cost_reference)):
        return None, "reference-missing"
    if not measured(seconds):
        return None, "speed-not-measured"
    if not measured(cost):
        return None, "cost-not-measured"
    a = 1.0 if success else 0.0
    return 100.0 * a * min(1.0, speed_reference / seconds) * min(1.0, cost_reference / cost), None


def mean(values):
    """An arithmetic mean kept within its own inputs; None for nothing."""
    if not values:
        return None
    return min(max(math.fsum(values) / len(values), min(values)), max(values))


def price_proximity(chosen, reference):
    difference = chosen - reference
    return {
        "chosen_total": chosen,
        "reference_total": reference,
        "difference": difference,
        "ratio": chosen / reference,
        "premium_percent": 100 * difference / reference,
    }
