"""Two hundred challenges at once on PostgreSQL: exactly 200 stored, retries store none."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from submissions import throttle
from submissions.models import Challenge
from tests.factories import challenge_payload as payload
from tests.support import require

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def file_one(n):
    try:
        body = payload(idempotency_key=f"burst-{n}", contact_email=f"c{n}@example.org")
        return (
            Client()
            .post("/api/v1/challenges/", json.dumps(body), content_type="application/json")
            .status_code
        )
    finally:
        connection.close()


def test_two_hundred_concurrent_filings(canonical_content, monkeypatch):
    require(connection.vendor == "postgresql", "real concurrency is tested on PostgreSQL")
    # The burst comes from one test address; its limit is lifted for this test only.
    monkeypatch.setitem(throttle.LIMITS, "address", 10_000)
    with ThreadPoolExecutor(max_workers=16) as pool:
        first = list(pool.map(file_one, range(200)))
    assert first.count(201) == 200
    assert Challenge.objects.count() == 200
    with ThreadPoolExecutor(max_workers=16) as pool:
        again = list(pool.map(file_one, range(200)))
    assert set(again) == {200}
    assert Challenge.objects.count() == 200
