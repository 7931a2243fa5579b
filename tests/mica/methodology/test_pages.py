"""The methodology page, claim permalinks, downloads and the API."""

import re
from pathlib import Path

import pytest
from django.utils.html import escape

from mica.methodology.models import ChapterItem

pytestmark = pytest.mark.django_db


def test_methodology_page_in_both_languages(client, canonical_content):
    english = client.get("/methodology/").text
    korean = client.get("/ko/methodology/").text
    assert '<h2 id="why-mica"><span class="chapter-number">1</span> Why MICA exists</h2>' in english
    assert "[Current rule]" in english and "[현재 규칙]" in korean
    assert "Markets: 6 (KR, JP, SG, TW, AE, TH)" in english
    for number, title in [(1, "MICA가 존재하는 이유"), (20, "위키 정보")]:
        assert f'<span class="chapter-number">{number}</span> {title}</h2>' in korean
    # The contract numbered as the Korean page numbers it (seed 001: "3.1 공개 규칙").
    assert '<span class="section-number">3.1</span> 공개 규칙</h3>' in korean
    assert 'href="/methodology/downloads/mica-methodology-preview-0.1.ko.md"' in english


def test_every_claim_is_anchored_and_has_a_permalink(client, canonical_content):
    page = client.get("/methodology/").text
    claims = ChapterItem.objects.filter(item_type="claim")
    assert claims.count() >= 20, "the methodology states its claims"
    for item in claims:
        assert f'id="{item.section_id}"' in page
        assert f'href="/methodology/claims/{item.section_id}/"' in page


def test_claim_permalink_and_unknown_ids(client, canonical_content):
    item = ChapterItem.objects.filter(item_type="claim").first()
    response = client.get(f"/ko/methodology/claims/{item.section_id}/")
    assert response.status_code == 200 and item.term_ko[:10] in response.text
    for path in [
        "/methodology/claims/no-such-claim/",
        "/methodology/claims/%00/",
        "/methodology/claims/" + "a" * 400 + "/",
    ]:
        assert client.get(path).status_code == 404


def test_downloads(client, canonical_content):
    english = client.get("/methodology/downloads/mica-methodology-preview-0.1.en.md")
    assert english["Content-Type"].startswith("text/markdown")
    assert english.content.startswith(b"# MICA \xe2\x80\x94 Methodology & References")
    assert client.get("/methodology/downloads/mica-methodology-other.en.md").status_code == 404


def test_api(client, canonical_content):
    assert client.get("/api/v1/editions/").json()[0]["version_label_ko"] == "프리뷰 0.1"
    body = client.get("/api/v1/methodology/").json()
    first = body["chapters"][0]
    assert first["title"] == {"en": "Why MICA exists", "ko": "MICA가 존재하는 이유"}
    assert "{{" not in str(body)
    assert len(client.get("/api/v1/references/").json()["references"]) == 56
    assert client.get("/api/v1/glossary/").json()["terms"]
    facts = client.get("/api/v1/facts/").json()["facts"]
    assert facts["en"]["market_count"] == "6" and facts["ko"]["min_coverage"] == "미정"


def test_methodology_page_runs_a_constant_number_of_queries(
    client, canonical_content, django_assert_max_num_queries
):
    with django_assert_max_num_queries(30) as captured:
        client.get("/methodology/")
    count = len(captured.captured_queries)
    item = ChapterItem.objects.first()
    for n in range(5):
        item.pk, item.section_id = None, f"extra-claim-{n}"
        item.save()
    with django_assert_max_num_queries(count):
        client.get("/methodology/")


SEED_KO = Path(__file__).resolve().parents[2] / "fixtures/seeds/001_01e3a0fa6fa98298.txt"


def test_the_korean_page_carries_the_twenty_chapter_titles_of_the_korean_seed(
    client, canonical_content
):
    titles = re.findall(r"^(\d{1,2}) (.+)$", SEED_KO.read_text(encoding="utf-8"), re.MULTILINE)
    chapters = [(int(n), t) for n, t in titles if 1 <= int(n) <= 20]
    assert [n for n, _t in chapters] == list(range(1, 21))
    page = client.get("/ko/methodology/").text
    for number, title in chapters:
        assert f'<span class="chapter-number">{number}</span> {escape(title)}</h2>' in page, (
            number,
            title,
        )


def test_the_page_follows_the_records(client, canonical_content):
    from catalogue.models import TaskDefinition
    from markets.models import MarketEdition

    assert "Markets: 6 (KR, JP, SG, TW, AE, TH)" in client.get("/methodology/").text
    MarketEdition.objects.filter(market__code="TH").delete()
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(lifecycle="validated")
    page = client.get("/methodology/").text
    assert "Markets: 5 (KR, JP, SG, TW, AE)" in page
    assert "99 provisional public-set candidates, 1 validated" in page
