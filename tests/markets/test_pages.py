"""The market pages in both languages, at a constant number of queries."""

import pytest

from markets.models import MarketEdition

pytestmark = pytest.mark.django_db


def test_market_list_in_both_languages(client, canonical_content):
    english = client.get("/markets/").text
    korean = client.get("/ko/markets/").text
    for code in ["KR", "JP", "SG", "TW", "AE", "TH"]:
        assert f'href="/markets/{code.lower()}/"' in english
        assert f'href="/ko/markets/{code.lower()}/"' in korean
    assert '<span lang="ja">日本</span>' in english
    assert "<caption>" in english and 'scope="col"' in english
    assert english.index("KR ·") < english.index("JP ·") < english.index("TH ·")
    assert "Complete: every minimum met" in english


def test_market_detail_in_both_languages(client, canonical_content):
    english = client.get("/markets/kr/").text
    korean = client.get("/ko/markets/kr/").text
    assert "Declared, not exercised." in english
    assert "kr-carrier-identity-handoff" in english
    kr = MarketEdition.objects.get(market__code="KR")
    assert kr.edition_note_ko[:40] in korean
    assert kr.hazards.first().title_ko in korean


@pytest.mark.parametrize(
    "path",
    [
        "/markets/zz/",
        "/markets/%00/",
        "/markets/" + "k" * 300 + "/",
        "/ko/markets/zz/",
        "/markets/k/",
    ],
)
def test_unknown_market_codes_are_404(client, canonical_content, path):
    assert client.get(path).status_code == 404


def _grow_kr(n):
    kr = MarketEdition.objects.get(market__code="KR")
    extra = kr.situations.first()
    for i in range(n):
        extra.pk, extra.situation_id = None, f"kr-more-{i}"
        extra.save()


@pytest.mark.parametrize("path", ["/markets/", "/markets/kr/", "/ko/markets/kr/"])
def test_pages_run_a_constant_number_of_queries(
    client, canonical_content, path, django_assert_max_num_queries, django_assert_num_queries
):
    client.get(path)  # warm caches that are not about the page
    with django_assert_max_num_queries(100) as before:
        client.get(path)
    _grow_kr(6)
    with django_assert_num_queries(len(before.captured_queries)):
        client.get(path)
