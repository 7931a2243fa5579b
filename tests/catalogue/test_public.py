"""The public catalogue: pages, API, instances, and a holdout nobody public can reach."""

import re

import pytest
from django.db.models import F

from catalogue.models import (
    Complexity,
    Lifecycle,
    TaskDefinition,
    TaskSet,
    TaskSurface,
    TaskVersion,
    TerminationClass,
)
from tests.factories import HOLDOUT_CANARY as CANARY
from tests.factories import holdout_task
from tests.support import crawl

pytestmark = pytest.mark.django_db


@pytest.fixture
def holdout(canonical_content):
    return holdout_task()


def test_a_holdout_task_is_unreachable_from_anything_public(client, holdout):
    bodies = crawl(
        client,
        [
            "/",
            "/ko/",
            "/tasks/",
            "/ko/tasks/",
            "/sitemap.xml",
            "/api/v1/",
            "/api/v1/tasks/",
            "/api/v1/tasks/?limit=200",
            "/api/v1/families/",
            "/api/v1/markets/",
            "/api/schema/",
            "/api/docs/",
        ],
    )
    assert len(bodies) > 30
    leaks = [path for path, body in bodies.items() if CANARY in body or holdout.slug in body]
    assert not leaks, leaks
    for path in [
        f"/tasks/{holdout.slug}/",
        f"/ko/tasks/{holdout.slug}/",
        f"/api/v1/tasks/{holdout.slug}/",
        f"/api/v1/tasks/{holdout.slug}/instances/?market=KR",
    ]:
        response = client.get(path)
        assert response.status_code == 404, path
        assert CANARY not in response.content.decode() and holdout.slug not in (
            response.content.decode()
        )


def test_public_counts_leave_the_holdout_out(client, holdout):
    body = client.get("/api/v1/tasks/").json()
    assert body["count"] == 100
    assert "100 tasks shown." in client.get("/tasks/").text


def test_task_list_page_in_both_languages(client, canonical_content):
    english = client.get("/tasks/")
    korean = client.get("/ko/tasks/")
    assert english.status_code == korean.status_code == 200
    assert 'href="#email-calendar"' in english.text
    assert "ec-reschedule-three-party" in english.text
    assert "<details>" in english.text and "Contract" in english.text
    assert "이메일·캘린더" in korean.text


@pytest.mark.parametrize(
    "query, shown",
    [
        ("family=email-calendar", 10),
        ("family=nonsense", 100),
        ("market=ZZ&surface=nonsense&lifecycle=validated", 0),
        ("lifecycle=bogus&complexity=", 100),
    ],
)
def test_filters_never_error(client, canonical_content, query, shown):
    response = client.get(f"/tasks/?{query}")
    assert response.status_code == 200
    assert f"{shown} tasks shown." in response.text or (
        shown == 1 and "1 task shown." in response.text
    )


def test_market_filter_drops_not_applicable_tasks(client, canonical_content):
    ae = client.get("/api/v1/tasks/?market=AE&limit=200").json()
    assert 0 < ae["count"] < 100
    assert all("AE" in task["markets"] for task in ae["results"])


@pytest.mark.parametrize("code", ["KR", "JP", "SG", "TW", "AE", "TH"])
def test_a_market_lists_every_task_that_applies_there(client, canonical_content, code):
    """A task applies in a market unless its applicability *there* says not applicable: a
    task not applicable in one market still counts in every other (and in the gate's
    canonical task set, which reads the same rule)."""
    from catalogue.models import MarketApplicability

    there = MarketApplicability.objects.filter(
        market__code=code,
        version__definition__task_set=TaskSet.PUBLIC,
        version__definition__current_version=F("version"),
    ).exclude(status="not-applicable")
    elsewhere = MarketApplicability.objects.exclude(market__code=code).filter(
        status="not-applicable"
    )
    assert elsewhere.exists(), "the content marks some task not applicable in another market"
    listed = client.get(f"/api/v1/tasks/?market={code}&limit=200").json()
    assert listed["count"] == there.values("version__definition").distinct().count()


def test_task_detail_page_and_api(client, canonical_content):
    page = client.get("/tasks/ec-reschedule-three-party/")
    assert page.status_code == 200
    assert "Applicability per market" in page.text and "Exposure" in page.text
    body = client.get("/api/v1/tasks/ec-reschedule-three-party/").json()
    assert body["id"] == "ec-reschedule-three-party" and body["title_ko"]
    assert {c["kind"] for c in body["contract"]["clauses"]} == {
        "obligation",
        "invariant",
        "prohibited",
    }
    assert client.get("/tasks/no-such-task/").status_code == 404
    assert client.get("/tasks/%00/").status_code == 404


def test_instances_are_deterministic(client, canonical_content):
    url = "/api/v1/tasks/gc-resident-record-extract/instances/?market=KR&seed=7&n=5"
    first, again = client.get(url).json(), client.get(url).json()
    assert first == again and len(first["instances"]) == 5
    other = client.get(url.replace("seed=7", "seed=8")).json()
    assert other["instances"] != first["instances"]
    assert first["instances"][0]["instance_id"] == "gc-resident-record-extract@1.0.0:KR:7:1"


@pytest.mark.parametrize(
    "query, field",
    [
        ("market=KR&n=51", "n"),
        ("market=KR&n=-1", "n"),
        ("market=ZZ", "market"),
        ("", "market"),
        ("market=KR&seed=abc", "seed"),
    ],
)
def test_bad_instance_queries_are_400(client, canonical_content, query, field):
    response = client.get(f"/api/v1/tasks/gc-resident-record-extract/instances/?{query}")
    assert response.status_code == 400
    assert field in response.json()
    if query.endswith("n=51"):
        assert "50" in response.json()["n"][0]


def test_list_page_and_api_run_a_constant_number_of_queries(
    client, canonical_content, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12):
        client.get("/tasks/")
    with django_assert_max_num_queries(8):
        client.get("/api/v1/tasks/?limit=100")
    with django_assert_max_num_queries(8):
        client.get("/api/v1/tasks/?limit=5")


@pytest.mark.parametrize(
    "query",
    [
        "limit=393238628317014381301824749568",
        "offset=393238628317014381301824749568",
        "limit=-5&offset=-7",
        "limit=abc&offset=null",
        "market=%C2%A3%C2%B2&surface=%C3%8C%C3%BB%15%0D&family=%C2%97%C3%8C",
    ],
)
def test_huge_or_odd_pagination_never_errors(client, canonical_content, query):
    response = client.get(f"/api/v1/tasks/?{query}")
    assert response.status_code == 200
    assert len(response.json()["results"]) <= 200


def _balance_tables(html):
    """{complexity label: {surface label: [count per termination class]}} as printed."""
    tables = {}
    for caption, body in re.findall(
        r"<caption>Public definitions by surface and termination class: ([^<]+)</caption>"
        r".*?<tbody>(.*?)</tbody>",
        html,
        re.S,
    ):
        rows = re.findall(r'<th scope="row">([^<]+)</th>((?:<td>\d+</td>)+)', body)
        tables[caption] = {
            label: [int(n) for n in re.findall(r"\d+", cells)] for label, cells in rows
        }
    return tables


def _balance_counted():
    """The same tables counted from the records: public, in-force tasks' current versions."""
    tables = {}
    versions = [
        d.current_version
        for d in TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).exclude(
            lifecycle=Lifecycle.RETIRED
        )
    ]
    for complexity, complexity_label in Complexity.choices:
        tables[str(complexity_label)] = {
            str(surface_label): [
                sum(
                    1
                    for v in versions
                    if (v.declared_complexity, v.surface, v.termination_class)
                    == (complexity, surface, end)
                )
                for end, _label in TerminationClass.choices
            ]
            for surface, surface_label in TaskSurface.choices
        }
    return tables


def test_the_catalogue_balance_counts_the_public_definitions_in_force(
    client, holdout, django_capture_on_commit_callbacks
):
    """Seed: every figure is counted from records. The balance counts each public task in
    force once, in its cell; a holdout or retired task is in none, and an edit moves it."""
    shown = _balance_tables(client.get("/tasks/").content.decode())
    assert shown == _balance_counted()
    assert sum(sum(sum(row) for row in t.values()) for t in shown.values()) == (
        TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC)
        .exclude(lifecycle=Lifecycle.RETIRED)
        .exclude(current_version__declared_complexity="")
        .count()
    )
    moved = TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).order_by("pk").first()
    retired = TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).order_by("-pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        TaskVersion.objects.filter(pk=moved.current_version_id).update(
            surface=TaskSurface.PHONE_OR_IN_PERSON, termination_class=TerminationClass.REFUSAL
        )
        TaskDefinition.objects.filter(pk=retired.pk).update(lifecycle=Lifecycle.RETIRED)
    after = _balance_tables(client.get("/tasks/").content.decode())
    assert after == _balance_counted()
    assert after != shown
