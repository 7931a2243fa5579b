"""The sensitivity analysis over the scoring policy, on real records: ingested attempts,
the gate, the export, the API and the results page.

Seed: "No official figure may be published without a sensitivity analysis over the
scoring policy, showing how a ranking moves under alternative normalizations and
aggregations, and task-level results are published so the analysis can be redone
independently."

Three systems run the same task in Korea: acme 300 s at USD 0.035 (audit value 80),
beta 200 s at USD 0.100 (50), gamma 600 s at USD 0.035 (40), against references of
240 s and USD 0.050. Acme and beta also run it in every other market, so their market
and cross-market family figures are published; gamma's are withheld.
"""

import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from catalogue.models import Applicability, MarketApplicability
from governance.selectors import cell_list
from governance.sensitivity import gate_sensitivity
from markets.selectors import market_list
from mica import scoring
from tests.factories import SnapshotFactory, SystemFactory, api_auth, publishable_world
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

TASK = "ec-reschedule-three-party"
VERSIONS = {"acme-agent": "2.1", "beta-agent": "1.0", "gamma-agent": "1.0"}
# (seconds, USD) per system: audit values 80, 50 and 40 against 240 s and USD 0.050.
RUNS = {
    "acme-agent": (300.0, "0.035"),
    "beta-agent": (200.0, "0.100"),
    "gamma-agent": (600.0, "0.035"),
}


def run(system, n, market="KR", **changes):
    seconds, usd = RUNS[system]
    payload = rerun(n, market=market, **changes)
    payload["attempt_id"] = f"{system}-{market.lower()}-{n:03d}"
    payload["snapshot"] = {"system": system, "version": VERSIONS[system]}
    payload["wall_clock_seconds"] = seconds
    # The invocations' USD 0.030 stay the model cost; the tools take the rest.
    payload["tool_cost_usd"] = f"{Decimal(usd) - Decimal('0.030'):.9f}"
    payload["observed_cost_usd"] = f"{Decimal(usd):.9f}"
    return payload


def post(client, user, payloads):
    response = client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )
    assert response.status_code == 201, response.json()


@pytest.fixture
def codes(canonical_content):
    return [market.code for market in market_list()]


@pytest.fixture
def world(canonical_content, staff, codes):
    """Only the task applies anywhere, in every market, so one task completes every
    canonical set and the market and family figures can be published."""
    MarketApplicability.objects.exclude(version__definition__slug=TASK).update(
        status=Applicability.NOT_APPLICABLE
    )
    MarketApplicability.objects.filter(version__definition__slug=TASK).update(
        status=Applicability.APPLICABLE
    )
    assert set(
        MarketApplicability.objects.filter(version__definition__slug=TASK).values_list(
            "market__code", flat=True
        )
    ) == set(codes)
    publishable_world(markets=codes)
    for system in ("beta-agent", "gamma-agent"):
        SnapshotFactory(system=SystemFactory(slug=system, name=system.title()), version="1.0")


@pytest.fixture
def three_systems(client, staff, world, codes):
    post(client, staff, [run(s, n) for s in RUNS for n in (1, 2)])
    others = [
        run(s, n, market=m)
        for m in codes
        if m != "KR"
        for s in RUNS
        if s != "gamma-agent"
        for n in (1, 2)
    ]
    assert others
    post(client, staff, others)


def export(tmp_path, settings):
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))
    return json.loads((tmp_path / "current" / "mica-gate.json").read_text(encoding="utf-8"))


def table(tables, level, market=None, family=None):
    (found,) = [
        t for t in tables if (t["level"], t["market"], t["family"]) == (level, market, family)
    ]
    return found


@pytest.mark.vendor
def test_the_baseline_is_the_published_figure_at_every_level(
    three_systems, codes, tmp_path, settings
):
    """The policy's own alternative (reference ratio × product), recomputed from each
    attempt's raw axes, gives every published figure to the last bit: each cell's mean
    of its per-task audit values, each market figure and each cross-market family figure."""
    gate = export(tmp_path, settings)
    tables = gate["sensitivity"]["tables"]
    assert {t["level"] for t in tables} == {"cell", "market", "family"}
    published = {}
    for cell in gate["cells"]:
        if cell["publication_eligible"]:
            values = {slug: score["value"] for slug, score in cell["task_scores"].items()}
            published[("cell", cell["market"], cell["family"], cell["cell"])] = (
                scoring.mean_with_exclusions(values).value
            )
    for entry in gate["aggregates"]:
        snapshot = f"{entry['system']}--{entry['snapshot_version']}"
        for figure in entry["markets"]:
            if not figure["withheld"]:
                published[("market", figure["key"], None, snapshot)] = figure["value"]
        for figure in entry["families"]:
            if not figure["withheld"]:
                published[("family", None, figure["key"], snapshot)] = figure["value"]
    analysed = {}
    for t in tables:
        baseline = t["alternatives"][0]
        assert baseline["alternative"] == t["baseline"] == "reference-ratio/product"
        assert baseline["values"] == t["published_values"]
        for entry, value in t["published_values"].items():
            analysed[(t["level"], t["market"], t["family"], entry)] = value
    # Cells and market figures: three in KR, two in each other market; two family figures.
    assert len(published) == 2 * (3 + 2 * (len(codes) - 1)) + 2
    assert analysed == published  # exactly, not approximately
    assert (
        published[("cell", "KR", "email-calendar", "acme-agent--2.1--kr--email-calendar")] == 80.0
    )


def test_each_ranking_moves_under_the_alternatives_with_tau_and_largest_shift(three_systems):
    tables = gate_sensitivity(cell_list())
    kr = table(tables, "cell", "KR", "email-calendar")
    acme, beta, gamma = (f"{s}--{v}--kr--email-calendar" for s, v in VERSIONS.items())
    assert kr["ordering"] == [acme, beta, gamma] and kr["movable"] and kr["note"] is None
    assert len(kr["alternatives"]) == len(scoring.alternatives()) == 25
    moves = {m["alternative"]: m for m in kr["alternatives"]}
    # Without cost, beta (100) passes acme (80): one swap of three pairs.
    without_cost = moves["reference-ratio/without-cost"]
    assert without_cost["ordering"] == [beta, acme, gamma]
    assert without_cost["rank_shifts"] == {beta: 1, acme: -1, gamma: 0}
    assert without_cost["kendall_tau"] == pytest.approx(1 / 3)
    assert without_cost["largest_shift"] == 1
    # Min-max over the cohort (200-600 s, USD 0.035-0.100): beta's dearest cost is 0.
    min_max = moves["min-max/product"]["values"]
    assert min_max == pytest.approx({acme: 75.0, beta: 0.0, gamma: 0.0})
    # Rank within the cohort of six: acme's 300 s beats gamma's two and ties its own other
    # (2.5 of 5); its USD 0.035 beats beta's two and ties three (3.5 of 5).
    assert moves["rank/without-accuracy"]["values"][acme] == pytest.approx(100 * 0.5 * 0.7)
    # Log ratio: 300 s over 240 s gives 1 / (1 + ln 1.25).
    log_speed = moves["log-ratio/without-cost"]["values"][acme]
    assert log_speed == pytest.approx(100 / (1 + 0.22314355131420976))
    assert kr["largest_shift"] >= 1 and kr["smallest_kendall_tau"] < 1
    # The market and cross-market figures are ranked too: acme and beta only.
    family = table(tables, "family", None, "email-calendar")
    assert family["ordering"] == ["acme-agent--2.1", "beta-agent--1.0"]
    assert {m["alternative"]: m for m in family["alternatives"]}["reference-ratio/without-cost"][
        "ordering"
    ] == ["beta-agent--1.0", "acme-agent--2.1"]


def test_blocked_cells_enter_neither_the_analysis_nor_its_cohort(client, staff, world, codes):
    """Seed: "No official figure may be published without a sensitivity analysis"; the
    analysis lists only published figures, and a blocked cell's attempts do not move the
    published ones' min-max or rank."""
    post(client, staff, [run(s, n) for s in ("acme-agent", "beta-agent") for n in (1, 2)])
    blocked = [run("gamma-agent", n, verification="provisional") for n in (1, 2)]
    post(client, staff, blocked)
    gamma = cell_list().get(snapshot__system__slug="gamma-agent")
    assert gamma.blockers == ["not-independent-rerun"] and gamma.components
    tables = gate_sensitivity(cell_list())
    kr = table(tables, "cell", "KR", "email-calendar")
    acme, beta = "acme-agent--2.1--kr--email-calendar", "beta-agent--1.0--kr--email-calendar"
    assert kr["ordering"] == [acme, beta]
    assert all(gamma.cell_id not in t["published_values"] for t in tables)
    # The cohort is 200-300 s: acme, the slowest of it, gets a speed of 0 under min-max.
    moves = {m["alternative"]: m for m in kr["alternatives"]}
    assert moves["min-max/without-cost"]["values"] == pytest.approx({acme: 0.0, beta: 100.0})
    # Gamma's market figure is withheld (a blocked cell below): not in the market's ranking.
    assert table(tables, "market", "KR")["ordering"] == ["acme-agent--2.1", "beta-agent--1.0"]


def test_a_ranking_of_one_says_it_cannot_move_in_both_languages(client, staff, world):
    post(client, staff, [run("acme-agent", n) for n in (1, 2)])
    tables = gate_sensitivity(cell_list())
    # The cell and its market figure; the family figure is withheld, other markets missing.
    assert [(t["level"], t["market"]) for t in tables] == [("cell", "KR"), ("market", "KR")]
    only = tables[0]
    assert only["ordering"] == ["acme-agent--2.1--kr--email-calendar"]
    assert only["movable"] is False and only["smallest_kendall_tau"] is None
    assert all(m["kendall_tau"] is None and m["largest_shift"] == 0 for m in only["alternatives"])
    assert only["note"]["en"] == "Only one figure is published here: a ranking of one cannot move."
    assert only["note"]["ko"] and only["note"]["ko"] != only["note"]["en"]
    english = client.get("/results/").text
    korean = client.get("/ko/results/").text
    assert only["note"]["en"] in english and only["note"]["ko"] in korean
    assert 'class="rank-chart"' not in english


@pytest.mark.parametrize(
    ("third", "blocked"),
    [
        # Zero metered cost: "recorded as not measured and receives no score".
        ({"model_cost_usd": "0", "tool_cost_usd": "0", "observed_cost_usd": "0"}, True),
        # A synthetic attempt can never carry an audit value; it does not block.
        ({"attempt_class": "synthetic-fixture"}, False),
        ({}, False),
    ],
    ids=["unmeasured-cost-blocks", "synthetic-does-not", "all-scored"],
)
def test_every_attempt_that_could_carry_an_audit_value_must(client, staff, world, third, blocked):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy": one scored attempt is not enough; an attempt the figures count whose
    audit value is missing leaves the analysis short of it, and the cell is blocked."""
    extra = rerun(3, **third)
    if "model_cost_usd" in third:
        extra["invocations"] = [{**i, "cost_usd": "0"} for i in extra["invocations"]]
    post(client, staff, [rerun(1), rerun(2), extra])
    cell = cell_list().get()
    assert cell.eligible_runs == 3
    assert cell.blockers == (["no-sensitivity-analysis"] if blocked else [])
    published = [t for t in gate_sensitivity(cell_list()) if t["published_values"]]
    assert bool(published) is not blocked


@pytest.mark.vendor
def test_the_api_serves_the_exported_analysis_in_both_languages(
    client, three_systems, tmp_path, settings
):
    gate = export(tmp_path, settings)
    body = client.get("/api/v1/sensitivity/").json()
    assert body == gate["sensitivity"]
    assert body["tables"] and body["baseline"] == "reference-ratio/product"
    labels = body["labels"]
    assert set(labels["normalizations"]) == {"reference-ratio", "min-max", "rank", "log-ratio"}
    for group in labels.values():
        assert group
        for words in group.values():
            assert words["en"] and words["ko"] and words["en"] != words["ko"]
    assert (
        client.get("/api/v1/").json()["endpoints"]["sensitivity"].endswith("/api/v1/sensitivity/")
    )


def test_the_results_page_charts_each_ranking_in_both_languages(client, three_systems):
    english = client.get("/results/").text
    korean = client.get("/ko/results/").text
    assert english.count('class="rank-chart"') == len(gate_sensitivity(cell_list()))
    assert "Kendall&#x27;s tau" in english or "Kendall's tau" in english
    assert "Min-max over the cohort · Without cost" in english
    assert "up 1 place" in english and "down 1 place" in english
    assert 'class="rank-chart"' in korean and "켄달" in korean
    narrowed = client.get("/results/?market=KR&family=email-calendar").text
    assert narrowed.count('class="rank-chart"') == 3  # KR's cells, KR's market, the family


def test_the_results_page_with_the_analysis_runs_a_constant_number_of_queries(
    client, staff, world, codes, django_assert_max_num_queries
):
    post(client, staff, [run(s, n) for s in ("acme-agent", "beta-agent") for n in (1, 2)])
    with django_assert_max_num_queries(30) as captured:
        assert 'class="rank-chart"' in client.get("/results/").text
    count = len(captured.captured_queries)
    post(
        client,
        staff,
        [run(s, n, market=m) for m in codes if m != "KR" for s in RUNS for n in (1, 2)],
    )
    with django_assert_max_num_queries(count):
        client.get("/results/")
