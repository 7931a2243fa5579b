"""The loaded market editions, read through the API as a client would."""

import pytest

from markets import models
from tests.support import fields_missing_korean

pytestmark = pytest.mark.django_db

ORDER = ["KR", "JP", "SG", "TW", "AE", "TH"]


def test_api_lists_the_six_markets_in_order_each_meeting_every_minimum(client, canonical_content):
    response = client.get("/api/v1/markets/")
    assert response.status_code == 200
    markets = response.json()
    assert [m["code"] for m in markets] == ORDER
    for market in markets:
        assert market["coverage"] == {"complete": True, "gaps": []}, market["code"]
        assert market["name_en"] and market["name_ko"]
        assert len(market["situations"]) >= 5
        assert all(s["id"].startswith(market["code"].lower() + "-") for s in market["situations"])
        assert all(s["status"] == "declared-not-exercised" for s in market["situations"])


def test_every_translated_field_of_the_loaded_content_has_korean(canonical_content):
    missing = fields_missing_korean("markets")
    assert not missing, missing[:10]


def test_loading_twice_changes_nothing(canonical_content):
    from django.core.management import call_command

    before = {
        m: m.objects.count()
        for m in (models.IntegrationSituation, models.Hazard, models.RepresentativePlatform)
    }
    call_command("load_canonical_content", "markets", stdout=open("/dev/null", "w"))
    assert before == {m: m.objects.count() for m in before}


def test_detail_has_profile_platforms_and_documents(client, canonical_content):
    body = client.get("/api/v1/markets/jp/").json()
    assert body["code"] == "JP" and body["native_lang"] == "ja"
    assert len(body["hazards"]) == 4 and len(body["local_changes"]) == 4
    families = {r["task_family"] for r in body["platform_registrations"]}
    assert len(families) == 10
    first = body["platform_registrations"][0]["platforms"]
    assert [p["rank"] for p in first] == list(range(1, len(first) + 1))


@pytest.mark.parametrize(
    "query, check",
    [
        ("surface=human-handoff", lambda s: "human-handoff" in s["surfaces"]),
        ("boundary=session-only", lambda s: s["authorization_boundary"] == "session-only"),
        ("evidence_type=handoff-checkpoint", lambda s: "handoff-checkpoint" in s["evidence_types"]),
    ],
)
def test_situations_filter(client, canonical_content, query, check):
    markets = client.get(f"/api/v1/markets/?{query}").json()
    situations = [s for m in markets for s in m["situations"]]
    assert situations and all(check(s) for s in situations)
    unfiltered = sum(len(m["situations"]) for m in client.get("/api/v1/markets/").json())
    assert len(situations) < unfiltered


def test_an_unknown_filter_value_is_a_400_naming_the_field(client, canonical_content):
    response = client.get("/api/v1/markets/?surface=telepathy")
    assert response.status_code == 400
    assert "surface" in response.json()


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/markets/zz/",
        "/api/v1/markets/%00/",
        "/api/v1/markets/korea/",
        "/api/v1/markets/kr/situations/x/",
    ],
)
def test_unknown_markets_are_404(client, canonical_content, path):
    assert client.get(path).status_code == 404


def test_api_list_runs_a_constant_number_of_queries(
    client, canonical_content, django_assert_num_queries
):
    with django_assert_num_queries(8) as before:
        client.get("/api/v1/markets/")
    kr = models.MarketEdition.objects.get(market__code="KR")
    extra = kr.situations.first()
    for n in range(5):
        extra.pk, extra.situation_id = None, f"kr-extra-{n}"
        extra.save()
    with django_assert_num_queries(len(before.captured_queries)):
        client.get("/api/v1/markets/")
