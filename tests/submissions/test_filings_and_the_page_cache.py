"""Filings, edits and the page cache (issue 17, item 7): "only writes that change what a
public page shows invalidate it, and only the pages that show it; an anonymous filing
that is not yet public invalidates nothing."

Finding: every anonymous filing emptied the whole page cache, a cheap way to make
every reader pay an uncached render. A filing that is not public yet (a challenge
before it is screened, a system submission before it is accepted) now invalidates
nothing; the decision that makes it public invalidates the pages that show it, and
those pages alone.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue.access import task_versions_visible
from catalogue.models import TaskVersion
from mica.content.revision import revisions_read
from mica.methodology.models import ChapterItem
from submissions.challenges import challenge_confirm, challenge_transition, confirmation_token
from submissions.models import Challenge, SystemSubmission
from submissions.system_submissions import system_submission_decide
from tests.factories import StaffFactory, challenge_payload, system_submission_payload

pytestmark = pytest.mark.django_db

SYSTEM = system_submission_payload()

PAGES = ["/challenges/", "/ko/challenges/", "/systems/", "/methodology/"]


def cached_state(client, pages=PAGES):
    """Each page's ETag, and how many queries it cost (a cached page: one, the revisions)."""
    state = {}
    for path in pages:
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
    revision = revisions_read()
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
    assert revisions_read() == revision
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


UNRELATED = ["/tasks/", "/ko/tasks/", "/markets/kr/", "/ko/markets/kr/"]


def _warm(client, pages):
    for path in pages:
        client.get(path)
    warm = cached_state(client, pages)
    assert all(count == 1 for _etag, count in warm.values()), warm
    return warm


def test_a_public_change_refreshes_the_pages_that_show_it_and_no_other(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    """Finding: one public write made every reader of every page pay an uncached render."""
    warm = _warm(client, UNRELATED)
    with django_capture_on_commit_callbacks(execute=True):
        body = challenge_payload(idempotency_key="shown", what_is_wrong="SHOWN challenge text.")
        client.post("/api/v1/challenges/", json.dumps(body), content_type="application/json")
    challenge = Challenge.objects.get()
    challenge_confirm(token=confirmation_token(challenge))
    client.get("/challenges/")
    with django_capture_on_commit_callbacks(execute=True):
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="In scope.", actor=StaffFactory()
        )
    assert f"/challenges/{challenge.pk}/" in client.get("/challenges/").text
    # The task catalogue and the market pages do not show challenges: still cached.
    assert cached_state(client, UNRELATED) == warm


def test_an_edited_claim_refreshes_the_methodology_and_leaves_the_catalogue_cached(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    warm = _warm(client, ["/methodology/", *UNRELATED])
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        claim.detail_en = "A claim a reader must see at once."
        claim.save()
    with CaptureQueriesContext(connection) as render:
        assert "A claim a reader must see at once." in client.get("/methodology/").text
    assert len(render) > 1
    assert cached_state(client, UNRELATED) == {path: warm[path] for path in UNRELATED}


def test_an_edited_task_version_refreshes_the_catalogue_and_leaves_the_markets_cached(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    markets = ["/markets/kr/", "/ko/markets/kr/"]
    warm = _warm(client, ["/tasks/", *markets])
    listed = client.get("/tasks/").text
    version = next(v for v in task_versions_visible(None).order_by("pk") if v.title in listed)
    with django_capture_on_commit_callbacks(execute=True):
        TaskVersion.objects.filter(pk=version.pk).update(title_en="A retitled public task")
    assert "A retitled public task" in client.get("/tasks/").text
    assert cached_state(client, markets) == {path: warm[path] for path in markets}


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
