"""Hostile inputs through every public form and API write, and the read-side inputs.

Issue 17, build item 8: a corpus of hostile values (markup, template syntax, SQL-ish,
Unicode tricks, NUL, huge and deeply nested bodies, wrong JSON types) is put into each
string field of each public write in turn: the challenge form and API, the system
submission form and API, the appeal form, and operators' attempts. Every request must
answer below 500. A write that is accepted is made public the way staff make it public
(a challenge confirmed and screened, a submission accepted, an attempt's cell computed)
and every public page that shows it is rendered in both languages: the markup never
appears unescaped, template syntax is never evaluated (the real SECRET_KEY never shows),
and the stored text shows, escaped, where the page shows that field.

Each write endpoint sees every corpus entry; free-text fields see every entry, the
structured fields (patterns, choices, dates, amounts) a rotating sample, so the module
stays quick. Run on SQLite and on PostgreSQL (NUL handling differs there). The 5xx it
found, now fixed, are listed in FOUND_DEFECTS and replayed one by one by
test_a_found_defect_stays_fixed.
"""

import dataclasses
import itertools
import json
import re
import urllib.parse

import pytest
from django.conf import settings
from django.db import connection
from django.utils.html import escape

from mica.text import plain
from submissions.challenges import (
    appeal_token,
    challenge_confirm,
    challenge_transition,
    confirmation_token,
)
from submissions.models import Challenge, SystemSubmission
from submissions.system_submissions import system_submission_decide
from tests.factories import (
    LeadFactory,
    StaffFactory,
    api_auth,
    attempt_payload,
    challenge_payload,
    confirmed_challenge,
    system_submission_payload,
)

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

ON_POSTGRESQL = connection.vendor == "postgresql"

# --- The corpus -------------------------------------------------------------------------

# The JSON text of a value json.dumps cannot nest this deep; stands in the payload as this
# placeholder until the body is encoded.
NESTED_TEXT = "[" * 1000 + "]" * 1000
RAW_PLACEHOLDER = "\x01raw-json\x01"


@dataclasses.dataclass(frozen=True)
class Hostile:
    """One hostile value. `raw` means the value is JSON text put into the body as is."""

    name: str
    value: object
    raw: bool = False

    @property
    def json_value(self):
        """The value as it stands in a payload before encoding."""
        return RAW_PLACEHOLDER if self.raw else self.value

    @property
    def form_text(self):
        """The value as a form field sends it: text as is, anything else as its JSON."""
        return self.value if isinstance(self.value, str) else json.dumps(self.value)

    @property
    def is_text(self):
        return isinstance(self.value, str) and not self.raw

    def shown(self, limit=None, form=False, normalised=True):
        """The text a page shows once the value is stored, sent in a JSON body or (`form`)
        a form field, NFC-normalised as intake stores text (attempts keep it as sent);
        None where it cannot be told (a lone surrogate, a wrong type)."""
        text = self.form_text if form else self.value
        if not (form or self.is_text) or SURROGATE.search(text):
            return None
        text = text[:limit] if limit else text
        return plain(text) if normalised else text


SURROGATE = re.compile("[\ud800-\udfff]")

CORPUS = [
    # Markup
    Hostile("script-tag", "<script>alert(1)</script>"),
    Hostile("attribute-breakout", '"><img src=x onerror=alert(1)>'),
    Hostile("svg-onload", "<svg/onload=alert(1)>"),
    Hostile("javascript-url", "javascript:alert(1)"),
    # Template syntax
    Hostile("django-variable", "{{ settings.SECRET_KEY }}"),
    Hostile("django-tag", "{% debug %}"),
    Hostile("dollar-expression", "${7*7}"),
    # SQL-ish
    Hostile("sql-or", "' OR '1'='1"),
    Hostile("sql-drop", "1; DROP TABLE x;--"),
    # Unicode tricks
    Hostile("rtl-override", "invoice\u202egpj.exe"),
    Hostile("zero-width-joiner", "a\u200db\u200dc"),
    Hostile("combining-marks", "Z\u0351\u0352\u0353a\u0300\u0301\u0302l\u0336g\u0337o"),
    Hostile("lone-surrogate", "\ud800"),  # json.dumps escapes it: "\ud800"
    Hostile("full-width-markup", "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e"),
    Hostile("four-byte-emoji", "\U0001f600 \U0001f9d1\u200d\U0001f4bb"),
    # NUL
    Hostile("nul", "a\x00b"),
    # Huge
    Hostile("one-megabyte", "<script>alert(1)</script>" + "x" * 1_048_576),
    Hostile("over-100000", "y" * 100_001),
    # Deeply nested JSON
    Hostile("nested-1000", NESTED_TEXT, raw=True),
    # Wrong types where a string is expected
    Hostile("integer", 12345),
    Hostile("float", 1e308),
    Hostile("boolean", True),
    Hostile("null", None),
    Hostile("object", {"$gt": "", "<script>": "alert(1)"}),
    Hostile("list", ["<script>alert(1)</script>"]),
]
CORPUS_IDS = [entry.name for entry in CORPUS]
BY_NAME = {entry.name: entry for entry in CORPUS}

# What no public page may ever contain, whatever was filed.
FORBIDDEN = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    "<module '",  # {% debug %} evaluated
    "&lt;module &#x27;",
]
JAVASCRIPT_URL = re.compile(r"""(?:href|src|action|formaction)\s*=\s*["']?\s*javascript:""", re.I)


def test_the_corpus_covers_every_kind_of_hostile_input():
    """Issue 17, build item 8: the corpus names each kind the item lists, once each."""
    assert len(CORPUS) == len(BY_NAME) >= 20
    assert len(BY_NAME["one-megabyte"].value) > 1_000_000
    assert len(BY_NAME["over-100000"].value) == 100_001
    assert NESTED_TEXT.count("[") == 1000
    assert json.dumps(BY_NAME["lone-surrogate"].value) == '"\\ud800"'
    assert {type(entry.value) for entry in CORPUS} >= {str, int, float, bool, dict, list}


# --- What this module found -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Defect:
    """A 5xx this module found (since fixed): one field of one endpoint with one entry."""

    endpoint: str
    field: tuple
    entry: str
    reason: str

    @property
    def id(self):
        return f"{self.endpoint}-{label(self.field)}-{self.entry}"


NUL_ON_POSTGRESQL = "PostgreSQL text fields cannot contain NUL (0x00) bytes (DataError)"
# The sweeps send these too; each is also replayed alone, so its fix stays pinned.
FOUND_DEFECTS = [
    Defect(
        "attempt-api",
        ("attempt_id",),
        entry,
        "POST /api/v1/attempts/ with a JSON list or object as attempt_id answers 500: "
        "TypeError: unhashable type in _check_batch_ids, submissions/ingest.py:412 "
        "`seen.add(attempt_id)`",
    )
    for entry in ("list", "object")
] + [
    Defect(
        "challenge-form",
        ("section_id",),
        "nul",
        "POST /submit/challenge/ with section_id=a%00b answers 500 on PostgreSQL: the "
        "refused form still lists the challenges on that section (challenges_on_section, "
        f"submissions/views.py:67-72); {NUL_ON_POSTGRESQL}",
    ),
    Defect(
        "appeal-form",
        ("grounds",),
        "nul",
        "POST /challenges/<id>/appeal/ with grounds=a%00b answers 500 on PostgreSQL: no "
        "form checks the grounds, Appeal.objects.create in governance/services.py:56 "
        f"(from governance/views.py:246); {NUL_ON_POSTGRESQL}",
    ),
    Defect(
        "read-challenge-form",
        ("section",),
        "nul",
        "GET /submit/challenge/?section=a%00b answers 500 on PostgreSQL: "
        f"challenges_on_section in submissions/views.py:67-72; {NUL_ON_POSTGRESQL}",
    ),
    Defect(
        "read-challenges",
        ("section",),
        "nul",
        "GET /challenges/?section=a%00b answers 500 on PostgreSQL: the filter "
        "section_id=… of challenge_list (submissions/views.py:123, run by the render at "
        f"line 126); {NUL_ON_POSTGRESQL}",
    ),
    Defect(
        "read-challenges",
        ("market",),
        "nul",
        "GET /challenges/?market=a%00b answers 500 on PostgreSQL: the filter "
        "evidence__market='A\\x00' (submissions/views.py:125, run by the render at line "
        "126) reaches jsonb as \\u0000: DataError, unsupported Unicode escape sequence",
    ),
]


# --- Requests ---------------------------------------------------------------------------

_addresses = itertools.count(1)


def client_address():
    """A fresh client address a request, so the intake limits never refuse the corpus."""
    n = next(_addresses)
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


def json_body(payload, entry=None):
    text = json.dumps(payload)
    if entry is not None and entry.raw:
        text = text.replace(json.dumps(RAW_PLACEHOLDER), entry.value)
    return text


def post_json(client, url, payload, entry=None, **extra):
    return client.post(
        url,
        json_body(payload, entry),
        content_type="application/json",
        REMOTE_ADDR=client_address(),
        **extra,
    )


def post_form(client, url, data):
    """A form POST as a browser sends it; a lone surrogate goes as the invalid UTF-8 bytes
    a careless client would send (%ED%A0%80)."""
    body = urllib.parse.urlencode(data, doseq=True, encoding="utf-8", errors="surrogatepass")
    return client.post(
        url, body, content_type="application/x-www-form-urlencoded", REMOTE_ADDR=client_address()
    )


def get_query(client, path, params):
    query = urllib.parse.urlencode(params, doseq=True, encoding="utf-8", errors="surrogatepass")
    return client.get(f"{path}?{query}", REMOTE_ADDR=client_address())


def assert_answered(response, what):
    assert response.status_code < 500, f"{what}: {response.status_code}"


def assert_page_safe(response, what, shown=()):
    """A public page: answered, no hostile markup unescaped, no template evaluated, and
    each stored text in `shown` present in its escaped form."""
    assert response.status_code == 200, f"{what}: {response.status_code}"
    html = response.content.decode()
    for raw in FORBIDDEN:
        assert raw not in html, f"{what} shows {raw!r} unescaped"
    assert not JAVASCRIPT_URL.search(html), f"{what} links to a javascript: URL"
    assert settings.SECRET_KEY not in html, f"{what} shows the SECRET_KEY"
    for text in shown:
        if text:
            assert escape(text) in html, f"{what} does not show {text[:60]!r} escaped"


def assert_form_page_safe(response, what):
    """A form page answering a POST (refused, re-rendered or received): nothing sent comes
    back unescaped or evaluated."""
    html = response.content.decode()
    for raw in FORBIDDEN:
        assert raw not in html, f"{what} shows {raw!r} unescaped"
    assert settings.SECRET_KEY not in html, f"{what} shows the SECRET_KEY"


def assert_json_safe(response, what):
    assert response.status_code == 200, f"{what}: {response.status_code}"
    assert response["Content-Type"].startswith("application/json"), what
    assert settings.SECRET_KEY not in response.content.decode(), f"{what} shows the SECRET_KEY"
    response.json()


def both_languages(path):
    return [path, f"/ko{path}"]


# --- Putting a value into each field in turn --------------------------------------------


def set_path(payload, path, value):
    """`payload` with `value` at `path` (keys and list indexes); `{key}` renames a key."""
    payload = json.loads(json.dumps(payload))
    target = payload
    for step in path[:-1]:
        target = target[step]
    last = path[-1]
    if isinstance(last, str) and last.startswith("{") and last.endswith("}"):
        old = last[1:-1]
        target[value if isinstance(value, str) else json.dumps(value)] = target.pop(old)
    else:
        target[last] = value
    return payload


def label(path):
    return ".".join(str(step) for step in path)


def variants(endpoint, base, free_text, structured, entry, sample=3):
    """(field path, payload) with the entry in each free-text field in turn, and in a
    rotating sample of the structured fields (every structured field sees several
    entries over the corpus)."""
    start = CORPUS.index(entry) * sample
    chosen = [structured[(start + i) % len(structured)] for i in range(sample)]
    for path in [*free_text, *dict.fromkeys(chosen)]:
        yield path, set_path(base, path, entry.json_value)


def whole_bodies(entry):
    """The entry as the whole body, and inside a list: never a JSON object."""
    yield "body", json_body(entry.json_value, entry)
    yield "body-list", json_body([entry.json_value], entry)


def bodies_nested_deep():
    """1,000 levels of objects and of arrays as the whole body."""
    yield "objects-1000", '{"a":' * 1000 + "1" + "}" * 1000
    yield "arrays-1000", NESTED_TEXT


@pytest.fixture(autouse=True)
def _no_page_cache(settings):
    """Every page is rendered from what is stored now (no cached page from before)."""
    settings.PAGE_CACHE_SECONDS = 0


@pytest.fixture
def editor(canonical_content):
    return StaffFactory(username="hostile-editor")


# --- Challenges -------------------------------------------------------------------------

CHALLENGE_FREE_TEXT = [
    ("what_is_wrong",),
    ("proposed_replacement",),
    ("public_name",),
    ("counter_example",),
    ("channel",),
    ("convention",),
    ("idempotency_key",),
]
CHALLENGE_STRUCTURED = [
    ("edition",),
    ("section_id",),
    ("challenge_type",),
    ("citations", 0, "source"),
    ("citations", 0, "accessed"),
    ("contact_email",),
    ("language",),
    ("market",),
    ("situation_id",),
    ("claimed_metric",),
]
# Shown on a challenge's public page.
CHALLENGE_SHOWN = {"what_is_wrong", "proposed_replacement", "public_name"}


def challenge_made_public(challenge, editor):
    challenge_confirm(token=confirmation_token(challenge))
    challenge_transition(challenge_id=challenge.pk, action="screen", reason="ok", actor=editor)


def assert_challenge_pages(client, combined, shown):
    """The register (every filed record) in both languages, the API list, and the page of
    the challenge that holds the entry in every field at once, in both languages."""
    if combined is None:
        return
    for path in both_languages("/challenges/"):
        assert_page_safe(client.get(path), path)
    assert_json_safe(client.get("/api/v1/challenges/"), "/api/v1/challenges/")
    for path in both_languages(f"/challenges/{combined.pk}/"):
        assert_page_safe(client.get(path), path, shown)


def _filer(n):
    return f"filer-{n}@example.org"


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_challenge_api_takes_hostile_values(client, editor, entry):
    """Issue 17, build item 8 (and the finding "JSON nested 1,000 levels deep answers 500
    on all three POST endpoints"): POST /api/v1/challenges/ with the entry in each field
    in turn and as the whole body answers below 500; what it stores renders escaped."""
    filed, accepted = [], []
    for n, (path, payload) in enumerate(
        variants(
            "challenge-api", challenge_payload(), CHALLENGE_FREE_TEXT, CHALLENGE_STRUCTURED, entry
        )
    ):
        if path != ("contact_email",):
            payload["contact_email"] = _filer(n)
        response = post_json(client, "/api/v1/challenges/", payload, entry)
        assert_answered(response, f"challenge API, {label(path)}")
        if response.status_code in (200, 201):
            filed.append(Challenge.objects.get(pk=response.json()["id"]))
            accepted.append(path)
    for what, body in [*whole_bodies(entry), *bodies_nested_deep()]:
        response = client.post(
            "/api/v1/challenges/", body, content_type="application/json", REMOTE_ADDR="10.9.9.9"
        )
        assert_answered(response, f"challenge API, {what}")
        assert response.status_code == 400, what
    combined = None
    if accepted:
        # The entry in every field that took it alone, at once: one page shows them all.
        payload = challenge_payload(contact_email=_filer(99))
        for path in accepted:
            payload = set_path(payload, path, entry.json_value)
        response = post_json(client, "/api/v1/challenges/", payload, entry)
        assert response.status_code == 201, (accepted, response.content[:500])
        combined = Challenge.objects.get(pk=response.json()["id"])
    for challenge in [*filed, *([combined] if combined else [])]:
        challenge_made_public(challenge, editor)
    shown = [entry.shown()] if {path[0] for path in accepted} & CHALLENGE_SHOWN else []
    assert_challenge_pages(client, combined, shown)


CHALLENGE_FORM = {
    "section_id": "world-first-claim",
    "challenge_type": "method",
    "what_is_wrong": "The scope claim overlooks an earlier benchmark.",
    "proposed_replacement": "Narrow the claim to outcome-verified execution.",
    "citations": "https://example.org/paper 2026-11-20",
    "contact_email": "challenger@example.org",
}
CHALLENGE_FORM_FREE_TEXT = [
    ("what_is_wrong",),
    ("proposed_replacement",),
    ("public_name",),
    ("counter_example",),
    ("channel",),
    ("convention",),
    ("citations",),
    ("idempotency_key",),
]
CHALLENGE_FORM_STRUCTURED = [
    ("section_id",),
    ("challenge_type",),
    ("contact_email",),
    ("market",),
    ("situation_id",),
    ("eligible_runs",),
    ("successes",),
    ("success_latencies",),
    ("total_cost_usd",),
    ("claimed_metric",),
    ("claimed_value",),
    ("website",),
]
SCORING_FORM = {
    "challenge_type": "scoring",
    "eligible_runs": "10",
    "successes": "5",
    "success_latencies": "1.5, 2",
    "total_cost_usd": "1.5",
    "claimed_metric": "accuracy",
    "claimed_value": "0.5",
}
SCORING_FIELDS = set(SCORING_FORM) - {"challenge_type"}


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_challenge_form_takes_hostile_values(client, editor, entry):
    """Issue 17, build item 8: the challenge form at /submit/challenge/ (and /ko/) with the
    entry in each field in turn answers below 500, re-renders it escaped when it refuses,
    and what it files renders escaped once screened."""
    filed, accepted = [], []
    fields = variants(
        "challenge-form",
        CHALLENGE_FORM,
        CHALLENGE_FORM_FREE_TEXT,
        CHALLENGE_FORM_STRUCTURED,
        entry,
        sample=4,
    )
    for n, ((name,), _payload) in enumerate(fields):
        data = {**CHALLENGE_FORM, "contact_email": _filer(n)}
        if name in SCORING_FIELDS:
            data.update(SCORING_FORM)
        data[name] = entry.form_text
        url = "/submit/challenge/" if n % 2 == 0 else "/ko/submit/challenge/"
        latest = Challenge.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        response = post_form(client, url, data)
        assert_answered(response, f"challenge form, {name}")
        assert_form_page_safe(response, f"challenge form, {name}")
        challenge = Challenge.objects.filter(pk__gt=latest).first()
        if challenge is not None:
            filed.append(challenge)
            accepted.append(name)
    combined = None
    if accepted:
        data = {**CHALLENGE_FORM, "contact_email": _filer(99)}
        data.update(dict.fromkeys(accepted, entry.form_text))
        latest = Challenge.objects.order_by("-pk").values_list("pk", flat=True).first()
        response = post_form(client, "/submit/challenge/", data)
        assert response.status_code == 302, (accepted, response.status_code)
        combined = Challenge.objects.get(pk__gt=latest)
    for challenge in [*filed, *([combined] if combined else [])]:
        challenge_made_public(challenge, editor)
    shown = [entry.shown(form=True)] if set(accepted) & CHALLENGE_SHOWN else []
    assert_challenge_pages(client, combined, shown)


@pytest.fixture
def decided_challenge(canonical_content):
    """A challenge screened, triaged and rejected: the one state an appeal is filed in."""
    lead = LeadFactory(username="hostile-lead")
    challenge = confirmed_challenge()
    for action in ("screen", "triage", "reject"):
        challenge_transition(challenge_id=challenge.pk, action=action, reason="Done.", actor=lead)
    return challenge


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_appeal_form_takes_hostile_grounds(client, decided_challenge, entry):
    """Issue 17, build item 8: the appeal form on a rejected challenge
    (/challenges/<id>/appeal/, both languages) takes the entry as its grounds below 500,
    and the grounds render escaped on the challenge's public page."""
    challenge = decided_challenge
    for prefix in ("", "/ko"):
        response = post_form(
            client,
            f"{prefix}/challenges/{challenge.pk}/appeal/",
            {"grounds": entry.form_text, "token": appeal_token(challenge)},
        )
        assert_answered(response, f"appeal form {prefix or '/'}")
    shown = [entry.shown(limit=20_000, form=True)] if challenge.appeals.exists() else []
    for path in both_languages(f"/challenges/{challenge.pk}/"):
        assert_page_safe(client.get(path), path, shown)


# --- System submissions -----------------------------------------------------------------

SYSTEM = system_submission_payload()
SYSTEM_FREE_TEXT = [
    ("name",),
    ("operator",),
    ("version",),
    ("orchestrator",),
    ("routable_models", 0),
    ("tools", 0),
    ("memory",),
    ("access",),
    ("evidence_plan",),
    ("market_capability", "KR"),
]
SYSTEM_STRUCTURED = [
    ("snapshot_date",),
    ("markets", 0),
    ("families", 0),
    ("market_capability", "{KR}"),
    ("contact_email",),
]
# Shown on /systems/ and a system's page once accepted.
SYSTEM_SHOWN = {"name", "operator", "version", "orchestrator", "routable_models", "tools", "memory"}


def assert_system_pages(client, combined, shown):
    """The list of systems (every accepted one) in both languages, and the page of the
    system that holds the entry in every field at once, in both languages."""
    if combined is None:
        return
    for path in both_languages("/systems/"):
        assert_page_safe(client.get(path), path)
    for path in both_languages(f"/systems/{combined.slug}/"):
        assert_page_safe(client.get(path), path, shown)


def accepted_system(submission, staff):
    decided = system_submission_decide(
        submission_id=submission.pk, accept=True, reason="Complete.", actor=staff
    )
    return decided.snapshot.system


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_system_submission_api_takes_hostile_values(client, editor, entry):
    """Issue 17, build item 8 (and the findings "capability keys are unchecked", "a key
    with NUL answers 500 on PostgreSQL", "/systems/ answers 500 for everyone after a
    submission whose name has no ASCII letters"): POST /api/v1/system-submissions/ with
    the entry in each field and capability key in turn answers below 500; an accepted
    submission renders escaped on /systems/ and its own page."""
    accepted = []
    for n, (path, payload) in enumerate(
        variants("system-api", SYSTEM, SYSTEM_FREE_TEXT, SYSTEM_STRUCTURED, entry, sample=2)
    ):
        if path != ("contact_email",):
            payload["contact_email"] = _filer(n)
        response = post_json(client, "/api/v1/system-submissions/", payload, entry)
        assert_answered(response, f"system submission API, {label(path)}")
        if response.status_code == 201:
            accepted_system(SystemSubmission.objects.get(pk=response.json()["id"]), editor)
            accepted.append(path)
    for what, body in [*whole_bodies(entry), *bodies_nested_deep()]:
        response = client.post(
            "/api/v1/system-submissions/",
            body,
            content_type="application/json",
            REMOTE_ADDR="10.9.9.9",
        )
        assert_answered(response, f"system submission API, {what}")
        assert response.status_code == 400, what
    combined = None
    if accepted:
        payload = {**SYSTEM, "contact_email": _filer(99)}
        for path in accepted:
            payload = set_path(payload, path, entry.json_value)
        response = post_json(client, "/api/v1/system-submissions/", payload, entry)
        assert response.status_code == 201, (accepted, response.content[:500])
        submission = SystemSubmission.objects.get(pk=response.json()["id"])
        combined = accepted_system(submission, editor)
    shown = [entry.shown()] if {path[0] for path in accepted} & SYSTEM_SHOWN else []
    assert_system_pages(client, combined, shown)


SYSTEM_FORM = {
    "name": "Harbor Agent",
    "operator": "Harbor Labs",
    "version": "3.0",
    "snapshot_date": "2026-11-20",
    "orchestrator": "harbor-orchestrator",
    "routable_models": "openai/gpt-x\nlocal/router",
    "tools": "browser",
    "memory": "Session only.",
    "markets": ["KR", "JP"],
    "families": ["email-calendar"],
    "access": "MICA accounts.",
    "evidence_plan": "Full invocation traces.",
}
SYSTEM_FORM_FREE_TEXT = [
    ("name",),
    ("operator",),
    ("version",),
    ("orchestrator",),
    ("routable_models",),
    ("tools",),
    ("memory",),
    ("access",),
    ("evidence_plan",),
]
SYSTEM_FORM_STRUCTURED = [("snapshot_date",), ("markets",), ("families",), ("contact_email",)]


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_system_submission_form_takes_hostile_values(client, editor, entry):
    """Issue 17, build item 8: the system submission form at /submit/system/ (and /ko/)
    with the entry in each field in turn answers below 500; an accepted submission
    renders escaped on /systems/ and its own page."""
    accepted = []
    fields = variants(
        "system-form", SYSTEM_FORM, SYSTEM_FORM_FREE_TEXT, SYSTEM_FORM_STRUCTURED, entry
    )
    for n, ((name,), _payload) in enumerate(fields):
        data = {**SYSTEM_FORM, "contact_email": _filer(n), name: entry.form_text}
        url = "/submit/system/" if n % 2 == 0 else "/ko/submit/system/"
        latest = SystemSubmission.objects.order_by("-pk").values_list("pk", flat=True).first()
        response = post_form(client, url, data)
        assert_answered(response, f"system submission form, {name}")
        assert_form_page_safe(response, f"system submission form, {name}")
        submission = SystemSubmission.objects.filter(pk__gt=latest or 0).first()
        if submission is not None:
            accepted_system(submission, editor)
            accepted.append(name)
    combined = None
    if accepted:
        data = {**SYSTEM_FORM, "contact_email": _filer(99)}
        data.update(dict.fromkeys(accepted, entry.form_text))
        latest = SystemSubmission.objects.order_by("-pk").values_list("pk", flat=True).first()
        response = post_form(client, "/ko/submit/system/", data)
        assert response.status_code == 200, (accepted, response.status_code)
        combined = accepted_system(SystemSubmission.objects.get(pk__gt=latest), editor)
    shown = [entry.shown(form=True)] if set(accepted) & SYSTEM_SHOWN else []
    assert_system_pages(client, combined, shown)


# --- Attempts ---------------------------------------------------------------------------

ATTEMPT_FREE_TEXT = [
    ("platform",),
    ("platform_version",),
    ("tools_used", 0),
    ("invocations", 0, "provider"),
    ("invocations", 0, "model"),
    ("invocations", 0, "model_version"),
    ("invocations", 0, "purpose"),
    ("ineligible_reason",),
    ("safety_event_description",),
]
ATTEMPT_STRUCTURED = [
    ("attempt_id",),
    ("snapshot", "system"),
    ("snapshot", "version"),
    ("task",),
    ("task_version",),
    ("market",),
    ("situations", 0),
    ("attempt_class",),
    ("verification",),
    ("outcome",),
    ("platform_snapshot_date",),
    ("redacted_trace_id",),
    ("model_cost_usd",),
    ("invocations", 0, "cost_usd"),
    ("evidence", 0, "evidence_id"),
    ("evidence", 0, "evidence_type"),
    ("evidence", 0, "sha256"),
    ("{market}",),
]
# Shown in the cell's evidence lineage.
ATTEMPT_SHOWN = {"platform", "platform_version", "invocations"}


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_attempt_api_takes_hostile_values(client, operator, entry):
    """Issue 17, build item 8: POST /api/v1/attempts/ with an operator's token and the
    entry in each field in turn (and as the whole body, and 1,000 levels deep) answers
    below 500; an accepted attempt renders escaped in its cell's evidence, the system's
    page, the results and the cells API."""
    auth = api_auth(operator)
    accepted = []
    base = attempt_payload(eligible=False, ineligible_reason="Not eligible.")
    for n, (path, payload) in enumerate(
        variants("attempt-api", base, ATTEMPT_FREE_TEXT, ATTEMPT_STRUCTURED, entry, sample=3)
    ):
        if path != ("attempt_id",):
            payload["attempt_id"] = f"hostile-{n}"
        response = post_json(client, "/api/v1/attempts/", payload, entry, **auth)
        assert_answered(response, f"attempt API, {label(path)}")
        if response.status_code == 201:
            shown = entry.shown(normalised=False) if path[0] in ATTEMPT_SHOWN else None
            accepted.append(shown)
    for what, body in [*whole_bodies(entry), *bodies_nested_deep()]:
        response = client.post("/api/v1/attempts/", body, content_type="application/json", **auth)
        assert_answered(response, f"attempt API, {what}")
        assert response.status_code == 400, what
    if accepted:
        from governance.models import GateCell

        for cell in GateCell.objects.all():
            for path in both_languages(f"/evidence/{cell.cell_id}/"):
                assert_page_safe(client.get(path), path, accepted)
        for page in ("/evidence/", "/systems/acme-agent/", "/results/"):
            for path in both_languages(page):
                assert_page_safe(client.get(path), path)
        assert_json_safe(client.get("/api/v1/cells/"), "/api/v1/cells/")


# --- The read side ----------------------------------------------------------------------

# Each page with the query parameters a reader controls.
READ_PAGES = {
    "search": ("/search/", ["q"]),
    "planner": ("/evaluate/", ["mode", "market", "task"]),
    "planner-manifest": ("/evaluate/manifest.json", ["mode", "market", "task"]),
    "tasks": (
        "/tasks/",
        ["family", "market", "surface", "termination_class", "complexity", "lifecycle"],
    ),
    "results": ("/results/", ["metric", "market", "family", "verification"]),
    "challenges": ("/challenges/", ["state", "type", "section", "market"]),
    "challenge-form": ("/submit/challenge/", ["section"]),
}


@pytest.mark.parametrize("page", READ_PAGES)
@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_read_side_inputs_take_hostile_values(client, canonical_content, page, entry):
    """Issue 17, build item 8: the inputs a reader controls (search, planner, catalogue,
    results and challenge filters, the challenge form's section) take the entry in every
    parameter at once below 500 and never unescaped: markup and template syntax in both
    languages, every other entry in one of them, the two in turn."""
    path, params = READ_PAGES[page]
    query = {name: entry.form_text for name in params}
    # Markup and template syntax in both languages; the rest in one, alternating.
    index = CORPUS.index(entry)
    urls = both_languages(path) if index < 7 else both_languages(path)[index % 2 :][:1]
    assert urls
    for url in urls:
        response = get_query(client, url, query)
        if "\x00" in entry.form_text:
            # No field takes a NUL: refused before any view, in the reader's language.
            assert response.status_code == 400, url
            assert ("NUL" in response.text) and (
                url.startswith("/ko/") == ("요청" in response.text)
            )
            continue
        if url.endswith(".json"):
            assert_answered(response, url)
            assert settings.SECRET_KEY not in response.content.decode()
        else:
            assert_page_safe(response, f"{url} ({page})")


# --- The defects, one request each ------------------------------------------------------


def _replay(client, request, defect):
    """The one request of `defect`, as its sweep would send it."""
    entry, (name, *_rest) = BY_NAME[defect.entry], defect.field
    if defect.endpoint == "attempt-api":
        auth = api_auth(request.getfixturevalue("operator"))
        payload = set_path(attempt_payload(), defect.field, entry.json_value)
        return post_json(client, "/api/v1/attempts/", payload, entry, **auth)
    if defect.endpoint == "challenge-form":
        request.getfixturevalue("canonical_content")
        return post_form(client, "/submit/challenge/", {**CHALLENGE_FORM, name: entry.form_text})
    if defect.endpoint == "appeal-form":
        challenge = request.getfixturevalue("decided_challenge")
        return post_form(
            client,
            f"/challenges/{challenge.pk}/appeal/",
            {"grounds": entry.form_text, "token": appeal_token(challenge)},
        )
    if defect.endpoint.startswith("read-"):
        request.getfixturevalue("canonical_content")
        path, _params = READ_PAGES[defect.endpoint.removeprefix("read-")]
        return get_query(client, path, {name: entry.form_text})
    raise AssertionError(f"no replay for {defect.endpoint}")


@pytest.mark.parametrize("defect", FOUND_DEFECTS, ids=[d.id for d in FOUND_DEFECTS])
def test_a_found_defect_stays_fixed(client, request, defect):
    """Issue 17, build item 8: each 5xx the hostile corpus found, replayed alone: it now
    answers below 500 (a NUL in a form or query string is refused with 400)."""
    response = _replay(client, request, defect)
    assert_answered(response, defect.id)
