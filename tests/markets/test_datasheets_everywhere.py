"""Datasheets and data statements in the markets API (list and detail), as the market page
shows them, in English and Korean (the exports: tests/mica/exports/test_market_datasheets.py)."""

import json

import pytest

from markets.models import DATA_STATEMENT_FIELDS, DATASHEET_FIELDS
from mica.bilingual import field_columns

pytestmark = pytest.mark.django_db

PAGES = {"en": "/markets/kr/", "ko": "/ko/markets/kr/"}


@pytest.fixture
def rendered(settings):
    """Pages rendered afresh, so each answer carries its template context."""
    settings.PAGE_CACHE_SECONDS = 0


def page_texts(client, language):
    """The datasheet and data statement texts the KR page shows in `language`."""
    context = client.get(PAGES[language]).context
    statement = context["market_edition"].data_statement
    return (
        {name: context["sheet"][name] for name in DATASHEET_FIELDS},
        {name: getattr(statement, f"{name}_{language}") for name in DATA_STATEMENT_FIELDS},
    )


@pytest.mark.parametrize("path", ["/api/v1/markets/", "/api/v1/markets/kr/"])
def test_the_api_carries_what_the_market_page_shows_in_both_languages(
    client, canonical_content, rendered, path
):
    """PORTAL.md, markets: "one edition profile per market and edition: … datasheet and data
    statement"; every public string in English and Korean. The API gives each market
    edition's datasheet and data statement as its page shows them in each language, the
    datasheet's counts filled in from the records."""
    body = client.get(path).json()
    kr = body if isinstance(body, dict) else next(m for m in body if m["code"] == "KR")
    assert set(kr["datasheet"]) == set(field_columns(*DATASHEET_FIELDS))
    assert set(kr["data_statement"]) == set(field_columns(*DATA_STATEMENT_FIELDS))
    for language in ("en", "ko"):
        sheet, statement = page_texts(client, language)
        assert sheet and statement
        for name, text in sheet.items():
            assert kr["datasheet"][f"{name}_{language}"] == text, (language, name)
        for name, text in statement.items():
            assert kr["data_statement"][f"{name}_{language}"] == text, (language, name)
    assert "{{" not in json.dumps(kr["datasheet"])
    assert kr["datasheet"]["composition_en"].startswith("Four hazards")
    assert "위험 요소 4가지" in kr["datasheet"]["composition_ko"]


def test_a_datasheet_count_follows_the_records_in_the_api(client, canonical_content):
    """The datasheet's prose counts hazards from the records ("No number in copy")."""
    from markets.models import MarketEdition

    kr = MarketEdition.objects.get(market__code="KR")
    kr.hazards.first().delete()
    sheet = client.get("/api/v1/markets/kr/").json()["datasheet"]
    assert sheet["composition_en"].startswith("Three hazards")
    assert "위험 요소 3가지" in sheet["composition_ko"]
