"""The scope planner: counts per mode from the records, the empty-scope error, the manifest."""

import re
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.db.models import F
from django.http import QueryDict

from catalogue.models import MarketApplicability, TaskDefinition, TaskSet
from markets.models import Market
from mica.methodology.models import Edition, EditionStatus
from mica.methodology.selectors import edition_current
from mica.site import planner
from mica.site.planner import PlannerRecords, ScopeMode

pytestmark = pytest.mark.django_db


# --- what the records say, read without the planner ---------------------------


def public_task_ids():
    tasks = TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC, current_version__isnull=False)
    return list(
        tasks.exclude(lifecycle="retired")
        .order_by("family__position", "position", "slug")
        .values_list("slug", flat=True)
    )


def market_codes():
    return list(Market.objects.order_by("display_order").values_list("code", flat=True))


def applicable_pairs():
    """(market, task) pairs whose current version declares the task applies there."""
    rows = MarketApplicability.objects.filter(
        version__definition__task_set=TaskSet.PUBLIC,
        version__definition__current_version=F("version"),
    ).exclude(status="not-applicable")
    return set(rows.values_list("market__code", "version__definition__slug"))


def expected(markets, tasks):
    pairs = applicable_pairs()
    planned = len(markets) * len(tasks)
    eligible = sum(1 for m in markets for t in tasks if (m, t) in pairs)
    return {"planned": planned, "eligible": eligible, "not-applicable": planned - eligible}


def figures(html):
    """The summary's figures as the page prints them."""
    found = dict(re.findall(r'data-figure="([a-z-]+)">(\d+)<', html))
    return {name: int(value) for name, value in found.items()}


def query(**params):
    return urlencode(params, doseq=True)


# --- the rules on hand-made records (no database) ------------------------------

RECORDS = PlannerRecords(
    markets=("KR", "JP", "SG"),
    tasks=("a-one", "a-two", "b-one"),
    applicability={("KR", "a-one"): "applicable", ("JP", "a-one"): "not-applicable"},
)


def test_selections_are_filtered_deduplicated_and_in_records_order():
    selection = planner.selection_from_query(
        QueryDict(
            "mode=custom-matrix&market=SG&market=kr&market=KR&market=XX&task=b-one"
            "&task=zz&task=a-one&task=b-one"
        ),
        RECORDS,
    )
    assert selection.markets == ("KR", "SG")
    assert selection.tasks == ("a-one", "b-one")


@pytest.mark.parametrize(
    "raw, mode",
    [("bogus", "custom-matrix"), ("", "custom-matrix"), ("full-benchmark", "full-benchmark")],
)
def test_an_unknown_mode_is_the_custom_matrix(raw, mode):
    assert planner.selection_from_query(QueryDict(f"mode={raw}"), RECORDS).mode == mode


def test_a_first_visit_ticks_the_first_market_and_task_in_the_default_mode():
    selection = planner.selection_from_query(QueryDict(""), RECORDS)
    assert selection == planner.Selection(ScopeMode.COUNTRY_FOCUSED, ("KR",), ("a-one",))


def test_undeclared_applicability_is_not_executable():
    scope = planner.scope_plan(
        planner.Selection("custom-matrix", ("JP", "SG"), ("a-one",)), RECORDS
    )
    assert scope.planned == 2 and scope.execution_eligible == 0 and scope.not_applicable == 2


@pytest.mark.parametrize(
    "selection, valid",
    [
        (planner.Selection("country-focused", (), ("a-one",)), False),
        (planner.Selection("country-focused", ("KR",), ()), True),
        (planner.Selection("task-focused", ("KR",), ()), False),
        (planner.Selection("task-focused", (), ("a-one",)), True),
        (planner.Selection("custom-matrix", ("KR",), ()), False),
        (planner.Selection("custom-matrix", (), ("a-one",)), False),
        (planner.Selection("full-benchmark", (), ()), True),
    ],
)
def test_which_selections_a_mode_needs(selection, valid):
    scope = planner.scope_plan(selection, RECORDS)
    assert scope.valid is valid
    assert scope.planned == (len(scope.markets) * len(scope.tasks) if valid else 0)
    assert scope.executed == scope.failed == 0


# --- the page on the canonical content ----------------------------------------


def test_full_benchmark_plans_every_market_times_every_public_task(client, canonical_content):
    markets, tasks = market_codes(), public_task_ids()
    html = client.get("/evaluate/?" + query(mode="full-benchmark")).text
    counted = figures(html)
    assert counted["markets"] == len(markets) and counted["tasks"] == len(tasks)
    assert {k: counted[k] for k in ("planned", "eligible", "not-applicable")} == expected(
        markets, tasks
    )
    assert counted["planned"] == len(markets) * len(tasks) > 0
    assert f"</span> / {len(markets)}</dd>" in html and f"</span> / {len(tasks)}</dd>" in html


def test_country_focused_plans_the_chosen_markets_times_every_task(client, canonical_content):
    markets, tasks = market_codes()[:2], public_task_ids()
    html = client.get("/evaluate/?" + query(mode="country-focused", market=markets)).text
    counted = figures(html)
    assert counted["markets"] == 2 and counted["tasks"] == len(tasks)
    assert counted["planned"] == expected(markets, tasks)["planned"]
    assert counted["eligible"] == expected(markets, tasks)["eligible"]


def test_task_focused_plans_every_market_times_the_chosen_tasks(client, canonical_content):
    markets, tasks = market_codes(), public_task_ids()[-3:]
    html = client.get("/evaluate/?" + query(mode="task-focused", task=tasks)).text
    counted = figures(html)
    assert counted["markets"] == len(markets) and counted["tasks"] == 3
    assert counted["planned"] == expected(markets, tasks)["planned"]
    assert counted["not-applicable"] == expected(markets, tasks)["not-applicable"]


def test_a_custom_matrix_counts_a_not_applicable_cell(client, canonical_content):
    entry = (
        MarketApplicability.objects.filter(
            status="not-applicable", version__definition__task_set=TaskSet.PUBLIC
        )
        .select_related("market", "version__definition")
        .first()
    )
    if entry is None:  # the content may someday apply everywhere; make one pair not apply
        entry = MarketApplicability.objects.select_related("market", "version__definition").first()
        entry.status = "not-applicable"
        entry.save()
    code, slug = entry.market.code, entry.version.definition.slug
    html = client.get("/evaluate/?" + query(mode="custom-matrix", market=code, task=slug)).text
    assert figures(html) == {
        "markets": 1,
        "tasks": 1,
        "planned": 1,
        "eligible": 0,
        "not-applicable": 1,
    }
    assert f"{code} · {entry.version.title} <code>{slug}</code>" in html


def test_an_unknown_mode_plans_the_custom_matrix(client, canonical_content):
    market, task = market_codes()[0], public_task_ids()[0]
    html = client.get("/evaluate/?" + query(mode="everything", market=market, task=task)).text
    assert figures(html)["planned"] == 1
    assert re.search(r'value="custom-matrix"[^>]*checked', html)


def test_a_first_visit_plans_the_first_market_in_country_focus(client, canonical_content):
    html = client.get("/evaluate/").text
    first_market, tasks = market_codes()[0], public_task_ids()
    assert re.search(r'value="country-focused"[^>]*checked', html)
    assert re.search(rf'id="market-{first_market}" value="{first_market}" checked', html)
    assert figures(html)["planned"] == len(tasks)
    assert "data-planner-errors hidden" in html


@pytest.mark.parametrize(
    "prefix, heading, market_error, task_error",
    [
        (
            "",
            "This scope plans no cells",
            "Select at least one market.",
            "Select at least one task.",
        ),
        (
            "/ko",
            "이 범위로는 계획되는 셀이 없습니다",
            "시장을 하나 이상 선택하세요.",
            "과제를 하나 이상 선택하세요.",
        ),
    ],
)
def test_an_empty_scope_shows_the_error_summary_in_the_readers_language(
    client, canonical_content, prefix, heading, market_error, task_error
):
    response = client.get(f"{prefix}/evaluate/?mode=custom-matrix")
    assert response.status_code == 200
    html = response.text
    summary = re.search(r'<div class="error-summary" role="alert"[^>]*>(.*?)</div>', html, re.S)
    assert summary and "hidden" not in summary.group(0).split(">")[0]
    assert heading in summary.group(1)
    assert f'<a href="#market-{market_codes()[0]}">{market_error}</a>' in summary.group(1)
    assert f'<a href="#task-{public_task_ids()[0]}">{task_error}</a>' in summary.group(1)
    assert figures(html)["planned"] == 0
    assert "data-planner-manifest hidden" in html


def test_a_country_focus_without_a_market_names_only_the_market(client, canonical_content):
    html = client.get("/evaluate/?mode=country-focused").text
    assert re.search(r'<li data-error-for="market">', html)
    assert re.search(r'<li data-error-for="task" hidden>', html)
    assert "<title>Error: Plan an evaluation — MICA</title>" in html


def test_the_korean_page_is_korean_and_stays_under_ko(client, canonical_content):
    html = client.get("/ko/evaluate/").text
    assert '<html lang="ko">' in html
    assert "평가 범위 설계" in html and "요약 갱신" in html
    assert 'action="/ko/evaluate/"' in html
    assert 'href="/ko/evaluate/manifest.json?' in html


def test_the_page_is_in_the_navigation_and_the_sitemap(client, canonical_content):
    assert 'href="/evaluate/" aria-current="page"' in client.get("/evaluate/").text
    sitemap = client.get("/sitemap.xml").text
    assert f"<loc>{settings.SITE_URL}/evaluate/</loc>" in sitemap
    assert f"<loc>{settings.SITE_URL}/ko/evaluate/</loc>" in sitemap


def test_a_holdout_task_is_never_offered_nor_planned(client, canonical_content):
    hidden = TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).first()
    hidden.task_set = TaskSet.HOLDOUT
    hidden.save()
    assert hidden.slug not in client.get("/evaluate/?mode=full-benchmark").text
    asked = client.get("/evaluate/?" + query(mode="task-focused", task=hidden.slug)).text
    assert f'id="task-{hidden.slug}"' not in asked and f"<code>{hidden.slug}</code>" not in asked
    assert figures(asked)["planned"] == 0
    manifest = client.get("/evaluate/manifest.json?mode=full-benchmark").json()
    assert hidden.slug not in manifest["tasks"]
    assert hidden.slug not in {cell["task"] for cell in manifest["cells"]}
    assert manifest["counts"]["planned"] == len(market_codes()) * len(public_task_ids())


# --- the manifest --------------------------------------------------------------


def test_the_manifest_is_an_attachment_of_the_frozen_scope(client, canonical_content):
    markets, tasks = market_codes()[:1], public_task_ids()
    response = client.get(
        "/evaluate/manifest.json?" + query(mode="country-focused", market=markets)
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    manifest = response.json()
    edition = edition_current()
    assert manifest["edition"] == {"slug": edition.slug, "label": edition.version_label}
    assert manifest["mode"] == "country-focused"
    assert manifest["markets"] == markets and manifest["tasks"] == tasks
    pairs = applicable_pairs()
    assert manifest["cells"] == [
        {
            "market": m,
            "task": t,
            "applicability": MarketApplicability.objects.get(
                market__code=m,
                version__definition__slug=t,
                version=TaskDefinition.objects.get(slug=t).current_version,
            ).status,
        }
        for m in markets
        for t in tasks
    ]
    counts = manifest["counts"]
    assert counts["planned"] == len(manifest["cells"]) == len(tasks)
    assert counts["execution_eligible"] == sum(1 for t in tasks if (markets[0], t) in pairs)
    assert counts["executed"] == counts["failed"] == 0


@pytest.mark.parametrize(
    "params",
    [
        {"mode": "full-benchmark"},
        {"mode": "country-focused", "market": ["JP", "TH"]},
        {"mode": "task-focused", "task": "PICK-2"},
        {"mode": "custom-matrix", "market": ["AE", "KR"], "task": "PICK-3"},
        {"mode": "nonsense", "market": "SG", "task": "PICK-1"},
    ],
)
def test_the_manifest_round_trips(client, canonical_content, params):
    if "task" in params:
        params = {**params, "task": public_task_ids()[::30][: int(params["task"][-1])]}
    first = client.get("/evaluate/manifest.json?" + query(**params)).json()
    again_query = query(mode=first["mode"], market=first["markets"], task=first["tasks"])
    again = client.get("/evaluate/manifest.json?" + again_query).json()
    assert again["cells"] == first["cells"] and again["counts"] == first["counts"]
    assert figures(client.get("/evaluate/?" + again_query).text)["planned"] == len(first["cells"])


def test_the_page_links_the_manifest_of_what_it_shows(client, canonical_content):
    html = client.get("/evaluate/?mode=task-focused&task=nope&task=" + public_task_ids()[0]).text
    link = re.search(r'href="(/evaluate/manifest\.json\?[^"]+)"', html).group(1)
    manifest = client.get(link.replace("&amp;", "&")).json()
    assert manifest["counts"]["planned"] == figures(html)["planned"]


@pytest.mark.parametrize(
    "prefix, message", [("", "Select at least one task."), ("/ko", "과제를 하나 이상 선택하세요.")]
)
def test_an_empty_scope_has_no_manifest(client, canonical_content, prefix, message):
    response = client.get(f"{prefix}/evaluate/manifest.json?mode=task-focused")
    assert response.status_code == 400
    assert response.json() == {"errors": {"task": [message]}}


# --- input a reader can send ---------------------------------------------------

BAD_QUERIES = [
    "mode=%00&market=%00&task=%00",
    "mode=full-benchmark&mode=task-focused&mode=bogus",
    "market=" + "K" * 20000,
    "task=" + "x" * 20000 + "&mode=" + "y" * 5000,
    "&".join(["market=KR"] * 900 + ["task=ec-reschedule-three-party"] * 90),
    "&".join(f"task=t{i}" for i in range(5000)),
    "market[]=KR&task[]=x&mode[]=full-benchmark",
    "mode=%E2%80%AEfull&market=%ED%95%9C&task=%F0%9F%92%A5",
    "%ZZ=%ZZ&market=%",
]


@pytest.mark.parametrize("bad", BAD_QUERIES)
@pytest.mark.parametrize("path", ["/evaluate/", "/ko/evaluate/", "/evaluate/manifest.json"])
def test_bad_input_never_fails_the_server(client, canonical_content, path, bad):
    response = client.get(f"{path}?{bad}")
    assert response.status_code in (200, 400), response.status_code


def test_repeated_mode_takes_the_last_value(client, canonical_content):
    html = client.get("/evaluate/?mode=custom-matrix&mode=full-benchmark").text
    assert figures(html)["planned"] == len(market_codes()) * len(public_task_ids())


# --- query budget ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/evaluate/", "/evaluate/manifest.json"])
def test_the_planner_runs_a_constant_number_of_queries(
    client, canonical_content, django_assert_num_queries, path
):
    one_cell = f"{path}?mode=custom-matrix&market=KR&task={public_task_ids()[0]}"
    # Markets, tasks, their applicability, and the current edition (a second
    # read while no edition is published): the same for one cell or every cell.
    edition_reads = 1 if Edition.objects.filter(status=EditionStatus.PUBLISHED).exists() else 2
    with django_assert_num_queries(3 + edition_reads):
        client.get(one_cell)
    with django_assert_num_queries(3 + edition_reads):
        client.get(f"{path}?mode=full-benchmark")
