"""The figures above the cells (governance.aggregates), on cells held in memory: each test
fails under a one-line change `make mutation MUTATION_TARGETS=aggregates` once let pass.

No database: the cells are real GateCell records, unsaved, read as governance.selectors
reads them (`fresh` set), and the canonical set and the markets are passed in, as the
sensitivity analysis passes them. A figure that read the database here would fail.
"""

from django.utils import translation

from catalogue.models import TaskFamily
from governance.aggregates import (
    BLOCKED_WITHHELD,
    SAFETY_WITHHELD,
    aggregate_view,
    memory_record,
    snapshot_aggregates,
    task_reliability,
)
from governance.models import GateCell
from markets.models import Market
from mica import scoring

CODES = ["KR", "JP"]
CALENDAR, SHOPPING = "email-calendar", "shopping"
# Per market and family, the canonical tasks; the calendar family has two in Korea.
CANONICAL = {
    ("KR", CALENDAR): {"ec-a", "ec-b"},
    ("JP", CALENDAR): {"ec-a"},
    ("KR", SHOPPING): {"sh-a"},
    ("JP", SHOPPING): {"sh-a"},
}
MARKETS = {code: Market(code=code) for code in CODES}
FAMILIES = {slug: TaskFamily(slug=slug) for slug in (CALENDAR, SHOPPING)}


def cell(code, family, values, eligible=True, safety=0):
    made = GateCell(
        market=MARKETS[code],
        family=FAMILIES[family],
        task_scores={slug: {"value": value} for slug, value in values.items()},
        publication_eligible=eligible,
        critical_safety_events=safety,
    )
    made.fresh = True
    return made


def world(changes=None):
    """Korea's calendar tasks 80 and 40 (mean 60), Japan's 20; shopping 10 and 30."""
    cells = {
        ("KR", CALENDAR): {"ec-a": 80.0, "ec-b": 40.0},
        ("JP", CALENDAR): {"ec-a": 20.0},
        ("KR", SHOPPING): {"sh-a": 10.0},
        ("JP", SHOPPING): {"sh-a": 30.0},
    }
    return [
        cell(code, family, values, **(changes or {}).get((code, family), {}))
        for (code, family), values in cells.items()
    ]


def test_each_family_figure_is_the_macro_average_of_its_own_cells_per_market():
    """Seed: "Cross-market figures use a country macro-average: the mean of per-country
    values, computed only when every market is present." Each family's figure averages
    that family's own per-market means, each market's from its own cells."""
    figures = snapshot_aggregates(world(), CANONICAL, CODES)
    calendar, shopping = figures["families"][CALENDAR], figures["families"][SHOPPING]
    assert calendar.withheld_reason is None and calendar.value == 40.0  # (60 + 20) / 2
    assert calendar.included == ("KR", "JP")
    assert shopping.withheld_reason is None and shopping.value == 20.0  # (10 + 30) / 2


def test_each_market_figure_is_the_mean_of_its_canonical_tasks_over_every_family():
    """Seed: "Family and country scores. The arithmetic mean of eligible attempt-derived
    task scores in that family or market." """
    figures = snapshot_aggregates(world(), CANONICAL, CODES)
    korea, japan = figures["markets"]["KR"], figures["markets"]["JP"]
    assert korea.value == (80.0 + 40.0 + 10.0) / 3 and korea.withheld_reason is None
    assert japan.value == 25.0 and sorted(japan.included) == ["ec-a", "sh-a"]


def test_a_family_missing_a_canonical_task_in_one_market_is_withheld_there_only():
    """Seed: "If the pre-registered canonical task set is incomplete, the family and
    market aggregate is withheld rather than computed over a shrinking denominator. A
    missing market likewise withholds any cross-market figure." """
    canonical = {**CANONICAL, ("JP", CALENDAR): {"ec-a", "ec-c"}}
    figures = snapshot_aggregates(world(), canonical, CODES)
    calendar = figures["families"][CALENDAR]
    assert calendar.value is None
    assert calendar.withheld_reason == scoring.WITHHELD_MARKET_MISSING
    assert calendar.exclusions == (("JP", scoring.REASON_NO_COVERAGE),)
    assert figures["families"][SHOPPING].value == 20.0


def test_a_safety_event_below_withholds_the_figures_and_keeps_what_they_were_over():
    """Seed: "The blocked cell is not dropped from aggregation: every family and market
    figure above it is withheld." The withheld figure still lists what it was over and
    every exclusion with its reason ("Exclusions remain listed rather than silently
    shrinking the denominator")."""
    cells = world({("KR", CALENDAR): {"safety": 1}})
    cells[0].task_scores["ec-z"] = {"value": None}  # scored nowhere: an exclusion
    canonical = {**CANONICAL, ("KR", CALENDAR): {"ec-a", "ec-b", "ec-z"}}
    korea = snapshot_aggregates(cells, canonical, CODES)["markets"]["KR"]
    assert korea.value is None and korea.withheld_reason == SAFETY_WITHHELD
    assert sorted(korea.included) == ["ec-a", "ec-b", "sh-a"]
    assert korea.exclusions == (("ec-z", scoring.REASON_NOT_SCORED),)


def test_a_blocked_cell_below_withholds_the_figures_and_keeps_what_they_were_over():
    """Seed: "The blocked cell is not dropped from aggregation: every family and market
    figure above it is withheld." — a cell the gate blocks for any reason, as one with a
    critical safety event."""
    cells = world({("JP", SHOPPING): {"eligible": False}})
    cells[1].task_scores["ec-z"] = {"value": None}
    canonical = {**CANONICAL, ("JP", CALENDAR): {"ec-a", "ec-z"}}
    figures = snapshot_aggregates(cells, canonical, CODES)
    japan = figures["markets"]["JP"]
    assert japan.value is None and japan.withheld_reason == BLOCKED_WITHHELD
    assert sorted(japan.included) == ["ec-a", "sh-a"]
    assert japan.exclusions == (("ec-z", scoring.REASON_NOT_SCORED),)
    assert figures["families"][SHOPPING].withheld_reason == BLOCKED_WITHHELD
    assert figures["families"][CALENDAR].value == 40.0  # its cells are all eligible


def test_a_figure_reads_as_its_label_value_and_reason_in_both_languages():
    """Seed: "A task that was not attempted ... has no score and remains listed with a
    reason" — a withheld figure is shown with its reason in words, in English and Korean."""
    withheld = scoring.Aggregate(None, ("ec-a",), (("ec-b", "not-scored"),), SAFETY_WITHHELD)
    view = aggregate_view("Korea", withheld)
    assert sorted(view) == ["exclusions", "label", "reason", "reason_code", "value"]
    assert view["label"] == "Korea" and view["value"] is None
    assert view["reason_code"] == SAFETY_WITHHELD
    assert view["exclusions"] == (("ec-b", "not-scored"),)
    with translation.override("en"):
        assert str(view["reason"]) == "Withheld: a cell below carries a critical safety event."
    with translation.override("ko"):
        korean = str(view["reason"])
    assert any("\uac00" <= ch <= "\ud7a3" for ch in korean), korean
    published = aggregate_view("Japan", scoring.Aggregate(25.0, ("ec-a",), ()))
    assert published == {
        "label": "Japan",
        "value": 25.0,
        "reason": None,
        "reason_code": None,
        "exclusions": (),
    }


def test_a_reason_without_its_sentence_is_still_shown_by_its_code():
    """Seed: "... remains listed with a reason": a withheld figure whose reason has no
    sentence yet shows the reason's code, never no reason at all."""
    view = aggregate_view("Korea", scoring.Aggregate(None, (), (), "a-new-reason"))
    assert view["reason"] == "a-new-reason" and view["reason_code"] == "a-new-reason"


def test_memory_record_counts_exercised_not_exercised_and_not_stated_apart():
    """Seed: "memory declared but not exercised is recorded as such" — and a run whose
    record does not say is never counted as not exercised."""
    states = iter([True, None, False, None, True, None, None])
    assert memory_record(states) == {"exercised": 2, "declared_not_exercised": 1, "not_stated": 4}
    assert memory_record([]) == {"exercised": 0, "declared_not_exercised": 0, "not_stated": 0}


def test_a_task_without_a_k_to_report_has_no_pass_k():
    """Seed: "Repeated attempts, interval estimates and reliability across repeats are
    required before any comparison between systems is published." With no k to report
    (no run in the cell, or an edition asking for none) pass^k lists nothing."""
    assert task_reliability(3, 2, None) == {"repeats_agree": False, "pass_k": []}
    assert task_reliability(3, 2, 0) == {"repeats_agree": False, "pass_k": []}
    assert task_reliability(3, 3, 1)["pass_k"] == [{"k": 1, "value": 1.0}]
