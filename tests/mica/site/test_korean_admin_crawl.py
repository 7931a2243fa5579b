"""The admin walked in Korean, as its staff walk it: every admin page reachable from the
admin index under /ko/admin/, read for English with the public crawl's detector.

Issue 34, item 7: "The Korean admin is Korean. The second-factor pages and device admin,
django-axes' lockout screens and lists, every permission name, event tables and messages
(no raw codes, no capitalised slugs), filter titles and the "My work" table ... The crawl
test that checks the public site for English gains the admin, signed in as a Korean
author and as a reviewer." Acceptance: "The Korean admin crawl finds no English string
outside proper names and codes."
"""

import json
import re
from collections import deque
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from axes.models import AccessAttempt
from django.apps import apps
from django.contrib.auth.models import Permission, User
from django.db import models
from django.urls import Resolver404, resolve
from django.utils import translation
from django_otp.plugins.otp_totp.models import TOTPDevice

from catalogue.models import LocalReview, TaskDefinition
from catalogue.workflows import review_transition
from governance.services import appeal_file
from governance.tasks import gate_recompute
from markets.models import CompetenceRole, Market
from mica.jobs.services import job_run_enqueue
from submissions.challenges import challenge_transition
from submissions.system_submissions import system_submission_decide, system_submission_file
from tests.factories import (
    PASSWORD,
    LeadFactory,
    StaffFactory,
    confirmed_challenge,
    grant,
    references_registered,
    system_submission_payload,
)
from tests.mica.site.test_korean_crawl import (
    TOKEN,
    english_in,
    page_reading,
    response_body,
    vocabulary_codes,
)

pytestmark = [pytest.mark.django_db, pytest.mark.walk]

# Pages of one kind (one admin view, with or without a query) are one template over other
# records: the first of each kind is read whole. Every kind reachable is read.
PAGES_READ_PER_KIND = 1

# Links the walk does not follow: signing out ends the walk, "view on site" leaves the
# admin for the public site (its own crawl), and these answer JSON or JavaScript.
NOT_FOLLOWED = re.compile(r"/(?:logout|r|jsi18n|autocomplete)/")


def identifiers():
    """What the admin shows as a record's identity and nobody translates: every slug of
    the content (a task's slug, a section's id, a reference's key; the method's rule is
    that "ids, slugs and codes never" are translated) and every account's username (a
    person's chosen name). They read as codes, as the public crawl's hyphenated ids do;
    a word shown as a slug where a title belongs is a finding of its own, not of this
    check."""
    found = set(User.objects.values_list("username", flat=True))
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.SlugField):
                found.update(model._default_manager.values_list(field.attname, flat=True))
    return {value for value in found if value}


# Text the admin edits is filled from live figures through placeholders ("{{hazards|words}}
# {{hazards|plural:hazard,hazards}}", "{{#if gate_values_unset}}"): code, in any language.
PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.DOTALL)
# Platforms whose names read as an English word or a Python literal, as the Korean
# content writes them beside their Korean names: "인라인(inline)", "눈(noon)" (spelt in
# lower case by their owners) and Thailand's "트루(True)".
ADMIN_PROPER_NOUNS = re.compile(r"\((?:inline|noon|True)\)")


def cited_works():
    """The works the method cites, named as they name themselves: each reference's label
    ("WebArena", "Agarwal et al."), its work's title and its authors ("Family, Given").
    The public crawl allows the titles of cited reports for the same reason: a work's
    name is not translated."""
    from mica.methodology.models import Reference

    names = set()
    for label, title, authors in Reference.objects.values_list("title_en", "work_title", "authors"):
        names.update([label, title, *authors.splitlines()])
    return sorted({name.strip() for name in names if name and name.strip()}, key=len, reverse=True)


# Python's own words for a yes, a no and nothing, as a value shown raw reads them.
PYTHON_LITERAL = re.compile(r"\b(?:True|False|None)\b")


def english_in_admin(texts, codes, names, works):
    """`english_in` of the public crawl, less the identifiers and cited works a page
    names, placeholders and the platforms named above; and Python's literals."""
    spared = []
    for text in texts:
        text = ADMIN_PROPER_NOUNS.sub(" ", PLACEHOLDER.sub(" ", text))
        for work in works:
            text = text.replace(work, " ")
        spared.append(TOKEN.sub(lambda m: " " if m.group(0) in names else m.group(0), text))
    return english_in(spared, codes) + [m for t in spared for m in PYTHON_LITERAL.findall(t)]


# What a query changes on a page of one kind: a list's filters and search. Its order and
# page, and the list a form returns to (_changelist_filters), change no text of the kind.
SAME_KIND_PARAMETERS = {"o", "p", "_facets", "_changelist_filters", "_to_field", "_popup"}


def admin_kind(path):
    """The admin view a Korean path answers to, and whether a query filters it."""
    plain, _, query = path.partition("?")
    with translation.override("ko"):
        try:
            name = resolve(plain).view_name
        except Resolver404:
            return None
    filtered = set(parse_qs(query, keep_blank_values=True)) - SAME_KIND_PARAMETERS
    return f"{name}{'?' if filtered else ''}"


class AdminWalk:
    """A breadth-first walk of the Korean admin from its index, as one signed-in person."""

    def __init__(self, client):
        self.client = client
        self.codes = vocabulary_codes()
        self.names = identifiers()
        self.works = cited_works()
        self.queue = deque([("/ko/admin/", None)])
        self.seen = set()
        self.read = {}  # kind: the page read
        self.broken = []  # (page, link, status or "no route")
        self.forbidden = []  # (page, link): a link to a page this person may not open
        self.english = {}  # page: what reads as English in it

    def run(self):
        while self.queue:
            path, found_on = self.queue.popleft()
            if path in self.seen:
                continue
            self.seen.add(path)
            kind = admin_kind(path)
            if kind is None:
                self.broken.append((found_on, path, "no route"))
            elif kind not in self.read:
                self.follow(kind, path, found_on)
        return self

    def follow(self, kind, path, found_on):
        response = self.client.get(path)
        if response.status_code in (301, 302):
            return  # a redirect lands on a page the walk reaches by its own link
        if response.status_code == 403:
            self.forbidden.append((found_on, path))
            return
        if response.status_code != 200:
            self.broken.append((found_on, path, response.status_code))
            return
        if "text/html" not in response.get("Content-Type", ""):
            return
        self.read[kind] = path
        reading = page_reading(response_body(response), "ko")
        if english := english_in_admin(reading.text, self.codes, self.names, self.works):
            self.english[path] = sorted(set(english))
        for href, _switch in reading.links:
            link = self.admin_link(href, path)
            if link is not None:
                self.queue.append((link, path))

    @staticmethod
    def admin_link(href, base):
        parts = urlsplit(urljoin("http://testserver" + base, href))
        if parts.netloc != "testserver" or not parts.path.startswith("/ko/admin/"):
            return None
        if NOT_FOLLOWED.search(parts.path):
            return None
        return parts.path + (f"?{parts.query}" if parts.query else "")


# --- The people and what their admin holds -------------------------------------------------


def catalogue_staff(username):
    person = StaffFactory(username=username)
    person.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalogue"))
    return person


@pytest.fixture
def lived_in_admin(canonical_content, eager_celery, django_capture_on_commit_callbacks):
    """A method lead (a superuser, with a verified device), a Korean author and a
    reviewer (the catalogue's permissions and a competence for KR, as the authors' and
    reviewers' guides set them up), and records with events in every workflow: a local
    review submitted and approved, a challenge screened and rejected with an appeal
    filed, a system submission declined, a lockout, a background job run."""
    lead = LeadFactory(username="method-lead")
    author, reviewer = catalogue_staff("kim-author"), catalogue_staff("lee-reviewer")
    grant(author, "KR", CompetenceRole.AUTHOR, lead)
    grant(reviewer, "KR", CompetenceRole.REVIEWER, lead)
    task = TaskDefinition.objects.select_related("current_version").get(
        slug="gc-resident-record-extract"
    )
    review = LocalReview.objects.create(
        version=references_registered(task.current_version),
        market=Market.objects.get(code="KR"),
        author=author,
    )
    review_transition(review_id=review.pk, action="submit", actor=author)
    review_transition(review_id=review.pk, action="approve", actor=reviewer)
    challenge = confirmed_challenge(what_is_wrong="The scope claim is too wide.")
    for action in ("screen", "triage", "reject"):
        challenge_transition(challenge_id=challenge.pk, action=action, reason="Done.", actor=lead)
    appeal_file(challenge=challenge, grounds="The citation was misread.")
    AccessAttempt.objects.create(
        username="kim-author", ip_address="203.0.113.9", user_agent="Firefox",
        path_info="/ko/admin/login/", failures_since_start=10,
    )  # fmt: skip
    submission = system_submission_file(
        payload=system_submission_payload(name="Harbor Agent", language="en")
    )
    system_submission_decide(
        submission_id=submission.pk, accept=False, reason="Not yet running.", actor=lead
    )
    with django_capture_on_commit_callbacks(execute=True):
        job_run_enqueue(task=gate_recompute, actor=lead)
    return {"lead": lead, "author": author, "reviewer": reviewer}


# Each walk only reads; its findings are plain data that outlive the test's transaction.
_WALKS = {}


@pytest.fixture
def walk_as(client, lived_in_admin):
    def walk(who):
        if who not in _WALKS:
            client.force_login(lived_in_admin[who])
            _WALKS[who] = AdminWalk(client).run()
        return _WALKS[who]

    return walk


@pytest.mark.parametrize("who", ["author", "reviewer", "lead"])
def test_the_korean_admin_carries_no_english(walk_as, who):
    """Acceptance: "The Korean admin crawl finds no English string outside proper names
    and codes"; as a Korean author and a reviewer, and as the method lead, who sees every
    page of the admin."""
    walk = walk_as(who)
    assert walk.broken == []
    assert walk.english == {}, json.dumps(walk.english, ensure_ascii=False, indent=1)


# Pages the issue names, each read by the walk that can open it.
NAMED_PAGES = {
    "author": {
        "admin:index",
        "admin:catalogue_localreview_changelist?",  # "My work": awaiting, sent back
        "admin:catalogue_localreview_change",  # its events
        "admin:catalogue_taskversion_change",
    },
    "reviewer": {"admin:index", "admin:catalogue_localreview_change"},
    "lead": {
        "admin:otp_totp_totpdevice_changelist",
        "admin:otp_totp_totpdevice_change",
        "admin:axes_accessattempt_changelist",
        "admin:axes_accessattempt_change",
        "admin:axes_accesslog_changelist",
        "admin:axes_accessfailurelog_changelist",
        "admin:auth_group_add",
        "admin:auth_user_change",
        "admin:submissions_challenge_change",
        "admin:submissions_challenge_changelist?",
        "admin:submissions_systemsubmission_change",
        "admin:submissions_outboxmessage_change",
        "admin:governance_appeal_change",
        "admin:governance_disclosurestatement_change",
        "admin:markets_platformregistration_change",
        "admin:catalogue_exposureentry_changelist",
        "admin:jobs_jobrun_change",
    },
}


@pytest.mark.parametrize("who", ["author", "reviewer", "lead"])
def test_the_walk_reads_the_pages_the_issue_names(walk_as, who):
    walk = walk_as(who)
    assert NAMED_PAGES[who] - set(walk.read) == set()
    assert len(walk.read) > (150 if who == "lead" else 30)


@pytest.mark.parametrize("who", ["author", "reviewer"])
def test_my_work_is_on_the_korean_index(client, lived_in_admin, who):
    """Issue 34, item 7: "filter titles and the "My work" table"."""
    client.force_login(lived_in_admin[who])
    html = client.get("/ko/admin/").text
    assert "<caption>내 작업</caption>" in html
    assert "My work" not in html


def test_permissions_are_named_in_the_readers_language(client, lived_in_admin):
    """Issue 34, item 7: "every permission name" (Django stores them in English when the
    database is migrated): the group and account forms name each from its action and
    its model, in Korean under /ko/, as stored under /."""
    client.force_login(lived_in_admin["lead"])
    korean = client.get("/ko/admin/auth/group/add/").text
    assert "<title>그룹 추가 | MICA 포털</title>" in korean  # not the references' "묶음"
    assert "과제 목록 | 과제 버전 추가" in korean
    assert "과제 버전 이력 보기" in korean  # django-simple-history's revisions
    assert "Can add" not in korean and "historical" not in korean
    english = client.get("/admin/auth/group/add/").text
    assert "Can add task version" in english


def test_a_second_factor_device_reads_in_korean(client, lived_in_admin):
    """Issue 34, item 7: "the second-factor pages and device admin (django-otp)"."""
    client.force_login(lived_in_admin["lead"])
    device = TOTPDevice.objects.get(user=lived_in_admin["lead"])
    listing = client.get("/ko/admin/otp_totp/totpdevice/").text
    assert "2단계 인증 기기" in listing and "마지막 사용 시각" in listing
    assert 'alt="예"' in listing and 'alt="True"' not in listing  # "ready for use"
    page = client.get(f"/ko/admin/otp_totp/totpdevice/{device.pk}/change/").text
    assert "method-lead 계정의 인증 앱" in page
    assert "이 기기로 로그인하는 계정입니다." in page
    # Its secret and clock settings are not shown at all.
    assert "비밀 키" not in page and device.key not in page


def test_a_review_s_events_name_actions_states_and_roles_in_words(client, lived_in_admin):
    """Issue 34, item 7: "event tables and messages (no raw codes, no capitalised
    slugs)"."""
    client.force_login(lived_in_admin["author"])
    review = LocalReview.objects.get()
    page = client.get(f"/ko/admin/catalogue/localreview/{review.pk}/change/").text
    assert "검토 요청: 초안 → 검토 중" in page
    assert "in-review" not in page and "submit:" not in page


# The check itself, on text written here: it must see what it is meant to see.


def test_the_admin_check_sees_english_and_spares_names_codes_and_placeholders(
    lived_in_admin,
):
    texts = [
        "Can add task version",
        "과제 {{hazards|words}} {{hazards|plural:hazard,hazards}}개",
        "gc-resident-record-extract · construct · kim-author",
        "Datasheets for Datasets · 인라인(inline)",
        "검토 요청: draft → in-review",
        "사용 가능: True",
    ]
    found = english_in_admin(texts, vocabulary_codes(), identifiers(), cited_works())
    assert found == ["Can add task version", "draft", "in-review", "True"]


# The pages before the admin opens, which no walk from its index reaches.


def english_on(response):
    reading = page_reading(response_body(response), "ko")
    return english_in_admin(reading.text, vocabulary_codes(), identifiers(), cited_works())


def sign_in_with_password(client, username):
    return client.post(
        "/ko/admin/login/?next=/ko/admin/",
        {"username": username, "password": PASSWORD, "next": "/ko/admin/"},
        follow=True,
    )


def test_the_sign_in_and_the_second_step_read_in_korean(client, lived_in_admin):
    """Issue 34, item 7: "The second-factor pages ..."; a wrong code is refused in Korean
    too (django-otp's own message, which has no Korean of its own)."""
    login = client.get("/ko/admin/login/?next=/ko/admin/")
    assert login.status_code == 200 and english_on(login) == []
    step = sign_in_with_password(client, "method-lead")
    assert step.redirect_chain[-1][0].startswith("/ko/admin/second-factor/")
    assert english_on(step) == []
    wrong = client.post(step.redirect_chain[-1][0], {"otp_token": "000000"})
    assert wrong.status_code == 200 and english_on(wrong) == []


def test_enrolling_a_second_factor_reads_in_korean(client, canonical_content):
    LeadFactory(username="new-lead")
    enrol = sign_in_with_password(client, "new-lead")
    assert enrol.redirect_chain[-1][0].startswith("/ko/admin/second-factor/enrol/")
    assert english_on(enrol) == []
    refused = client.post(enrol.redirect_chain[-1][0], {"enrolment_code": "not-a-code"})
    assert refused.status_code == 200 and english_on(refused) == []


def test_a_lockout_and_its_unlock_read_in_korean(client, lived_in_admin, settings):
    """Issue 34, item 7: "django-axes' lockout screens and lists"."""
    for _attempt in range(settings.AXES_FAILURE_LIMIT):
        locked = client.post(
            "/ko/admin/login/", {"username": "lee-reviewer", "password": "wrong-password"}
        )
    assert locked.status_code == 429 and english_on(locked) == []
    lead = type(client)()
    lead.force_login(lived_in_admin["lead"])
    attempts = list(AccessAttempt.objects.values_list("pk", flat=True))
    unlocked = lead.post(
        "/ko/admin/axes/accessattempt/",
        {"action": "unlock", "_selected_action": attempts},
        follow=True,
    )
    assert "로그인 2건의 잠금을 풀었습니다." in unlocked.text
    assert english_on(unlocked) == []
