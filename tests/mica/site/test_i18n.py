"""English unprefixed, Korean under /ko/, and every page says so."""

import re

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


def _alternates(html):
    return dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"', html))


def test_english_is_unprefixed(client):
    response = client.get("/")
    assert response.status_code == 200
    assert '<html lang="en">' in response.text
    assert "Multinational Index of Consumer Agents" in response.text


def test_korean_lives_under_ko(client):
    response = client.get("/ko/")
    assert response.status_code == 200
    assert '<html lang="ko">' in response.text
    assert "다국적 소비자 에이전트 지수" in response.text
    assert "본문으로 건너뛰기" in response.text


def test_accept_language_does_not_override_the_path(client):
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="ko-KR,ko;q=0.9")
    assert '<html lang="en">' in response.text


@pytest.mark.parametrize(
    "path, target",
    [
        ("/en/", "/"),
        ("/en", "/"),
        ("/en/api/docs/", "/api/docs/"),
        ("/en/api/docs/?q=wilson&lang=1", "/api/docs/?q=wilson&lang=1"),
    ],
)
def test_english_prefix_redirects_permanently(client, path, target):
    response = client.get(path)
    assert response.status_code == 301
    assert response["Location"] == target


def test_language_switch_keeps_path_and_query(client):
    html = client.get("/api/docs/?family=email-calendar&market=KR").text
    assert 'href="/ko/api/docs/?family=email-calendar&amp;market=KR" hreflang="ko"' in html
    html = client.get("/ko/api/docs/?family=email-calendar&market=KR").text
    assert 'href="/api/docs/?family=email-calendar&amp;market=KR" hreflang="en"' in html
    assert 'lang="ko" aria-current="true"' in html


@pytest.mark.parametrize("path", ["/", "/ko/", "/api/docs/", "/ko/api/docs/"])
def test_every_page_has_hreflang_alternates(client, path):
    alternates = _alternates(client.get(path).text)
    logical = path.removeprefix("/ko")
    assert alternates == {
        "en": f"{settings.SITE_URL}{logical}",
        "ko": f"{settings.SITE_URL}/ko{logical}",
        "x-default": f"{settings.SITE_URL}{logical}",
    }


def test_edition_stamp_comes_from_the_current_edition(client, canonical_content):
    from mica.methodology.models import Edition

    assert "Preview 0.1" in client.get("/").text
    assert "프리뷰 0.1" in client.get("/ko/").text
    Edition.objects.filter(slug="preview-0.1").update(version_label_en="Preview 0.2")
    assert "Preview 0.2" in client.get("/").text
