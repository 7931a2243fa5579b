"""The site walked as a reader walks it: every link followed from /ko/ (and from /).

Issue 18, "Korean interface complete": "A crawl test fails on English prose in a Korean
page outside a short, reasoned allowlist (proper nouns, ids, code)"; and "an
internal-link test finds every link answering 200 or a deliberate redirect, and Korean
pages linking to Korean pages."
"""

import json
import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.conf import settings
from django.db import models
from django.urls import Resolver404, resolve
from django.utils import translation

from governance.gate import gate_recompute_all
from mica.site.i18n import localized_path, logical_path
from submissions.challenges import challenge_transition
from tests.factories import StaffFactory, api_auth, attempt_payload, confirmed_challenge

# Rendering reads alike on either database: CI walks the site on the embedded layer.
pytestmark = [pytest.mark.django_db, pytest.mark.walk]

# Pages of one kind (one URL pattern, with or without a query) are one template over
# other records: a few of each are read whole for their prose and links. Every link
# found is asked for, so no link of the site is left unanswered.
PAGES_READ_PER_KIND = 3

# Addresses any page may link in no language: machines read these.
LANGUAGE_NEUTRAL = ("/api/", "/static/", "/sitemap.xml", "/robots.txt", "/healthz")
# Export files carry their language in their name (mica-methodology-….ko.md), if any.
DOWNLOAD_FILES = re.compile(r"^/(?:ko/)?(?:downloads/[^/]+$|methodology/downloads/)")

# Elements whose text is not prose by design: program text, ids, machine values.
NOT_PROSE = {"script", "style", "code", "pre", "kbd", "samp", "var", "template"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
# Elements that start a block of their own: no sentence runs across their edges.
BLOCKS = {"p", "li", "dt", "dd", "td", "th", "tr", "div", "section", "h1", "h2", "h3", "h4",
          "ul", "ol", "dl", "br", "option", "caption", "summary", "figcaption"}  # fmt: skip
SKIPPED = "\x00"
# Attributes a browser or a screen reader gives the reader.
READ_ATTRIBUTES = ("aria-label", "title", "alt", "placeholder")

# Three English words in a row read as a phrase of English, not a name or an id.
ENGLISH_RUN = re.compile(r"[A-Za-z][a-z'’]+(?:[ \t\n,;:]+[A-Za-z][a-z'’]+){2,}")
# A lone lower-case English word ("interval", "tokens", "received") is interface text
# left untranslated; names are capitalised and ids carry hyphens, digits or dots.
# A word right before "(" is a formula's function, as in the seed's "min(1, …)", and one
# before "^" a metric's name, as tau-bench's pass^k.
BARE_WORD = re.compile(r"(?<![\w.@/:+'’-])[a-z]{3,}(?![\w.@/:'’(^-])")
# Tokens as a reader sees them between spaces: an id such as a cell id is one token.
TOKEN = re.compile(r"[A-Za-z0-9][\w.-]*")
URL = re.compile(r"\b(?:https?://|www\.)\S+")
# The allowlist, short and each entry reasoned:
# - proper nouns spelt in lower case, as Korean text writes them too: the initiator
#   ("MICA의 발의자는 vooy입니다") and 7-Eleven's kiosk ("세븐일레븐 ibon");
# - titles of cited reports, kept in their own words in the Korean reference notes;
# - the two English words seed 001 itself writes into Korean sentences: "사전 등록한
#   canonical 과제 집합" and "공개 적격 여부는 false입니다" (the flag's literal value).
# Capitalised names, ids (hyphens, digits, dots) and code need no entry.
PROPER_NOUNS = ("vooy", "ibon", "Freedom in the World", "Rule of Law Index")
SEED_001_WORDS = ("canonical", "false")


def vocabulary_codes():
    """Every code of the method's vocabularies whose label differs from it: shown to a
    Korean reader, such a code is an untranslated label ("email-calendar", "accuracy")."""
    codes, pending = {}, list(models.Choices.__subclasses__())
    while pending:
        choices = pending.pop()
        pending += choices.__subclasses__()
        if choices.__module__.split(".")[0] in ("mica", "catalogue", "markets", "governance",
                                                "submissions"):  # fmt: skip
            codes.update({str(c.value): choices for c in choices if str(c.value) != c.label})
    return codes


class PageReading(HTMLParser):
    """One page's links and the text its reader sees or hears, less code and text marked
    as another language (lang="en", lang="ja", or lang="" for a language not known)."""

    def __init__(self, language):
        super().__init__(convert_charrefs=True)
        self.language = language
        self.links = []  # (href, whether it is a language switch)
        self.text = []
        self._open = []  # (tag, whether its text is skipped, whether it is the switch)

    def skipping(self):
        return any(skipped for _tag, skipped, _switch in self._open)

    def in_switch(self):
        return any(switch for _tag, _skipped, switch in self._open)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        other_language = "lang" in attrs and attrs["lang"] != self.language
        # translate="no": the page says this is a name or an id, not text to translate.
        skipped = tag in NOT_PROSE or other_language or attrs.get("translate") == "no"
        if tag == "a" and attrs.get("href"):
            self.links.append((attrs["href"], self.in_switch()))
        if tag in BLOCKS:
            self.text.append("\n")  # text either side of a block is not one sentence
        if not (skipped or self.skipping()):
            self.text += [attrs[name] for name in READ_ATTRIBUTES if attrs.get(name)]
        elif skipped and not self.skipping():
            self.text.append(SKIPPED)  # stands for the code or name the reader sees there
        if tag not in VOID:
            switch = "language-switch" in (attrs.get("class") or "")
            self._open.append((tag, skipped, switch))

    def handle_endtag(self, tag):
        if tag not in {open_tag for open_tag, _s, _w in self._open}:
            return
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if not self.skipping():
            self.text.append(data)


def page_reading(html, language):
    reading = PageReading(language)
    reading.feed(html)
    reading.close()
    return reading


def english_in(texts, codes):
    """What reads as English in a Korean page's text: runs of words, lone words, codes."""
    found = []
    for text in texts:
        text = URL.sub(" ", text)
        for noun in PROPER_NOUNS:
            text = text.replace(noun, " ")
        found += [" ".join(run.split()) for run in ENGLISH_RUN.findall(text)]
        text = ENGLISH_RUN.sub(" ", text)
        found += [word for word in BARE_WORD.findall(text) if word not in SEED_001_WORDS]
        # Codes of one plain word are bare words already.
        found += [t for t in TOKEN.findall(text) if t in codes and not t.isalpha()]
    return found


# Two stops in a row, as "reviewed.." or "Note::" read: a sentence ending in a full stop
# put before another. An ellipsis (three) and numbers ("1.5", "v2.") are not doubled.
# "Agarwal et al.: Deep …" is an abbreviation's stop before a colon, as seed 001 cites.
DOUBLED_STOP = re.compile(r"(?<![.\d])(?<!\bet al)[.:][ \t]*[.:](?![.\d])")
# "1" before a plural noun the site counts: "1 eligible runs" should read "1 eligible run".
PLURALS = "tasks|runs|markets|cells|attempts|records|challenges|families|systems|snapshots"
ONE_PLURAL = re.compile(rf"(?<![\d.,/-])\b1 (?:[a-z]+ ){{0,2}}(?:{PLURALS})\b")


def punctuation_in(texts):
    """Doubled stops and a singular figure before a plural noun, in a page's text as read."""
    text = "".join(texts)
    found = [*DOUBLED_STOP.finditer(text), *ONE_PLURAL.finditer(text)]
    return [" ".join(text[max(0, m.start() - 30) : m.end() + 10].split()) for m in found]


def response_body(response):
    """A page's text, whether Django rendered it or streamed it from a file."""
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def internal_path(href, base):
    """The path and query an internal link names, or None for another site."""
    parts = urlsplit(urljoin("http://testserver" + base, href))
    if parts.scheme not in ("http", "https"):
        return None
    if parts.netloc not in ("testserver", urlsplit(settings.SITE_URL).netloc):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def language_of(path):
    return "ko" if path == "/ko" or path.startswith("/ko/") else "en"


def page_kind(path):
    """The URL pattern a path answers to, in its language, and whether it has a query."""
    plain, _, query = path.partition("?")
    with translation.override(language_of(plain)):
        try:
            name = resolve(localized_path(plain, language_of(plain))).view_name
        except Resolver404:
            return None
    return f"{language_of(plain)}:{name}{'?' if query else ''}"


def is_language_neutral(path):
    return path.startswith(LANGUAGE_NEUTRAL) or bool(DOWNLOAD_FILES.match(path))


class Walk:
    """A breadth-first walk of the site from one page, as the Django test client."""

    def __init__(self, client, starts):
        self.client = client
        self.queue = deque((start, None) for start in starts)
        self.codes = vocabulary_codes()
        self.seen = set()
        self.answers = {}  # path: status, for every path asked for
        self.broken = []  # (page, link, status or "no route")
        self.off_language = []  # (page, link into the other language)
        self.wrong_switch = []  # (page, language switch target)
        self.english = {}  # Korean page: what reads as English in it
        self.punctuation = {}  # page: doubled stops and "1 <plural>" in it
        self.read = {}  # kind: pages read whole
        self.asked = {}  # kind: links asked for
        self.links_seen = 0

    def run(self):
        while self.queue:
            path, found_on = self.queue.popleft()
            if path not in self.seen:
                self.seen.add(path)
                self.follow(path, found_on)
        return self

    def follow(self, path, found_on):
        kind = page_kind(path)
        if kind is None:
            self.broken.append((found_on, path, "no route"))
            return
        self.asked.setdefault(kind, []).append(path)
        response = self.client.get(path)
        status = self.answers[path] = response.status_code
        if status in (301, 302):
            status = self.landing_status(response)
        if status != 200:
            self.broken.append((found_on, path, status))
        elif "text/html" in response.get("Content-Type", ""):
            if len(self.read.setdefault(kind, [])) < PAGES_READ_PER_KIND:
                self.read[kind].append(path)
                self.read_page(path, response_body(response))

    def landing_status(self, response):
        """A redirect is deliberate when it lands, in one hop, on a page."""
        target = internal_path(response["Location"], "/")
        if target is None:
            return 200
        return self.client.get(target).status_code

    def read_page(self, path, html):
        language = language_of(path)
        reading = page_reading(html, language)
        for href, switch in reading.links:
            link = internal_path(href, path)
            # The admin, and the manual: a site of its own, whose links
            # tests/mica/site/test_manual.py checks.
            if link is None or logical_path(link).startswith(("/admin/", "/docs/")):
                continue
            self.links_seen += 1
            self.check_language(path, link, switch)
            self.queue.append((link, path))
        if found := punctuation_in(reading.text):
            self.punctuation[path] = found
        if language == "ko" and (english := english_in(reading.text, self.codes)):
            self.english[path] = english

    def check_language(self, path, link, switch):
        language = language_of(path)
        if switch:
            # A switch leads to this very page, in the language it names.
            same_page = localized_path(path.split("?")[0], language_of(link))
            if link.split("?")[0] != same_page:
                self.wrong_switch.append((path, link))
        elif language_of(link) != language and not is_language_neutral(link):
            self.off_language.append((path, link))


def post_attempt(client, user, **changes):
    payload = attempt_payload(verification="independent-rerun", **changes)
    response = client.post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json",
        **api_auth(user),
    )  # fmt: skip
    assert response.status_code == 201, response.content


@pytest.fixture
def lived_in_site(client, staff):
    """The canonical content and what a working portal holds besides: recorded attempts
    (one kept but invalid, for a tool its snapshot does not declare) with their gate cell,
    a challenge filed (confirmed, awaiting screening) and one screened."""
    post_attempt(client, staff)
    post_attempt(client, staff, attempt_id="acme-kr-002", tools_used=["calculator"])
    gate_recompute_all()
    confirmed_challenge(what_is_wrong="Awaiting screening.")
    screened = confirmed_challenge(what_is_wrong="The scope claim is too wide.")
    editor = StaffFactory(username="editor")
    challenge_transition(
        challenge_id=screened.pk, action="screen", reason="In scope.", actor=editor
    )
    return client


# One walk serves every test of the module: it only reads, and its findings are plain
# data that outlive the test's rolled-back transaction.
_WALKS = {}


@pytest.fixture
def walk(lived_in_site):
    """The walk from the Korean home page (and the English one, so an English page no
    language switch leads to is still reached)."""
    if "walk" not in _WALKS:
        _WALKS["walk"] = Walk(lived_in_site, ["/ko/", "/"]).run()
    return _WALKS["walk"]


PAGE_KINDS = {
    "site:home", "site:search", "site:evaluate", "site:downloads", "site:api-docs",
    "markets:market-list", "markets:market-detail", "catalogue:task-list",
    "catalogue:task-detail", "methodology:methodology", "methodology:claim",
    "methodology:editions", "methodology:edition", "governance:governance",
    "governance:results", "governance:systems", "governance:system",
    "governance:evidence", "governance:evidence-cell", "submissions:submit",
    "submissions:challenge-new", "submissions:system-new", "submissions:challenges",
    "submissions:challenge", "submissions:operator-guide",
}  # fmt: skip


@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_walk_reads_every_kind_of_page(walk, language):
    read = {kind.split(":", 1)[1] for kind in walk.read if kind.startswith(f"{language}:")}
    assert PAGE_KINDS - read == set()
    assert walk.links_seen > 1000


def test_every_link_answers_a_page_or_a_deliberate_redirect(walk):
    """Finding: "`/about/governance` from the methodology is a 404 in both languages"."""
    assert len(walk.answers) > 150
    assert walk.broken == []
    # Every link found was asked for, not a sample of each kind.
    routed = {path for _, path, status in walk.broken if status == "no route"}
    assert set(walk.answers) == walk.seen - routed


@pytest.mark.parametrize("language", ["ko", "en"])
def test_pages_link_to_pages_of_their_own_language(walk, language):
    """Finding: "`/submit` on the Korean page leads to the English form"."""
    assert len(walk.read) > 2 * len(PAGE_KINDS)
    assert [(page, link) for page, link in walk.off_language if language_of(page) == language] == []
    assert [(page, link) for page, link in walk.wrong_switch if language_of(page) == language] == []


def test_korean_pages_carry_no_english_prose(walk):
    """Findings: English help texts, raw metric ids and state codes, "interval" and
    "tokens", "MICA portal · public task catalogue", 33 English API summaries."""
    assert sum(len(pages) for kind, pages in walk.read.items() if kind.startswith("ko:")) > 30
    assert walk.english == {}


def test_no_page_doubles_its_stops_or_counts_one_in_the_plural(walk):
    """Issue 34, item 4: "English plurals and Korean counters follow the figure ("1
    eligible run") ... no double full stops or colons"."""
    assert walk.punctuation == {}, json.dumps(walk.punctuation, ensure_ascii=False, indent=1)


def test_the_punctuation_check_finds_what_it_looks_for():
    found = punctuation_in(["Reviewed.", ". Next: ", "1 eligible runs"])
    assert found == ["Reviewed.. Next: 1 e", "Reviewed.. Next: 1 eligible runs"]
    assert punctuation_in(["Wait... 1.5 and v2.", "0.9: 1 run, 1 task", "Lee et al.: T"]) == []
    assert punctuation_in(["<code> stands for", SKIPPED, ": what it is"]) == []


# The findings one by one, where a reader meets them.


@pytest.mark.parametrize(
    "path, target",
    [("/about/governance", "/governance/"), ("/ko/about/governance", "/ko/governance/")],
)
def test_the_methods_governance_path_leads_to_the_governance_page(client, path, target):
    """Seed 000 keeps the path in its text: "Who decides. The governance page states who
    holds decision rights today ... (see `/about/governance`)"."""
    response = client.get(path)
    assert response.status_code == 301
    assert response["Location"] == target


def test_the_korean_methodology_links_its_pages_in_korean(client, canonical_content):
    html = client.get("/ko/methodology/").text
    assert 'href="/ko/submit/"' in html and 'href="/ko/governance/"' in html
    assert 'href="/submit"' not in html and 'href="/about/governance"' not in html


def test_the_challenge_form_is_worded_at_request_time(client, canonical_content):
    """Finding: "Challenge form help texts are English on `/ko/` (a translated string
    formatted at import time); metric options are raw ids"."""
    korean = client.get("/ko/submit/challenge/").text
    assert "일반 텍스트로 최대 20,000자까지 입력할 수 있습니다." in korean
    assert "최대 20개까지 입력할 수 있습니다." in korean
    assert '<option value="p50-latency">p50 지연</option>' in korean
    english = client.get("/submit/challenge/").text
    assert "Plain text, at most 20,000 characters." in english
    assert '<option value="p50-latency">p50 latency</option>' in english


def test_a_challenges_decisions_name_states_and_roles_in_korean(lived_in_site):
    """Finding: "public pages show raw English state codes"."""
    from submissions.models import Challenge

    screened = Challenge.objects.get(state="screened")
    html = lived_in_site.get(f"/ko/challenges/{screened.pk}/").text
    assert "접수 · 이의 제기자: 공개 접수 창구를 통해 제출되었습니다." in html
    assert '심사됨 · 편집자: <span lang="en">In scope.</span>' in html
    assert '<p class="plain-text" lang="en">The scope claim is too wide.</p>' in html


def test_every_api_operation_reads_in_korean(settings):
    """Finding: "`/ko/api/docs/` has 33 English summaries"."""
    from mica.site.api_docs import api_operations

    def described(language):
        with translation.override(language):
            return {
                op["anchor"]: [str(op["summary"])]
                + [str(p["description"]) for p in op["parameters"] if p["description"]]
                for op in api_operations()
            }

    english, korean = described("en"), described("ko")
    assert len(korean) > 20 and korean.keys() == english.keys()
    unsaid = [anchor for anchor, texts in korean.items() if not texts[0]]
    same = [text for anchor in korean for text in korean[anchor] if text in english[anchor]]
    assert unsaid == [] and same == []


def test_attempts_as_records_and_attempts_as_a_count_read_apart():
    """Finding: "one msgid "attempts" serves two meanings (the Korean attempt list reads
    "시도 횟수")"."""
    from mica.jobs.models import JobRun
    from submissions.models import Attempt, OutboxMessage

    with translation.override("ko"):
        assert str(Attempt._meta.verbose_name_plural) == "시도"
        assert str(JobRun._meta.get_field("attempts").verbose_name) == "시도 횟수"
        assert str(OutboxMessage._meta.get_field("attempts").verbose_name) == "시도 횟수"


# The check itself, on pages written here: it must see what it is meant to see.


def test_the_reading_sees_english_and_leaves_code_and_marked_text():
    html = (
        '<p>한국어 문장 <code>ec-reschedule-three-party</code> <span lang="en">Datasheets '
        'for Datasets</span> <span lang="">operator text here</span> ibon</p>'
        '<p title="One per line please">95% interval · email-calendar</p>'
    )
    found = english_in(page_reading(html, "ko").text, vocabulary_codes())
    assert found == ["One per line please", "interval", "email-calendar"]


def test_the_walk_tells_switches_from_links_into_the_other_language():
    html = (
        '<nav class="language-switch"><a href="/methodology/" hreflang="en">English</a></nav>'
        '<a href="/submit">제출</a><a href="/api/v1/">API</a>'
    )
    walk = Walk(client=None, starts=["/ko/"])
    for href, switch in page_reading(html, "ko").links:
        walk.check_language("/ko/methodology/", href, switch)
    assert walk.off_language == [("/ko/methodology/", "/submit")]
    assert walk.wrong_switch == []
