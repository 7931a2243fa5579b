"""Link previews: every page describes itself in Open Graph and Twitter card tags."""

import re
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.template import Context, Template
from django.test import RequestFactory, override_settings

pytestmark = pytest.mark.django_db

META = re.compile(r'<meta (?:property|name)="([^"]+)" content="([^"]*)">')


def meta_tags(response):
    assert response.status_code == 200
    tags = {}
    for name, content in META.findall(response.text):
        tags.setdefault(name, unescape(content))
    return tags


def title_of(response):
    title = re.search(r"<title>(.*?)</title>", response.text, re.S).group(1)
    return unescape(title)


def png_size(path):
    header = Path(path).read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


@pytest.mark.parametrize(
    "path, locale, alternate, card",
    [
        ("/methodology/", "en_US", "ko_KR", "social-card.en.png"),
        ("/ko/methodology/", "ko_KR", "en_US", "social-card.ko.png"),
    ],
)
def test_pages_carry_open_graph_and_twitter_tags(
    client, canonical_content, path, locale, alternate, card
):
    response = client.get(path)
    tags = meta_tags(response)
    assert tags["og:url"] == f"{settings.SITE_URL}{path}"
    assert f'<link rel="canonical" href="{tags["og:url"]}">' in response.text
    assert tags["og:type"] == "website"
    assert tags["og:site_name"] == "MICA"
    assert tags["og:locale"] == locale
    assert tags["og:locale:alternate"] == alternate
    assert tags["og:title"] and title_of(response) == f"{tags['og:title']} — MICA"
    assert tags["og:description"] == tags["description"]
    assert tags["og:image"] == f"{settings.SITE_URL}/static/mica/{card}"
    assert tags["og:image:type"] == "image/png"
    assert (tags["og:image:width"], tags["og:image:height"]) == ("1200", "630")
    assert tags["og:image:alt"].startswith("MICA — ")
    assert tags["twitter:card"] == "summary_large_image"
    assert tags["twitter:image:alt"] == tags["og:image:alt"]
    assert png_size(finders.find(f"mica/{card}")) == (1200, 630)


def test_each_page_describes_itself(client, canonical_content):
    home = meta_tags(client.get("/evaluate/"))
    tasks = meta_tags(client.get("/tasks/"))
    assert home["og:title"] != tasks["og:title"]
    assert home["og:description"] != tasks["og:description"]
    assert "scope" in home["og:description"]


def test_korean_pages_describe_themselves_in_korean(client, canonical_content):
    for path in ("/ko/evaluate/", "/ko/tasks/"):
        tags = meta_tags(client.get(path))
        for name in ("og:title", "og:description", "og:image:alt", "description"):
            assert re.search(r"[가-힣]", tags[name]), (path, name)
    english = meta_tags(client.get("/tasks/"))
    assert not re.search(r"[가-힣]", english["og:image:alt"])


def test_the_missing_page_names_no_address_of_its_own(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert 'property="og:url"' not in response.text
    card = f"{settings.SITE_URL}/static/mica/social-card.en.png"
    assert f'property="og:image" content="{card}"' in response.text


@override_settings(SITE_URL="https://mica.example")
def test_image_address_names_the_site_url_with_or_without_a_request():
    """Issue 17: the Host header a request came with is never written into a page."""
    template = Template('{% load mica_layout %}{% absolute_static "mica/social-card.en.png" %}')
    assert template.render(Context({})) == "https://mica.example/static/mica/social-card.en.png"
    request = RequestFactory().get("/", HTTP_HOST="127.0.0.1:9999")
    with_request = template.render(Context({"request": request}))
    assert with_request == "https://mica.example/static/mica/social-card.en.png"


def test_capture_keeps_blocks_overridable():
    from django.template import engines

    engine = engines["django"].engine
    base = engine.from_string(
        "{% load mica_layout %}{% capture as t %}{% block title %}base{% endblock %}"
        "{% endcapture %}[{{ t }}|{{ t }}]"
    )

    child = Template("{% extends base %}{% block title %} child &amp; more {% endblock %}")
    assert child.render(Context({"base": base})) == "[child &amp; more|child &amp; more]"
