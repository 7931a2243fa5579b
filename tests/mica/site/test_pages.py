"""The site shell: error pages, robots, sitemap, and input that must never 500."""

import pytest
from django.conf import settings
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_404_in_english(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert '<html lang="en">' in response.text
    assert "There is no such page in this edition." in response.text


def test_404_in_korean(client):
    response = client.get("/ko/no-such-page/")
    assert response.status_code == 404
    assert '<html lang="ko">' in response.text
    assert "이 에디션에는 그런 페이지가 없습니다." in response.text
    assert 'href="/ko/"' in response.text


@pytest.mark.parametrize("path, language", [("/boom", "en"), ("/ko/boom", "ko")])
def test_500_page_in_both_languages(rf, path, language):
    from mica.site.views import server_error

    response = server_error(rf.get(path))
    assert response.status_code == 500
    assert f'<html lang="{language}">' in response.text
    expected = "Something went wrong on our side." if language == "en" else "저희 쪽에서"
    assert expected in response.text


def test_pages_are_noindex_unless_public_site(client):
    response = client.get("/")
    assert '<meta name="robots" content="noindex, nofollow">' in response.text
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    robots = client.get("/robots.txt").text
    assert "Disallow: /\n" in robots


@override_settings(PUBLIC_SITE=True)
def test_public_site_is_indexable(client):
    response = client.get("/")
    assert '<meta name="robots" content="index, follow">' in response.text
    assert "X-Robots-Tag" not in response
    robots = client.get("/robots.txt").text
    assert "Allow: /\n" in robots and "Disallow: /\n" not in robots
    assert f"Sitemap: {settings.SITE_URL}/sitemap.xml" in robots


def test_sitemap_lists_both_languages_with_alternates(client):
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    xml = response.text
    site = settings.SITE_URL
    assert f"<loc>{site}/</loc>" in xml
    assert f"<loc>{site}/ko/</loc>" in xml
    assert f'hreflang="ko" href="{site}/ko/"' in xml
    assert f'hreflang="x-default" href="{site}/"' in xml
    assert "/en/" not in xml
    assert "/admin/" not in xml


def test_the_footer_links_every_page_of_the_site(client, canonical_content):
    """Every page entry is routed (no entry waits for a page any more), and each is linked."""
    from django.urls import reverse

    from mica.site import navigation

    html = client.get("/").text
    assert navigation.PAGES
    for page in navigation.PAGES:
        path = reverse(page.url_name)
        assert client.get(path).status_code == 200, path
        assert f'href="{path}"' in html, path


def test_api_docs_page_lists_operations_in_both_languages(client):
    english = client.get("/api/docs/").text
    korean = client.get("/ko/api/docs/").text
    assert "<code>/api/v1/</code>" in english and "<code>/api/v1/</code>" in korean
    assert "Every operation the API answers" in english
    assert "API가 응답하는 모든 엔드포인트" in korean


@pytest.mark.parametrize(
    "path, status",
    [
        ("/%00", 404),
        ("/ko/%00/", 404),
        ("/" + "x" * 5000, 404),
        ("/?q=%ZZ&&=&a[]=1", 200),
        ("/ko/?%E0%A4%A=1", 200),
        ("/api/v1/?format=%00", 400),
        ("/api/nope/", 404),
        ("/static/../../etc/passwd", 404),
    ],
)
def test_odd_input_never_yields_a_server_error(client, path, status):
    assert client.get(path).status_code == status


@pytest.mark.parametrize(
    "header",
    ["", "*", "ko", "xx-YY", "ko-KR;q=abc", "en;q=0.5,ko;q=2", ";;;,,,", "ü" * 300],
)
def test_odd_accept_language_headers(client, header):
    response = client.get("/", HTTP_ACCEPT_LANGUAGE=header)
    assert response.status_code == 200
    assert '<html lang="en">' in response.text


def test_every_sitemap_page_has_a_plain_title_and_one_h1(client, canonical_content):
    import re

    xml = client.get("/sitemap.xml").text
    urls = re.findall(rf"<loc>{re.escape(settings.SITE_URL)}(/[^<]*)</loc>", xml)
    assert len(urls) >= 200, "the sitemap lists every public page in both languages"
    for url in urls:
        html = client.get(url).text
        title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
        assert "<" not in title and title.strip().endswith("— MICA"), (url, title)
        assert len(re.findall(r"<h1[ >]", html)) == 1, url
