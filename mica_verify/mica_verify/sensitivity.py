"""Every table of the sensitivity analysis in mica-gate.json recomputed from the export set
alone: each published ranking redone under every normalization of speed and cost crossed
with every aggregation, from each scored attempt's raw axes ("Sensitivity" in the
methodology), and how its entries move from the published order.

Three levels, each over published figures only: the cells of one market and family that
pass the gate, by their audit figure; per market, the snapshots whose market figure is not
withheld; per family, those whose cross-market macro-average is not withheld.

Values are computed in the order of operations the method writes, so the policy's own
alternative gives the published figure to the last bit and a tie is a tie here as there.
"""

import bisect
import math

from mica_verify import aggregates

AREA = "sensitivity tables"
LEVEL_CELL, LEVEL_MARKET, LEVEL_FAMILY = "cell", "market", "family"
LEVEL_ORDER = {LEVEL_CELL: 0, LEVEL_MARKET: 1, LEVEL_FAMILY: 2}
BASELINE = ("reference-ratio", "product")
NORMALIZATIONS = ("reference-ratio", "min-max", "rank", "log-ratio")
# Each on the audit value's 0..100 scale; the product multiplied in the audit value's order.
AGGREGATIONS = {
    "product": lambda a, s, c: 100.0 * a * s * c,
    "geometric-mean": lambda a, s, c: 100.0 * (a * s * c) ** (1 / 3),
    "arithmetic-mean": lambda a, s, c: 100.0 * (a + s + c) / 3,
    "accuracy-only": lambda a, s, c: 100.0 * a,
    "without-accuracy": lambda a, s, c: 100.0 * s * c,
    "without-speed": lambda a, s, c: 100.0 * a * c,
    "without-cost": lambda a, s, c: 100.0 * a * s,
}


def alternatives():
    """Every normalization crossed with every aggregation, the policy first; accuracy alone
    reads neither speed nor cost, so it is listed once."""
    return [
        (normalization, aggregation)
        for normalization in NORMALIZATIONS
        for aggregation in AGGREGATIONS
        if aggregation != "accuracy-only" or normalization == BASELINE[0]
    ]


def code(alternative):
    return "/".join(alternative)


class Cohort:
    """Every scored reading of one axis (seconds or USD) of one task in one market among
    the published cells: what min-max and rank normalize against. Sorted once, so a rank
    costs a search, not a pass over the cohort."""

    def __init__(self, readings):
        self.sorted = sorted(readings)

    def normalize(self, normalization, x, reference):
        """A reading as a component in [0, 1]; lower is better on both axes."""
        if normalization == "reference-ratio":
            return min(1.0, reference / x)
        if normalization == "log-ratio":
            return 1.0 if x <= reference else 1.0 / (1.0 + math.log(x / reference))
        if normalization == "min-max":
            low, high = self.sorted[0], self.sorted[-1]
            return 1.0 if high == low else (high - x) / (high - low)
        return self._rank(x)

    def _rank(self, x):
        # The share of the cohort's other readings this one beats, a tie counting half.
        others = len(self.sorted) - 1
        if others == 0:
            return 1.0
        below, above = bisect.bisect_left(self.sorted, x), bisect.bisect_right(self.sorted, x)
        beaten, tied = len(self.sorted) - above, above - below - 1
        return (beaten + tied / 2) / others


def cohorts(published):
    """(market, task) -> (seconds cohort, USD cohort) over the published cells' components."""
    readings = {}
    for cell in published:
        for slug, attempts in (cell.get("components") or {}).items():
            seconds, costs = readings.setdefault((cell["market"], slug), ([], []))
            seconds.extend(attempt[1] for attempt in attempts)
            costs.extend(attempt[2] for attempt in attempts)
    return {key: (Cohort(s), Cohort(c)) for key, (s, c) in readings.items()}


def task_value(attempts, alternative, cohort):
    """The mean of the task's scored attempts' values under `alternative`, as the gate
    takes the mean of their audit values."""
    normalization, aggregation = alternative
    combine = AGGREGATIONS[aggregation]
    speed, cost = cohort
    values = [
        combine(
            accuracy,
            speed.normalize(normalization, seconds, speed_reference),
            cost.normalize(normalization, usd, cost_reference),
        )
        for accuracy, seconds, usd, speed_reference, cost_reference in attempts
    ]
    return math.fsum(values) / len(values)


def task_values(cell, alternative, by_task):
    """A cell's per-task values under `alternative`; a cell that is not published keeps its
    published values, as every figure above it is withheld anyway."""
    if not cell["eligible"]:
        return cell["task_values"]
    scored = cell.get("components") or {}
    return {
        slug: task_value(scored[slug], alternative, by_task[(cell["market"], slug)])
        if slug in scored
        else None
        for slug in cell["task_values"]
    }


def cell_figure(values):
    """A cell's audit figure: the mean of its per-task values kept within its inputs."""
    present = [value for value in values.values() if value is not None]
    if not present:
        return None
    return min(max(math.fsum(present) / len(present), min(present)), max(present))


def snapshot_of(cell):
    return f"{cell['system']}--{cell['snapshot_version']}"


def cell_entries(cells, under, alternative, tables):
    for cell in cells:
        if cell["eligible"] and cell.get("components"):
            key = (LEVEL_CELL, cell["market"], cell["family"])
            entries = tables.setdefault(key, {}).setdefault(alternative, {})
            entries[cell["cell"]] = cell_figure(under[cell["cell"]])


def snapshot_entries(snapshots, under, alternative, canonical, codes, tables):
    """Each snapshot's published market and family figures under `alternative`; the
    snapshots that have one."""
    ranked = set()
    for snapshot, mine in snapshots.items():
        rows = [{**cell, "task_values": under[cell["cell"]]} for cell in mine]
        figures = aggregates.snapshot_figures(rows, canonical, codes)
        for (scope, name), (value, _exclusions, _reason) in figures.items():
            if value is not None:
                key = (scope, name, None) if scope == LEVEL_MARKET else (scope, None, name)
                tables.setdefault(key, {}).setdefault(alternative, {})[snapshot] = value
                ranked.add(snapshot)
    return ranked


def collect(cells, canonical, codes):
    """{(level, market, family): {alternative: {entry: value}}} over published figures."""
    by_task = cohorts([cell for cell in cells if cell["eligible"]])
    snapshots = {}
    for cell in cells:
        snapshots.setdefault(snapshot_of(cell), []).append(cell)
    tables = {}
    for alternative in alternatives():
        under = {cell["cell"]: task_values(cell, alternative, by_task) for cell in cells}
        cell_entries(cells, under, alternative, tables)
        ranked = snapshot_entries(snapshots, under, alternative, canonical, codes, tables)
        if alternative == BASELINE:
            # A figure is withheld or not whatever the alternative (a task has a value
            # under every one or under none), and each snapshot's figures cost a pass over
            # every canonical set: the snapshots without a published figure under the
            # policy are left out of the others.
            snapshots = {snapshot: snapshots[snapshot] for snapshot in ranked}
    return tables


def shared_ranks(values):
    """Best (highest) first, tied entries sharing the best rank of their group: 1, 1, 3."""
    ordered = sorted(values.values(), reverse=True)
    # The entries above a value are those before its first place in the descending order.
    first = {}
    for place, value in enumerate(ordered):
        first.setdefault(value, place)
    return {key: 1 + first[value] for key, value in values.items()}


def ordering(values):
    """Entry ids best first; a tie goes to the smaller id."""
    return sorted(values, key=lambda key: (-values[key], key))


def sign(x):
    return (x > 0) - (x < 0)


def kendall_tau(base, other):
    """Kendall's tau-b: a pair tied in either table neither agrees nor disagrees, so a tie is
    never a reversal. None under two entries, or where one table ties every pair."""
    keys = sorted(base)
    agree = disagree = tied_base = tied_other = 0
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            x, y = sign(base[a] - base[b]), sign(other[a] - other[b])
            agree, disagree = agree + (x * y > 0), disagree + (x * y < 0)
            tied_base, tied_other = tied_base + (x == 0), tied_other + (y == 0)
    pairs = len(keys) * (len(keys) - 1) // 2
    denominator = math.sqrt((pairs - tied_base) * (pairs - tied_other))
    return None if denominator == 0 else (agree - disagree) / denominator


def movement(base, alternative, values):
    """How the entries move from the published values to an alternative's."""
    before, after = shared_ranks(base), shared_ranks(values)
    shifts = {key: before[key] - after[key] for key in sorted(base)}
    return {
        "alternative": code(alternative),
        "normalization": alternative[0],
        "aggregation": alternative[1],
        "ordering": ordering(values),
        "values": values,
        "ranks": after,
        "rank_shifts": shifts,
        "kendall_tau": kendall_tau(base, values),
        "largest_shift": max(abs(shift) for shift in shifts.values()),
    }


def table(by_alternative):
    published = by_alternative[BASELINE]
    movements = [movement(published, alt, by_alternative[alt]) for alt in alternatives()]
    taus = [m["kendall_tau"] for m in movements if m["kendall_tau"] is not None]
    return {
        "baseline": code(BASELINE),
        "ordering": ordering(published),
        "published_values": published,
        "movable": len(published) > 1,
        "smallest_kendall_tau": min(taus) if taus else None,
        "largest_shift": max(m["largest_shift"] for m in movements),
        "alternatives": movements,
    }


def tables(recomputed):
    """{(level, market, family): table} recomputed from the checked cells; none when no
    cell passes the gate. The components and task values are the published ones, each
    already compared with its recomputation from the attempts: starting from the very
    readings the portal started from, a tie stays a tie to the last bit."""
    cells = [
        {
            **cell,
            "eligible": mine["eligible"],
            "critical_safety_events": mine["figures"]["critical_safety_events"],
            "task_values": {s: t["value"] for s, t in (cell.get("task_scores") or {}).items()},
        }
        for cell in recomputed["cells"]
        for mine in [recomputed["recomputed"][cell["cell"]]]
    ]
    if not any(cell["eligible"] for cell in cells):
        return {}
    found = collect(cells, recomputed["canonical"], recomputed["markets"])
    return {key: table(by_alternative) for key, by_alternative in found.items()}


def table_name(key):
    level, market, family = key
    return " ".join(part for part in (level, market, family) if part)


TABLE_FIGURES = (
    "baseline",
    "ordering",
    "published_values",
    "movable",
    "smallest_kendall_tau",
    "largest_shift",
)
ALTERNATIVE_FIGURES = (
    "normalization",
    "aggregation",
    "ordering",
    "values",
    "ranks",
    "rank_shifts",
    "kendall_tau",
    "largest_shift",
)


def table_check(name, published, mine, report):
    for figure in TABLE_FIGURES:
        report.compare(AREA, f"{name} {figure}", published.get(figure), mine[figure])
    theirs = {m.get("alternative"): m for m in published.get("alternatives") or []}
    ours = {m["alternative"]: m for m in mine["alternatives"]}
    report.compare(AREA, f"{name} alternatives", list(theirs), list(ours))
    for alternative in [alternative for alternative in ours if alternative in theirs]:
        for figure in ALTERNATIVE_FIGURES:
            report.compare(
                AREA,
                f"{name} {alternative} {figure}",
                theirs[alternative].get(figure),
                ours[alternative][figure],
            )


def sensitivity_check(recomputed, report):
    """Every published sensitivity table, and every alternative in it, by name."""
    document = recomputed["gate"].get("sensitivity") or {}
    report.compare(AREA, "baseline", document.get("baseline"), code(BASELINE))
    report.compare(
        AREA, "alternatives", document.get("alternatives"), [code(a) for a in alternatives()]
    )
    published = {
        (t.get("level"), t.get("market"), t.get("family")): t for t in document.get("tables") or []
    }
    try:
        mine = tables(recomputed)
    except (ArithmeticError, ValueError, TypeError, KeyError) as error:
        # Readings no analysis can be redone from (a zero or missing one) are named here
        # and in the cell's components above; the verifier reports, it does not stop.
        report.fail(AREA, "tables", f"cannot recompute: {error!r}")
        return
    for key in sorted(published.keys() | mine.keys(), key=sort_key):
        name = table_name(key)
        if key not in mine:
            report.fail(AREA, name, "published but not recomputed")
        elif key not in published:
            report.fail(AREA, name, "recomputed but not published")
        else:
            table_check(name, published[key], mine[key], report)


def sort_key(key):
    level, market, family = key
    return (LEVEL_ORDER.get(level, len(LEVEL_ORDER)), market or "", family or "")
