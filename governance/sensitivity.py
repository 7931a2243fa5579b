"""The sensitivity analysis every official figure is published with.

Seed: "No official figure may be published without a sensitivity analysis over the
scoring policy, showing how a ranking moves under alternative normalizations and
aggregations". Every published ranking is redone under each normalization of speed
and cost crossed with each aggregation (mica.scoring.alternatives), from each scored
attempt's raw axes; the figures above the attempts are then averaged exactly as the
published ones are, so the policy's own alternative reproduces the published figure.

Three levels, each listing only figures that are published:
- cells: per market and family, the cells that pass the gate, by their audit figure
  (the mean of their per-task audit values);
- markets: per market, the snapshots whose market figure is not withheld;
- families: per family, the snapshots whose cross-market macro-average is not withheld.
"""

from math import fsum

from django.utils import translation
from django.utils.translation import gettext_lazy as _

from governance.aggregates import (
    canonical_tasks,
    market_codes,
    published_task_values,
    snapshot_aggregates,
)
from mica import scoring
from mica.bilingual import LANGUAGES

LEVEL_CELL, LEVEL_MARKET, LEVEL_FAMILY = "cell", "market", "family"

LEVEL_LABELS = {
    LEVEL_CELL: _("Cells of one market and family"),
    LEVEL_MARKET: _("Market figures"),
    LEVEL_FAMILY: _("Cross-market family figures"),
}
NORMALIZATION_LABELS = {
    "reference-ratio": _("Reference ratio (the policy)"),
    "min-max": _("Min-max over the cohort"),
    "rank": _("Rank within the cohort"),
    "log-ratio": _("Log ratio to the reference"),
}
AGGREGATION_LABELS = {
    "product": _("Product (the policy)"),
    "geometric-mean": _("Geometric mean"),
    "arithmetic-mean": _("Arithmetic mean"),
    "accuracy-only": _("Accuracy only"),
    "without-accuracy": _("Without accuracy"),
    "without-speed": _("Without speed"),
    "without-cost": _("Without cost"),
}
TOO_FEW = _("Only one figure is published here: a ranking of one cannot move.")


def alternative_code(alternative):
    return "/".join(alternative)


def _cohorts(cells):
    """(market, task) -> (seconds, USD) of every scored attempt of the published cells:
    what min-max and rank normalize against."""
    cohorts = {}
    for cell in cells:
        for slug, attempts in (cell.components or {}).items():
            seconds, costs = cohorts.setdefault((cell.market.code, slug), ([], []))
            seconds.extend(attempt[1] for attempt in attempts)
            costs.extend(attempt[2] for attempt in attempts)
    return cohorts


def _task_value(attempts, alternative, cohort):
    """The mean over the task's scored attempts of their value under `alternative`, as the
    gate takes the mean of their audit values."""
    normalization, aggregation = alternative
    combine = scoring.AGGREGATIONS[aggregation]
    seconds, costs = cohort
    values = [
        combine(
            accuracy,
            scoring.normalize(normalization, taken, speed_reference, seconds),
            scoring.normalize(normalization, paid, cost_reference, costs),
        )
        for accuracy, taken, paid, speed_reference, cost_reference in attempts
    ]
    return fsum(values) / len(values)


def task_values_under(alternative, cohorts):
    """A function giving a cell's per-task values under `alternative`, shaped as its
    published task scores (a task without a scored attempt stays None). A cell outside the
    published ones keeps its published values: every figure above it is withheld anyway."""

    def task_values(cell):
        scored = cell.components or {}
        if not cell.eligible:
            return published_task_values(cell)
        return {
            slug: _task_value(scored[slug], alternative, cohorts[(cell.market.code, slug)])
            if slug in scored
            else None
            for slug in cell.task_scores
        }

    return task_values


def cell_figure(task_values):
    """A cell's audit figure: the mean of its per-task audit values, None when none."""
    return scoring.mean_with_exclusions(task_values).value


def snapshot_id(snapshot):
    return f"{snapshot.system.slug}--{snapshot.version}"


def _collect(cells, cohorts, canonical, codes):
    """{(level, market, family): {alternative: {entry: value}}} over published figures."""
    tables = {}
    snapshots = {}
    for cell in cells:
        snapshots.setdefault(cell.snapshot, []).append(cell)
    for alternative in scoring.alternatives():
        task_values = task_values_under(alternative, cohorts)
        for cell in cells:
            if cell.eligible and cell.components:
                key = (LEVEL_CELL, cell.market.code, cell.family.slug)
                value = cell_figure(task_values(cell))
                tables.setdefault(key, {}).setdefault(alternative, {})[cell.cell_id] = value
        for snapshot, mine in snapshots.items():
            figures = snapshot_aggregates(mine, canonical, codes, task_values)
            for level, scope in ((LEVEL_MARKET, "markets"), (LEVEL_FAMILY, "families")):
                for name, aggregate in figures[scope].items():
                    if aggregate.value is None:
                        continue
                    key = (level, name, None) if level == LEVEL_MARKET else (level, None, name)
                    entries = tables.setdefault(key, {}).setdefault(alternative, {})
                    entries[snapshot_id(snapshot)] = aggregate.value
    return tables


def _movement(base, alternative, values):
    """How the entries move from the published values `base` to an alternative's: ranks
    shared by ties, and Kendall's tau-b, so a tie is never read as a reversal."""
    shifts = scoring.rank_shifts(base, values)
    normalization, aggregation = alternative
    return {
        "alternative": alternative_code(alternative),
        "normalization": normalization,
        "aggregation": aggregation,
        "ordering": scoring.ordering(values),
        "values": values,
        "ranks": scoring.shared_ranks(values),
        "rank_shifts": shifts,
        "kendall_tau": scoring.kendall_tau(base, values),
        "largest_shift": max(abs(shift) for shift in shifts.values()),
    }


def _table(key, by_alternative):
    level, market, family = key
    published = by_alternative[scoring.BASELINE]
    base = scoring.ordering(published)
    movements = [_movement(published, alt, by_alternative[alt]) for alt in scoring.alternatives()]
    taus = [m["kendall_tau"] for m in movements if m["kendall_tau"] is not None]
    return {
        "level": level,
        "market": market,
        "family": family,
        "baseline": alternative_code(scoring.BASELINE),
        "ordering": base,
        "published_values": by_alternative[scoring.BASELINE],
        "movable": len(base) > 1,
        "note": None if len(base) > 1 else bilingual(TOO_FEW),
        "smallest_kendall_tau": min(taus) if taus else None,
        "largest_shift": max(m["largest_shift"] for m in movements),
        "alternatives": movements,
    }


LEVEL_ORDER = {LEVEL_CELL: 0, LEVEL_MARKET: 1, LEVEL_FAMILY: 2}


def gate_sensitivity(cells, canonical=None, codes=None):
    """The published analysis: one table per published ranking, cells first, then market
    and cross-market family figures; each alternative's ordering, Kendall's tau against
    the published ordering and the largest rank shift."""
    cells = list(cells)
    if not any(cell.eligible for cell in cells):
        return []
    canonical = canonical if canonical is not None else canonical_tasks()
    codes = codes if codes is not None else market_codes()
    cohorts = _cohorts([cell for cell in cells if cell.eligible])
    tables = _collect(cells, cohorts, canonical, codes)
    ordered = sorted(
        tables.items(),
        key=lambda item: (LEVEL_ORDER[item[0][0]], item[0][1] or "", item[0][2] or ""),
    )
    return [_table(key, by_alternative) for key, by_alternative in ordered]


def bilingual(text):
    values = {}
    for language in LANGUAGES:
        with translation.override(language):
            values[language] = str(text)
    return values


def sensitivity_document(cells, canonical=None, codes=None):
    """The analysis as the export and the API publish it: what was varied, the words for
    it in both languages, and one table per published ranking."""
    return {
        "baseline": alternative_code(scoring.BASELINE),
        "alternatives": [alternative_code(alt) for alt in scoring.alternatives()],
        "labels": {
            "levels": {code: bilingual(text) for code, text in LEVEL_LABELS.items()},
            "normalizations": {
                code: bilingual(text) for code, text in NORMALIZATION_LABELS.items()
            },
            "aggregations": {code: bilingual(text) for code, text in AGGREGATION_LABELS.items()},
        },
        "tables": gate_sensitivity(cells, canonical, codes),
    }
