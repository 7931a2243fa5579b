"""Anonymous filings and the page cache (issue 17, item 7).

Finding: every anonymous filing emptied the whole page cache, a cheap way to make
every reader pay an uncached render. A filing that is not public yet (a challenge
before it is screened, a system submission before it is accepted) now invalidates
nothing; the decision that makes it public invalidates the pages that show it.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from mica.content.revision import content_revision
from submissions.challenges import challenge_confirm, challenge_transition, confirmation_token
from submissions.models import Challenge, SystemSubmission
from submissions.system_submissions import system_submission_decide
from tests.factories import StaffFactory, challenge_payload
from tests.submissions.test_system_identity import BASE as SYSTEM

pytestmark = pytest.mark.django_db

PAGES = ["/challenges/", "/ko/challenges/", "/systems/", "/methodology/"]


def cached_state(client):
    """Each page's ETag, and whether it came from the cache (one query: the revision)."""
    state = {}
    for path in PAGES:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200, path
        state[path] = (response["ETag"], len(queries))
    return state


def test_anonymous_filings_leave_every_cached_page_cached(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    """Finding: every anonymous filing emptied the whole page cache."""
    for path in PAGES:
        client.get(path)  # rendered once, now cached
    warm = cached_state(client)
    assert all(count == 1 for _etag, count in warm.values()), warm
    revision = content_revision()
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(3):
            body = challenge_payload(idempotency_key=f"quiet-{n}", contact_email=f"q{n}@x.org")
            filed = client.post(
                "/api/v1/challenges/", json.dumps(body), content_type="application/json"
            )
            assert filed.status_code == 201
        challenge_confirm(token=confirmation_token(Challenge.objects.first()))
        submitted = client.post(
            "/api/v1/system-submissions/", json.dumps(SYSTEM), content_type="application/json"
        )
        assert submitted.status_code == 201
    assert content_revision() == revision
    assert cached_state(client) == warm


def test_a_challenge_becoming_public_refreshes_the_challenge_list(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    """Finding, the other side: a change that shows on a page still shows at once."""
    with django_capture_on_commit_callbacks(execute=True):
        body = challenge_payload(
            idempotency_key="to-be-public", what_is_wrong="NOW-PUBLIC challenge text."
        )
        client.post("/api/v1/challenges/", json.dumps(body), content_type="application/json")
    challenge = Challenge.objects.get()
    challenge_confirm(token=confirmation_token(challenge))
    before = client.get("/challenges/")
    assert f"/challenges/{challenge.pk}/" not in before.text
    with django_capture_on_commit_callbacks(execute=True):
        challenge_transition(
            challenge_id=challenge.pk,
            action="screen",
            reason="In scope.",
            actor=StaffFactory(username="editor"),
        )
    after = client.get("/challenges/")
    assert after["ETag"] != before["ETag"]
    assert f"/challenges/{challenge.pk}/" in after.text


def test_an_accepted_system_shows_on_the_system_list(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    """Finding, the other side: accepting a submission changes /systems/ at once."""
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/api/v1/system-submissions/",
            json.dumps({**SYSTEM, "name": "Visible Agent"}),
            content_type="application/json",
        )
    before = client.get("/systems/")
    assert "Visible Agent" not in before.text
    with django_capture_on_commit_callbacks(execute=True):
        system_submission_decide(
            submission_id=SystemSubmission.objects.get().pk,
            accept=True,
            reason="Complete.",
            actor=StaffFactory(),
        )
    assert "Visible Agent" in client.get("/systems/").text
