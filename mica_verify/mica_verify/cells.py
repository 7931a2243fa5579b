"""Every cell of mica-gate.json recomputed from its attempts in mica-attempts.json, the
canonical task sets of mica-catalogue.json and the edition's thresholds."""

import math

from mica_verify import method

AREA = "cell figures"
AREA_ATTEMPTS = "attempt records"
SELF_REPORTED, PROVISIONAL, INDEPENDENT = "self-reported", "provisional", "independent-rerun"
VERIFICATION_ORDER = (SELF_REPORTED, PROVISIONAL, INDEPENDENT)
DATA_STATUS_ORDER = ("demo", "preview", "official")
LOCALIZED = "validated-localized"
# What the method names a cell that cannot be scored for a reason of its attempt's class.
SYNTHETIC, NOT_VALIDATED = "synthetic-attempt", "task-not-validated"


def counted(attempt):
    """Eligible, valid, not invalidated (or the invalidation reversed), and not on a
    fallback without an accepted outage: the attempts every figure is counted from."""
    return (
        attempt["eligible"]
        and attempt["invalid_reason"] is None
        and attempt["invalidation"] != "invalidated"
        and (not attempt["fallback_invoked"] or attempt["fallback_justified"])
    )


def task_key(attempt):
    """A task's key in its cell: its id, or a holdout task's number."""
    return attempt["task"] or f"holdout {attempt['holdout_task']}"


def weakest(values, order):
    present = [value for value in order if value in values]
    return present[0] if present else order[0]


def canonical_sets(catalogue):
    """(market, family) -> the public tasks that apply there."""
    sets = {}
    for task in catalogue["tasks"]:
        for market in task["markets"]:
            sets.setdefault((market, task["family"]), set()).add(task["id"])
    return sets


def audit_unmeasured(attempt):
    """Why an attempt has no audit value (its class, its task, its references or its
    readings), or None when it has one."""
    if attempt["attempt_class"] != LOCALIZED:
        return SYNTHETIC
    if not attempt["task_validated"]:
        return NOT_VALIDATED
    if not attempt["references_registered"]:
        return "reference-missing"
    if not method.measured(attempt["seconds"]):
        return "speed-not-measured"
    if not method.measured(attempt["cost_usd"]):
        return "cost-not-measured"
    return None


def audit(attempt):
    """(audit value, None) of an attempt on a public task, or (None, why not)."""
    reason = audit_unmeasured(attempt)
    if reason is not None:
        return None, reason
    return method.audit_value(
        attempt["confirmed_success"],
        attempt["seconds"],
        attempt["cost_usd"],
        attempt["speed_reference_seconds"],
        attempt["cost_reference_usd"],
    )


def repeats(runs):
    per_task = {}
    for run in runs:
        n, c = per_task.get(task_key(run), (0, 0))
        per_task[task_key(run)] = (n + 1, c + run["confirmed_success"])
    return per_task


def k_max(per_task, runs_per_task):
    if runs_per_task:
        return runs_per_task
    return min((n for n, _c in per_task.values()), default=None)


def pass_k(per_task, k_top):
    values = []
    for k in range(1, (k_top or 0) + 1):
        each = [method.pass_hat_k(n, c, k) for n, c in per_task.values()]
        defined = bool(each) and None not in each
        values.append({"k": k, "value": math.fsum(each) / len(each) if defined else None})
    return values


def reliability(per_task, runs_per_task):
    top = k_max(per_task, runs_per_task)
    repeated = [c in (0, n) for n, c in per_task.values() if n >= 2]
    return {
        "tasks": len(per_task),
        "tasks_repeated": len(repeated),
        "tasks_agreeing": sum(repeated),
        "agreement": sum(repeated) / len(repeated) if repeated else None,
        "k_max": top,
        "pass_k": pass_k(per_task, top),
    }


def commerce(runs):
    # Over the confirmed successes only, as the gate takes them (governance.gate).
    successes = [run for run in runs if run["confirmed_success"]]
    recorded = [run["commerce"] for run in successes if run["commerce"]]
    if not recorded:
        return None
    found = [method.price_proximity(r["chosen_total"], r["reference_total"]) for r in recorded]

    def median(name):
        return method.percentile_r7([p[name] for p in found], 0.5)

    premiums = [p["premium_percent"] for p in found]
    return {
        "currency": recorded[0]["currency"],
        "attempts": len(recorded),
        "attempts_without_totals": len(successes) - len(recorded),
        "median_chosen_total": median("chosen_total"),
        "median_reference_total": median("reference_total"),
        "median_difference": median("difference"),
        "median_ratio": median("ratio"),
        "median_premium_percent": median("premium_percent"),
        "lowest_premium_percent": min(premiums),
        "highest_premium_percent": max(premiums),
    }


def task_score(runs, top):
    audits = [audit(run) for run in runs]
    values = [value for value, _reason in audits if value is not None]
    successes = sum(run["confirmed_success"] for run in runs)
    return {
        "value": math.fsum(values) / len(values) if values else None,
        "scored_attempts": len(values),
        "excluded_attempts": len(runs) - len(values),
        "exclusion_reasons": sorted({reason for value, reason in audits if value is None}),
        "eligible_runs": len(runs),
        "successes": successes,
        "repeats_agree": (successes in (0, len(runs))) if len(runs) >= 2 else None,
        "pass_k": [
            {"k": k, "value": method.pass_hat_k(len(runs), successes, k)}
            for k in range(1, (top or 0) + 1)
        ],
        "commerce": commerce(runs),
        "median_success_seconds": method.percentile_r7(
            [run["seconds"] for run in runs if run["confirmed_success"]], 0.5
        ),
        "total_cost_usd": math.fsum(run["cost_usd"] for run in runs),
    }


def public_tasks(runs):
    by_task = {}
    for run in runs:
        if run["task"] is not None:
            by_task.setdefault(run["task"], []).append(run)
    return dict(sorted(by_task.items()))


def components(runs):
    """Per public task, [accuracy, seconds, USD, speed reference, cost reference] of each
    attempt with an audit value: what the sensitivity analysis starts from."""
    by_task = {}
    for slug, mine in public_tasks(runs).items():
        for run in mine:
            if audit(run)[0] is not None:
                by_task.setdefault(slug, []).append(
                    [
                        1.0 if run["confirmed_success"] else 0.0,
                        run["seconds"],
                        run["cost_usd"],
                        run["speed_reference_seconds"],
                        run["cost_reference_usd"],
                    ]
                )
    return by_task or None


def coverage(runs, canonical):
    per_task = {}
    for run in runs:
        if run["task"] in canonical:
            per_task[run["task"]] = per_task.get(run["task"], 0) + 1
    return {
        "tasks_attempted": len(per_task),
        "tasks_defined": len(canonical),
        "coverage": len(per_task) / len(canonical) if canonical else None,
        "fewest_runs_per_task": min(per_task.values()) if per_task else None,
    }


def sensitivity_ready(runs):
    """Every counted attempt that could carry an audit value (a localized attempt on a
    validated task) carries one, holdout tasks included."""
    could = [audit_unmeasured(run) for run in runs]
    could = [reason for reason in could if reason not in (SYNTHETIC, NOT_VALIDATED)]
    return bool(could) and all(reason is None for reason in could)


def figures(attempts, canonical, runs_per_task):
    """A cell's published figures from all its attempts."""
    runs = [attempt for attempt in attempts if counted(attempt)]
    successes = sum(run["confirmed_success"] for run in runs)
    interval = method.wilson(successes, len(runs))
    per_task = repeats(runs)
    total = math.fsum(run["cost_usd"] for run in runs)
    discarded = sum(not attempt["eligible"] for attempt in attempts)
    memory = [run["memory_exercised"] for run in runs]
    latencies = [run["seconds"] for run in runs if run["confirmed_success"]]
    top = k_max(per_task, runs_per_task)
    return {
        "eligible_runs": len(runs),
        "successes": successes,
        "accuracy": method.accuracy(successes, len(runs)),
        "accuracy_low": interval[0] if interval else None,
        "accuracy_high": interval[1] if interval else None,
        "reliability": reliability(per_task, runs_per_task),
        "p50_seconds": method.percentile_r7(latencies, 0.5),
        "p95_seconds": method.percentile_r7(latencies, 0.95),
        "cost_per_success_usd": method.cost_per_success(total, successes),
        **coverage(runs, canonical),
        "discard_rate": method.discard_rate(discarded, len(attempts)),
        "critical_safety_events": sum(a["critical_safety_event"] for a in attempts),
        "memory": {
            "exercised": memory.count(True),
            "declared_not_exercised": memory.count(False),
            "not_stated": memory.count(None),
        },
        "verification": weakest({run["verification"] for run in runs}, VERIFICATION_ORDER),
        "data_status": weakest({a["data_status"] for a in attempts}, DATA_STATUS_ORDER),
        "task_scores": {slug: task_score(mine, top) for slug, mine in public_tasks(runs).items()},
        "components": components(runs),
    }, runs


def threshold_blockers(figures, thresholds):
    if None in thresholds.values():
        return ["thresholds-not-set"]
    rate, fewest, share = (
        figures["discard_rate"],
        figures["fewest_runs_per_task"],
        figures["coverage"],
    )
    rules = [
        ("below-minimum-eligible-runs", figures["eligible_runs"] < thresholds["min_eligible_runs"]),
        ("below-runs-per-task", fewest is None or fewest < thresholds["runs_per_task"]),
        (
            "above-maximum-discard-rate",
            rate is None or rate > thresholds["max_ineligible_discard_rate"],
        ),
        ("below-minimum-coverage", share is None or share < thresholds["min_coverage"] / 100),
    ]
    return [code for code, applies in rules if applies]


def blockers(figures, runs, thresholds):
    """Every blocker one cell's own records determine, in the method's order (platform
    parity is judged across a table afterwards)."""
    rules = [
        ("critical-safety-event", figures["critical_safety_events"] > 0),
        ("demo-or-preview-data", figures["data_status"] in ("demo", "preview")),
        ("not-independent-rerun", figures["verification"] != INDEPENDENT),
        ("task-not-validated", not all(run["task_validated"] for run in runs)),
        ("not-locally-reviewed", not all(run["locally_reviewed"] for run in runs)),
        ("platform-lineage-incomplete", not all(run["lineage_complete"] for run in runs)),
    ]
    found = [code for code, applies in rules if applies]
    found += threshold_blockers(figures, thresholds)
    if not (sensitivity_ready(runs) and figures["components"] is not None):
        found.append("no-sensitivity-analysis")
    return found


def version_key(run):
    if run["task"] is not None:
        return f"{run['task']}@{run['task_version']}"
    return f"holdout version {run['holdout_version']}"


def parity_conflicts(table):
    """{cell: bool}: whether another cell of the table ran one of its task versions on
    another set of platforms. `table`: {cell: {version: set of platform names}}."""
    by_version = {}
    for cell, versions in table.items():
        for version, platforms in versions.items():
            by_version.setdefault(version, {}).setdefault(frozenset(platforms), set()).add(cell)
    conflicted = set()
    for groups in by_version.values():
        if len(groups) > 1:
            conflicted |= set().union(*groups.values())
    return {cell: cell in conflicted for cell in table}


def standing(data_status, verification, eligible):
    if data_status in ("demo", "preview"):
        return data_status
    if verification == SELF_REPORTED:
        return "self-reported"
    if verification != INDEPENDENT:
        return "provisional"
    return "official" if eligible else "withheld"
