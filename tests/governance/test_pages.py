"""Results, systems and evidence pages: reasons instead of numbers, in both languages."""

import re

import pytest
from django.core.management import call_command

from governance.models import GateCell
from tests.factories import api_auth, independent_rerun, publishable_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_runs(canonical_content):
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))  # idempotent


def test_pages_without_any_run(client, canonical_content):
    for path in [
        "/results/",
        "/ko/results/",
        "/systems/",
        "/ko/systems/",
        "/evidence/",
        "/ko/evidence/",
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
    assert "Nothing is eligible for publication." in client.get("/results/").text
    assert "No system has been registered." in client.get("/systems/").text


@pytest.mark.parametrize(
    "path, by_market, by_family",
    [
        ("/results/", "No coverage in this market.", "No coverage in this family."),
        ("/ko/results/", "이 시장에 커버리지 없음.", "이 계열에 커버리지 없음."),
    ],
)
def test_an_empty_slice_heading_says_there_is_nothing_in_it(
    client, canonical_content, path, by_market, by_family
):
    page = client.get(path).text
    assert 'id="by-family"' in page
    # Each heading of the reasons is followed by its message, never left empty.
    markets, families = page.split('id="by-market"', 1)[1].split('id="by-family"', 1)
    assert by_market in markets and by_family in families


def test_demo_runs_are_labelled_and_never_eligible(client, demo_runs):
    assert GateCell.objects.count() == 36
    assert not GateCell.objects.filter(publication_eligible=True).exists()
    assert all("demo-or-preview-data" in c.blockers for c in GateCell.objects.all())
    results = client.get("/results/").text
    assert "Preview data." in results and "<table" not in results
    assert "demo-or-preview-data" in results
    korean = client.get("/ko/results/").text
    assert "미리보기 데이터" in korean or "프리뷰 데이터" in korean


def test_demo_runs_never_count_as_registered_systems_or_cells(client, demo_runs):
    facts = client.get("/api/v1/facts/").json()["facts"]["en"]
    assert facts["registered_system_count"] == "0" and facts["run_cell_count"] == "0"


def test_evidence_page_walks_the_lineage(client, demo_runs):
    cell = GateCell.objects.select_related("snapshot__system", "market", "family").first()
    page = client.get(f"/evidence/{cell.cell_id}/").text
    assert "Figure" in page and "Basis" in page
    assert "Lineage" in page and cell.snapshot.system.name in page
    korean = client.get(f"/ko/evidence/{cell.cell_id}/")
    assert korean.status_code == 200


def test_missing_values_use_the_exact_phrases(client, demo_runs):
    failing = (
        GateCell.objects.filter(successes=0)
        .select_related("snapshot__system", "market", "family")
        .first()
    )
    assert failing is not None
    english = client.get(f"/evidence/{failing.cell_id}/").text
    assert "No successful task." in english
    korean = client.get(f"/ko/evidence/{failing.cell_id}/").text
    assert "성공한 과제 없음." in korean


def test_system_page_withholds_aggregates_with_reasons(client, demo_runs):
    page = client.get("/systems/demo-harbor/").text
    assert "Withheld: a cell below carries a critical safety event." in page or (
        "Withheld: the canonical task set is not complete." in page
    )


@pytest.mark.parametrize(
    "path",
    ["/evidence/nope/", "/evidence/a--b--c--d/", "/systems/no-such-system/", "/evidence/%00/"],
)
def test_unknown_records_are_404(client, demo_runs, path):
    assert client.get(path).status_code == 404


def test_results_filters_never_error(client, demo_runs):
    for query in ["market=ZZ", "metric=nul&family=x", "verification=self-reported", "market=KR"]:
        assert client.get(f"/results/?{query}").status_code == 200
    assert client.get("/results/?metric=%00").status_code == 400  # refused before the view


def test_results_page_runs_a_constant_number_of_queries(
    client, demo_runs, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12) as captured:
        client.get("/results/")
    count = len(captured.captured_queries)
    GateCell.objects.filter(pk__in=list(GateCell.objects.values_list("pk", flat=True)[:10]))
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    with django_assert_max_num_queries(count):
        client.get("/results/")


def test_eligible_cells_get_a_table_with_intervals_and_honest_ranks(client, staff):
    import json

    publishable_world(markets=("KR", "JP"), min_eligible_runs=1, runs_per_task=1)
    for n, market in enumerate(["KR", "JP"]):
        payload = independent_rerun(n, market=market)
        response = client.post(
            "/api/v1/attempts/",
            json.dumps(payload),
            content_type="application/json",
            **api_auth(staff),
        )
        assert response.status_code == 201, response.json()
    page = client.get("/results/").text
    assert "<table" in page and 'aria-sort="descending"' in page
    assert "Not ranked: its interval overlaps another" in page
    assert "0.207" in page  # the Wilson interval of 1/1 printed beside the figure


@pytest.mark.parametrize(
    "prefix, sentence",
    [
        ("", "The cell holds demo or preview data, which can never be published."),
        (
            "/ko",
            "이 셀에는 데모 또는 프리뷰 데이터가 있으며, 이러한 데이터는 결코 공개될 수 없습니다.",
        ),
    ],
)
def test_readers_get_the_gates_sentences_not_its_codes(client, demo_runs, prefix, sentence):
    """Issue 34: "Blocker codes on public evidence and system pages ... are the sentences the
    gate already has in both languages"."""
    system_page = client.get(f"{prefix}/systems/demo-harbor/").text
    cell_path = re.search(r'href="((?:/ko)?/evidence/[^"]+/)"', system_page).group(1)
    for path in (f"{prefix}/evidence/", f"{prefix}/systems/demo-harbor/", cell_path):
        page = client.get(path).text
        assert sentence in page, path
        assert ">demo-or-preview-data<" not in page, path
