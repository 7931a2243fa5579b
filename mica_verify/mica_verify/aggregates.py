"""Market means and cross-market family macro-averages above the cells, each withheld
with its reason unless earned: the canonical set complete, every market present, no
critical safety event and no blocked cell below."""

from mica_verify import method

AREA = "family and market figures"


def complete_set_mean(scores, canonical):
    """(value, exclusions, withheld reason) over a pre-registered canonical set."""
    missing = [key for key in canonical if key not in scores]
    if missing:
        return (
            None,
            [[key, "canonical-task-missing"] for key in missing],
            "canonical-set-incomplete",
        )
    within = {key: scores[key] for key in canonical}
    exclusions = [[key, "not-scored"] for key, value in within.items() if value is None]
    exclusions += [[key, "not-in-canonical-set"] for key in scores if key not in canonical]
    value = method.mean([value for value in within.values() if value is not None])
    return value, exclusions, None if value is not None else "nothing-scored"


def macro_average(by_market, codes):
    """Each market weighs the same; withheld when any market has no figure."""
    outside = [[key, "not-in-market-scope"] for key in by_market if key not in codes]
    missing = [code for code in codes if by_market.get(code) is None]
    if missing:
        return None, [[code, "no-coverage"] for code in missing] + outside, "market-missing"
    return method.mean([by_market[code] for code in codes]), outside, None


def inherited(figure, cells):
    """A figure inherits the state of the cells below it."""
    value, exclusions, reason = figure
    if any(cell["critical_safety_events"] for cell in cells):
        return None, exclusions, "critical-safety-event-below"
    if reason is None and any(not cell["eligible"] for cell in cells):
        return None, exclusions, "blocked-cell-below"
    return figure


def scores_of(cells):
    return {slug: value for cell in cells for slug, value in cell["task_values"].items()}


def snapshot_figures(cells, canonical, codes):
    """{("market", code) | ("family", slug): (value, exclusions, reason)} for one snapshot's
    cells, each {"market", "family", "task_values", "eligible", "critical_safety_events"}."""
    figures = {}
    for code in codes:
        mine = [cell for cell in cells if cell["market"] == code]
        keys = set().union(*[tasks for (market, _f), tasks in canonical.items() if market == code])
        figures[("market", code)] = inherited(complete_set_mean(scores_of(mine), keys), mine)
    for family in sorted({cell["family"] for cell in cells}):
        mine = [cell for cell in cells if cell["family"] == family]
        per_market = {
            code: complete_set_mean(
                scores_of([c for c in mine if c["market"] == code]),
                canonical.get((code, family), set()),
            )[0]
            for code in codes
        }
        figures[("family", family)] = inherited(macro_average(per_market, codes), mine)
    return figures


def aggregates_check(recomputed, report):
    """Every published market and family figure, its withholding and its exclusions."""
    if recomputed is None:
        return
    by_snapshot = {}
    for cell in recomputed["cells"]:
        mine = recomputed["recomputed"][cell["cell"]]
        by_snapshot.setdefault((cell["system"], cell["snapshot_version"]), []).append(
            {
                "market": cell["market"],
                "family": cell["family"],
                "eligible": mine["eligible"],
                "critical_safety_events": mine["figures"]["critical_safety_events"],
                "task_values": {s: t["value"] for s, t in mine["figures"]["task_scores"].items()},
            }
        )
    published = {(a["system"], a["snapshot_version"]): a for a in recomputed["gate"]["aggregates"]}
    for snapshot in sorted(set(published) | set(by_snapshot)):
        name = " ".join(snapshot)
        if snapshot not in published or snapshot not in by_snapshot:
            report.fail(
                AREA, name, "figures for a snapshot without cells, or cells without figures"
            )
            continue
        figures = snapshot_figures(
            by_snapshot[snapshot], recomputed["canonical"], recomputed["markets"]
        )
        rows = published[snapshot]["markets"] + published[snapshot]["families"]
        seen = set()
        for row in rows:
            key = (row["scope"], row["key"])
            seen.add(key)
            value, exclusions, reason = figures.get(key, (None, [], "absent"))
            label = f"{name} {row['scope']} {row['key']}"
            report.compare(AREA, f"{label} value", row["value"], value)
            report.compare(AREA, f"{label} withheld", row["withheld_reason_code"], reason)
            # Exclusions are a set: compared in one order.
            report.compare(
                AREA,
                f"{label} exclusions",
                sorted(map(list, row["exclusions"])),
                sorted(exclusions),
            )
        for key in sorted(set(figures) - seen):
            report.fail(AREA, f"{name} {key[0]} {key[1]}", "recomputed but not published")
