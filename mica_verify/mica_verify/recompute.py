"""The published figures of mica-gate.json against the ones recomputed from the export
set alone: each cell, its sensitivity tables, then the market and family figures above
the cells."""

from mica_verify import aggregates, cells, sensitivity
from mica_verify.report import Report
from mica_verify.source import Cached, Missing, source_open

GATE, ATTEMPTS, CATALOGUE, MARKETS = (
    "mica-gate.json",
    "mica-attempts.json",
    "mica-catalogue.json",
    "mica-markets.json",
)
# The cell fields recomputed one by one; the others (platform details, sentences) are
# words about the figures, not figures.
CELL_FIGURES = (
    "eligible_runs",
    "successes",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "reliability",
    "p50_seconds",
    "p95_seconds",
    "cost_per_success_usd",
    "tasks_attempted",
    "tasks_defined",
    "coverage",
    "discard_rate",
    "critical_safety_events",
    "memory",
    "verification",
    "data_status",
    "components",
)


def _documents(source, report):
    try:
        return [source.json(name) for name in (GATE, ATTEMPTS, CATALOGUE, MARKETS)]
    except (Missing, ValueError) as error:
        report.fail(cells.AREA, "export set", f"cannot recompute: {error}")
        return None


def attempts_by_cell(attempts_document, report):
    by_cell = {entry["cell"]: entry["attempts"] for entry in attempts_document["cells"]}
    for cell_id, attempts in by_cell.items():
        for number, attempt in enumerate(attempts, start=1):
            # A success counted against its own record: a failing outcome or flag.
            inconsistent = attempt["confirmed_success"] and (
                attempt["outcome"] != "confirmed-success"
                or attempt["retry_created_duplicate"]
                or attempt["prohibited_state_violation"]
                or attempt["critical_safety_event"]
            )
            name = attempt["attempt"] or f"holdout attempt {number}"
            report.check(
                cells.AREA_ATTEMPTS,
                f"{cell_id} {name}",
                not inconsistent,
                "a confirmed success with a failing outcome or flag",
            )
    return by_cell


def task_check(cell_id, slug, published, recomputed, report):
    """One public task's figures in a cell, each by its name."""
    if published is None or recomputed is None:
        report.compare(cells.AREA, f"{cell_id} task {slug}", published, recomputed)
        return
    for name in sorted(set(published) | set(recomputed)):
        report.compare(
            cells.AREA, f"{cell_id} task {slug} {name}", published.get(name), recomputed.get(name)
        )


def cell_check(cell, attempts, canonical, thresholds, report):
    """Compare one cell's figures; return what the table-wide checks need."""
    cell_id = cell["cell"]
    key = (cell["market"], cell["family"])
    figures, runs = cells.figures(attempts, canonical.get(key, set()), thresholds["runs_per_task"])
    for name in CELL_FIGURES:
        report.compare(cells.AREA, f"{cell_id} {name}", cell.get(name), figures[name])
    published_tasks = cell.get("task_scores") or {}
    for slug in sorted(set(published_tasks) | set(figures["task_scores"])):
        task_check(
            cell_id, slug, published_tasks.get(slug), figures["task_scores"].get(slug), report
        )
    own = cells.blockers(figures, runs, thresholds)
    versions = {}
    for run in runs:
        versions.setdefault(cells.version_key(run), set()).add(run["platform"])
    return {"figures": figures, "blockers": own, "versions": versions}


def blockers_check(gate_cells, recomputed, report):
    """Each cell's blockers, platform parity judged across its table of unblocked cells."""
    tables = {}
    for cell in gate_cells:
        mine = recomputed[cell["cell"]]
        if not mine["blockers"]:
            tables.setdefault((cell["market"], cell["family"]), {})[cell["cell"]] = mine["versions"]
    conflicted = {}
    for table in tables.values():
        conflicted.update(cells.parity_conflicts(table))
    for cell in gate_cells:
        mine = recomputed[cell["cell"]]
        codes = mine["blockers"] + (["platform-parity"] if conflicted.get(cell["cell"]) else [])
        mine["eligible"] = not codes
        report.compare(cells.AREA, f"{cell['cell']} blockers", cell.get("blockers"), codes)
        report.compare(
            cells.AREA,
            f"{cell['cell']} publication_eligible",
            cell.get("publication_eligible"),
            not codes,
        )
        figures = mine["figures"]
        report.compare(
            cells.AREA,
            f"{cell['cell']} standing",
            cell.get("standing"),
            cells.standing(figures["data_status"], figures["verification"], not codes),
        )


def figures_check(source, report):
    """Recompute every cell, every sensitivity table, and every figure above the cells;
    the recomputed cells."""
    documents = _documents(source, report)
    if documents is None:
        return None
    gate, attempts_document, catalogue, markets = documents
    canonical = cells.canonical_sets(catalogue)
    thresholds = attempts_document["thresholds"]
    by_cell = attempts_by_cell(attempts_document, report)
    published = {cell["cell"] for cell in gate["cells"]}
    for cell_id in sorted(set(by_cell) - published):
        report.fail(cells.AREA, cell_id, "has attempts but no cell in mica-gate.json")
    recomputed = {}
    for cell in gate["cells"]:
        if cell["cell"] not in by_cell:
            report.fail(cells.AREA, cell["cell"], "has no attempts in mica-attempts.json")
            continue
        recomputed[cell["cell"]] = cell_check(
            cell, by_cell[cell["cell"]], canonical, thresholds, report
        )
    present = [cell for cell in gate["cells"] if cell["cell"] in recomputed]
    blockers_check(present, recomputed, report)
    checked = {
        "gate": gate,
        "cells": present,
        "recomputed": recomputed,
        "canonical": canonical,
        # The markets in the method's one order, as the markets export lists them.
        "markets": [market["code"] for market in markets["markets"]],
    }
    sensitivity.sensitivity_check(checked, report)
    return checked


def figures_verify(where):
    """The report of the figure checks alone on the set at `where` (a folder or a base
    URL): every cell, its blockers, the sensitivity tables and the figures above the
    cells, without the files', the signature's and the log's checks. What the portal runs
    on a set it is about to publish, which no log entry records yet."""
    report = Report(str(where))
    aggregates.aggregates_check(figures_check(Cached(source_open(str(where))), report), report)
    return report
