"""The sensitivity analysis (governance.sensitivity) on cells held in memory: the figures
each alternative gives, which figures are ranked and how each ranking is reported, to the
number, in a second rather than the minutes tests/governance/test_sensitivity.py takes on
ingested records. `make mutation MUTATION_TARGETS=sensitivity` runs this file.

Seed: "No official figure may be published without a sensitivity analysis over the
scoring policy, showing how a ranking moves under alternative normalizations and
aggregations, and task-level results are published so the analysis can be redone
independently."

No database: the cells are real GateCell records, unsaved, read as governance.selectors
reads them (`fresh` set), with their snapshots; the canonical set and the markets are
passed in. An analysis that read the database here would fail.

The world: in Korea acme (2.1) runs the calendar task in 300 s and 240 s at USD 0.035
(audit values 80 and 100, mean 90), beta (1.0) twice in 200 s at USD 0.100 (50) and
gamma (1.0) twice in 600 s at USD 0.035 (40), against 240 s and USD 0.050; delta's
Korean cell (100 s) is blocked. In Japan acme runs it twice in 240 s at USD 0.050 (100),
beta twice in 200 s at USD 0.100 (50); gamma's Japanese cell has no scored attempt.
Acme alone also has a shopping cell in Korea, a task no canonical set holds.
"""

from math import log

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue.models import TaskFamily
from governance.aggregates import canonical_tasks, market_codes
from governance.models import GateCell
from governance.sensitivity import (
    TOO_FEW,
    gate_sensitivity,
    sensitivity_document,
    task_values_under,
)
from markets.models import Market
from mica import scoring
from submissions.models import System, SystemSnapshot

CODES = ["JP", "KR"]  # gamma's withheld Japanese figure comes before its Korean one
CALENDAR, SHOPPING = "email-calendar", "shopping"
CANONICAL = {("KR", CALENDAR): {"ec-a"}, ("JP", CALENDAR): {"ec-a"}}
MARKETS = {code: Market(code=code) for code in CODES}
FAMILIES = {slug: TaskFamily(slug=slug) for slug in (CALENDAR, SHOPPING)}
SNAPSHOTS = {
    name: SystemSnapshot(pk=pk, system=System(slug=f"{name}-agent"), version=version)
    for pk, (name, version) in enumerate(
        [("acme", "2.1"), ("beta", "1.0"), ("gamma", "1.0"), ("delta", "1.0")], start=1
    )
}
ACME, BETA, GAMMA, DELTA = (f"{n}-agent--{SNAPSHOTS[n].version}" for n in SNAPSHOTS)
KR_ACME, KR_BETA, KR_GAMMA = (f"{s}--kr--{CALENDAR}" for s in (ACME, BETA, GAMMA))
JP_ACME, JP_BETA = (f"{s}--jp--{CALENDAR}" for s in (ACME, BETA))


def attempt(seconds, usd, success=1.0):
    """[accuracy, seconds, USD, speed reference, cost reference], as governance.gate keeps it."""
    return [success, seconds, usd, 240.0, 0.05]


def cell(name, code, family, published, components, eligible=True):
    made = GateCell(
        snapshot=SNAPSHOTS[name],
        market=MARKETS[code],
        family=FAMILIES[family],
        task_scores={slug: {"value": value} for slug, value in published.items()},
        components=components,
        publication_eligible=eligible,
    )
    made.fresh = True
    return made


def world():
    """The shopping cell first: the tables are ordered by name, not by arrival."""
    return [
        cell("acme", "KR", SHOPPING, {"sh-a": 100.0}, {"sh-a": [[1.0, 100.0, 0.01, 120.0, 0.02]]}),
        cell(
            "acme",
            "KR",
            CALENDAR,
            {"ec-a": 90.0, "ec-b": None},
            {"ec-a": [attempt(300.0, 0.035), attempt(240.0, 0.035)]},
        ),
        cell("beta", "KR", CALENDAR, {"ec-a": 50.0}, {"ec-a": [attempt(200.0, 0.1)] * 2}),
        cell("gamma", "KR", CALENDAR, {"ec-a": 40.0}, {"ec-a": [attempt(600.0, 0.035)] * 2}),
        cell(
            "delta",
            "KR",
            CALENDAR,
            {"ec-a": 100.0},
            {"ec-a": [attempt(100.0, 0.035)] * 2},
            eligible=False,
        ),
        cell("acme", "JP", CALENDAR, {"ec-a": 100.0}, {"ec-a": [attempt(240.0, 0.05)] * 2}),
        cell("beta", "JP", CALENDAR, {"ec-a": 50.0}, {"ec-a": [attempt(200.0, 0.1)] * 2}),
        cell("gamma", "JP", CALENDAR, {"ec-a": None}, None),
    ]


def analysis():
    tables = gate_sensitivity(world(), CANONICAL, CODES)
    assert tables
    return {(t["level"], t["market"], t["family"]): t for t in tables}


def moves(table):
    assert table["alternatives"]
    return {m["alternative"]: m for m in table["alternatives"]}


def test_one_table_per_published_ranking_cells_first_then_markets_then_families():
    """Only published figures are ranked: delta's blocked cell, gamma's cell without a
    scored attempt, and every withheld market or family figure are in no table."""
    tables = gate_sensitivity(world(), CANONICAL, CODES)
    assert [(t["level"], t["market"], t["family"]) for t in tables] == [
        ("cell", "JP", CALENDAR),
        ("cell", "KR", CALENDAR),
        ("cell", "KR", SHOPPING),
        ("market", "JP", None),
        ("market", "KR", None),
        ("family", None, CALENDAR),
    ]
    assert [sorted(t["published_values"]) for t in tables] == [
        [JP_ACME, JP_BETA],
        [KR_ACME, KR_BETA, KR_GAMMA],
        [f"{ACME}--kr--{SHOPPING}"],
        [ACME, BETA],
        [ACME, BETA, GAMMA],
        [ACME, BETA],
    ]


def test_the_baseline_reproduces_the_published_figures_from_the_raw_axes():
    """The policy's own alternative (reference ratio × product) gives each published cell
    figure, market mean and cross-market macro-average."""
    tables = analysis()
    kr = tables[("cell", "KR", CALENDAR)]
    assert kr["baseline"] == "reference-ratio/product"
    assert kr["published_values"] == pytest.approx({KR_ACME: 90.0, KR_BETA: 50.0, KR_GAMMA: 40.0})
    assert kr["ordering"] == [KR_ACME, KR_BETA, KR_GAMMA]
    assert kr["alternatives"][0]["values"] == kr["published_values"]
    assert tables[("cell", "JP", CALENDAR)]["published_values"] == pytest.approx(
        {JP_ACME: 100.0, JP_BETA: 50.0}
    )
    assert tables[("market", "KR", None)]["published_values"] == pytest.approx(
        {ACME: 90.0, BETA: 50.0, GAMMA: 40.0}
    )
    assert tables[("market", "JP", None)]["published_values"] == pytest.approx(
        {ACME: 100.0, BETA: 50.0}
    )
    family = tables[("family", None, CALENDAR)]
    assert family["published_values"] == pytest.approx({ACME: 95.0, BETA: 50.0})


def test_each_alternative_renormalizes_each_attempt_against_its_own_cohort():
    """Min-max and rank read the cohort of the task's scored attempts in the market among
    the published cells (200-600 s, USD 0.035-0.100: delta's blocked 100 s is not in it);
    log ratio reads the reference; each task's value is the mean over its attempts."""
    kr = moves(analysis()[("cell", "KR", CALENDAR)])
    assert len(kr) == len(scoring.alternatives()) == 25
    # Acme's 300 s is 0.75 of the way from 600 s to 200 s, its 240 s 0.9; USD 0.035 is best.
    assert kr["min-max/product"]["values"] == pytest.approx(
        {KR_ACME: 82.5, KR_BETA: 0.0, KR_GAMMA: 0.0}
    )
    # Rank among six: 300 s beats two (0.4), 240 s three (0.6); USD 0.035 beats two and
    # ties three (0.7).
    assert kr["rank/without-accuracy"]["values"][KR_ACME] == pytest.approx(35.0)
    # Log ratio: 300 s over 240 s gives 1 / (1 + ln 1.25); 240 s gives 1.
    assert kr["log-ratio/without-cost"]["values"][KR_ACME] == pytest.approx(
        (100 / (1 + log(1.25)) + 100) / 2
    )
    assert kr["reference-ratio/without-speed"]["values"] == pytest.approx(
        {KR_ACME: 100.0, KR_BETA: 50.0, KR_GAMMA: 100.0}
    )
    assert kr["reference-ratio/accuracy-only"]["values"] == pytest.approx(
        {KR_ACME: 100.0, KR_BETA: 100.0, KR_GAMMA: 100.0}
    )


def test_a_movement_reports_its_ordering_ranks_shifts_tau_and_largest_shift():
    """Without cost, beta (100) passes acme (90): one swap of three pairs."""
    without_cost = moves(analysis()[("cell", "KR", CALENDAR)])["reference-ratio/without-cost"]
    assert without_cost == {
        "alternative": "reference-ratio/without-cost",
        "normalization": "reference-ratio",
        "aggregation": "without-cost",
        "ordering": [KR_BETA, KR_ACME, KR_GAMMA],
        "values": pytest.approx({KR_ACME: 90.0, KR_BETA: 100.0, KR_GAMMA: 40.0}),
        "ranks": {KR_BETA: 1, KR_ACME: 2, KR_GAMMA: 3},
        "rank_shifts": {KR_BETA: 1, KR_ACME: -1, KR_GAMMA: 0},
        "kendall_tau": pytest.approx(1 / 3),
        "largest_shift": 1,
    }


def test_a_table_reports_the_smallest_tau_and_the_largest_shift_over_its_alternatives():
    """The cross-market ranking reverses without cost (beta 100, acme 95): tau -1."""
    family = analysis()[("family", None, CALENDAR)]
    assert family["ordering"] == [ACME, BETA]
    assert moves(family)["reference-ratio/without-cost"]["values"] == pytest.approx(
        {ACME: 95.0, BETA: 100.0}
    )
    assert family["movable"] is True and family["note"] is None
    assert family["smallest_kendall_tau"] == -1.0
    assert family["largest_shift"] == 1
    kr = analysis()[("cell", "KR", CALENDAR)]
    # Accuracy alone ties all three at 100: nothing to compare, so no tau (tau-b), and
    # the tie is not read as a reversal of the published order.
    assert moves(kr)["reference-ratio/accuracy-only"]["kendall_tau"] is None
    taus = [m["kendall_tau"] for m in kr["alternatives"] if m["kendall_tau"] is not None]
    assert kr["smallest_kendall_tau"] == min(taus) <= 1 / 3
    assert kr["largest_shift"] == max(m["largest_shift"] for m in kr["alternatives"]) >= 1


def test_a_ranking_of_one_says_it_cannot_move_in_both_languages():
    shopping = analysis()[("cell", "KR", SHOPPING)]
    assert shopping["level"] == "cell" and shopping["market"] == "KR"
    assert shopping["family"] == SHOPPING
    assert shopping["movable"] is False
    assert shopping["note"]["en"] == (
        "Only one figure is published here: a ranking of one cannot move."
    )
    assert sorted(shopping["note"]) == ["en", "ko"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in shopping["note"]["ko"])
    assert shopping["smallest_kendall_tau"] is None
    assert shopping["largest_shift"] == 0


def test_a_blocked_cell_keeps_its_published_values_and_an_unscored_task_stays_none():
    """A blocked cell's figures above it are withheld anyway; a task without a scored
    attempt has no value under any alternative (seed: "Absence is not zero")."""
    cells = {(c.snapshot.system.slug, c.market.code, c.family.slug): c for c in world()}
    delta = cells[("delta-agent", "KR", CALENDAR)]
    acme = cells[("acme-agent", "KR", CALENDAR)]
    assert not delta.eligible and acme.eligible
    cohorts = {("KR", "ec-a"): ([300.0, 240.0], [0.035, 0.035])}
    values = task_values_under(("min-max", "product"), cohorts)
    assert values(delta) == {"ec-a": 100.0}
    assert values(acme) == {"ec-a": pytest.approx(50.0), "ec-b": None}


def test_nothing_published_means_no_table():
    cells = [c for c in world() if not c.eligible]
    assert cells
    assert gate_sensitivity(cells, CANONICAL, CODES) == []


def test_the_document_names_what_was_varied_in_both_languages():
    """The analysis as the export and the API publish it."""
    document = sensitivity_document(world(), CANONICAL, CODES)
    assert sorted(document) == ["alternatives", "baseline", "labels", "tables"]
    assert document["baseline"] == "reference-ratio/product"
    assert document["alternatives"] == ["/".join(alt) for alt in scoring.alternatives()]
    assert document["alternatives"][0] == "reference-ratio/product"
    labels = document["labels"]
    assert sorted(labels) == ["aggregations", "levels", "normalizations"]
    assert sorted(labels["levels"]) == ["cell", "family", "market"]
    assert sorted(labels["normalizations"]) == sorted(scoring.NORMALIZATIONS)
    assert sorted(labels["aggregations"]) == sorted(scoring.AGGREGATIONS)
    assert labels["levels"]["market"]["en"] == "Market figures"
    assert labels["normalizations"]["rank"]["en"] == "Rank within the cohort"
    assert labels["aggregations"]["product"]["en"] == "Product (the policy)"
    korean = labels["aggregations"]["product"]["ko"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in korean), korean
    assert [t["published_values"] for t in document["tables"]] == [
        t["published_values"] for t in gate_sensitivity(world(), CANONICAL, CODES)
    ]
    assert str(TOO_FEW) in [t["note"]["en"] for t in document["tables"] if t["note"]]


@pytest.mark.django_db
def test_the_analysis_reads_the_canonical_set_and_the_markets_once():
    """Without them passed in, the analysis reads the canonical set and the markets from
    the database once, not once per snapshot and alternative (4 snapshots × 25 here)."""
    with CaptureQueriesContext(connection) as once:
        canonical_tasks()
        market_codes()
    assert len(once) >= 1
    with CaptureQueriesContext(connection) as analysed:
        tables = gate_sensitivity(world())
    assert len(analysed) == len(once)
    explicit = gate_sensitivity(world(), CANONICAL, CODES)
    cell_tables = [t for t in tables if t["level"] == "cell"]
    assert cell_tables
    assert cell_tables == [t for t in explicit if t["level"] == "cell"]


def test_a_chart_whose_alternatives_tie_every_pair_says_so_in_both_languages():
    """With tau-b a table can be movable yet have no tau at all (every alternative ties
    what it compares): the chart's text alternative says so instead of failing."""
    from django.utils import translation

    from governance.presenters import _chart_summary

    table = {"movable": True, "smallest_kendall_tau": None, "largest_shift": 1}
    assert "stay tied" in str(_chart_summary(table))
    with translation.override("ko"):
        assert "동점으로 남으며" in str(_chart_summary(table))
