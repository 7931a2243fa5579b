"""Intake limits that hold and cannot be turned against others (issue 17, item 3).

Every filing goes through the real views and the real "intake" cache (a database
table on the embedded default, Redis under its own prefix with MICA_REDIS_URL).
"""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client, RequestFactory

from mica.clients import client_address
from submissions import throttle
from submissions.models import Challenge
from tests.factories import challenge_payload
from tests.support import require

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"
SYSTEM_FORM = {
    "name": "Harbor Agent",
    "operator": "Harbor Labs",
    "version": "3.0",
    "snapshot_date": "2026-11-20",
    "orchestrator": "harbor-orchestrator",
    "routable_models": "openai/gpt-x",
    "tools": "browser",
    "memory": "Session only.",
    "markets": ["KR"],
    "families": ["email-calendar"],
    "access": "MICA accounts.",
    "evidence_plan": "Full invocation traces.",
    "contact_email": "ops@harbor.example",
}


def file(client, n, *, email=None, key=None, **meta):
    body = challenge_payload(
        idempotency_key=key or f"key-{n}", contact_email=email or f"filer{n}@example.org"
    )
    return client.post(
        "/api/v1/challenges/", json.dumps(body), content_type="application/json", **meta
    )


def test_a_flood_from_one_direct_address_does_not_stop_another(client, canonical_content):
    """Finding: 20 junk requests locked everyone out of filing for an hour. Acceptance:
    a flood of 100 filings from one address does not stop a second address from filing
    (embedded default, no proxy)."""
    statuses = [file(client, n, REMOTE_ADDR="203.0.113.7").status_code for n in range(100)]
    assert statuses.count(201) == throttle.LIMITS["address"]
    assert set(statuses[throttle.LIMITS["address"] :]) == {429}
    second = file(client, 1000, REMOTE_ADDR="198.51.100.20")
    assert second.status_code == 201, second.content


def test_behind_a_trusted_proxy_each_client_counts_apart(client, canonical_content, settings):
    """Finding: behind the documented reverse proxy every visitor had the proxy's
    address, so one flood locked everyone out. Acceptance: a flood of 100 filings
    from one address behind a trusted proxy does not stop a second address."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    flood = [
        file(client, n, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.7").status_code
        for n in range(100)
    ]
    assert flood.count(201) == throttle.LIMITS["address"] and flood[-1] == 429
    # Entries left of the one our proxy wrote are the client's to invent: they never count.
    spoofed = file(
        client, 200, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.99, 203.0.113.7"
    )
    assert spoofed.status_code == 429
    other = file(client, 300, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.20")
    assert other.status_code == 201, other.content


def test_a_forwarded_for_from_an_untrusted_address_is_ignored(client, canonical_content, settings):
    """Finding (the other side of trusting proxies): X-Forwarded-For from anyone but a
    configured proxy must not let one sender pose as many."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    statuses = [
        file(client, n, REMOTE_ADDR="203.0.113.8", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
        for n in range(30)
    ]
    assert statuses.count(201) == throttle.LIMITS["address"]
    assert set(statuses[throttle.LIMITS["address"] :]) == {429}


@pytest.mark.parametrize(
    "remote, forwarded, expected",
    [
        ("203.0.113.1", "", "203.0.113.1"),
        ("203.0.113.1", "192.0.2.1", "203.0.113.1"),  # untrusted sender: header ignored
        (PROXY, "192.0.2.1", "192.0.2.1"),
        (PROXY, "192.0.2.9, 192.0.2.1", "192.0.2.1"),  # right-most untrusted entry
        (PROXY, "192.0.2.1, 10.0.0.3", "192.0.2.1"),  # a chain of trusted proxies
        (PROXY, "192.0.2.1:4711", "192.0.2.1"),
        (PROXY, "[2001:db8::1]:443", "2001:db8::1"),
        (PROXY, "not-an-address", PROXY),  # not written by our proxy: proxy's own address
        (PROXY, "", PROXY),
        ("::ffff:203.0.113.4", "", "203.0.113.4"),
        ("", "", "unknown"),
    ],
)
def test_client_address_trusts_only_the_configured_proxies(settings, remote, forwarded, expected):
    """Finding: client addresses must come from a configured list of trusted proxies."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def test_counts_outlive_page_cache_churn(client, canonical_content):
    """Finding: on the embedded default the counters lived in each worker's local memory
    and were evicted by page-cache churn; they now live in a store of their own."""
    backend = type(caches["intake"]).__name__
    assert backend in {"CountingDatabaseCache", "RedisCache"}, backend
    assert throttle.LIMITS["address"] > 1
    for n in range(throttle.LIMITS["address"]):
        assert file(client, n, REMOTE_ADDR="203.0.113.30").status_code == 201
    # Page-cache churn: far more pages than the local-memory cache keeps (300), so on
    # the embedded default every older entry of the page cache is evicted.
    for n in range(1000):
        caches["default"].set(f"page:churn-{n}", b"x" * 100, 60)
    assert file(client, 99, REMOTE_ADDR="203.0.113.30").status_code == 429


@pytest.mark.parametrize(
    "variants",
    [
        [f"Flood+{n}@Example.org" for n in range(11)],
        [f"  flood+tag{n}@example.org " for n in range(11)],
        ["first.last@gmail.com", "firstlast@googlemail.com", "F.i.r.s.t.last+x@gmail.com"] * 4,
    ],
)
def test_plus_addressing_and_gmail_dots_do_not_multiply_the_email_limit(
    client, canonical_content, variants
):
    """Finding: plus-addressing evaded the per-e-mail limit."""
    statuses = [
        file(client, n, email=email.strip(), REMOTE_ADDR=f"192.0.2.{n + 1}").status_code
        for n, email in enumerate(variants[:11])
    ]
    assert statuses.count(201) == throttle.LIMITS["email"]
    assert statuses[-1] == 429


def test_email_normal_form():
    assert throttle.email_normalised(" A.B+News@GoogleMail.com ") == "ab@gmail.com"
    assert throttle.email_normalised("a.b+x@example.org") == "a.b@example.org"
    assert throttle.email_normalised("") == ""


def test_the_system_form_is_limited_too(client, canonical_content):
    """Finding: the web form for system submissions counted nothing at all."""
    statuses = [
        client.post("/submit/system/", SYSTEM_FORM, REMOTE_ADDR="203.0.113.40").status_code
        for _ in range(throttle.LIMITS["email"] + 1)
    ]
    assert statuses[: throttle.LIMITS["email"]] == [200] * throttle.LIMITS["email"]
    assert statuses[-1] == 400


# --- Idempotency keys belong to their filer ------------------------------------------


def test_a_strangers_key_never_returns_someone_elses_challenge(client, canonical_content):
    """Finding: a second filer reusing someone else's idempotency key got the first
    filer's id back and their own text was dropped."""
    first = challenge_payload(idempotency_key="shared-key", contact_email="first@example.org")
    second = challenge_payload(
        idempotency_key="shared-key",
        contact_email="second@example.org",
        what_is_wrong="The second filer's own text.",
    )
    a = client.post("/api/v1/challenges/", json.dumps(first), content_type="application/json")
    b = client.post("/api/v1/challenges/", json.dumps(second), content_type="application/json")
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json()["id"] != b.json()["id"]
    stored = Challenge.objects.get(pk=b.json()["id"])
    assert stored.what_is_wrong == "The second filer's own text."
    assert stored.contact_email == "second@example.org"


def test_the_same_filer_retrying_gets_the_same_record(client, canonical_content):
    """Finding (the intended use of a key): a retry of the same filing stores nothing new."""
    body = challenge_payload(idempotency_key="retry-key", contact_email="me@example.org")
    a = client.post("/api/v1/challenges/", json.dumps(body), content_type="application/json")
    # The same mailbox in capitals is the same filer with the same challenge.
    again = {**body, "contact_email": "Me@Example.org"}
    b = client.post("/api/v1/challenges/", json.dumps(again), content_type="application/json")
    assert (a.status_code, b.status_code) == (201, 200)
    assert a.json()["id"] == b.json()["id"] and Challenge.objects.count() == 1


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_same_key_with_other_content_is_refused_clearly(client, canonical_content, language):
    """Finding: a reused key silently dropped the text sent with it; for the same filer it
    now answers 409 and names the key."""
    body = challenge_payload(idempotency_key="edit-key", contact_email="me+a@example.org")
    client.post("/api/v1/challenges/", json.dumps(body), content_type="application/json")
    edited = {**body, "contact_email": "me+b@example.org", "what_is_wrong": "Edited."}
    response = client.post(
        "/api/v1/challenges/",
        json.dumps(edited),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 409, response.content
    assert "idempotency_key" in json.dumps(response.json())
    assert Challenge.objects.count() == 1


def test_the_form_resent_with_other_content_says_so(client, canonical_content):
    """Finding: the form's reused key dropped the edited text without a word."""
    form = {
        "section_id": "world-first-claim",
        "challenge_type": "editorial",
        "what_is_wrong": "Typo.",
        "proposed_replacement": "Fix it.",
        "contact_email": "a@example.org",
        "idempotency_key": "form-key-edit",
    }
    assert client.post("/submit/challenge/", form).status_code == 302
    response = client.post("/submit/challenge/", {**form, "what_is_wrong": "Another typo."})
    assert response.status_code == 400
    assert "already sent with other content" in response.text
    assert Challenge.objects.count() == 1


# --- Counting holds under concurrency ---------------------------------------------------


def _file_concurrently(n):
    try:
        return file(Client(), n, REMOTE_ADDR="203.0.113.50").status_code
    finally:
        connection.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_forty_concurrent_filings_from_one_address_do_not_pass_twenty(canonical_content):
    """Finding: 40 filings got through from one address (per-process counters). With
    one shared, atomic count exactly the limit passes, however the requests interleave."""
    require(connection.vendor == "postgresql", "real concurrency is tested on PostgreSQL")
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(_file_concurrently, range(40)))
    assert statuses.count(201) == throttle.LIMITS["address"], statuses
    assert statuses.count(429) == 40 - throttle.LIMITS["address"]
    assert Challenge.objects.count() == throttle.LIMITS["address"]
