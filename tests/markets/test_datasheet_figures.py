"""A market's datasheet counts its records from the records, in both languages.

Issue 18: "Every number in the prose of either language that counts records or states a
threshold, date or status is a live figure from the records, in both languages; … a
test changes each counted record kind and sees both languages follow." The KR
datasheet's composition states "Four hazards, four lines on what changes when a task is
local, five declared integration situations, and an ordered list of candidate platforms
for each of the ten task families."
"""

import pytest

from markets.models import Hazard, IntegrationSituation, MarketEdition, PlatformRegistration
from tests.census import form_data
from tests.mica.methodology.test_korean_seed import html_text

pytestmark = pytest.mark.django_db


def composition(client, language, code="kr"):
    """The datasheet's composition as a reader of the market page reads it."""
    prefix = "/ko" if language == "ko" else ""
    text = html_text(client.get(f"{prefix}/markets/{code}/").text)
    label = "구성" if language == "ko" else "Composition"
    after = text.split(label, 1)[1]
    return after.split("수집" if language == "ko" else "Collection", 1)[0].strip()


def kr():
    return MarketEdition.objects.get(market__code="KR")


def test_the_canonical_datasheet_reads_as_written(client, canonical_content):
    english, korean = composition(client, "en"), composition(client, "ko")
    assert english.startswith(
        "Four hazards, four lines on what changes when a task is local, five declared "
        "integration situations, and an ordered list of candidate platforms for each of "
        "the ten task families."
    ), english
    assert korean.startswith(
        "위험 요소 4가지, 과제가 현지화될 때 달라지는 점 4가지, 선언된 연동 상황 5개, "
        "그리고 10개 과제 계열마다"
    ), korean
    assert "{{" not in english + korean
    jp = composition(client, "en", "jp")
    assert jp.startswith("Four hazards, four locality lines, five declared integration")


def test_an_added_hazard_is_counted_in_both_languages(client, canonical_content):
    first = kr().hazards.first()
    first.pk, first.position = None, 99
    first.save()
    assert composition(client, "en").startswith("Five hazards, four lines")
    assert composition(client, "ko").startswith(
        "위험 요소 5가지, 과제가 현지화될 때 달라지는 점 4가지"
    )
    # Another market's datasheet counts its own.
    assert composition(client, "en", "jp").startswith("Four hazards")


def test_each_counted_kind_follows_in_both_languages(client, canonical_content):
    edition = kr()
    Hazard.objects.filter(pk__in=[h.pk for h in edition.hazards.all()[1:]]).delete()
    edition.local_changes.order_by("-position").first().delete()
    IntegrationSituation.objects.filter(pk=edition.situations.order_by("-position")[0].pk).delete()
    PlatformRegistration.objects.filter(pk=edition.platform_registrations.first().pk).delete()
    english, korean = composition(client, "en"), composition(client, "ko")
    assert english.startswith(
        "One hazard, three lines on what changes when a task is local, four declared "
        "integration situations, and an ordered list of candidate platforms for each of "
        "the nine task families."
    ), english
    assert korean.startswith(
        "위험 요소 1가지, 과제가 현지화될 때 달라지는 점 3가지, 선언된 연동 상황 4개, "
        "그리고 9개 과제 계열마다"
    ), korean


def test_a_superseded_registration_is_not_a_family_of_its_own(client, canonical_content):
    """A family counts once however many registrations it has had; only live ones count."""
    registration = kr().platform_registrations.first()
    registration.pk, registration.status = None, "superseded"
    registration.save()
    assert "each of the ten task families" in composition(client, "en")


@pytest.mark.vendor
def test_search_quotes_the_datasheet_with_its_figures(client, canonical_content):
    page = client.get("/search/", {"q": "declared integration situations"}).text
    assert "{{" not in page
    assert "five declared integration situations" in html_text(page)


def test_the_admin_refuses_a_figure_the_datasheet_cannot_count(client, lead, canonical_content):
    client.force_login(lead)
    url = f"/ko/admin/markets/marketedition/{kr().pk}/change/"
    data = form_data(client.get(url).text)
    written = kr().datasheet.composition_ko
    data["datasheet-0-composition_ko"] = "위험 요소 {{hazard}}가지"
    response = client.post(url, data)
    assert response.status_code == 200
    assert "알 수 없는 자리표시자입니다: {{hazard}}" in response.text
    assert kr().datasheet.composition_ko == written
    # A figure it can count is kept.
    data["datasheet-0-composition_ko"] = "위험 요소 {{hazards}}가지로 이루어집니다."
    assert client.post(url, data).status_code == 302
    assert composition(client, "ko") == "위험 요소 4가지로 이루어집니다."
