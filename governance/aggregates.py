"""Family and market figures above the cells: withheld, with the reason, unless earned.

A mean needs the pre-registered canonical task set complete; a cross-market
figure is a country macro-average that needs every market; a critical safety
event in any cell below withholds every figure above it, and so does any cell
below that the gate blocks (self-reported, demo, stale, ...).
"""

from django.utils.translation import gettext_lazy as _

from catalogue.selectors import task_public_list
from markets.selectors import market_list
from mica import scoring

SAFETY_WITHHELD = "critical-safety-event-below"
BLOCKED_WITHHELD = "blocked-cell-below"
WITHHELD_SENTENCES = {
    scoring.WITHHELD_CANONICAL_SET_INCOMPLETE: _(
        "Withheld: the canonical task set is not complete."
    ),
    scoring.WITHHELD_MARKET_MISSING: _("Withheld: a market is missing."),
    scoring.WITHHELD_NOTHING_SCORED: _("Withheld: no task could be scored."),
    SAFETY_WITHHELD: _("Withheld: a cell below carries a critical safety event."),
    BLOCKED_WITHHELD: _("Withheld: a cell below is blocked by the publication gate."),
}


def market_codes():
    return [market.code for market in market_list()]


def canonical_tasks():
    """(market code, family slug) -> the public task ids that apply there."""
    index = {}
    for task in task_public_list():
        for entry in task.current_version.applicability.all():
            if entry.applies:
                index.setdefault((entry.market.code, task.family.slug), set()).add(task.slug)
    return index


def published_task_values(cell):
    """The cell's per-task audit values as published: {task: value or None}."""
    return {slug: entry["value"] for slug, entry in cell.task_scores.items()}


def _scores(cells, task_values):
    return {slug: value for cell in cells for slug, value in task_values(cell).items()}


def _withheld(aggregate, cells):
    """A figure inherits the state of the cells below it: one blocked cell withholds it."""
    if any(cell.critical_safety_events for cell in cells):
        return scoring.Aggregate(None, aggregate.included, aggregate.exclusions, SAFETY_WITHHELD)
    if aggregate.withheld_reason is None and any(not cell.eligible for cell in cells):
        return scoring.Aggregate(None, aggregate.included, aggregate.exclusions, BLOCKED_WITHHELD)
    return aggregate


def snapshot_aggregates(cells, canonical=None, codes=None, task_values=published_task_values):
    """Market means and cross-market family macro-averages for one snapshot's cells, from
    each cell's per-task values (the published ones, or the sensitivity analysis's)."""
    canonical = canonical if canonical is not None else canonical_tasks()
    codes = codes if codes is not None else market_codes()
    families = sorted({cell.family.slug for cell in cells})
    markets = {}
    for code in codes:
        in_market = [c for c in cells if c.market.code == code]
        keys = set().union(*[v for (m, _f), v in canonical.items() if m == code])
        markets[code] = _withheld(
            scoring.complete_set_mean(_scores(in_market, task_values), keys), in_market
        )
    family_figures = {}
    for family in families:
        in_family = [c for c in cells if c.family.slug == family]
        per_market = {}
        for code in codes:
            cell_list = [c for c in in_family if c.market.code == code]
            mean = scoring.complete_set_mean(
                _scores(cell_list, task_values), canonical.get((code, family), set())
            )
            per_market[code] = mean.value
        family_figures[family] = _withheld(scoring.macro_average(per_market, codes), in_family)
    return {"markets": markets, "families": family_figures}


def aggregate_view(label, aggregate):
    return {
        "label": label,
        "value": aggregate.value,
        "reason": WITHHELD_SENTENCES.get(aggregate.withheld_reason, aggregate.withheld_reason),
        "reason_code": aggregate.withheld_reason,
        "exclusions": aggregate.exclusions,
    }


# --- Reliability across repeats, within a cell ------------------------------------------
#
# Seed: "Repeated attempts, interval estimates and reliability across repeats are required
# before any comparison between systems is published." Counted by the gate from the
# cell's counted runs, each task's repeats being its eligible runs in the cell.


def repeats_k_max(per_task, runs_per_task):
    """The largest k pass^k is reported for: the edition's runs per task; while the edition
    sets none (or asks for no run, 0), the fewest eligible runs any task of the cell has
    (None without a run)."""
    if runs_per_task:
        return runs_per_task
    return min((n for n, _c in per_task.values()), default=None)


def _pass_k(pairs):
    return [{"k": k, "value": value} for k, value in pairs]


def task_reliability(n, c, k_max):
    """One task's repeats: whether they agree (None when run once) and pass^k for
    k = 1 … k_max (None where the task was run fewer than k times)."""
    return {
        "repeats_agree": scoring.repeats_agree(n, c),
        "pass_k": _pass_k((k, scoring.pass_hat_k(n, c, k)) for k in range(1, (k_max or 0) + 1)),
    }


def cell_reliability(per_task, runs_per_task):
    """A cell's reliability from each task's (eligible runs, successes), holdout tasks
    included and never named: the share of repeated tasks whose repeats agree, and pass^k
    averaged over the tasks. A cell with no repeated task has no agreement, not zero."""
    k_max = repeats_k_max(per_task, runs_per_task)
    figures = scoring.reliability(per_task, k_max)
    return {
        "tasks": figures.tasks,
        "tasks_repeated": figures.tasks_repeated,
        "tasks_agreeing": figures.tasks_agreeing,
        "agreement": figures.agreement,
        "k_max": k_max,
        "pass_k": _pass_k(figures.pass_k),
    }


# --- What the operational contract states and the record keeps -------------------------


def commerce_proximity(totals):
    """One task's commerce results from its counted runs' (chosen total, reference total,
    currency), the chosen total None where a run recorded none: the medians of the chosen
    total, the lowest valid total, their difference, ratio and premium, with the premium's
    range. None when no run recorded a total: the task reported no commerce result.

    Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium. No result is called the market-wide absolute lowest price."
    """
    recorded = [(chosen, reference, currency) for chosen, reference, currency in totals if chosen]
    if not recorded:
        return None
    found = [scoring.price_proximity(chosen, reference) for chosen, reference, _c in recorded]

    def median(name):
        return scoring.percentile([getattr(p, name) for p in found], 0.5)

    premiums = [p.premium_percent for p in found]
    return {
        "currency": recorded[0][2],
        "attempts": len(recorded),
        "attempts_without_totals": len(totals) - len(recorded),
        "median_chosen_total": median("chosen_total"),
        "median_reference_total": median("reference_total"),
        "median_difference": median("difference"),
        "median_ratio": median("ratio"),
        "median_premium_percent": median("premium_percent"),
        "lowest_premium_percent": min(premiums),
        "highest_premium_percent": max(premiums),
    }


def memory_record(states):
    """Seed: "memory declared but not exercised is recorded as such": the counted runs
    whose declared memory was exercised, was not, or whose record does not say (never
    counted as not exercised)."""
    states = list(states)
    return {
        "exercised": sum(1 for state in states if state is True),
        "declared_not_exercised": sum(1 for state in states if state is False),
        "not_stated": sum(1 for state in states if state is None),
    }
