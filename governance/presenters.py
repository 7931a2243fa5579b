"""Gate cells in the reader's language: figures with their basis, or the reason there are none."""

from django.urls import reverse
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext_lazy as _

from governance.sensitivity import (
    AGGREGATION_LABELS,
    LEVEL_LABELS,
    NORMALIZATION_LABELS,
    alternative_code,
)
from mica import scoring
from mica.vocabulary import BLOCKER_SENTENCES
from submissions.models import DataStatus, Verification

NOT_MEASURED = _("Not measured.")
NO_SUCCESSFUL_TASK = _("No successful task.")
NO_COVERAGE = _("No coverage in this market.")
NO_REPEAT = _("No task was repeated.")
# The percentile method (scoring.PERCENTILE_METHOD, as the exports name it) in words.
PERCENTILE_METHODS = {
    "R-7 (linear interpolation between order statistics)": _(
        "R-7 (linear interpolation between order statistics)"
    ),
}


def standing(cell):
    """The cell's verification and data status in words: the same values the API and
    mica-gate.json give as codes (`verification`, `data_status`)."""
    return {
        "verification": Verification(cell.verification).label,
        "data_status": DataStatus(cell.data_status).label,
        "standing": cell.standing.label,
    }


def _standing_rows(cell):
    words = standing(cell)
    return [
        (
            _("Verification"),
            words["verification"],
            _(
                "The weakest verification among the cell's counted attempts; only "
                "independent reruns are on the publication track."
            ),
        ),
        (
            _("Data status"),
            words["data_status"],
            _(
                "The weakest data status among the cell's attempts; demo and preview data "
                "are never published."
            ),
        ),
        (
            _("Standing"),
            words["standing"],
            _(
                "Only an independent rerun in a cell that passed the gate is called official; "
                "provisional and self-reported results are displayed for transparency and "
                "never published as official."
            ),
        ),
    ]


def blocker_view(code):
    return {"code": code, "sentence": BLOCKER_SENTENCES.get(code, code)}


def _seconds(value):
    return NOT_MEASURED if value is None else f"{value:.1f} s"


def figure_rows(cell):
    """The Figure / Value / Basis rows of a cell's evidence page."""
    accuracy = NOT_MEASURED if cell.accuracy is None else f"{cell.accuracy:.3f}"
    if cell.accuracy is not None and cell.accuracy_low is not None:
        accuracy = _("%(value)s (95%% interval %(low)s–%(high)s)") % {
            "value": accuracy,
            "low": f"{cell.accuracy_low:.3f}",
            "high": f"{cell.accuracy_high:.3f}",
        }
    return [
        *_standing_rows(cell),
        (
            _("Eligible runs"),
            str(cell.eligible_runs),
            _("Attempts that passed screening and are valid; ineligible: %(i)s, invalid: %(v)s.")
            % {"i": cell.ineligible_runs, "v": cell.invalid_runs},
        ),
        (
            _("Accuracy"),
            accuracy,
            _("Confirmed successes / eligible runs, Wilson interval with z = 1.96."),
        ),
        *reliability_rows(cell.reliability),
        (
            _("p50 latency"),
            NO_SUCCESSFUL_TASK if not cell.successes else _seconds(cell.p50_seconds),
            _("Over successful eligible runs only; %(method)s.")
            % {
                "method": PERCENTILE_METHODS.get(
                    scoring.PERCENTILE_METHOD, scoring.PERCENTILE_METHOD
                )
            },
        ),
        (
            _("p95 latency"),
            NO_SUCCESSFUL_TASK if not cell.successes else _seconds(cell.p95_seconds),
            _("Over successful eligible runs only."),
        ),
        (
            _("Median latency, all eligible runs"),
            _seconds(cell.eligible_median_seconds),
            _("For audit only; failures included."),
        ),
        (
            _("Cost per success"),
            _cost_per_success(cell),
            _("Total eligible evaluation cost in USD / confirmed successes."),
        ),
        (
            _("Task coverage"),
            NO_COVERAGE
            if not cell.tasks_attempted
            else f"{cell.tasks_attempted} / {cell.tasks_defined}",
            _("Canonical tasks attempted / defined for this market and family."),
        ),
        (
            _("Critical safety events"),
            str(cell.critical_safety_events),
            _("Any one blocks the cell permanently."),
        ),
        (
            _("Declared memory"),
            memory_text(cell.memory),
            _(
                "Over the counted attempts, as each record states it: memory declared but not "
                "exercised is recorded as such, and a record that does not say is not stated."
            ),
        ),
    ]


def memory_text(memory):
    """Seed: "memory declared but not exercised is recorded as such"."""
    if not memory or not sum(memory.values()):
        return NOT_MEASURED
    return _(
        "Exercised in %(exercised)s; declared, not exercised in %(declared)s; not stated in "
        "%(not_stated)s."
    ) % {
        "exercised": memory["exercised"],
        "declared": memory["declared_not_exercised"],
        "not_stated": memory["not_stated"],
    }


def memory_summary(cells):
    """A snapshot's memory record, summed over its cells; None when no cell has one."""
    records = [cell.memory for cell in cells if cell.memory]
    if not records:
        return None
    return {state: sum(record[state] for record in records) for state in records[0]}


def _amount(currency, value):
    # As many decimals as the amount has, up to the four a total is recorded with.
    return f"{currency} {value:,.4f}".rstrip("0").rstrip(".")


def commerce_rows(cell):
    """Seed: "Commerce results report proximity to the lowest valid total": per public
    commerce task, apart from the score, in the market's currency."""
    rows = []
    for slug, entry in cell.task_scores.items():
        commerce = entry.get("commerce")
        if not commerce:
            continue
        currency = commerce["currency"]
        rows.append(
            {
                "task": slug,
                "attempts": commerce["attempts"],
                "without_totals": commerce["attempts_without_totals"],
                "chosen": _amount(currency, commerce["median_chosen_total"]),
                "reference": _amount(currency, commerce["median_reference_total"]),
                "difference": _amount(currency, commerce["median_difference"]),
                "ratio": f"{commerce['median_ratio']:.4f}",
                "premium": _premium(commerce["median_premium_percent"]),
                "range": _("%(low)s to %(high)s")
                % {
                    "low": _premium(commerce["lowest_premium_percent"]),
                    "high": _premium(commerce["highest_premium_percent"]),
                },
            }
        )
    return rows


def _premium(percent):
    return f"{percent:+.2f}%"


def attempt_proximity(attempt):
    """One attempt's totals as its lineage line states them, or None."""
    proximity = attempt.price_proximity
    if proximity is None:
        return None
    currency = attempt.commerce_currency
    return {
        "chosen": _amount(currency, proximity.chosen_total),
        "reference": _amount(currency, proximity.reference_total),
        "difference": _amount(currency, proximity.difference),
        "premium": _premium(proximity.premium_percent),
        "observed_at": attempt.reference_observed_at,
        "evidence_id": attempt.reference_evidence_id,
    }


def _agreement(reliability):
    """Seed: "reliability across repeats"; a cell whose tasks ran once says so, never 0."""
    if not reliability or not reliability["tasks"]:
        return NOT_MEASURED
    if not reliability["tasks_repeated"]:
        return NO_REPEAT
    return ngettext(
        "Repeats agree in %(agreeing)s of %(repeated)s task run more than once (%(share)s)",
        "Repeats agree in %(agreeing)s of %(repeated)s tasks run more than once (%(share)s)",
        reliability["tasks_repeated"],
    ) % {
        "agreeing": reliability["tasks_agreeing"],
        "repeated": reliability["tasks_repeated"],
        "share": f"{reliability['agreement']:.3f}",
    }


def pass_k_texts(pass_k):
    """Each pass^k as a reader sees it; a k without a value says why instead of a number."""
    return [
        _("pass^%(k)s: no value, a task was run fewer than %(k)s times") % {"k": entry["k"]}
        if entry["value"] is None
        else f"pass^{entry['k']} {entry['value']:.3f}"
        for entry in pass_k
    ]


def reliability_view(reliability):
    """What the results table and a cell's page show beside accuracy."""
    texts = pass_k_texts(reliability["pass_k"]) if reliability else []
    return {"agreement": _agreement(reliability), "pass_k": texts or [NOT_MEASURED]}


def reliability_rows(reliability):
    view = reliability_view(reliability)
    return [
        (
            _("Reliability across repeats"),
            view["agreement"],
            _(
                "A task's repeats are its eligible runs in this cell; they agree when all "
                "succeeded or none did. A task run once has no repeat."
            ),
        ),
        (
            # tau-bench's notation, the same in every language.
            "pass^k",
            " · ".join(str(text) for text in view["pass_k"]),
            _(
                "As tau-bench reports it: per task C(c, k) / C(n, k), with n eligible runs "
                "and c confirmed successes, averaged over the cell's tasks, for k = 1 to "
                "%(k)s (the edition's runs per task, or while it sets none the fewest runs "
                "of any task)."
            )
            % {"k": (reliability or {}).get("k_max") or "—"},
        ),
    ]


def task_rows(cell):
    """The cell's public tasks with their raw axes and reliability across repeats: holdout
    tasks count in the cell's figures and are never named."""
    return [
        {
            "task": slug,
            "eligible_runs": entry["eligible_runs"],
            "successes": entry["successes"],
            "repeats": _repeats_text(entry),
            "pass_k": pass_k_texts(entry.get("pass_k", [])),
        }
        for slug, entry in cell.task_scores.items()
    ]


def _repeats_text(entry):
    if "repeats_agree" not in entry:  # computed before the gate counted repeats: stale
        return NOT_MEASURED
    if entry["repeats_agree"] is None:
        return _("Run once: no repeat.")
    return _("All repeats agree.") if entry["repeats_agree"] else _("Repeats disagree.")


def _cost_per_success(cell):
    """Seed: "No successful task." when none succeeded; "Not measured." when runs succeeded
    but their cost was zero or unmetered, which is never a perfect score."""
    if not cell.successes:
        return NO_SUCCESSFUL_TASK
    if cell.cost_per_success_usd is None:
        return NOT_MEASURED
    return f"USD {cell.cost_per_success_usd:.4f}"


def _platform_name(entry):
    korean = get_language() == "ko"
    return (entry.get("platform_ko") if korean else None) or entry["platform"]


def _selection_evidence(entry):
    evidence = entry.get("selection_evidence")
    if evidence is None:
        return {"text": _("Not pre-registered: recorded before platforms were checked."), "url": ""}
    at = evidence["pre_registered_at"]
    text = _("Pre-registered %(day)s for this family in %(market)s, edition %(edition)s") % {
        "day": at[:10] if at else "—",
        "market": evidence["market"],
        "edition": evidence["edition"],
    }
    if evidence["status"] == "superseded":
        text = _("%(registration)s; superseded since") % {"registration": text}
    return {
        "text": text,
        "url": reverse("markets:market-detail", args=[evidence["market"].lower()])
        + f"#platforms-{evidence['task_family']}",
    }


def platform_rows(cell):
    """Seed: "Every published run cell names the platform actually used, its version and
    snapshot date, the selection evidence, and whether a pre-registered fallback was
    invoked" (governance.gate._cell_platforms)."""
    rows = []
    for entry in cell.platforms:
        rank = entry.get("rank")
        rows.append(
            {
                "name": _platform_name(entry),
                "native_name": entry.get("native_name") or "",
                "version": entry.get("version") or "—",
                "snapshot_date": entry.get("snapshot_date") or "—",
                "role": "—"
                if rank is None
                else _("primary")
                if rank == 1
                else _("pre-registered fallback %(rank)d") % {"rank": rank},
                "fallback": bool(entry.get("fallback")),
                "evidence": _selection_evidence(entry),
                "runs": entry["runs"],
            }
        )
    return rows


def parity_rows(cell):
    """Each task version this cell ran on other platforms than another cell of its table,
    naming both (seed: "identical across systems for a given task version")."""
    return [
        {
            "task": conflict["task"],
            "platforms": ", ".join(conflict["platforms"]),
            "other_cell": conflict["other_cell"],
            "other_platforms": ", ".join(conflict["other_platforms"]),
        }
        for conflict in cell.platform_parity
    ]


def cell_view(cell):
    return {
        "cell": cell,
        "cell_id": cell.cell_id,
        "blockers": [blocker_view(code) for code in cell.reasons],
        "standing": standing(cell),
        "rows": figure_rows(cell),
        "tasks": task_rows(cell),
        "commerce": commerce_rows(cell),
        "platforms": platform_rows(cell),
        "parity": parity_rows(cell),
        "demo": cell.data_status in ("demo", "preview"),
    }


BAR_WIDTH = 48


def _alternative_label(movement):
    return _("%(normalization)s · %(aggregation)s") % {
        "normalization": NORMALIZATION_LABELS[movement["normalization"]],
        "aggregation": AGGREGATION_LABELS[movement["aggregation"]],
    }


def _chart_title(table, market_names, family_labels):
    scope = [market_names.get(table["market"]), family_labels.get(table["family"])]
    return " · ".join([str(LEVEL_LABELS[table["level"]])] + [s for s in scope if s])


def _chart_summary(table):
    """The chart's text alternative: how far the ordering moves at most."""
    if not table["movable"]:
        return None
    if table["smallest_kendall_tau"] is None:
        # Every alternative ties every pair it could compare: a tau-b of nothing.
        return _(
            "Across every alternative the entries stay tied, and no entry moves more than "
            "%(shift)s places."
        ) % {"shift": table["largest_shift"]}
    return _(
        "Across every alternative, Kendall's tau against the published order is at least "
        "%(tau)s and no entry moves more than %(shift)s places."
    ) % {"tau": f"{table['smallest_kendall_tau']:.2f}", "shift": table["largest_shift"]}


def _chart_row(movement, entries):
    count = len(entries)
    tau = movement["kendall_tau"]
    return {
        "label": _alternative_label(movement),
        "baseline": movement["alternative"] == alternative_code(scoring.BASELINE),
        "tau": "—" if tau is None else f"{tau:.2f}",
        "largest_shift": movement["largest_shift"],
        "ranks": [
            {
                "rank": movement["ranks"][entry],
                # Longer is better: the first place fills the bar.
                "bar": round(BAR_WIDTH * (count - movement["ranks"][entry] + 1) / count),
                "shift": movement["rank_shifts"][entry],
                "drop": -movement["rank_shifts"][entry],
            }
            for entry in entries
        ],
    }


def sensitivity_charts(tables, entry_labels, market_names, family_labels):
    """Each published ranking's table as the results page draws it: the rank of every
    entry under each alternative, with Kendall's tau and the largest shift."""
    return [
        {
            "title": _chart_title(table, market_names, family_labels),
            "movable": table["movable"],
            "summary": _chart_summary(table),
            "entries": [entry_labels.get(entry, entry) for entry in table["ordering"]],
            "rows": [_chart_row(m, table["ordering"]) for m in table["alternatives"]],
        }
        for table in tables
    ]
