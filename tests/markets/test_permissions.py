"""Local editors change only the markets where they hold a current competence."""

import datetime

import pytest
from django.contrib.auth.models import User

from markets.models import IntegrationSituation, MarketCompetence

pytestmark = pytest.mark.django_db


def situation_of(code):
    return IntegrationSituation.objects.filter(market_edition__market__code=code).first()


def test_kr_editor_cannot_change_jp_in_the_api(client, kr_editor):
    client.force_login(kr_editor)
    jp = situation_of("JP")
    response = client.patch(
        f"/api/v1/markets/jp/situations/{jp.situation_id}/",
        {"title_en": "Rewritten by the wrong market"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert "JP" in response.json()["detail"]
    jp.refresh_from_db()
    assert jp.title_en != "Rewritten by the wrong market"


def test_kr_editor_changes_kr_in_the_api(client, kr_editor):
    client.force_login(kr_editor)
    kr = situation_of("KR")
    response = client.patch(
        f"/api/v1/markets/kr/situations/{kr.situation_id}/",
        {"title_ko": "고친 제목", "surfaces": ["open-web", "human-handoff"]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.json()
    kr.refresh_from_db()
    assert kr.title_ko == "고친 제목" and kr.surfaces == ["open-web", "human-handoff"]


def test_an_invalid_change_is_a_400_and_stores_nothing(client, kr_editor):
    client.force_login(kr_editor)
    kr = situation_of("KR")
    response = client.patch(
        f"/api/v1/markets/kr/situations/{kr.situation_id}/",
        {"title_en": "Half-written", "surfaces": []},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "surfaces" in response.json()["errors"]
    kr.refresh_from_db()
    assert kr.title_en != "Half-written"


def test_anonymous_writes_are_refused(client, canonical_content):
    kr = situation_of("KR")
    response = client.patch(
        f"/api/v1/markets/kr/situations/{kr.situation_id}/",
        {"title_en": "x"},
        content_type="application/json",
    )
    assert response.status_code in (401, 403)


def test_expired_competence_counts_for_nothing(client, kr_editor):
    MarketCompetence.objects.filter(user=kr_editor).update(
        valid_until=datetime.date.today() - datetime.timedelta(days=1)
    )
    client.force_login(kr_editor)
    kr = situation_of("KR")
    response = client.patch(
        f"/api/v1/markets/kr/situations/{kr.situation_id}/",
        {"title_en": "x"},
        content_type="application/json",
    )
    assert response.status_code == 403


def test_kr_editor_sees_and_changes_only_kr_in_the_admin(client, kr_editor):
    client.force_login(kr_editor)
    listing = client.get("/admin/markets/integrationsituation/")
    assert listing.status_code == 200
    assert situation_of("KR").situation_id in listing.text
    assert situation_of("JP").situation_id not in listing.text
    jp = situation_of("JP")
    page = client.get(f"/admin/markets/integrationsituation/{jp.pk}/change/")
    assert page.status_code == 302  # the admin treats it as not there
    client.post(f"/admin/markets/integrationsituation/{jp.pk}/change/", {"title_en": "x"})
    jp.refresh_from_db()
    assert jp.title_en != "x"


def _form_data(situation, **overrides):
    data = {
        "market_edition": situation.market_edition_id,
        "situation_id": situation.situation_id,
        "position": situation.position,
        "title_en": situation.title_en,
        "title_ko": situation.title_ko,
        "detail_en": situation.detail_en,
        "detail_ko": situation.detail_ko,
        "capability_area_en": situation.capability_area_en,
        "capability_area_ko": situation.capability_area_ko,
        "task_families": situation.task_families,
        "surfaces": situation.surfaces,
        "authorization_boundary": situation.authorization_boundary,
        "completion_semantics": situation.completion_semantics,
        "recovery_conditions": situation.recovery_conditions,
        "evidence_types": situation.evidence_types,
        "api_documented": situation.api_documented,
        "production_execution": situation.production_execution,
        "facts_source": situation.facts_source,
        "facts_source_date": situation.facts_source_date.isoformat(),
    }
    data.update(overrides)
    return data


def test_admin_refuses_a_wrong_prefix_in_the_editors_language(client, kr_editor):
    client.force_login(kr_editor)
    kr = situation_of("KR")
    response = client.post(
        f"/ko/admin/markets/integrationsituation/{kr.pk}/change/",
        _form_data(kr, situation_id="jp-stolen"),
    )
    assert response.status_code == 200
    assert "시장 KR의 상황 ID는" in response.text
    kr.refresh_from_db()
    assert kr.situation_id != "jp-stolen"


def test_admin_saves_a_valid_change(client, kr_editor):
    client.force_login(kr_editor)
    kr = situation_of("KR")
    response = client.post(
        f"/admin/markets/integrationsituation/{kr.pk}/change/",
        _form_data(kr, title_en="Clearer title"),
    )
    assert response.status_code == 302
    kr.refresh_from_db()
    assert kr.title_en == "Clearer title"


def test_coverage_audit_is_visible_per_market_in_the_admin(client, lead, canonical_content):
    client.force_login(lead)
    page = client.get("/admin/markets/marketedition/")
    assert page.text.count("Complete") >= 6
    assert isinstance(User.objects.get(username="lead"), User)
